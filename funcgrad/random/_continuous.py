"""Continuous samplers built on uniform bits: uniform, normal and the distributions that transform them.

Each follows JAX's algorithm for its distribution step for step (same key use, same operations in the
same dtype), so values agree with JAX to the last bit where only exact operations are involved
(uniform, with XLA's fused scaling reproduced; triangular) and to a few units in the last place
otherwise (XLA's transcendental functions round differently from NumPy's; see funcgrad.random).
"""
from __future__ import annotations

import math

import numpy as np

from .._src.core import dtypes
from .._src.core.array import Array
from .._src.prims import elementwise as ew, shape as sh
from .._src.prims.reduction import reduce_sum
from ._keys import (UINT_DTYPES, _partitionable_bits, blockwise, canonical_shape, check_key, const, flags,
                    random_bits, split2)
from ..lax._fused import fma, round_to_odd_sum
from ._util import (as_dtype, broadcast_shapes, broadcast_to, check_shape, erf, erf_inv, finfo, float_dtype,
                    next_up)
from .. import numpy as jnp

SQRT2 = math.sqrt(2.0)


def _c(value, like):
    """A constant shaped and typed like `like`."""
    return const(value, like.dtype, like.shape)


# --- uniform --------------------------------------------------------------------------------------

def _uniform(key, shape, dtype, minval, maxval):
    """JAX's `_uniform`: the top `nmant` bits of random words as the mantissa of a float in [1, 2),
    minus 1, i.e. (bits >> (nbits - nmant)) * 2**-nmant exactly; then scaled to [minval, maxval)."""
    if minval.size == 1 and maxval.size == 1:   # elementwise in the counters: blocks where possible
        return blockwise(key, shape, dtype, _uniform_block(dtype), minval, maxval)
    return _uniform_scaled(_uniform_floats(key, 0, shape, dtype), shape, dtype, minval, maxval)


def _uniform_floats(key, start, shape, dtype):
    """Floats in [0, 1) from the random bits of the counters start .. start + size - 1."""
    info = finfo(dtype)
    nbits, nmant = info.bits, info.nmant
    rng_bits = nbits if nmant >= 8 else 8
    if start or (flags.threefry_partitionable and len(shape) == 1):
        bits = _partitionable_bits(key, start, shape[0], rng_bits)
    else:
        bits = random_bits(key, rng_bits, shape)
    if rng_bits != nbits:
        bits = ew.convert_element_type(bits, UINT_DTYPES[nbits])
    mantissa = ew.div(bits, const(2 ** (rng_bits - nmant), bits.dtype, shape))   # a logical shift right
    return ew.mul(ew.convert_element_type(mantissa, dtype), const(2.0 ** -nmant, dtype, shape))


def _uniform_scaled(floats, shape, dtype, minval, maxval):
    """floats in [0, 1) scaled to [minval, maxval) as XLA rounds it: XLA (on CPUs and GPUs with FMA)
    fuses floats * span + minval into one fused multiply-add, i.e. one rounding of the exact value.
    For floats of <= 32 bits the float64 product is exact and the float64 sum is rounded to odd, so
    the final rounding to `dtype` is the correct one; float64 uses an emulated FMA (`lax._fused.fma`). The
    derivative is that of floats * span + minval (the correction is a constant). The half types
    (float16, bfloat16) round twice, as XLA's CPU backend does for them (it does not fuse half-precision
    arithmetic: JAX 0.10.2 on x86-64)."""
    wide = np.dtype(np.float64)
    # float16 / bfloat16: XLA's CPU backend rounds the product and the sum separately (no fusion).
    separate = finfo(dtype).bits == 16
    narrow = finfo(dtype).bits <= 32 and not separate
    zero_min = separate
    if minval.__class__ is Array and maxval.__class__ is Array and minval.shape == maxval.shape == ():
        # Concrete scalar bounds (blockwise's case): span and the float64 bounds are computed once and
        # broadcast, not per element; the same values (no derivative can flow through constants).
        # Where the plain arithmetic already rounds once (`_rounds_once`), no correction is needed.
        span = ew.sub(maxval, minval)
        zero_min = separate or _rounds_once(float(minval._buf), float(span._buf), dtype)
        if narrow:
            span_w, min_w = (broadcast_to(ew.convert_element_type(v, wide), shape) for v in (span, minval))
        span, minval = broadcast_to(span, shape), broadcast_to(minval, shape)
    else:
        minval = broadcast_to(minval, shape)
        maxval = broadcast_to(maxval, shape)
        span = ew.sub(maxval, minval)
        if narrow:
            span_w, min_w = ew.convert_element_type(span, wide), ew.convert_element_type(minval, wide)
    if narrow:
        product = ew.mul(ew.convert_element_type(floats, wide), span_w)   # exact
        scaled = ew.add(product, min_w)
        if not zero_min:
            scaled = _corrected(scaled, round_to_odd_sum(product, min_w))
        scaled = ew.convert_element_type(scaled, dtype)
    else:
        scaled = ew.add(ew.mul(floats, span), minval)
        if not zero_min:
            scaled = _corrected(scaled, fma(floats, span, minval))
    return ew.max(minval, scaled)


