"""Optimiser update math, written once as pure functions over pytrees of Arrays.

Each optimiser has `<name>_init(params, hp) -> state` and `<name>_update(params, grads, state, hp) ->
(new_params, new_state)`. Nothing is mutated, so the functions compose with funcgrad.jit, grad, vmap and
tree_map. `hp` is a dict of hyper-parameters with PyTorch's names and defaults (see SGD_DEFAULTS /
ADAM_DEFAULTS). The `step` entry of a state is the number of updates already applied (a scalar).

The same formulas also update in place: with `inplace=True` the parameters and the state's array leaves are
writeable NumPy arrays (the storage of the stateful optimisers' tensors in funcgrad.optim), computed on with
NumPy, and the result is written into them. The formulas are written with augmented assignments
(`m += ...`, `p -= ...`): on immutable Arrays these rebind a name to a new Array, on NumPy buffers they
write into the buffer, so one text serves both faces with no per-step copies on the stateful one.
"""
from __future__ import annotations

import math

import numpy as np

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
           "rmsprop_update", "adagrad_init", "adagrad_update", "ADADELTA_DEFAULTS", "ADAMAX_DEFAULTS",
           "NADAM_DEFAULTS", "RADAM_DEFAULTS", "ASGD_DEFAULTS", "RPROP_DEFAULTS", "adadelta_init", "adadelta_update",
           "adamax_init", "adamax_update", "nadam_init", "nadam_update", "radam_init", "radam_update", "asgd_init",
           "asgd_update", "rprop_init", "rprop_update"]


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


def _zero_state(params, **buffers: bool) -> dict:
    """A state before the first step: step 0 and, under each buffer name whose flag is true, zeros like params."""
    return {"step": 0, **{name: _zeros_like_tree(params) for name, wanted in buffers.items() if wanted}}


def _map(fn, params, *trees, inplace=False):
    """Apply fn leaf-wise over params and matching trees; fn returns a tuple (new param first), giving a
    tuple of trees. Pure: NumPy leaves are taken as Arrays and new params keep their dtype. In place: every
    param leaf must be a writeable NumPy array (fn writes into it and into the state leaves)."""
    leaves, tree = tree_flatten(params)
    others = [tree_flatten(t)[0] for t in trees]
    if inplace:
        for x in leaves:
            if type(x) is not np.ndarray or not x.flags.writeable:
                raise TypeError(f"an in-place optimiser update needs writeable numpy.ndarray parameters, got "
                                f"{type(x).__name__}")
        outs = [fn(*xs) for xs in zip(leaves, *others)]
    else:
        outs = []
        for xs in zip(leaves, *others):
            xs = [jnp.asarray(x) if isinstance(x, np.ndarray) else x for x in xs]
            o = fn(*xs)
            outs.append((_cast(o[0], xs[0].dtype),) + tuple(o[1:]))
    n = len(outs[0]) if outs else 0
    return tuple(tree_unflatten(tree, [o[i] for o in outs]) for i in range(n))


_BLOCK = 1 << 15  # elements: the largest temporary _sub_scaled makes


def _sub_scaled(p, a, g):
    """p - a * g; on a NumPy buffer p (the in-place path) written into p block by block, so that no
    temporary the size of p is made (as torch's p.add_(g, alpha=-a), which makes none). Same arithmetic
    per element as `p -= a * g`."""
    if type(p) is not np.ndarray or p.size <= _BLOCK or type(g) is not np.ndarray or g.shape != p.shape or \
            not (p.flags.c_contiguous and g.flags.c_contiguous):
        p -= a * g
        return p
    fp, fg = p.reshape(-1), g.reshape(-1)
    n = fp.size
    for s in range(0, n, _BLOCK):
        fp[s:s + _BLOCK] -= a * fg[s:s + _BLOCK]
    return p


def _xp(inplace: bool):
    """The namespace the formulas compute with: NumPy on the in-place path, funcgrad.numpy otherwise."""
    return np if inplace else jnp


def _cast(x, dt):
    return x if x.dtype == dt else x.astype(dt)


def _set(dst, value):
    """dst's new value: written into dst when it is a NumPy buffer (in place), else value itself."""
    if type(dst) is np.ndarray:
        np.copyto(dst, value, casting="same_kind")
        return dst
    return value


def _into(fn, dst, *args):
    """fn(*args) (a ufunc-style function of xp), written into dst when it is a NumPy buffer."""
    if type(dst) is np.ndarray:
        return fn(*args, out=dst)
    return fn(*args)


