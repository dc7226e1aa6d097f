"""scipy.stats' mode and rankdata, as jax.scipy.stats gives them (traceable: sort + searchsorted)."""
from __future__ import annotations

from typing import NamedTuple

from ... import numpy as jnp
from ..._src.core import dtypes
from ..._src.interpreters import vmap

_METHODS = ("average", "min", "max", "dense", "ordinal")


class ModeResult(NamedTuple):
    mode: object
    count: object


def _along(f, a, axis):
    """f applied to every 1-D slice of a along axis; f returns one value per slice (or a pytree)."""
    x = jnp.moveaxis(a, axis, -1)
    batch = x.shape[:-1]
    flat = x.reshape((-1, x.shape[-1]))
    out = vmap(f)(flat)
    return [o.reshape(batch + o.shape[1:]) for o in (out if isinstance(out, tuple) else (out,))]


def _check_policy(name, nan_policy):
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"{name}: nan_policy must be 'propagate', 'omit' or 'raise', got {nan_policy!r}")
    if nan_policy != "propagate":
        raise NotImplementedError(f"{name}: only nan_policy='propagate' is supported (as in JAX)")


def _row_mode(row):
    s = jnp.sort(row)
    counts = jnp.searchsorted(s, s, side="right") - jnp.searchsorted(s, s, side="left")
    i = jnp.argmax(counts)  # the first of the most frequent: the smallest value
    return s[i], counts[i]  # (NaNs sort last and count as one value, as JAX counts them)


def mode(a, axis: int | None = 0, nan_policy: str = "propagate", keepdims: bool = False) -> ModeResult:
    """The most frequent value along `axis` (the smallest of ties) and how often it occurs; NaNs count as
    one value (larger than every number), as JAX counts them."""
    _check_policy("mode", nan_policy)
    a = jnp.asarray(a)
    full_shape = (1,) * a.ndim if axis is None else None  # (keepdims with axis=None keeps every dimension)
    if axis is None:
        a, axis = jnp.ravel(a), 0
    axis = axis % max(a.ndim, 1) if a.ndim else 0
    if a.ndim == 0:
        a = a.reshape(1)
    if a.shape[axis] == 0:
        shape = tuple(n for i, n in enumerate(a.shape) if i != axis)
        value = jnp.full(shape, jnp.nan, _float_dtype())
        out = ModeResult(value, jnp.zeros(shape, value.dtype))
    else:
        m, c = _along(_row_mode, a, axis)
        out = ModeResult(m, c)
    if keepdims and full_shape is not None:
        out = ModeResult(out.mode.reshape(full_shape), out.count.reshape(full_shape))
    elif keepdims:
        out = ModeResult(jnp.expand_dims(out.mode, axis), jnp.expand_dims(out.count, axis))
    return out


def _row_ranks(method):
    def ranks(row):
        s = jnp.sort(row)
        lo = jnp.searchsorted(s, row, side="left")
        hi = jnp.searchsorted(s, row, side="right")
        if method == "min":
            r = lo + 1
        elif method == "max":
            r = hi
        elif method == "average":
            r = (lo + 1 + hi) / 2
        elif method == "dense":
            new = jnp.concatenate([jnp.ones(1, dtype=bool), s[1:] != s[:-1]])
            r = jnp.cumsum(new)[lo]
        else:  # ordinal: ties by order of appearance
            r = jnp.argsort(jnp.argsort(row, stable=True), stable=True) + 1
        r = r.astype(_float_dtype())
        if dtypes.is_inexact(row.dtype):
            r = jnp.where(jnp.any(jnp.isnan(row)), jnp.nan, r)
        return r
    return ranks


def _float_dtype():
    """The default float dtype (float32, or float64 with x64 enabled)."""
    return jnp.asarray(0.0).dtype


def rankdata(a, method: str = "average", *, axis: int | None = None, nan_policy: str = "propagate"):
    """The ranks (from 1) of a's values, over all of a (axis=None, flattened) or along `axis`; ties take
    the `method` rank ('average', 'min', 'max', 'dense', 'ordinal'). Floating-point ranks, as JAX gives;
    a slice with a NaN ranks all NaN (nan_policy='propagate')."""
    if method not in _METHODS:
        raise ValueError(f"rankdata: unknown method {method!r}; use one of {', '.join(_METHODS)}")
    _check_policy("rankdata", nan_policy)
    a = jnp.asarray(a)
    if axis is None:
        a, axis = jnp.ravel(a), 0
    if a.size == 0:
        return jnp.zeros(a.shape, _float_dtype())
    return jnp.moveaxis(_along(_row_ranks(method), a, axis)[0], -1, axis)


__all__ = ["mode", "rankdata", "ModeResult"]
