"""Discrete samplers: bernoulli, rademacher, randint, categorical, geometric, poisson, and the
permutations behind permutation and choice (JAX's algorithms, so the values are JAX's)."""
from __future__ import annotations

import math
import operator

import numpy as np

from .._src.core import dtypes
from .._src.prims import elementwise as ew, shape as sh
from .._src.control.while_loop import while_loop
from .._src.prims.cumulative import reduce_or, cumsum
from ._continuous import _uniform, gumbel
from ._keys import UINT_DTYPES, canonical_shape, check_key, const, random_bits, split, split2
from ._util import as_array, broadcast_to, check_shape, finfo, floor, int_dtype, lgamma
from .._src.prims.sorting import sort_key_val, top_k
from .. import numpy as jnp
from .._src.prims.reduction import argmax


def _c(value, like):
    return const(value, like.dtype, like.shape)


# --- bernoulli, rademacher ------------------------------------------------------------------------

def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Bernoulli(p) samples as bools: uniform(key, shape, p.dtype) < p, as jax.random.bernoulli
    (mode="high" adds a second uniform for accuracy at p < ~1e-7).

    Examples:
        >>> from funcgrad import random
        >>> random.bernoulli(random.PRNGKey(0), 0.5, (4,))
        Array([False, False,  True,  True], dtype=bool)
    """
    key = check_key(key, "bernoulli")
    if mode not in ("high", "low"):
        raise ValueError(f"bernoulli: got mode={mode!r}, expected 'high' or 'low'")
    p = as_array(p)
    if not dtypes.is_float(p.dtype):
        raise TypeError(f"bernoulli: probability p must have a floating dtype, got {p.dtype}")
    dtype = np.dtype(p.dtype)
    p = ew.convert_element_type(p, dtype, False)
    shape = tuple(p.shape) if shape is None else canonical_shape(shape, "bernoulli")
    check_shape("bernoulli", shape, p.shape)
    p = broadcast_to(p, shape)
    if mode == "high":
        both = _uniform(key, (2,) + shape, dtype, const(0.0, dtype), const(1.0, dtype))
        u1 = sh.reshape(sh.slice(both, (0,) * (len(shape) + 1), (1,) + shape), shape)
        u2 = sh.reshape(sh.slice(both, (1,) + (0,) * len(shape), (2,) + shape), shape)
        u2 = ew.mul(u2, _c(2.0 ** -finfo(dtype).nmant, u2))
        return ew.lt(u2, ew.sub(p, u1))
    return ew.lt(_uniform(key, shape, dtype, const(0.0, dtype), const(1.0, dtype)), p)


def rademacher(key, shape=(), dtype=None):
    """Samples of -1 and +1 with probability 1/2 each, as jax.random.rademacher (default dtype: the
    default int)."""
    key = check_key(key, "rademacher")
    shape = canonical_shape(shape, "rademacher")
    dtype = np.dtype(dtypes.defaults.int_ if dtype is None else dtypes.canonicalize(dtype))
    b = ew.convert_element_type(bernoulli(key, 0.5, shape), dtype)
    return ew.sub(ew.mul(_c(2, b), b), _c(1, b))


# --- randint --------------------------------------------------------------------------------------

def _convert_and_clip(val, dtype):
    """val (an integer array) converted to the integer `dtype`, clipped to its range, not wrapped."""
    lo = max(np.iinfo(dtype).min, np.iinfo(val.dtype).min)
    hi = min(np.iinfo(dtype).max, np.iinfo(val.dtype).max)
    val = ew.max(ew.min(val, _c(hi, val)), _c(lo, val))
    return ew.convert_element_type(val, dtype, False)


def _urem(x, y):
    """x mod y for unsigned arrays, with XLA's x mod 0 == x."""
    zero = ew.eq(y, _c(0, y))
    safe = ew.select(zero, _c(1, y), y)
    return ew.select(zero, x, ew.sub(x, ew.mul(ew.div(x, safe), safe)))


def _int_param(v):
    v = as_array(v)
    if not dtypes.is_integer(v.dtype):
        v = ew.convert_element_type(v, dtypes.defaults.int_)
    return ew.convert_element_type(v, v.dtype, False)


