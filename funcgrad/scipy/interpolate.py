"""funcgrad.scipy.interpolate.RegularGridInterpolator: linear or nearest interpolation on a
rectilinear grid, as jax.scipy.interpolate (a pytree, so it passes through jit; differentiable in the
values and, for 'linear', in the query points)."""
from __future__ import annotations

import itertools

from .. import numpy as jnp
from .._src.core.tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]


class RegularGridInterpolator:
    """Interpolate `values` given on the grid `points` (one increasing 1-d array per dimension).

    Query points outside the grid get `fill_value` (NaN by default; None extrapolates linearly).
    bounds_error=True is not supported (as in JAX)."""

    def __init__(self, points, values, method: str = "linear", bounds_error: bool = False, fill_value=float("nan")):
        if method not in ("linear", "nearest"):
            raise ValueError(f"RegularGridInterpolator: method {method!r} is not defined; use 'linear' or 'nearest'")
        if bounds_error:
            raise NotImplementedError("RegularGridInterpolator: bounds_error=True is not supported")
        self.method, self.bounds_error = method, bounds_error
        self.grid = tuple(jnp.asarray(p) for p in points)
        self.values = jnp.asarray(values)
        if len(self.grid) > self.values.ndim:
            raise ValueError(f"RegularGridInterpolator: there are {len(self.grid)} point arrays, but values has "
                             f"{self.values.ndim} dimensions")
        for i, p in enumerate(self.grid):
            if p.ndim != 1 or p.shape[0] != self.values.shape[i]:
                raise ValueError(f"RegularGridInterpolator: there are {p.shape[0] if p.ndim == 1 else p.shape} "
                                 f"points in dimension {i}, but values has {self.values.shape[i]} values")
        self.fill_value = fill_value

    def __call__(self, xi, method: str | None = None):
        method = self.method if method is None else method
        if method not in ("linear", "nearest"):
            raise ValueError(f"RegularGridInterpolator: method {method!r} is not defined")
        ndim = len(self.grid)
        xi = jnp.asarray(xi)
        if xi.shape[-1] != ndim:
            raise ValueError(f"RegularGridInterpolator: the requested sample points have dimension "
                             f"{xi.shape[-1]}, but this interpolator has dimension {ndim}")
        batch = xi.shape[:-1]
        xi = jnp.reshape(xi, (-1, ndim))
        idx, frac, outside = [], [], jnp.zeros(xi.shape[0], dtype=bool)
        for d, g in enumerate(self.grid):
            x = xi[:, d]
            i = jnp.clip(jnp.searchsorted(g, x, side="right") - 1, 0, g.shape[0] - 2) if g.shape[0] > 1 \
                else jnp.zeros(x.shape, dtype=jnp.int64)
            lo = g[i]
            hi = g[jnp.minimum(i + 1, g.shape[0] - 1)]
            t = jnp.where(hi > lo, (x - lo) / jnp.where(hi > lo, hi - lo, 1), 0)
            idx.append(i)
            frac.append(t)
            outside = outside | (x < g[0]) | (x > g[-1])
        extra = self.values.shape[ndim:]
        if method == "nearest":
            near = tuple(jnp.where(t <= 0.5, i, i + 1) for i, t in zip(idx, frac))
            out = self.values[near]
        else:
            out = 0
            for corner in itertools.product((0, 1), repeat=ndim):
                w = 1
                ix = []
                for c, i, t in zip(corner, idx, frac):
                    w = w * (t if c else 1 - t)
                    ix.append(i + c if c else i)
                ix = tuple(jnp.minimum(v, g.shape[0] - 1) for v, g in zip(ix, self.grid))
                term = self.values[ix] * jnp.reshape(w, w.shape + (1,) * len(extra))
                out = term if isinstance(out, int) else out + term
        if self.fill_value is not None:
            mask = jnp.reshape(outside, outside.shape + (1,) * len(extra))
            out = jnp.where(mask, jnp.asarray(self.fill_value, dtype=out.dtype), out)
        return jnp.reshape(out, batch + extra)


def _flatten(r):
    return (r.grid, r.values, r.fill_value), (r.method, r.bounds_error)


def _unflatten(aux, children):
    obj = object.__new__(RegularGridInterpolator)
    obj.grid, obj.values, obj.fill_value = children
    obj.method, obj.bounds_error = aux
    return obj


register_pytree_node(RegularGridInterpolator, _flatten, _unflatten)