def _lowest_bit(x: float) -> float:
    """The value of the least significant set bit of a nonzero float."""
    m, e = math.frexp(x)
    mi = int(abs(m) * 2 ** 53)
    return math.ldexp(1.0, e - 53 + (mi & -mi).bit_length() - 1)


def _rounds_once(minval: float, span: float, dtype) -> bool:
    """Whether floats * span + minval rounds once without help for every floats in [0, 1) (which are
    multiples of 2**-nmant): for <= 32-bit floats when the float64 sum of the exact product and minval
    is exact (true of [0, 1), of normal's (-1, 1) and of most bounds of moderate range); for float64
    when the product is exact (span a power of two) and so is the only rounding left to the sum."""
    if not (math.isfinite(minval) and math.isfinite(span)):
        return False
    if span == 0.0:
        return True
    if finfo(dtype).bits > 32:
        return minval == 0.0 or math.frexp(abs(span))[0] == 0.5
    quantum = _lowest_bit(span) * 2.0 ** -finfo(dtype).nmant
    if minval != 0.0:
        quantum = min(quantum, _lowest_bit(minval))
    return (abs(minval) + abs(span)) / quantum < 2.0 ** 53


def _corrected(value, exact):
    """`exact`'s value with `value`'s derivative (where value is finite; elsewhere value itself)."""
    fixed = ew.add(value, ew.stop_gradient(ew.sub(exact, value)))
    return ew.select(ew.is_finite(value), fixed, value)


def _uniform_block(dtype):
    """`blockwise`'s body for uniform samples (minval and maxval of size 1)."""
    def body(key, start, count, minval, maxval):
        shape = (count,)
        return _uniform_scaled(_uniform_floats(key, start, shape, dtype), shape, dtype,
                               sh.reshape(minval, ()), sh.reshape(maxval, ()))
    return body


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform samples in [minval, maxval) of `shape` and float `dtype` (default float32), as
    jax.random.uniform (bit for bit). Differentiable in minval and maxval.

    Args:
        key: a PRNG key.
        shape: the output shape.
        dtype: a float dtype (default float32, float64 with x64 on).
        minval, maxval: the bounds (broadcast against `shape`).

    Examples:
        >>> from funcgrad import random
        >>> random.uniform(random.PRNGKey(0))
        Array(0.947667, dtype=float32)
        >>> random.uniform(random.PRNGKey(0), (3,), minval=-1.0, maxval=1.0).shape
        (3,)
    """
    key = check_key(key, "uniform")
    shape = canonical_shape(shape, "uniform")
    dtype = float_dtype(dtype, "uniform")
    minval, maxval = as_dtype(minval, dtype), as_dtype(maxval, dtype)
    check_shape("uniform", shape, minval.shape, maxval.shape)
    return _uniform(key, shape, dtype, minval, maxval)


# --- normal and friends ---------------------------------------------------------------------------

def _normal_real(key, shape, dtype):
    return blockwise(key, shape, dtype, _normal_block(dtype))


def _normal_block(dtype):
    """`blockwise`'s body for standard normal samples: sqrt(2) erf_inv(u), u uniform in (-1, 1)."""
    lo = float(np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype)))

    def body(key, start, count):
        shape = (count,)
        u = _uniform_scaled(_uniform_floats(key, start, shape, dtype), shape, dtype,
                            const(lo, dtype), const(1.0, dtype))
        return ew.mul(const(SQRT2, dtype, shape), erf_inv(u))
    return body