def _concrete(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


# --- SGD ---------------------------------------------------------------------------------------------------
def sgd_init(params, hp=None):
    hp = _hp(hp, SGD_DEFAULTS)
    return _zero_state(params, momentum_buffer=hp["momentum"] != 0)


def sgd_update(params, grads, state, hp=None, *, inplace=False):
    """torch.optim.SGD's update: d = g (+ wd p); buf = d on the first step, else mu buf + (1 - dampening) d;
    d = d + mu buf (nesterov) or buf; p -= lr d (p += lr d when maximize). inplace: see the module docstring."""
    hp = _hp(hp, SGD_DEFAULTS)
    lr, mu, damp, wd = hp["lr"], hp["momentum"], hp["dampening"], hp["weight_decay"]
    if hp["nesterov"] and (mu <= 0 or damp != 0):
        raise ValueError("Nesterov momentum requires a momentum and zero dampening")
    step = state["step"]
    first = bool(step == 0) if _concrete(step) else jnp.asarray(step) == 0

    def one(p, g, b=None):
        if hp["maximize"]:
            g = -g
        if wd != 0:
            g = g + wd * p
        if mu != 0:
            if first is True:
                b = _set(b, g)
            elif first is False:
                b *= mu
                b += (1 - damp) * g if damp else g  # (1 * g is g: no product, no temporary)
            else:
                b = jnp.where(first, g, mu * b + (1 - damp) * g)
            g = g + mu * b if hp["nesterov"] else b
        return _sub_scaled(p, lr, g), b

    if mu != 0:
        new_p, new_buf = _map(one, params, grads, state["momentum_buffer"], inplace=inplace)
        return new_p, {"step": step + 1, "momentum_buffer": new_buf}
    new_p, = _map(lambda p, g: one(p, g)[:1], params, grads, inplace=inplace)
    return new_p, {"step": step + 1}


def _decay_and_moments(p, g, m, v, hp, lr, wd, b1, b2):
    """The start of Adam's, NAdam's and RAdam's step on one parameter: the gradient negated under maximize, weight decay
    (decoupled: p shrinks; else added to the gradient), then the first and second moments, in place where the
    buffers are (inplace=True). Returns (p, g, m, v)."""
    if hp["maximize"]:
        g = -g
    if wd != 0:
        if hp["decoupled_weight_decay"]:
            p *= 1 - lr * wd
        else:
            g = g + wd * p
    m += (g - m) * (1 - b1)
    v *= b2
    v += (1 - b2) * g * g
    return p, g, m, v


# --- Adam / AdamW ------------------------------------------------------------------------------------------
def adam_init(params, hp=None):
    hp = _hp(hp, ADAM_DEFAULTS)
    return _zero_state(params, exp_avg=True, exp_avg_sq=True, max_exp_avg_sq=hp["amsgrad"])


def adam_update(params, grads, state, hp=None, *, inplace=False):
    """torch.optim.Adam's update (AdamW's when hp['decoupled_weight_decay']). inplace: see the module docstring."""
    hp = _hp(hp, ADAM_DEFAULTS)
    xp = _xp(inplace)
    lr, eps, wd = hp["lr"], hp["eps"], hp["weight_decay"]
    b1, b2 = hp["betas"]
    t = state["step"] + 1
    bc1 = 1 - b1 ** t
    bc2_sqrt = (1 - b2 ** t) ** 0.5
    step_size = lr / bc1
    ams = hp["amsgrad"]

    def one(p, g, m, v, vmax=None):
        p, g, m, v = _decay_and_moments(p, g, m, v, hp, lr, wd, b1, b2)
        if ams:
            vmax = _into(xp.maximum, vmax, vmax, v)
            denom = xp.sqrt(vmax)
        else:
            denom = xp.sqrt(v)
        denom /= bc2_sqrt
        denom += eps
        p -= step_size * (m / denom)
        return p, m, v, vmax

    trees = [grads, state["exp_avg"], state["exp_avg_sq"]] + ([state["max_exp_avg_sq"]] if ams else [])
    new_p, m, v, vm = _map(one, params, *trees, inplace=inplace)
    new_state = {"step": t, "exp_avg": m, "exp_avg_sq": v}
    if ams:
        new_state["max_exp_avg_sq"] = vm
    return new_p, new_state


def adamw_init(params, hp=None):
    return adam_init(params, _hp(hp, ADAMW_DEFAULTS))


def adamw_update(params, grads, state, hp=None, *, inplace=False):
    return adam_update(params, grads, state, _hp(hp, ADAMW_DEFAULTS), inplace=inplace)


# --- RMSprop -----------------------------------------------------------------------------------------------
def rmsprop_init(params, hp=None):
    hp = _hp(hp, RMSPROP_DEFAULTS)
    return _zero_state(params, square_avg=True, momentum_buffer=hp["momentum"] > 0, grad_avg=hp["centered"])


def rmsprop_update(params, grads, state, hp=None, *, inplace=False):
    """torch.optim.RMSprop's update (optionally centered, with momentum). inplace: see the module docstring."""
    hp = _hp(hp, RMSPROP_DEFAULTS)
    xp = _xp(inplace)
    lr, alpha, eps, wd, mu = hp["lr"], hp["alpha"], hp["eps"], hp["weight_decay"], hp["momentum"]
    centered = hp["centered"]
    names = ["square_avg"] + (["momentum_buffer"] if mu > 0 else []) + (["grad_avg"] if centered else [])

    def one(p, g, *bufs):
        b = dict(zip(names, bufs))
        if hp["maximize"]:
            g = -g
        if wd != 0:
            g = g + wd * p
        sq = b["square_avg"]
        sq *= alpha
        sq += (1 - alpha) * g * g
        out = {"square_avg": sq}
        if centered:
            ga = b["grad_avg"]
            ga += (g - ga) * (1 - alpha)
            out["grad_avg"] = ga
            avg = xp.sqrt(sq - ga * ga)
        else:
            avg = xp.sqrt(sq)
        avg += eps
        if mu > 0:
            buf = b["momentum_buffer"]
            buf *= mu
            buf += g / avg
            out["momentum_buffer"] = buf
            p -= lr * buf
        else:
            p -= lr * (g / avg)
        return (p,) + tuple(out[n] for n in names)

    outs = _map(one, params, grads, *[state[n] for n in names], inplace=inplace)
    new_state = {"step": state["step"] + 1}
    new_state.update(zip(names, outs[1:]))
    return outs[0], new_state


# --- Adagrad -----------------------------------------------------------------------------------------------
def adagrad_init(params, hp=None):
    hp = _hp(hp, ADAGRAD_DEFAULTS)
    leaves, tree = tree_flatten(params)
    return {"step": 0, "sum": tree_unflatten(tree, [jnp.full_like(p, hp["initial_accumulator_value"])
                                                     for p in leaves])}


def adagrad_update(params, grads, state, hp=None, *, inplace=False):
    """torch.optim.Adagrad's update: sum += g^2; p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(sum) + eps).
    inplace: see the module docstring."""
    hp = _hp(hp, ADAGRAD_DEFAULTS)
    xp = _xp(inplace)
    t = state["step"] + 1
    clr = hp["lr"] / (1 + (t - 1) * hp["lr_decay"])

    def one(p, g, s):
        if hp["maximize"]:
            g = -g
        if hp["weight_decay"] != 0:
            g = g + hp["weight_decay"] * p
        s += g * g
        denom = xp.sqrt(s)
        denom += hp["eps"]
        p -= clr * (g / denom)
        return p, s

    new_p, new_s = _map(one, params, grads, state["sum"], inplace=inplace)
    return new_p, {"step": t, "sum": new_s}


# --- Adadelta ----------------------------------------------------------------------------------------------
ADADELTA_DEFAULTS = dict(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False)


def adadelta_init(params, hp=None):
    _hp(hp, ADADELTA_DEFAULTS)
    return _zero_state(params, square_avg=True, acc_delta=True)


def adadelta_update(params, grads, state, hp=None, *, inplace=False):
    """torch.optim.Adadelta's update: v = rho v + (1-rho) g^2; d = sqrt(u + eps) / sqrt(v + eps) g;
    u = rho u + (1-rho) d^2; p -= lr d. inplace: see the module docstring."""
    hp = _hp(hp, ADADELTA_DEFAULTS)
    xp = _xp(inplace)
    lr, rho, eps, wd = hp["lr"], hp["rho"], hp["eps"], hp["weight_decay"]

    def one(p, g, v, u):
        if hp["maximize"]:
            g = -g
        if wd != 0:
            g = g + wd * p
        v *= rho
        v += (1 - rho) * g * g
        d = xp.sqrt(u + eps) / xp.sqrt(v + eps) * g
        u *= rho
        u += (1 - rho) * d * d
        p -= lr * d
        return p, v, u

    new_p, v, u = _map(one, params, grads, state["square_avg"], state["acc_delta"], inplace=inplace)
    return new_p, {"step": state["step"] + 1, "square_avg": v, "acc_delta": u}


# --- Adamax ------------------------------------------------------------------------------------------------
ADAMAX_DEFAULTS = dict(lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, maximize=False)


def adamax_init(params, hp=None):
    _hp(hp, ADAMAX_DEFAULTS)
    return _zero_state(params, exp_avg=True, exp_inf=True)


def adamax_update(params, grads, state, hp=None, *, inplace=False):
    """torch.optim.Adamax's update: m lerps to g; u = max(b2 u, |g| + eps); p -= lr / (1 - b1^t) m / u.
    inplace: see the module docstring."""
    hp = _hp(hp, ADAMAX_DEFAULTS)
    xp = _xp(inplace)
    b1, b2 = hp["betas"]
    t = state["step"] + 1
    clr = hp["lr"] / (1 - b1 ** t)

    def one(p, g, m, u):
        if hp["maximize"]:
            g = -g
        if hp["weight_decay"] != 0:
            g = g + hp["weight_decay"] * p
        m += (g - m) * (1 - b1)
        u *= b2
        u = _into(xp.maximum, u, u, xp.abs(g) + hp["eps"])
        p -= clr * (m / u)
        return p, m, u

    new_p, m, u = _map(one, params, grads, state["exp_avg"], state["exp_inf"], inplace=inplace)
    return new_p, {"step": t, "exp_avg": m, "exp_inf": u}


# --- NAdam -------------------------------------------------------------------------------------------------
NADAM_DEFAULTS = dict(lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, momentum_decay=4e-3,
                      decoupled_weight_decay=False, maximize=False)


def nadam_init(params, hp=None):
    _hp(hp, NADAM_DEFAULTS)
    return {"step": 0, "mu_product": jnp.asarray(1.0, dtype=jnp.float32), "exp_avg": _zeros_like_tree(params),
            "exp_avg_sq": _zeros_like_tree(params)}


def nadam_update(params, grads, state, hp=None, *, inplace=False):
    """torch.optim.NAdam's update (Nesterov-accelerated Adam with the mu_t momentum schedule); `mu_product`
    is the running product of the mu_t, kept in float32 as torch keeps it. inplace: see the module docstring."""
    hp = _hp(hp, NADAM_DEFAULTS)
    xp = _xp(inplace)
    lr, eps, wd, psi = hp["lr"], hp["eps"], hp["weight_decay"], hp["momentum_decay"]
    b1, b2 = hp["betas"]
    t = state["step"] + 1
    bc2 = 1 - b2 ** t
    mu = b1 * (1.0 - 0.5 * 0.96 ** (t * psi))
    mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * psi))
    mu_prod = xp.asarray(xp.asarray(state["mu_product"], dtype=xp.float32) * mu, dtype=xp.float32)
    mp = float(mu_prod) if inplace else mu_prod  # torch reads the float32 product back as a Python float
    c_grad = -lr * (1.0 - mu) / (1.0 - mp)
    c_avg = -lr * mu_next / (1.0 - mp * mu_next)

    def one(p, g, m, v):
        p, g, m, v = _decay_and_moments(p, g, m, v, hp, lr, wd, b1, b2)
        denom = xp.sqrt(v / bc2)
        denom += eps
        p += _cast(c_grad * (g / denom), p.dtype)
        p += _cast(c_avg * (m / denom), p.dtype)
        return p, m, v

    new_p, m, v = _map(one, params, grads, state["exp_avg"], state["exp_avg_sq"], inplace=inplace)
    return new_p, {"step": t, "mu_product": mu_prod, "exp_avg": m, "exp_avg_sq": v}


