"""torch.optim.Optimizer: parameter groups, per-parameter state, zero_grad and state_dict."""
from __future__ import annotations

import copy
from collections import defaultdict
from itertools import chain

import numpy as np

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from .. import numpy as _fnp
from ..autograd import enable_grad as _enable_grad, no_grad as _no_grad

__all__ = ["Optimizer", "required"]


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()


def _check_nonnegative(**hyperparameters) -> None:
    """torch's ValueError for a negative (or NaN) hyper-parameter, checked in the order given."""
    for name, value in hyperparameters.items():
        if not 0.0 <= value:
            what = {"lr": "learning rate", "eps": "epsilon value"}.get(name, f"{name} value")
            raise ValueError(f"Invalid {what}: {value}")


def _check_betas(betas) -> None:
    """torch's ValueError for an Adam-style beta outside [0, 1)."""
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")


def _lr(lr):
    """A Tensor learning rate as a float (as torch's optimisers take it without capturable)."""
    return float(lr) if isinstance(lr, _fg.Tensor) else lr


def _as_array(t):
    """A read-only funcgrad Array over a tensor's current value (no copy)."""
    return _fnp.asarray(t.detach()._host())


def _write(t, value) -> None:
    """Write `value` (an Array or ndarray) into tensor `t`'s storage in place (bumps its version)."""
    with _no_grad():
        t.copy_(_fg.from_numpy(np.array(value, dtype=t.detach()._host().dtype, copy=True)))


class Optimizer:
    """Base class of the stateful optimisers (torch.optim.Optimizer)."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, _fg.Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + type(params).__name__)
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for g in param_groups:
            self.add_param_group(g)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}"
            for k in sorted(group):
                if k != "params":
                    s += f"\n    {k}: {group[k]}"
        return s + "\n)"

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, _fg.Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        # named parameters (as from module.named_parameters()) give the group a "param_names" list
        names = [p[0] for p in param_group["params"] if isinstance(p, tuple)]
        param_group["params"] = [p[1] if isinstance(p, tuple) else p for p in param_group["params"]]
        if names:
            if len(names) != len(param_group["params"]):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        for p in param_group["params"]:
            if not isinstance(p, _fg.Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + type(p).__name__)
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter "
                                 f"{name}")
            param_group.setdefault(name, default)
        ids = {id(p) for p in param_group["params"]}
        if len(ids) != len(param_group["params"]):
            import warnings
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error", stacklevel=3)
        seen = set()
        for g in self.param_groups:
            seen.update(id(p) for p in g["params"])
            if ("param_names" in param_group) != ("param_names" in g):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        g = p.grad
                        if g.grad_fn is not None:
                            g.detach_()
                        else:
                            g.requires_grad_(False)
                        g.zero_()

    def step(self, closure=None):
        raise NotImplementedError

    def _closure(self, closure):
        if closure is None:
            return None
        with _enable_grad():
            return closure()

    # --- state_dict -------------------------------------------------------------------------------------------
    def state_dict(self):
        index = {}
        start = 0

        def pack_group(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack_group(g) for g in self.param_groups]
        state = {index[id(k)]: v for k, v in self.state.items() if id(k) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        state_dict = copy.deepcopy(state_dict) if not _has_tensors(state_dict) else _copy_sd(state_dict)
        groups = self.param_groups
        saved_groups = state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = {name: _cast_state(param, name, val) for name, val in v.items()}
            else:
                state[k] = v
        new_groups = []
        for g, s in zip(groups, saved_groups):
            s = dict(s)
            s["params"] = g["params"]
            if "param_names" in g and "param_names" not in s:
                s["param_names"] = g["param_names"]
            new_groups.append(s)
        self.state = state
        self.param_groups = new_groups


def _has_tensors(obj):
    if isinstance(obj, _fg.Tensor):
        return True
    if isinstance(obj, dict):
        return any(_has_tensors(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return any(_has_tensors(v) for v in obj)
    return False


def _copy_sd(obj):
    if isinstance(obj, _fg.Tensor):
        return obj.detach().clone()
    if isinstance(obj, dict):
        return {k: _copy_sd(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_copy_sd(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_copy_sd(v) for v in obj)
    return copy.deepcopy(obj)


def _cast_state(param, name, value):
    """As torch: floating state tensors take the parameter's dtype, except `step`."""
    if isinstance(value, _fg.Tensor) and name != "step" and value.is_floating_point():
        return value.to(param.dtype)
    return value


def _functional_step(opt, closure, defaults, update, init):
    """One step of a per-parameter optimiser: for each parameter with a gradient, create its state with
    `init(p, group)` (an ordered dict of tensors, torch's layout: a float32 `step` and buffers) when empty,
    then apply the `update` of funcgrad.optim.functional to it in place (see `_apply_update`)."""
    loss = opt._closure(closure)
    with _no_grad():
        for group in opt.param_groups:
            hp = {k: group[k] for k in defaults}
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if g.is_sparse:
                    raise RuntimeError(f"{type(opt).__name__} does not support sparse gradients")
                st = opt.state[p]
                if len(st) == 0:
                    st.update(init(p, group))
                _apply_update(update, p, g, st, hp)
    return loss