def normal(key, shape=(), dtype=None):
    """Standard normal samples, as jax.random.normal: sqrt(2) * erf_inv(u) with u uniform in (-1, 1)
    (complex dtypes: independent real and imaginary parts of variance 1/2).

    Args:
        key: a PRNG key.
        shape: the output shape.
        dtype: a float or complex dtype (default float32).

    Differences from JAX:
        The same uniform bits as JAX; the values can differ from JAX's in the last bit of float32
        (erf_inv is computed with NumPy rather than XLA).

    Examples:
        >>> from funcgrad import random
        >>> x = random.normal(random.PRNGKey(0), (1000,))
        >>> x.shape, x.dtype
        ((1000,), dtype('float32'))
        >>> bool(abs(float(x.mean())) < 0.1)
        True
    """
    key = check_key(key, "normal")
    shape = canonical_shape(shape, "normal")
    dtype = float_dtype(dtype, "normal", complex_ok=True)
    if dtypes.is_complex(dtype):
        real = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
        k_re, k_im = split2(key)
        re = ew.convert_element_type(_normal_real(k_re, shape, real), dtype)
        im = ew.convert_element_type(_normal_real(k_im, shape, real), dtype)
        z = ew.add(re, ew.mul(const(1j, dtype, shape), im))
        return ew.div(z, const(SQRT2, dtype, shape))
    return _normal_real(key, shape, dtype)


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal samples conditioned on lower < x < upper, as jax.random.truncated_normal
    (inverse-CDF: erf_inv of a uniform between erf(lower/sqrt2) and erf(upper/sqrt2), clipped into
    the open interval)."""
    key = check_key(key, "truncated_normal")
    dtype = float_dtype(dtype, "truncated_normal")
    lower, upper = as_dtype(lower, dtype), as_dtype(upper, dtype)
    if shape is None:
        shape = broadcast_shapes(lower.shape, upper.shape)
    else:
        shape = canonical_shape(shape, "truncated_normal")
        check_shape("truncated_normal", shape, lower.shape, upper.shape)
    a = erf(ew.div(lower, _c(SQRT2, lower)))
    b = erf(ew.div(upper, _c(SQRT2, upper)))
    u = _uniform(key, shape, dtype, a, b)
    out = ew.mul(_c(SQRT2, u), erf_inv(u))
    lo = broadcast_to(next_up(ew.stop_gradient(lower), +1), shape)
    hi = broadcast_to(next_up(ew.stop_gradient(upper), -1), shape)
    return ew.min(ew.max(out, lo), hi)


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Samples of N(mean, cov): mean + factor @ z with z standard normal of shape `shape + (n,)` and
    factor the Cholesky factor of cov (method="cholesky"), or U sqrt(S) from method="eigh" / "svd"
    (for singular cov), as jax.random.multivariate_normal. Differentiable in mean and cov."""
    key = check_key(key, "multivariate_normal")
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError("multivariate_normal: method must be one of 'svd', 'eigh', 'cholesky'")
    mean, cov = jnp.asarray(mean), jnp.asarray(cov)
    dt = np.result_type(mean.dtype, cov.dtype)
    if not dtypes.is_inexact(dt):
        dt = dtypes.defaults.float_
    dtype = np.dtype(dt) if dtype is None else float_dtype(dtype, "multivariate_normal")
    mean, cov = ew.convert_element_type(mean, dtype), ew.convert_element_type(cov, dtype)
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {cov.ndim}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but got "
                         f"cov.shape == {tuple(cov.shape)}")
    batch = broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
    if shape is None:
        shape = batch
    else:
        shape = canonical_shape(shape, "multivariate_normal")
        check_shape("multivariate_normal", shape, mean.shape[:-1], cov.shape[:-2])
    if method == "svd":
        u, s, _ = jnp.linalg.svd(cov)
        factor = u * jnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = jnp.linalg.eigh(cov)
        factor = v * jnp.sqrt(jnp.maximum(w, 0)[..., None, :])
    else:
        factor = jnp.linalg.cholesky(cov)
    z = normal(key, tuple(shape) + (n,), dtype)
    return mean + jnp.matmul(factor, z[..., None])[..., 0]


def orthogonal(key, n: int, shape=(), dtype=None, m: int | None = None):
    """A random (semi-)orthogonal n x m matrix (Haar measure), stacked to `shape + (n, m)`: the Q of a
    QR factorisation of a Gaussian matrix with the signs of R's diagonal folded in (Mezzadri 2007),
    as jax.random.orthogonal."""
    key = check_key(key, "orthogonal")
    shape = canonical_shape(shape, "orthogonal")
    dtype = float_dtype(dtype, "orthogonal", complex_ok=True)
    n = int(n)
    m = n if m is None else int(m)
    z = normal(key, shape + (max(n, m), min(n, m)), dtype)
    q, r = jnp.linalg.qr(z)
    d = jnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * jnp.expand_dims(jnp.sign(d), -2)
    return jnp.swapaxes(x, -1, -2) if n < m else x


