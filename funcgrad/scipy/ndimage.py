"""funcgrad.scipy.ndimage: map_coordinates (orders 0 and 1), as jax.scipy.ndimage.

Values of `input` at fractional `coordinates` (one array per input dimension) by nearest-neighbour
(order 0) or multilinear (order 1) interpolation. Out-of-range indices follow `mode`:
'constant' (cval, interpolated across the edge: SciPy's 'grid-constant', as JAX), 'nearest' (edge
value), 'wrap' (periodic: SciPy's 'grid-wrap', as JAX), 'mirror' (d c b | a b c d | c b a) or
'reflect' (d c b a | a b c d | d c b a). Differentiable in input and, for order 1, in the coordinates.
"""
from __future__ import annotations

import itertools

from .. import numpy as jnp

__all__ = ["map_coordinates"]

_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")


def _fix_index(idx, size: int, mode: str):
    if mode == "nearest" or mode == "constant":
        return jnp.clip(idx, 0, size - 1)
    if mode == "wrap":
        return jnp.remainder(idx, size)
    if mode == "mirror":
        if size == 1:
            return jnp.zeros_like(idx)
        period = 2 * (size - 1)
        r = jnp.remainder(idx, period)
        return jnp.where(r >= size, period - r, r)
    period = 2 * size  # reflect
    r = jnp.remainder(idx, period)
    return jnp.where(r >= size, period - 1 - r, r)


def _valid(idx, size: int):
    return (idx >= 0) & (idx < size)


def map_coordinates(input, coordinates, order: int, mode: str = "constant", cval=0.0):  # noqa: A002
    """input sampled at `coordinates` (a sequence of input.ndim arrays of one shape)."""
    x = jnp.asarray(input)
    coords = [jnp.asarray(c) for c in coordinates]
    if len(coords) != x.ndim:
        raise ValueError(f"map_coordinates: coordinates must be a sequence of length input.ndim ({x.ndim}), "
                         f"got {len(coords)}")
    if order not in (0, 1):
        raise NotImplementedError(f"map_coordinates: order must be 0 or 1 (as in JAX), got {order}")
    if mode not in _MODES:
        raise NotImplementedError(f"map_coordinates: mode must be one of {_MODES}, got {mode!r}")
    coords = list(jnp.broadcast_arrays(*coords))
    ftype = jnp.result_type(x.dtype, coords[0].dtype, float) if not jnp.issubdtype(x.dtype, jnp.inexact) \
        else x.dtype
    per_dim = []  # for each dimension: [(index, weight), ...]
    for c, size in zip(coords, x.shape):
        c = c.astype(ftype) if not jnp.issubdtype(c.dtype, jnp.floating) else c
        if order == 0:
            i = jnp.floor(c + 0.5).astype(jnp.int64)
            per_dim.append([(i, None)])
        else:
            lo = jnp.floor(c)
            w_hi = c - lo
            i = lo.astype(jnp.int64)
            per_dim.append([(i, 1 - w_hi), (i + 1, w_hi)])
    out = 0
    for corner in itertools.product(*per_dim):
        idx = tuple(_fix_index(i, size, mode) for (i, _), size in zip(corner, x.shape))
        vals = x[idx]
        if mode == "constant":
            ok = True
            for (i, _), size in zip(corner, x.shape):
                ok = ok & _valid(i, size)
            vals = jnp.where(ok, vals, jnp.asarray(cval, dtype=vals.dtype))
        w = None
        for _, wd in corner:
            if wd is not None:
                w = wd if w is None else w * wd
        term = vals if w is None else vals * w
        out = term if isinstance(out, int) else out + term
    if jnp.issubdtype(x.dtype, jnp.integer):
        out = jnp.round(out).astype(x.dtype) if order == 1 else out.astype(x.dtype)
    return out
