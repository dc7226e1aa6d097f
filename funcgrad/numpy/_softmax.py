"""The one softmax and log_softmax formula: jax.nn's, which torch.softmax/F.softmax/F.log_softmax and
jax.scipy.special.softmax/log_softmax call (so every face gives the same bits and the same derivatives).

It lives in the NumPy face, below scipy and jax.nn, because all of them call it. A real floating input without
`where` is one primitive (the softmax / log_softmax cards in _src/prims/reduction.py, whose rules are the closed
forms torch's backward and jax.nn's custom_jvp use); otherwise the formula is written out, the max held constant
(stop_gradient), which leaves the value unchanged and keeps the derivative rules those of the plain formula.
"""
from __future__ import annotations

from .. import lax
from .. import numpy as jnp
from .._src.prims import elementwise as ew
from .._src.prims import reduction as red
from .._src.prims.reduction import reduce_max, reduce_sum
from .._src.prims.shape import broadcast_in_dim
from ._promote import normalize_index

__all__ = ["softmax", "log_softmax"]


def _where_mask(x, where, fill):
    return x if where is None else jnp.where(where, x, fill)


def _check_axes(x, axis, op):
    """The axes as a tuple of non-negative ints; out-of-range axes raise (a 0-d array has no axis -1), as in
    jax.nn (NumPy's max/sum accept them)."""
    if axis is None:
        return tuple(range(x.ndim))
    return tuple(normalize_index(a, x.ndim, op) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))


def _shifted(x, axes):
    """x - max(x) over axes (the max held constant: the shift does not change softmax), and a function that
    broadcasts a reduction over axes back to x's shape; written with the cards directly (equal shapes and
    dtypes), so the eager path does no promotion or broadcasting work."""
    shape, keep = x.shape, tuple(i for i in range(x.ndim) if i not in axes)

    def back(r):
        return broadcast_in_dim(r, shape, keep)
    return ew.sub(x, back(lax.stop_gradient(reduce_max(x, axes)))), back


def softmax(x, axis=-1, where=None):
    """exp(x - max) / sum over `axis` (an int, a tuple, or None: every axis) of the Array x; `where` masks
    entries out (they get 0)."""
    axes = _check_axes(x, axis, "softmax")
    if x.size == 0:  # (no max to shift by: the empty result, in exp's dtype, as JAX)
        return jnp.exp(x)
    if where is None and x.dtype.kind == "f":
        return red.softmax(x, tuple(sorted(axes)))
    if where is None and x.dtype.kind == "c":
        shifted, back = _shifted(x, axes)
        unnorm = ew.exp(shifted)
        return ew.div(unnorm, back(reduce_sum(unnorm, axes)))
    xm = _where_mask(x, where, -jnp.inf)
    unnorm = jnp.exp(xm - lax.stop_gradient(jnp.max(xm, axis=axis, keepdims=True)))
    unnorm = _where_mask(unnorm, where, 0.0)
    # masked entries are 0 after the division too, as in JAX: a row with every entry masked out gives
    # zeros, not 0/0 = nan
    return _where_mask(unnorm / jnp.sum(unnorm, axis=axis, keepdims=True), where, 0.0)


def log_softmax(x, axis=-1, where=None):
    """x - max - log(sum(exp(x - max))) over `axis` of the Array x; `where` masks entries out (they get -inf)."""
    axes = _check_axes(x, axis, "log_softmax")
    if x.size == 0:  # (no max to shift by: the empty result, in exp's dtype, as JAX)
        return jnp.exp(x)
    if where is None and x.dtype.kind == "f":
        return red.log_softmax(x, tuple(sorted(axes)))
    if where is None and x.dtype.kind == "c":
        shifted, back = _shifted(x, axes)
        return ew.sub(shifted, back(ew.log(reduce_sum(ew.exp(shifted), axes))))
    xm = _where_mask(x, where, -jnp.inf)
    shifted = xm - lax.stop_gradient(jnp.max(xm, axis=axis, keepdims=True))
    out = shifted - jnp.log(jnp.sum(_where_mask(jnp.exp(shifted), where, 0.0), axis=axis, keepdims=True))
    return _where_mask(out, where, -jnp.inf)
