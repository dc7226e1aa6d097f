"""binomial, multinomial and the deprecated shuffle, with jax.random's signatures and algorithms.

binomial is JAX's (which is TensorFlow's): where n * min(p, 1 - p) <= 10, the inversion algorithm
(count geometric waiting times until their sum exceeds n); elsewhere Hormann's BTRS transformed
rejection ("The generation of binomial random variates", 1993) with Stirling tail corrections. Both
run as whole-array while loops on the same key, and the result is chosen per element; p > 1/2 is
sampled as n - Binomial(n, 1 - p). The arithmetic is JAX's operation for operation in p's dtype,
so the counts are JAX's (a count can differ only where a log's last bit decides a rejection test).
multinomial is JAX's sequence of conditional binomials.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from .. import numpy as jnp
from .._src.core import dtypes
from .._src.control.while_loop import while_loop
from ._continuous import _uniform
from ._discrete import permutation
from ._keys import check_key, const, split, split2

_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                  0.00925546218271273, 0.00833056343336287)


def _float(dtype, name="binomial"):
    if dtype is None or dtype is float:
        return np.dtype(dtypes.defaults.float_)
    dt = dtypes.canonicalize(dtype)
    if not dtypes.is_float(dt):
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dt}")
    return np.dtype(dt)


def _unif(key, shape, dtype):
    return _uniform(key, shape, dtype, const(0.0, dtype), const(1.0, dtype))


def _stirling_approx_tail(k):
    """log(k!) minus its Stirling approximation: a table for k <= 9, else the series (evaluated, as
    JAX does, at k clamped to [0, 9])."""
    table = jnp.asarray(np.array(_STIRLING_TAIL, dtype=k.dtype))
    use_tail = k <= 9
    k = jnp.clip(k, 0.0, 9.0)
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    k = jnp.floor(k)
    index = jnp.clip(k.astype(np.int32), 0, 9)   # (NaN k: XLA's gather clamps the index)
    return jnp.where(use_tail, table[index], approx)


def _binomial_inversion(key, count, prob, shape):
    log1minusprob = jnp.log1p(-prob)

    def body(carry):
        num_geom, geom_sum, key = carry
        subkey, key = split2(key)
        num_geom_out = jnp.where(geom_sum <= count, num_geom + 1, num_geom)
        u = _unif(subkey, shape, prob.dtype)
        geom = jnp.ceil(jnp.log(u) / log1minusprob)
        return num_geom_out, geom_sum + geom, key

    def cond(carry):
        return jnp.any(carry[1] <= count)

    zeros = jnp.zeros(shape, prob.dtype)
    k = while_loop(cond, body, (zeros, zeros, key))[0]
    return k - 1


def _btrs(key, count, prob, shape):
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)
    st_m, st_n_m = _stirling_approx_tail(m), _stirling_approx_tail(count - m)

    def body(carry):
        k_out, accepted, key = carry
        keys = split(key, 3)
        key, subkey_0, subkey_1 = keys[0], keys[1], keys[2]
        u = _unif(subkey_0, shape, prob.dtype)
        v = _unif(subkey_1, shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = jnp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
              + st_m + st_n_m - _stirling_approx_tail(k) - _stirling_approx_tail(count - k))
        accept = accept1 | (~reject & (v <= ub))
        return jnp.where(accept, k, k_out), accepted | accept, key

    def cond(carry):
        return jnp.any(~carry[1])

    init = (jnp.full(shape, -1, prob.dtype), jnp.zeros(shape, bool), key)
    return while_loop(cond, body, init)[0]


def _as_inexact(x):
    x = jnp.asarray(x)
    return x if dtypes.is_inexact(x.dtype) else x.astype(dtypes.to_inexact(x.dtype, x.weak_type))


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) samples as floats of `dtype` (default: the default float), as
    jax.random.binomial, with its algorithm and values (see the module docstring). The sampling runs
    in p's (inexact) dtype. n < 0, NaN n or p, and p outside [0, 1] give NaN; n = inf gives inf."""
    key = check_key(key, "binomial")
    dtype = _float(dtype)
    prob = _as_inexact(p)
    count = jnp.asarray(n)
    if shape is None:
        shape = tuple(jnp.broadcast_shapes(count.shape, prob.shape))
    else:
        shape = tuple(operator.index(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
        out = tuple(jnp.broadcast_shapes(shape, count.shape, prob.shape))
        if out != shape:
            raise ValueError(f"binomial: parameter shapes {tuple(count.shape)}, {tuple(prob.shape)} must "
                             f"broadcast to the shape argument {shape}, got {out}")
    count = jnp.broadcast_to(count.astype(prob.dtype), shape)
    prob = jnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = jnp.where(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = jnp.isnan(count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = jnp.isnan(q)
    q_l_0 = q < 0.0
    q = jnp.where(q_is_nan | q_l_0, jnp.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = jnp.floor(count)   # as np.random.binomial does for float counts
    count_inv = jnp.where(use_inversion, count, jnp.zeros_like(count))
    count_btrs = jnp.where(use_inversion, jnp.full_like(count, 1e4), count)
    q_btrs = jnp.where(use_inversion, jnp.full_like(q, 0.5), q)
    samples = jnp.where(use_inversion, _binomial_inversion(key, count_inv, q, shape).astype(dtype),
                        _btrs(key, count_btrs, q_btrs, shape).astype(dtype))
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = jnp.where(invalid, jnp.full_like(samples, np.nan), samples)
    samples = jnp.where(count_inf & ~invalid, jnp.full_like(samples, np.inf), samples)
    return jnp.where(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples,
                     count.astype(dtype) - samples)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Counts of n draws over the categories on p's last axis, as jax.random.multinomial: conditional
    binomials x_i ~ Binomial(n - sum_{j<i} x_j, p_i / sum_{j>=i} p_j), one key per category from
    split(key, k). `shape` is the result's shape, categories last (as JAX's code reads it: n is
    broadcast to shape[:-1], p to shape); by default p's shape. Floats of `dtype` (default: the
    default float). `unroll` is accepted for JAX's signature."""
    key = check_key(key, "multinomial")
    dtype = _float(dtype, "multinomial")
    n, p = jnp.asarray(n), jnp.asarray(p)
    dt = jnp.result_type(n, p)
    dt = dt if dtypes.is_inexact(dt) else dtypes.to_inexact(dt)
    n, p = n.astype(dt), p.astype(dt)
    if p.ndim < 1:
        raise ValueError("multinomial: p must have at least one dimension (the categories)")
    shape = tuple(p.shape) if shape is None else tuple(operator.index(s) for s in shape)
    if not shape:
        raise ValueError("multinomial: shape must include the categories' axis (shape[-1] == p.shape[-1])")
    remainder = jnp.broadcast_to(n, shape[:-1])
    p = jnp.moveaxis(jnp.broadcast_to(p, shape), -1, 0)
    remaining = jnp.flip(jnp.cumsum(jnp.flip(p, 0), 0), 0)
    ratios = p / jnp.where(remaining == 0, 1, remaining)
    keys = split(key, ratios.shape[0])
    counts = []
    for i in range(ratios.shape[0]):
        count = binomial(keys[i], remainder, jnp.clip(ratios[i], 0, 1), dtype=remainder.dtype)
        remainder = remainder - count
        counts.append(count)
    return jnp.moveaxis(jnp.stack(counts), 0, -1).astype(dtype)


def shuffle(key, x, axis: int = 0):
    """Deprecated, as in JAX: the same as permutation(key, x, axis, independent=True) (each slice
    along `axis` shuffled separately)."""
    warnings.warn("jax.random.shuffle is deprecated; use jax.random.permutation with independent=True.",
                  DeprecationWarning, stacklevel=2)
    return permutation(key, x, axis=axis, independent=True)