def _apply_update(update, p, g, st, hp, step=None) -> None:
    """Apply a functional `update` to parameter p (gradient g) and its state tensors `st` in place.

    The update runs with inplace=True on the tensors' own storage buffers (NumPy computes straight into
    them; nothing is copied) and each written tensor's version is bumped, as torch's in-place ops do. The
    step count is `step` when given (SGD keeps none), else st["step"], which is then incremented. Tensors
    without a writeable buffer of their own (traced values) take the copying path instead."""
    names = [k for k in st if k != "step"]
    count = step if step is not None else int(st["step"].item())
    pb = _buf(p)
    bufs = [_buf(st[k]) for k in names]
    gv = _grad_buf(g)
    if pb is None or gv is None or any(b is None for b in bufs):
        _apply_update_copying(update, p, g, st, hp, names, count)
    else:
        fstate = dict(zip(names, bufs))
        fstate["step"] = count
        new_p, new_st = update(pb, gv, fstate, hp, inplace=True)
        if new_p is not pb:
            np.copyto(pb, new_p, casting="same_kind")
        p._bump()
        for k, b in zip(names, bufs):
            v = new_st[k]
            if v is not b:  # a state entry the formula computes afresh (0-d schedules): write it
                np.copyto(b, v, casting="same_kind")
            st[k]._bump()
    if step is None:
        s = st["step"]
        sb = _buf(s)
        if sb is None:
            s.add_(1)
        else:
            sb += 1
            s._bump()


def _apply_update_foreach(update, ps, gs, sts, hp, step: int) -> bool:
    """_apply_update for many parameters at once (torch's foreach path): one call of `update` on lists of
    the parameters' buffers, gradients and state buffers (`sts`: one state dict per parameter, all with the
    same keys, or None), so the formula's per-call work (hyper-parameters, tree handling) is paid once per
    group instead of once per parameter. The step count is `step` (no "step" entries are kept). Returns
    False, having done nothing, where some tensor has no writeable buffer (the caller then goes one by one)."""
    names = [k for k in sts[0] if k != "step"] if sts else []
    pbs = [_buf(p) for p in ps]
    gvs = [_grad_buf(g) for g in gs]
    sbs = {k: [_buf(st[k]) for st in sts] for k in names}
    if any(b is None for b in pbs) or any(b is None for b in gvs) or \
            any(b is None for k in names for b in sbs[k]):
        return False
    fstate = dict(sbs)
    fstate["step"] = step
    new_ps, new_st = update(pbs, gvs, fstate, hp, inplace=True)
    for p, b, v in zip(ps, pbs, new_ps):
        if v is not b:
            np.copyto(b, v, casting="same_kind")
        p._bump()
    for k in names:
        for st, b, v in zip(sts, sbs[k], new_st[k]):
            if v is not b:
                np.copyto(b, v, casting="same_kind")
            st[k]._bump()
    return True


def _apply_update_copying(update, p, g, st, hp, names, count) -> None:
    fstate = {k: _real(st[k]) for k in names}
    fstate["step"] = count
    new_p, new_st = update(_real(p), _real(g), fstate, hp)
    _write_real(p, new_p)
    for k in names:
        _write_real(st[k], new_st[k])


def _buf(t):
    """A writeable NumPy array over t's storage (a complex tensor seen as real with a trailing (re, im) axis,
    as torch's optimisers treat complex parameters), or None where t has none to offer."""
    v = t._v
    if v is None or not v.flags.writeable:
        return None
    if v.dtype.kind == "c":
        if not v.flags.c_contiguous:
            return None
        return v.reshape(-1).view(v.real.dtype).reshape(v.shape + (2,))
    return v


def _grad_buf(g):
    """A NumPy array of g's value in _buf's layout (read only), or None for a traced gradient."""
    v = g._v
    if v is None:
        return None
    if v.dtype.kind == "c":
        v = np.ascontiguousarray(v)
        return v.reshape(-1).view(v.real.dtype).reshape(v.shape + (2,))
    return v


def _real(t):
    """An Array over t's value; a complex tensor is seen as real with a trailing (re, im) axis, as torch's
    optimisers treat complex parameters (view_as_real)."""
    if not t.is_complex():
        return _as_array(t)
    h = np.ascontiguousarray(t.detach()._host())
    return _fnp.asarray(h.view(h.real.dtype).reshape(h.shape + (2,)))


def _write_real(t, value) -> None:
    """Write an update computed by _real's convention back into t."""
    if t.is_complex():
        dt = t.detach()._host().dtype
        value = np.ascontiguousarray(np.asarray(value, dtype=np.zeros((), dt).real.dtype)).view(dt)
        value = value.reshape(tuple(t.shape))
    _write(t, value)


def _step_tensor():
    return _fg.tensor(0.0, dtype=_fg.float32)
