"""Optimiser update math, written once as pure functions over pytrees of Arrays.

Each optimiser has `<name>_init(params, hp) -> state` and `<name>_update(params, grads, state, hp) ->
(new_params, new_state)`. Nothing is mutated, so the functions compose with funcgrad.jit, grad, vmap and
tree_map; the stateful classes in funcgrad.optim apply them to Tensor parameters in place. `hp` is a dict
of hyper-parameters with PyTorch's names and defaults (see SGD_DEFAULTS / ADAM_DEFAULTS). The `step`
entry of a state is the number of updates already applied (a scalar).
"""
from __future__ import annotations

from .. import numpy as jnp
from ..tree_util import tree_flatten, tree_unflatten

SGD_DEFAULTS = dict(lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False)
ADAM_DEFAULTS = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, maximize=False,
                     decoupled_weight_decay=False)
ADAMW_DEFAULTS = dict(ADAM_DEFAULTS, weight_decay=1e-2, decoupled_weight_decay=True)

RMSPROP_DEFAULTS = dict(lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
                        maximize=False)
ADAGRAD_DEFAULTS = dict(lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10,
                        maximize=False)

__all__ = ["SGD_DEFAULTS", "ADAM_DEFAULTS", "ADAMW_DEFAULTS", "RMSPROP_DEFAULTS", "ADAGRAD_DEFAULTS", "sgd_init",
           "sgd_update", "adam_init", "adam_update", "adamw_init", "adamw_update", "rmsprop_init",
           "rmsprop_update", "adagrad_init", "adagrad_update"]


def _hp(hp, defaults):
    out = dict(defaults)
    if hp:
        unknown = set(hp) - set(defaults)
        if unknown:
            raise TypeError(f"unknown hyper-parameters {sorted(unknown)}")
        out.update(hp)
    return out


def _zeros_like_tree(params):
    leaves, tree = tree_flatten(params)
    return tree_unflatten(tree, [jnp.zeros_like(p) for p in leaves])


def _map(fn, params, *trees):
    """Apply fn leaf-wise over params and matching trees; fn returns a tuple, giving a tuple of trees."""
    leaves, tree = tree_flatten(params)
    others = [tree_flatten(t)[0] for t in trees]
    outs = [fn(*xs) for xs in zip(leaves, *others)]
    n = len(outs[0]) if outs else 0
    return tuple(tree_unflatten(tree, [o[i] for o in outs]) for i in range(n))


# --- SGD ---------------------------------------------------------------------------------------------------
def sgd_init(params, hp=None):
    hp = _hp(hp, SGD_DEFAULTS)
    state = {"step": 0}
    if hp["momentum"] != 0:
        state["momentum_buffer"] = _zeros_like_tree(params)
    return state


def sgd_update(params, grads, state, hp=None):
    """torch.optim.SGD's update: d = g (+ wd p); buf = d on the first step, else mu buf + (1 - dampening) d;
    d = d + mu buf (nesterov) or buf; p -= lr d (p += lr d when maximize)."""
    hp = _hp(hp, SGD_DEFAULTS)
    lr, mu, damp, wd = hp["lr"], hp["momentum"], hp["dampening"], hp["weight_decay"]
    if hp["nesterov"] and (mu <= 0 or damp != 0):
        raise ValueError("Nesterov momentum requires a momentum and zero dampening")
    step = state["step"]
    first = jnp.asarray(step) == 0

    def one(p, g, *buf):
        if hp["maximize"]:
            g = -g
        if wd != 0:
            g = g + wd * p
        if mu != 0:
            b = jnp.where(first, g, mu * buf[0] + (1 - damp) * g)
            g = g + mu * b if hp["nesterov"] else b
            return p - lr * g, b
        return p - lr * g, None

    if mu != 0:
        new_p, new_buf = _map(one, params, grads, state["momentum_buffer"])
        return new_p, {"step": step + 1, "momentum_buffer": new_buf}
    new_p, = _map(lambda p, g: one(p, g)[:1], params, grads)
    return new_p, {"step": step + 1}


# --- Adam / AdamW ------------------------------------------------------------------------------------------
def adam_init(params, hp=None):
    hp = _hp(hp, ADAM_DEFAULTS)
    state = {"step": 0, "exp_avg": _zeros_like_tree(params), "exp_avg_sq": _zeros_like_tree(params)}
    if hp["amsgrad"]:
        state["max_exp_avg_sq"] = _zeros_like_tree(params)
    return state


