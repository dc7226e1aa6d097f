"""Extrema: amax/amin, max/min (overall, along a dim as (values, indices), or elementwise against another
tensor), aminmax and argmax/argmin, with torch's errors on empty input."""
from __future__ import annotations

import numpy as np

from .. import _jnp as jnp, _dtype as D, return_types
from ..._src.core.array import Array
from ..._src.prims import elementwise as ew
from .._tensor import Tensor, _dim, _make, _wrap
from ..._src.prims.reduction import reduce_max_p as _reduce_max_p, reduce_min_p as _reduce_min_p
from .._dispatch import _apply, _apply1, _apply_nograd, _apply_prim1
from ._common import _cast, _dims, _NPB, _out, _with_out
from .arithmetic import maximum, minimum
from .indexing import _gather_along
from .reductions import _keep_all


def _empty_check(input, name, dim=None):
    if input.numel() == 0 and (dim is None or input.shape[dim] == 0):
        raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify "
                         f"the reduction dim with the 'dim' argument." if dim is None else
                         f"{name}(): Expected reduction dim {dim} to have non-zero size.")


def _empty_axes_check(input, name, axes):
    """torch's rule for max-like reductions: every reduced dim must be non-empty."""
    if axes is None or input.ndim == 0:
        if input.numel() == 0:
            raise (IndexError if name.startswith("arg") else RuntimeError)(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                "reduction dim with the 'dim' argument.")
        return
    for a in axes:
        if input.shape[a] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero size.")


@_with_out()
def amax(input, dim=(), keepdim=False):
    _empty_axes_check(input, "amax", _dims(dim, input.ndim, dup_ok=True))  # torch checks this first
    axes = _dims(dim, input.ndim)
    return _apply1("Amax", lambda a: jnp.max(a, axis=axes, keepdims=keepdim), input)


@_with_out()
def amin(input, dim=(), keepdim=False):
    _empty_axes_check(input, "amin", _dims(dim, input.ndim, dup_ok=True))
    axes = _dims(dim, input.ndim)
    return _apply1("Amin", lambda a: jnp.min(a, axis=axes, keepdims=keepdim), input)


def _take_at(d, keepdim):
    def fn(a, i):
        v = jnp.take_along_axis(a, i, axis=d)
        return v if keepdim else jnp.squeeze(v, d)
    return fn


def _minmax(name, red, argred, input, dim, keepdim, other_fn):
    if isinstance(dim, Tensor):
        return other_fn(input, dim)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        v = input._v
        if v is not None and v.ndim and v.dtype.kind == "f" and not np.isnan(v).any():
            # NaN-free: one bind of the card (its rule shares the gradient evenly among ties, as torch's)
            prim = _reduce_max_p if name == "max" else _reduce_min_p
            p = _ALL.get(v.ndim)
            if p is None:
                p = _ALL[v.ndim] = {"axes": tuple(range(v.ndim))}
            return _apply_prim1(name.capitalize() + "1", prim, lambda a: prim.bind(a, **p), input, p)
        return _apply1(name.capitalize() + "1", lambda a: red(a), input)
    d = _dim(dim, input.ndim)
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    if input.ndim == 0:
        return getattr(return_types, name)(input.clone() if not input._rg else input * 1,
                                           _wrap(Array(np.zeros((), np.int64))))
    v = input._v
    if v is not None and v.dtype.kind == "f":  # one bind of gather at the host argmax/argmin (torch's node)
        i = (np.argmax if name == "max" else np.argmin)(v, axis=d)
        ik = i.reshape(v.shape[:d] + (1,) + v.shape[d + 1:])
        values = _gather_along(name.capitalize(), input, ik, d, None if keepdim else i.shape)
        return getattr(return_types, name)(values, _make(ik.copy() if keepdim else i))
    idx = _apply_nograd(lambda a: jnp.expand_dims(argred(a, axis=d), d), (input,))
    values = _apply(name.capitalize(), _take_at(d, keepdim), (input, idx))
    if not keepdim:
        idx = idx.squeeze(d)
    return getattr(return_types, name)(values, idx)


_ALL: dict = {}  # ndim -> the params of a reduction over every axis


def _extremum_all(red, fill):
    """torch.max(x) / min(x) of everything: with a NaN the result is NaN and its gradient is spread evenly
    over the NaN entries, as torch (amax's rule, which the card follows, gives NaN everywhere); without
    one, the card (ties share the gradient evenly). Concrete NaN-free operands take the card alone."""
    def f(a):
        if D.kind(a.dtype) != "f" or (a.__class__ is Array and not np.isnan(a._buf).any()):
            return red(a)
        nan = ew.ne(a, a)
        z = jnp.zeros_like(a)
        m = red(ew.select(nan, jnp.full_like(a, fill), a))
        cnt = jnp.sum(_cast(nan, a.dtype))
        spread = ew.div(jnp.sum(ew.select(nan, a, z)), ew.max(cnt, jnp.ones_like(cnt)))
        return ew.select(jnp.any(nan), spread, m)
    return f


_max_all = _extremum_all(lambda a: jnp.max(a), -np.inf)
_min_all = _extremum_all(lambda a: jnp.min(a), np.inf)


def max(input, dim=None, keepdim=False, *, out=None):  # noqa: A001
    return _out(_minmax("max", _max_all, jnp.argmax, input, dim, keepdim, maximum), out,
                isinstance(out, (tuple, list)))


def min(input, dim=None, keepdim=False, *, out=None):  # noqa: A001
    return _out(_minmax("min", _min_all, jnp.argmin, input, dim, keepdim, minimum), out,
                isinstance(out, (tuple, list)))


def _int_dim(name, dim) -> None:
    """torch's argument check for a single-dim reduction given a tuple or list of dims."""
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")


@_with_out()
def aminmax(input, *, dim=None, keepdim=False):
    _int_dim("aminmax", dim)
    if input.numel() == 0:
        if dim is None:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        if input.ndim and input.shape[_dim(dim, input.ndim)] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {_dim(dim, input.ndim)} to have non-zero size.")
    return return_types.aminmax(amin(input, () if dim is None else dim, keepdim),
                                amax(input, () if dim is None else dim, keepdim))


def _arg_extreme(name, jfn, input, dim, keepdim):
    """argmax/argmin: bool refused, empty reduced dims refused, all dims flattened when dim is None."""
    _int_dim(name, dim)
    if input._np_dtype() == _NPB:
        raise RuntimeError(f"{name}(): does not support bool input")
    _empty_axes_check(input, name, None if dim is None else (_dim(dim, input.ndim),))
    if dim is None:
        return _apply_nograd(lambda a: _keep_all(jfn(a), a.ndim, keepdim), (input,))
    d = _dim(dim, input.ndim)
    return _apply_nograd(lambda a: jfn(a, axis=d, keepdims=keepdim) if a.ndim else jnp.zeros((), np.int64),
                         (input,))


@_with_out()
def argmax(input, dim=None, keepdim=False):
    return _arg_extreme("argmax", jnp.argmax, input, dim, keepdim)


@_with_out()
def argmin(input, dim=None, keepdim=False):
    return _arg_extreme("argmin", jnp.argmin, input, dim, keepdim)


# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods
METHODS = ("amax", "amin", "aminmax", "max", "min", "argmax", "argmin")
INPLACE = ()

__all__ = ["amax", "amin", "aminmax", "argmax", "argmin", "max", "min"]