# --- RAdam -------------------------------------------------------------------------------------------------
RADAM_DEFAULTS = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled_weight_decay=False,
                      maximize=False)


def radam_init(params, hp=None):
    _hp(hp, RADAM_DEFAULTS)
    return _zero_state(params, exp_avg=True, exp_avg_sq=True)


def radam_update(params, grads, state, hp=None, *, inplace=False):
    """torch.optim.RAdam's update: Adam with the variance rectification term, plain momentum SGD while the
    approximated SMA length rho_t is at most 5. inplace: see the module docstring."""
    hp = _hp(hp, RADAM_DEFAULTS)
    xp = _xp(inplace)
    lr, eps, wd = hp["lr"], hp["eps"], hp["weight_decay"]
    b1, b2 = hp["betas"]
    t = state["step"] + 1
    bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t
    rho_inf = 2 / (1 - b2) - 1
    rho_t = rho_inf - 2 * t * b2 ** t / bc2
    r = (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
    if _concrete(rho_t):  # a Python step count: Python scalars, as torch computes them
        rectify, rect = bool(rho_t > 5.0), math.sqrt(max(r, 0.0))
    else:
        rectify, rect = jnp.asarray(rho_t) > 5.0, jnp.sqrt(jnp.maximum(r, 0.0))

    def one(p, g, m, v):
        p, g, m, v = _decay_and_moments(p, g, m, v, hp, lr, wd, b1, b2)
        m_hat = m / bc1
        if rectify is False:
            upd = m_hat * lr
        else:
            denom = xp.sqrt(v)
            denom += eps
            adaptive = bc2 ** 0.5 / denom
            upd = m_hat * lr * adaptive * rect if rectify is True else \
                jnp.where(rectify, m_hat * lr * adaptive * rect, m_hat * lr)
        p -= upd
        return p, m, v

    new_p, m, v = _map(one, params, grads, state["exp_avg"], state["exp_avg_sq"], inplace=inplace)
    return new_p, {"step": t, "exp_avg": m, "exp_avg_sq": v}


# --- ASGD --------------------------------------------------------------------------------------------------
ASGD_DEFAULTS = dict(lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0, maximize=False)


def asgd_init(params, hp=None):
    hp = _hp(hp, ASGD_DEFAULTS)
    return {"step": 0, "eta": jnp.asarray(hp["lr"], dtype=jnp.float32), "mu": jnp.asarray(1.0, dtype=jnp.float32),
            "ax": _zeros_like_tree(params)}


def asgd_update(params, grads, state, hp=None, *, inplace=False):
    """torch.optim.ASGD's update: p = p (1 - lambd eta) - eta g; ax averages p (weight mu); eta and mu follow
    their schedules in the step count. inplace: see the module docstring."""
    hp = _hp(hp, ASGD_DEFAULTS)
    xp = _xp(inplace)
    lr, lambd, alpha, t0, wd = hp["lr"], hp["lambd"], hp["alpha"], hp["t0"], hp["weight_decay"]
    t = state["step"] + 1
    eta = xp.asarray(state["eta"], dtype=xp.float32)
    mu = xp.asarray(state["mu"], dtype=xp.float32)

    def one(p, g, ax):
        if hp["maximize"]:
            g = -g
        if wd != 0:
            g = g + wd * p
        # (torch reads eta as a Python float: the decay factor 1 - lambd * eta in double, then the param's dtype)
        e = _cast(eta, p.dtype) if p.dtype.itemsize > 4 else eta
        p *= _cast(1 - lambd * e, p.dtype)
        p -= _cast(e, p.dtype) * g
        ax = _set(ax, _cast(xp.where(mu != 1, ax + (p - ax) * mu, p), ax.dtype))
        return p, ax

    new_p, ax = _map(one, params, grads, state["ax"], inplace=inplace)
    new_eta = xp.asarray(lr / ((1 + lambd * lr * t) ** alpha), dtype=xp.float32)
    new_mu = xp.asarray(1 / xp.maximum(1, xp.asarray(t) - t0), dtype=xp.float32)
    return new_p, {"step": t, "eta": new_eta, "mu": new_mu, "ax": ax}


# --- Rprop -------------------------------------------------------------------------------------------------
RPROP_DEFAULTS = dict(lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), maximize=False)