def adam_update(params, grads, state, hp=None):
    """torch.optim.Adam's update (AdamW's when hp['decoupled_weight_decay'])."""
    hp = _hp(hp, ADAM_DEFAULTS)
    lr, eps, wd = hp["lr"], hp["eps"], hp["weight_decay"]
    b1, b2 = hp["betas"]
    t = state["step"] + 1
    bc1 = 1 - b1 ** t
    bc2_sqrt = (1 - b2 ** t) ** 0.5
    step_size = lr / bc1
    ams = hp["amsgrad"]

    def one(p, g, m, v, *vmax):
        if hp["maximize"]:
            g = -g
        if wd != 0:
            if hp["decoupled_weight_decay"]:
                p = p * (1 - lr * wd)
            else:
                g = g + wd * p
        m = m + (g - m) * (1 - b1)
        v = v * b2 + (1 - b2) * g * g
        if ams:
            vm = jnp.maximum(vmax[0], v)
            denom = jnp.sqrt(vm) / bc2_sqrt + eps
        else:
            vm = None
            denom = jnp.sqrt(v) / bc2_sqrt + eps
        return (p - step_size * (m / denom)).astype(p.dtype), m, v, vm

    trees = [grads, state["exp_avg"], state["exp_avg_sq"]] + ([state["max_exp_avg_sq"]] if ams else [])
    new_p, m, v, vm = _map(lambda *a: one(*a), params, *trees)
    new_state = {"step": t, "exp_avg": m, "exp_avg_sq": v}
    if ams:
        new_state["max_exp_avg_sq"] = vm
    return new_p, new_state


def adamw_init(params, hp=None):
    return adam_init(params, _hp(hp, ADAMW_DEFAULTS))


def adamw_update(params, grads, state, hp=None):
    return adam_update(params, grads, state, _hp(hp, ADAMW_DEFAULTS))


# --- RMSprop -----------------------------------------------------------------------------------------------
def rmsprop_init(params, hp=None):
    hp = _hp(hp, RMSPROP_DEFAULTS)
    state = {"step": 0, "square_avg": _zeros_like_tree(params)}
    if hp["momentum"] > 0:
        state["momentum_buffer"] = _zeros_like_tree(params)
    if hp["centered"]:
        state["grad_avg"] = _zeros_like_tree(params)
    return state


def rmsprop_update(params, grads, state, hp=None):
    """torch.optim.RMSprop's update (optionally centered, with momentum)."""
    hp = _hp(hp, RMSPROP_DEFAULTS)
    lr, alpha, eps, wd, mu = hp["lr"], hp["alpha"], hp["eps"], hp["weight_decay"], hp["momentum"]
    centered = hp["centered"]
    names = ["square_avg"] + (["momentum_buffer"] if mu > 0 else []) + (["grad_avg"] if centered else [])

    def one(p, g, *bufs):
        b = dict(zip(names, bufs))
        if hp["maximize"]:
            g = -g
        if wd != 0:
            g = g + wd * p
        sq = b["square_avg"] * alpha + (1 - alpha) * g * g
        out = {"square_avg": sq}
        if centered:
            ga = b["grad_avg"] + (g - b["grad_avg"]) * (1 - alpha)
            out["grad_avg"] = ga
            avg = jnp.sqrt(sq - ga * ga) + eps
        else:
            avg = jnp.sqrt(sq) + eps
        if mu > 0:
            buf = b["momentum_buffer"] * mu + g / avg
            out["momentum_buffer"] = buf
            p = p - lr * buf
        else:
            p = p - lr * (g / avg)
        return (p.astype(p.dtype),) + tuple(out[n] for n in names)

    outs = _map(one, params, grads, *[state[n] for n in names])
    new_state = {"step": state["step"] + 1}
    new_state.update(zip(names, outs[1:]))
    return outs[0], new_state


# --- Adagrad -----------------------------------------------------------------------------------------------
def adagrad_init(params, hp=None):
    hp = _hp(hp, ADAGRAD_DEFAULTS)
    leaves, tree = tree_flatten(params)
    return {"step": 0, "sum": tree_unflatten(tree, [jnp.full_like(p, hp["initial_accumulator_value"])
                                                     for p in leaves])}


def adagrad_update(params, grads, state, hp=None):
    """torch.optim.Adagrad's update: sum += g^2; p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(sum) + eps)."""
    hp = _hp(hp, ADAGRAD_DEFAULTS)
    t = state["step"] + 1
    clr = hp["lr"] / (1 + (t - 1) * hp["lr_decay"])

    def one(p, g, s):
        if hp["maximize"]:
            g = -g
        if hp["weight_decay"] != 0:
            g = g + hp["weight_decay"] * p
        s = s + g * g
        return (p - clr * (g / (jnp.sqrt(s) + hp["eps"]))).astype(p.dtype), s

    new_p, new_s = _map(one, params, grads, state["sum"])
    return new_p, {"step": t, "sum": new_s}