# --- one-parameter transforms of a uniform --------------------------------------------------------

def _float_sampler(name, key, shape, dtype):
    return check_key(key, name), canonical_shape(shape, name), float_dtype(dtype, name)


def _float_param_sampler(name, key, param, shape, dtype):
    """A float sampler's checked arguments where one parameter sets the default shape: the key, param in the
    float dtype, the shape (param's when None; param must broadcast to it) and the dtype."""
    key = check_key(key, name)
    dtype = float_dtype(dtype, name)
    param = as_dtype(param, dtype)
    shape = tuple(param.shape) if shape is None else canonical_shape(shape, name)
    check_shape(name, shape, param.shape)
    return key, param, shape, dtype


def gumbel(key, shape=(), dtype=None, mode=None):
    """Standard Gumbel samples -log(-log(u)), as jax.random.gumbel (mode "low", the default, or "high",
    which uses two uniforms for a wider range)."""
    key, shape, dtype = _float_sampler("gumbel", key, shape, dtype)
    mode = "low" if mode is None else mode
    if mode not in ("low", "high"):
        raise ValueError(f"gumbel: mode must be 'low' or 'high', got {mode!r}")
    info = finfo(dtype)
    if mode == "high":
        both = _uniform(key, (2,) + shape, dtype, const(0.0, dtype), const(1.0, dtype))
        high = sh.reshape(sh.slice(both, (0,) + (0,) * len(shape), (1,) + shape), shape)
        low = sh.reshape(sh.slice(both, (1,) + (0,) * len(shape), (2,) + shape), shape)
        mixed = ew.add(ew.add(high, ew.mul(_c(2.0 ** -info.nmant, low), low)), _c(float(info.tiny), low))
        x = ew.select(ew.ge(high, _c(0.5, high)), high, mixed)
        return ew.neg(ew.log(ew.neg(ew.log1p(ew.neg(x)))))
    u = _uniform(key, shape, dtype, const(float(info.tiny), dtype), const(1.0, dtype))
    return ew.neg(ew.log(ew.neg(ew.log(u))))


def exponential(key, shape=(), dtype=None):
    """Exponential(1) samples -log(1 - u), as jax.random.exponential."""
    key, shape, dtype = _float_sampler("exponential", key, shape, dtype)
    u = _uniform(key, shape, dtype, const(0.0, dtype), const(1.0, dtype))
    return ew.neg(ew.log1p(ew.neg(u)))


def laplace(key, shape=(), dtype=None):
    """Laplace(0, 1) samples sign(u) log(1 - |u|), u uniform in (-1, 1), as jax.random.laplace."""
    key, shape, dtype = _float_sampler("laplace", key, shape, dtype)
    u = _uniform(key, shape, dtype, const(-1.0 + float(finfo(dtype).epsneg), dtype), const(1.0, dtype))
    return ew.mul(ew.sign(u), ew.log1p(ew.neg(ew.abs(u))))


def logistic(key, shape=(), dtype=None):
    """Standard logistic samples log(u) - log(1 - u), as jax.random.logistic."""
    key, shape, dtype = _float_sampler("logistic", key, shape, dtype)
    x = _uniform(key, shape, dtype, const(float(finfo(dtype).tiny), dtype), const(1.0, dtype))
    return ew.sub(ew.log(x), ew.log1p(ew.neg(x)))


def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy samples tan(pi (u - 1/2)), as jax.random.cauchy."""
    key, shape, dtype = _float_sampler("cauchy", key, shape, dtype)
    u = _uniform(key, shape, dtype, const(float(finfo(dtype).eps), dtype), const(1.0, dtype))
    t = ew.mul(_c(math.pi, u), ew.sub(u, _c(0.5, u)))
    tan = getattr(ew, "tan", None)
    return tan(t) if tan is not None else ew.div(ew.sin(t), ew.cos(t))


def rayleigh(key, scale=1.0, shape=None, dtype=None):
    """Rayleigh(scale) samples scale * sqrt(-2 log u), as jax.random.rayleigh."""
    key, scale, shape, dtype = _float_param_sampler("rayleigh", key, scale, shape, dtype)
    u = _uniform(key, shape, dtype, const(0.0, dtype), const(1.0, dtype))
    return ew.mul(broadcast_to(scale, shape), ew.sqrt(ew.mul(ew.log(u), _c(-2.0, u))))


def pareto(key, b, shape=None, dtype=None):
    """Pareto(b) samples exp(e / b) with e exponential, as jax.random.pareto."""
    key, b, shape, dtype = _float_param_sampler("pareto", key, b, shape, dtype)
    e = exponential(key, shape, dtype)
    return ew.exp(ew.div(e, broadcast_to(b, shape)))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull samples scale * (-log(1 - u))**(1/concentration), as jax.random.weibull_min."""
    key, shape, dtype = _float_sampler("weibull_min", key, shape, dtype)
    scale, concentration = as_dtype(scale, dtype), as_dtype(concentration, dtype)
    u = _uniform(key, shape, dtype, const(0.0, dtype), const(1.0, dtype))
    e = ew.neg(ew.log1p(ew.neg(u)))
    return ew.mul(ew.pow(e, broadcast_to(ew.div(_c(1.0, concentration), concentration), shape)),
                  broadcast_to(scale, shape))