def rprop_init(params, hp=None):
    hp = _hp(hp, RPROP_DEFAULTS)
    leaves, tree = tree_flatten(params)
    return {"step": 0, "prev": _zeros_like_tree(params),
            "step_size": tree_unflatten(tree, [jnp.full_like(p, hp["lr"]) for p in leaves])}


def rprop_update(params, grads, state, hp=None, *, inplace=False):
    """torch.optim.Rprop's update: per element, grow the step size by etaplus where the gradient kept its
    sign, shrink it by etaminus (and skip the step) where it flipped; p -= sign(g) step_size.
    inplace: see the module docstring."""
    hp = _hp(hp, RPROP_DEFAULTS)
    xp = _xp(inplace)
    eminus, eplus = hp["etas"]
    smin, smax = hp["step_sizes"]

    def one(p, g, prev, ss):
        if hp["maximize"]:
            g = -g
        s = xp.sign(g * prev)
        factor = _cast(xp.where(s > 0, eplus, xp.where(s < 0, eminus, 1.0)), ss.dtype)
        ss *= factor
        ss = _into(xp.clip, ss, ss, smin, smax)
        g = xp.where(factor == eminus, xp.zeros_like(g), g)
        prev = _set(prev, g)
        p -= xp.sign(g) * ss
        return p, prev, ss

    new_p, prev, ss = _map(one, params, grads, state["prev"], state["step_size"], inplace=inplace)
    return new_p, {"step": state["step"] + 1, "prev": prev, "step_size": ss}
