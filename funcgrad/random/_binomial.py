"""binomial, multinomial and the deprecated shuffle, with jax.random's signatures.

binomial draws exactly from Binomial(n, p) by order statistics (Devroye's recursive method): the
((n+1)//2)-th smallest of n uniforms is Y ~ Beta(a, n + 1 - a); if Y <= p the a smallest lie below p
and the count continues as a + Binomial(n - a, (p - Y)/(1 - Y)), else as Binomial(a - 1, p / Y).
Each step halves n, so after a fixed number of steps (enough for n up to 2^53) at most 32 trials
remain, which are counted directly from uniforms. The loop has a static length, so it runs under jit
and vmap. The values differ from JAX's (which uses other algorithms), the distribution does not.
"""
from __future__ import annotations

import math
import operator
import warnings

import numpy as np

from ..core import dtypes
from ..core.trace import concrete_value
from ._continuous import uniform
from ._discrete import permutation
from ._gamma import beta
from ._keys import check_key, split

_SMALL = 32


def _float(dtype):
    if dtype is None or dtype is float:
        return dtypes.defaults.float_
    dt = dtypes.canonicalize(dtype)
    if not dtypes.is_float(dt):
        raise ValueError(f"dtype argument to `binomial` must be a float dtype, got {dt}")
    return dt


def _steps(n) -> int:
    conc = concrete_value(n)
    top = float(np.max(np.asarray(conc))) if conc is not None and conc.size else 2.0 ** 53
    if not np.isfinite(top) or top <= _SMALL:
        return 0 if np.isfinite(top) else 1
    return int(math.ceil(math.log2(top / _SMALL))) + 1


def binomial(key, n, p, shape=None, dtype=float):
    """Samples of Binomial(n, p) (counts as floats of `dtype`); NaN where n < 0 or p outside [0, 1]."""
    from .. import numpy as jnp
    key = check_key(key, "binomial")
    dt = _float(dtype)
    n = jnp.asarray(n, dtype=dt)
    p = jnp.asarray(p, dtype=dt)
    shape = tuple(jnp.broadcast_shapes(n.shape, p.shape)) if shape is None else tuple(
        operator.index(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    n = jnp.broadcast_to(n, shape)
    p = jnp.broadcast_to(p, shape)
    valid = (n >= 0) & (p >= 0) & (p <= 1) & (jnp.floor(n) == n)
    cur_n = jnp.where(valid, n, 0)
    cur_p = jnp.where(valid, p, 0)
    total = jnp.zeros(shape, dt)
    steps = _steps(cur_n)
    keys = split(key, steps + 1)
    for i in range(steps):
        big = cur_n > _SMALL
        a = jnp.where(big, jnp.floor((cur_n + 1) / 2), 1)
        b = jnp.where(big, cur_n + 1 - a, 1)
        y = beta(keys[i], a, b, shape, dt)
        right = y <= cur_p
        total = total + jnp.where(big & right, a, 0)
        new_n = jnp.where(right, cur_n - a, a - 1)
        safe_y = jnp.clip(y, jnp.finfo(dt).tiny, 1 - jnp.finfo(dt).epsneg)
        new_p = jnp.where(right, (cur_p - y) / (1 - safe_y), cur_p / safe_y)
        cur_n = jnp.where(big, new_n, cur_n)
        cur_p = jnp.where(big, jnp.clip(new_p, 0, 1), cur_p)
    u = uniform(keys[steps], shape + (_SMALL,), dt)
    trial = jnp.arange(_SMALL, dtype=dt) < cur_n[..., None]
    total = total + jnp.sum((u < cur_p[..., None]) & trial, axis=-1).astype(dt)
    return jnp.where(valid, total, jnp.nan)


def multinomial(key, n, p, *, shape=None, dtype=float, unroll=1):
    """Counts of n draws over the categories on p's last axis (p sums to 1), as conditional binomials:
    x_i ~ Binomial(n - sum_{j<i} x_j, p_i / (1 - sum_{j<i} p_j)). Result: shape + (k,) (shape
    defaults to the broadcast of n's and p's batch shapes), floats of `dtype`."""
    from .. import numpy as jnp
    key = check_key(key, "multinomial")
    dt = _float(dtype)
    p = jnp.asarray(p, dtype=dt)
    n = jnp.asarray(n, dtype=dt)
    if p.ndim < 1:
        raise ValueError("multinomial: p must have at least one dimension (the categories)")
    k = p.shape[-1]
    batch = tuple(jnp.broadcast_shapes(n.shape, p.shape[:-1])) if shape is None else tuple(shape)
    p = jnp.broadcast_to(p, batch + (k,))
    remaining_n = jnp.broadcast_to(n, batch)
    remaining_p = jnp.ones(batch, dt)
    keys = split(key, k)
    counts = []
    for i in range(k - 1):
        pi = p[..., i]
        frac = jnp.where(remaining_p > 0, jnp.clip(pi / jnp.where(remaining_p > 0, remaining_p, 1), 0, 1), 0)
        c = binomial(keys[i], remaining_n, frac, batch, dt)
        counts.append(c)
        remaining_n = remaining_n - c
        remaining_p = remaining_p - pi
    counts.append(remaining_n)
    return jnp.stack(counts, axis=-1)


def shuffle(key, x, axis: int = 0):
    """Deprecated, as in JAX: the same as permutation(key, x, axis, independent=True) (each slice
    along `axis` shuffled separately)."""
    warnings.warn("jax.random.shuffle is deprecated; use jax.random.permutation with independent=True.",
                  DeprecationWarning, stacklevel=2)
    return permutation(key, x, axis=axis, independent=True)