def _randint(key, shape, minval, maxval, dtype):
    nbits = np.iinfo(dtype).bits
    info_max = _convert_and_clip(const(np.iinfo(dtype).max, dtype), maxval.dtype)
    maxval_out_of_range = ew.gt(maxval, broadcast_to(info_max, maxval.shape))
    minval = broadcast_to(_convert_and_clip(minval, dtype), shape)
    maxval = broadcast_to(_convert_and_clip(maxval, dtype), shape)
    maxval_out_of_range = broadcast_to(maxval_out_of_range, shape)

    k1, k2 = split2(key)
    higher_bits, lower_bits = random_bits(k1, nbits, shape), random_bits(k2, nbits, shape)
    udt = UINT_DTYPES[nbits]
    span = ew.convert_element_type(ew.sub(maxval, minval), udt)
    span = ew.select(ew.le(maxval, minval), _c(1, span), span)   # empty range: always minval
    # A maxval past dtype's range means one more value (wrapping to 0 = the full range).
    wider = ew.select(maxval_out_of_range, ew.gt(maxval, minval), maxval_out_of_range)
    span = ew.select(wider, ew.add(span, _c(1, span)), span)
    # (higher * 2**nbits + lower) mod span, computed without overflow as JAX does.
    multiplier = _urem(_c(2 ** (nbits // 2), span), span)
    multiplier = _urem(ew.mul(multiplier, multiplier), span)
    offset = ew.add(ew.mul(_urem(higher_bits, span), multiplier), _urem(lower_bits, span))
    offset = _urem(offset, span)
    return ew.add(minval, ew.convert_element_type(offset, dtype))


def randint(key, shape, minval, maxval, dtype=None):
    """Uniform integers in [minval, maxval) of `shape` and integer `dtype` (default: the default int,
    int32 with x64 off and int64 with it on, read at call time), as jax.random.randint: its modulo
    method with 2 * nbits random bits per value, so the bits drawn depend on the dtype's width; 8-
    and 16-bit dtypes are sampled as int32 and converted, as JAX does.

    Examples:
        >>> from funcgrad import random
        >>> random.randint(random.PRNGKey(0), (4,), 0, 10)
        Array([9, 0, 2, 3], dtype=int32)
    """
    key = check_key(key, "randint")
    shape = canonical_shape(shape, "randint")
    dtype = int_dtype(dtype, "randint")
    minval, maxval = _int_param(minval), _int_param(maxval)
    check_shape("randint", shape, minval.shape, maxval.shape)
    info = np.iinfo(dtype)
    if info.bits < 32:
        i32 = np.dtype(np.int32)
        minval = _clip_to(ew.convert_element_type(minval, i32), int(info.min), int(info.max))
        maxval = _clip_to(ew.convert_element_type(maxval, i32), int(info.min), int(info.max) + 1)
        return ew.convert_element_type(_randint(key, shape, minval, maxval, i32), dtype)
    return _randint(key, shape, minval, maxval, dtype)


def _clip_to(v, lo, hi):
    return ew.max(ew.min(v, _c(hi, v)), _c(lo, v))


# --- permutations ---------------------------------------------------------------------------------

def _sort_by(keys, x, axis: int):
    """x reordered along `axis` by sorting `keys` (stable), as lax.sort_key_val."""
    return sort_key_val(keys, x, axis)[1]


def _shuffle(key, x, axis: int):
    """JAX's shuffle: a few rounds (enough that ties among 32-bit sort keys are negligible) of sorting
    x along `axis` by fresh random bits."""
    num_rounds = int(np.ceil(3 * np.log(max(1, math.prod(x.shape))) / np.log(2 ** 32 - 1)))
    for _ in range(num_rounds):
        key, subkey = split2(key)
        x = _sort_by(random_bits(subkey, 32, tuple(x.shape)), x, axis)
    return x


def _take(x, idx, axis: int):
    moved = jnp.moveaxis(x, axis, 0)[idx]
    return jnp.moveaxis(moved, tuple(range(idx.ndim)), tuple(range(axis, axis + idx.ndim)))


def permutation(key, x, axis=0, independent=False):
    """A random permutation of arange(x) (x an int) or of x along `axis`, as jax.random.permutation:
    the order of a sort by random bits. With independent=True every slice along `axis` is shuffled
    separately; otherwise one permutation reorders whole slices.

    Examples:
        >>> from funcgrad import random
        >>> random.permutation(random.PRNGKey(0), 5)
        Array([0, 1, 4, 3, 2], dtype=int32)
    """
    key = check_key(key, "permutation")
    if isinstance(x, (int, np.integer)) or np.ndim(x) == 0:
        arr = as_array(x)
        if not dtypes.is_integer(arr.dtype):
            raise TypeError("permutation: x must be an integer or at least 1-dimensional")
        n = operator.index(int(arr))  # a traced x raises a ConcretizationError here
        return _shuffle(key, jnp.arange(n), 0)
    x = as_array(x)
    axis = operator.index(axis)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"permutation: axis {axis} out of range for an array of {x.ndim} dimensions")
    axis %= x.ndim
    if independent or x.ndim == 1:
        return _shuffle(key, x, axis)
    ind = _shuffle(key, jnp.arange(x.shape[axis]), 0)
    return _take(x, ind, axis)


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Random samples from the entries of `a` along `axis` (or from arange(a) for an int a), with or
    without replacement, uniformly or with probabilities `p`, as jax.random.choice.

    Examples:
        >>> from funcgrad import random
        >>> random.choice(random.PRNGKey(0), 5, (3,), replace=False)
        Array([0, 1, 4], dtype=int32)
    """
    key = check_key(key, "choice")
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"choice: shape must be a sequence, got {shape!r}")
    shape = canonical_shape(shape, "choice")
    arr = as_array(a)
    if arr.ndim == 0:
        n_inputs = operator.index(int(arr))
    else:
        axis = operator.index(axis) % arr.ndim
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("choice: a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"choice: cannot take a larger sample (size {n_draws}) than the population "
                         f"(size {n_inputs}) when replace=False")
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else _take(arr, ind, axis)
        else:
            perm = permutation(key, n_inputs if arr.ndim == 0 else arr, axis)
            slices = (slice(None),) * (0 if arr.ndim == 0 else axis) + (slice(n_draws),)
            result = perm[slices]
    else:
        p_arr = as_array(p)
        if not dtypes.is_inexact(p_arr.dtype):
            p_arr = ew.convert_element_type(p_arr, dtypes.defaults.float_)
        if tuple(p_arr.shape) != (n_inputs,):
            raise ValueError(f"choice: p must be None or a 1D vector with the same size as a.shape[axis]; "
                             f"p has shape {tuple(p_arr.shape)} and a.shape[axis] is {n_inputs}")
        if replace:
            p_cuml = cumsum(p_arr, 0)
            total = p_cuml[-1]
            r = total * (1 - _uniform(key, shape, p_cuml.dtype, const(0.0, p_cuml.dtype),
                                      const(1.0, p_cuml.dtype)))
            # searchsorted(p_cuml, r, side="left"): how many cumulative sums lie below r.
            ind = jnp.sum(p_cuml < r[..., None], axis=-1)
        else:
            g = gumbel(key, (n_inputs,), p_arr.dtype, mode=mode) + jnp.log(p_arr)
            ind = top_k(g, n_draws)[1]
        ind = ew.convert_element_type(ind, dtypes.defaults.int_)
        result = ind if arr.ndim == 0 else _take(arr, ind, axis)
    out_shape = shape if arr.ndim == 0 else tuple(arr.shape[:axis]) + shape + tuple(arr.shape[axis + 1:])
    return jnp.reshape(result, out_shape)


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Samples of categorical distributions given unnormalised log-probabilities, by the Gumbel-max
    trick (Gumbel top-k without replacement), as jax.random.categorical. The indices are the default
    int (argmax's) with replacement and int32 (lax.top_k's) without, as in JAX.

    Examples:
        >>> import funcgrad.numpy as jnp
        >>> from funcgrad import random
        >>> logits = jnp.log(jnp.array([0.1, 0.2, 0.7]))
        >>> random.categorical(random.PRNGKey(0), logits, shape=(5,))
        Array([1, 2, 2, 1, 2], dtype=int32)
    """
    key = check_key(key, "categorical")
    logits = as_array(logits)
    if not dtypes.is_float(logits.dtype):
        logits = ew.convert_element_type(logits, dtypes.defaults.float_)
    nd = logits.ndim
    axis = operator.index(axis)
    if not -nd <= axis < nd:
        raise ValueError(f"categorical: axis {axis} out of range for logits of shape {tuple(logits.shape)}")
    batch_shape = tuple(np.delete(np.array(logits.shape, dtype=int), axis).tolist())
    if shape is None:
        shape = batch_shape
    else:
        shape = canonical_shape(shape, "categorical")
        check_shape("categorical", shape, batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        if axis >= 0:
            axis -= nd
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(axis % nd, logits.shape[axis])
        g = gumbel(key, (*prefix, *logits_shape), logits.dtype, mode=mode)
        x = g + sh.expand_dims(logits, tuple(range(len(prefix)))) if prefix else g + logits
        return ew.convert_element_type(argmax(x, axis % x.ndim), dtypes.defaults.int_)  # jnp.argmax's
    noisy = logits + gumbel(key, tuple(logits.shape), logits.dtype, mode=mode)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"categorical: number of samples without replacement ({k}) cannot exceed the "
                         f"number of categories ({logits.shape[axis]})")
    _, indices = top_k(jnp.moveaxis(noisy, axis, -1), k)
    indices = ew.convert_element_type(jnp.moveaxis(indices, -1, 0), np.dtype(np.int32))  # lax.top_k's
    return jnp.reshape(indices, shape)


# --- geometric and poisson ------------------------------------------------------------------------

def geometric(key, p, shape=None, dtype=None):
    """Geometric(p) samples on {1, 2, ...}: floor(log u / log(1 - p)) + 1, as jax.random.geometric."""
    key = check_key(key, "geometric")
    dtype = int_dtype(dtype, "geometric")
    p = as_array(p)
    if not dtypes.is_inexact(p.dtype):
        p = ew.convert_element_type(p, dtypes.defaults.float_)
    p = ew.convert_element_type(p, p.dtype, False)
    shape = tuple(p.shape) if shape is None else canonical_shape(shape, "geometric")
    check_shape("geometric", shape, p.shape)
    u = _uniform(key, shape, p.dtype, const(0.0, p.dtype), const(1.0, p.dtype))
    u = ew.select(ew.eq(u, _c(0.0, u)), _c(1.0, u), u)
    ratio = ew.div(ew.log(u), broadcast_to(ew.log1p(ew.neg(p)), shape))
    return ew.convert_element_type(ew.add(floor(ratio), _c(1.0, ratio)), dtype)


def _any(x):
    return reduce_or(x, tuple(range(x.ndim))) if x.ndim else x


def _both(a, b):
    return ew.select(a, b, a)


def _poisson_knuth(key, lam, shape, dtype, max_iters):
    """Knuth's method for small rates: multiply uniforms until the product drops below exp(-lam)."""
    f32 = np.dtype(np.float32)
    neg_lam = ew.neg(lam)

    def body(carry):
        i, k, rng, log_prod = carry
        rng, subkey = split2(rng)
        k = ew.select(ew.gt(log_prod, neg_lam), ew.add(k, _c(1, k)), k)
        u = _uniform(subkey, shape, f32, const(0.0, f32), const(1.0, f32))
        return ew.add(i, _c(1, i)), k, rng, ew.add(log_prod, ew.log(u))

    def cond(carry):
        i, _, _, log_prod = carry
        return _both(_any(ew.gt(log_prod, neg_lam)), ew.lt(i, _c(max_iters, i)))

    init = (const(0, dtype), const(0, dtype, shape), key, const(0.0, f32, shape))
    k = while_loop(cond, body, init)[1]
    return ew.sub(k, _c(1, k))


def _poisson_rejection(key, lam, shape, dtype, max_iters):
    """Hormann's transformed rejection with squeeze (PTRS) for large rates."""
    log_lam = ew.log(lam)
    b = ew.add(_c(0.931, lam), ew.mul(_c(2.53, lam), ew.sqrt(lam)))
    a = ew.add(_c(-0.059, lam), ew.mul(_c(0.02483, lam), b))
    inv_alpha = ew.add(_c(1.1239, lam), ew.div(_c(1.1328, lam), ew.sub(b, _c(3.4, lam))))
    v_r = ew.sub(_c(0.9277, lam), ew.div(_c(3.6224, lam), ew.sub(b, _c(2.0, lam))))

    def body(carry):
        i, k_out, accepted, key = carry
        keys = split(key, 3)
        key, k0, k1 = (sh.reshape(sh.slice(keys, (j, 0), (j + 1, 2)), (2,)) for j in range(3))
        u = ew.sub(_uniform(k0, shape, lam.dtype, const(0.0, lam.dtype), const(1.0, lam.dtype)), _c(0.5, lam))
        v = _uniform(k1, shape, lam.dtype, const(0.0, lam.dtype), const(1.0, lam.dtype))
        u_shifted = ew.sub(_c(0.5, u), ew.abs(u))
        k = floor(ew.add(ew.add(ew.mul(ew.add(ew.div(ew.mul(_c(2.0, a), a), u_shifted), b), u), lam),
                         _c(0.43, u)))
        s = ew.log(ew.div(ew.mul(v, inv_alpha), ew.add(ew.div(a, ew.mul(u_shifted, u_shifted)), b)))
        t = ew.sub(ew.add(ew.neg(lam), ew.mul(k, log_lam)), lgamma(ew.add(k, _c(1.0, k))))
        accept1 = _both(ew.ge(u_shifted, _c(0.07, u)), ew.le(v, v_r))
        reject = ew.select(ew.lt(k, _c(0.0, k)), ew.lt(k, _c(0.0, k)),
                           _both(ew.lt(u_shifted, _c(0.013, u)), ew.gt(v, u_shifted)))
        accept2 = ew.le(s, t)
        accept = ew.select(accept1, accept1, _both(ew.eq(reject, _c(False, reject)), accept2))
        k_out = ew.select(accept, k, k_out)
        accepted = ew.select(accepted, accepted, accept)
        return ew.add(i, _c(1, i)), k_out, accepted, key

    def cond(carry):
        i, _, accepted, _ = carry
        return _both(_any(ew.eq(accepted, _c(False, accepted))), ew.lt(i, _c(max_iters, i)))

    init = (const(0, dtype), const(-1.0, lam.dtype, shape), const(False, np.bool_, shape), key)
    k = while_loop(cond, body, init)[1]
    return ew.convert_element_type(k, dtype)


def poisson(key, lam, shape=None, dtype=None):
    """Poisson(lam) samples (default dtype: the default int), as jax.random.poisson: Knuth's multiplication method
    for lam < 10 and Hormann's PTRS rejection sampler for lam >= 10, both as whole-array while loops
    (so the cost grows with the largest lam < 10 in the array, like lam + a few iterations, and stays
    a few iterations for large lam). lam is used in float32, as JAX does; lam == 0 gives 0."""
    key = check_key(key, "poisson")
    dtype = int_dtype(dtype, "poisson")
    lam = as_array(lam)
    shape = tuple(lam.shape) if shape is None else canonical_shape(shape, "poisson")
    check_shape("poisson", shape, lam.shape)
    f32 = np.dtype(np.float32)
    lam = broadcast_to(ew.convert_element_type(lam, f32, False), shape)
    use_knuth = ew.select(ew.ne(lam, lam), ew.ne(lam, lam), ew.lt(lam, _c(10.0, lam)))
    lam_knuth = ew.select(use_knuth, lam, _c(0.0, lam))
    lam_rejection = ew.select(use_knuth, _c(1e5, lam), lam)
    max_iters = int(np.iinfo(dtype).max)
    result = ew.select(use_knuth, _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
                       _poisson_rejection(key, lam_rejection, shape, dtype, max_iters))
    return ew.select(ew.eq(lam, _c(0.0, lam)), ew.zeros_like(result), result)