def lognormal(key, sigma=1.0, shape=None, dtype=None):
    """exp(sigma * z) with z standard normal, as jax.random.lognormal."""
    key, sigma, shape, dtype = _float_param_sampler("lognormal", key, sigma, shape, dtype)
    return ew.exp(ew.mul(normal(key, shape, dtype), broadcast_to(sigma, shape)))


def maxwell(key, shape=(), dtype=None):
    """Maxwell samples: the norm of three independent standard normals, as jax.random.maxwell."""
    key, shape, dtype = _float_sampler("maxwell", key, shape, dtype)
    z = normal(key, shape + (3,), dtype)
    return ew.sqrt(reduce_sum(ew.mul(z, z), (len(shape),)))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Maxwell samples with a random sign, times scale plus loc, as jax.random.double_sided_maxwell;
    the result's shape is `shape` followed by the broadcast shape of loc and scale."""
    key = check_key(key, "double_sided_maxwell")
    dtype = float_dtype(dtype, "double_sided_maxwell")
    loc, scale = as_dtype(loc, dtype), as_dtype(scale, dtype)
    shape = canonical_shape(shape, "double_sided_maxwell") + broadcast_shapes(loc.shape, scale.shape)
    k_m, k_r = split2(key)
    from ._discrete import rademacher  # (cycle: _discrete imports this module)
    m = maxwell(k_m, shape, dtype)
    sign = rademacher(k_r, shape, dtype)
    return ew.add(ew.mul(ew.mul(sign, m), broadcast_to(scale, shape)), broadcast_to(loc, shape))


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular(left, mode, right) samples by inversion, as jax.random.triangular."""
    key = check_key(key, "triangular")
    dtype = float_dtype(dtype, "triangular")
    left, mode, right = (as_dtype(v, dtype) for v in (left, mode, right))
    params = broadcast_shapes(left.shape, mode.shape, right.shape)
    shape = params if shape is None else canonical_shape(shape, "triangular")
    check_shape("triangular", shape, params)
    left, mode, right = (broadcast_to(v, shape) for v in (left, mode, right))
    fc = ew.div(ew.sub(mode, left), ew.sub(right, left))
    u = _uniform(key, shape, dtype, const(0.0, dtype), const(1.0, dtype))
    out1 = ew.add(left, ew.sqrt(ew.mul(ew.mul(u, ew.sub(right, left)), ew.sub(mode, left))))
    out2 = ew.sub(right, ew.sqrt(ew.mul(ew.mul(ew.sub(_c(1.0, u), u), ew.sub(right, left)),
                                        ew.sub(right, mode))))
    return ew.select(ew.lt(u, fc), out1, out2)


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) samples with the given mean and unit shape, as jax.random.wald."""
    key, mean, shape, dtype = _float_param_sampler("wald", key, mean, shape, dtype)
    k1, k2 = split2(key)
    mean = broadcast_to(mean, shape)
    v = normal(k1, shape, dtype)
    z = _uniform(k2, shape, dtype, const(0.0, dtype), const(1.0, dtype))
    y = ew.integer_pow(v, 2)
    y_sq = ew.integer_pow(y, 2)
    mean_sq = ew.integer_pow(mean, 2)
    sqrt_term = ew.sqrt(ew.add(ew.mul(ew.mul(_c(4.0, mean), mean), y), ew.mul(mean_sq, y_sq)))
    x = ew.sub(ew.add(mean, ew.div(ew.mul(mean_sq, y), _c(2.0, y))),
               ew.mul(ew.div(mean, _c(2.0, mean)), sqrt_term))
    return ew.select(ew.le(z, ew.div(mean, ew.add(mean, x))), x, ew.div(mean_sq, x))
