"""The error-function family: the normal distribution function ndtr, its log log_ndtr and inverse ndtri, Owen's
T function owens_t, Dawson's integral dawsn and the Faddeeva function wofz (the last three are SciPy's,
funcgrad extras beyond jax.scipy.special). ndtri, dawsn and wofz are cards in funcgrad._src.prims.scipy_special;
erf, erfc, erfinv and erfcx themselves are in funcgrad.scipy.special."""
from __future__ import annotations

import math

import numpy as np

from ... import numpy as jnp
from ..._src.core import dtypes
from ..._src.prims import scipy_special as _ss
from ..._src.prims.special import erfc as _erfc
from ...numpy._promote import asarray_any
from .common import _strong, promote_float

_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_PI = math.pi


def ndtr(x):
    """The standard normal CDF, 0.5 erfc(-x / sqrt 2) (accurate in the lower tail)."""
    x = promote_float("ndtr", x)
    return _strong(0.5 * _erfc(-x / _SQRT2))  # (strongly typed, as jax.scipy's)


def log_ndtr(x):
    """log(ndtr(x)), accurate in both tails: log1p(-ndtr(-x)) above -1, log of erfc down to -20, and
    the asymptotic series -x^2/2 - log(-x sqrt(2 pi)) + log(1 - 1/x^2 + 3/x^4 - ...) below."""
    x = promote_float("log_ndtr", x)
    upper = x > -1
    mid = (x <= -1) & (x > -20)
    xu = jnp.where(upper, x, 0.0)
    xm = jnp.where(mid, x, -1.0)
    xl = jnp.where(upper | mid, -20.0, x)
    up = jnp.log1p(-0.5 * _erfc(xu / _SQRT2))
    md = jnp.log(0.5 * _erfc(-xm / _SQRT2))
    z = 1 / (xl * xl)
    series = 1 + z * (-1 + z * (3 + z * (-15 + z * (105 + z * (-945)))))
    lo = -0.5 * xl * xl - jnp.log(-xl) - _LOG_SQRT_2PI + jnp.log(series)
    return _strong(jnp.where(upper, up, jnp.where(mid, md, lo)))


def ndtri(p):
    """The inverse of ndtr: the standard normal quantile function (NaN outside [0, 1])."""
    return _strong(_ss.ndtri(promote_float("ndtri", p)))


def dawsn(x):
    """Dawson's integral D(x) = e^(-x^2) int_0^x e^(t^2) dt, as scipy.special.dawsn (a funcgrad extra:
    jax.scipy.special has no dawsn). A 60-term continued fraction, convergent for all real x (the
    asymptotic 1/(2x) + 1/(4x^3) beyond 1e8): about 1e-14 relative in float64. Differentiable:
    D'(x) = 1 - 2 x D(x)."""
    return _ss.dawsn(promote_float("dawsn", x))


def _gauss_legendre(n):
    xg, wg = np.polynomial.legendre.leggauss(n)
    return (xg + 1) / 2, wg / 2  # on [0, 1]


_OT_NODES, _OT_WEIGHTS = _gauss_legendre(64)


def _owens_t_small(h, a):
    """T(h, a) for 0 <= a <= 1: 64-point Gauss-Legendre quadrature of
    e^(-h^2 (1 + x^2) / 2) / (1 + x^2) / (2 pi) over [0, a]."""
    x = a[..., None] * jnp.asarray(_OT_NODES, dtype=a.dtype)
    q = 1 + x * x
    f = jnp.exp(-0.5 * (h * h)[..., None] * q) / q
    return a * jnp.sum(f * jnp.asarray(_OT_WEIGHTS, dtype=a.dtype), axis=-1) / (2 * _PI)


def owens_t(h, a):
    """Owen's T function T(h, a) = 1/(2 pi) int_0^a e^(-h^2 (1 + x^2) / 2) / (1 + x^2) dx, as
    scipy.special.owens_t (a funcgrad extra: jax.scipy.special has no owens_t). Even in h, odd in a;
    for |a| <= 1 a 64-point Gauss-Legendre rule, for |a| > 1 the identity
    T(h, a) = (Phi(h) Q(ah) + Phi(ah) Q(h)) / 2 - T(ah, 1/a) (Q = 1 - Phi, so nothing cancels).
    About 2e-13 relative in float64 for |h| <= 30. Differentiable in h and a through the quadrature.
    """
    h, a = promote_float("owens_t", h, a)
    ah_ = jnp.abs(h)
    aa = jnp.abs(a)
    small = aa <= 1
    a_s = jnp.where(small, aa, 0.0)
    a_b = jnp.where(small, 2.0, aa)
    t_small = _owens_t_small(ah_, a_s)
    hb = a_b * ah_
    big = 0.5 * (ndtr(ah_) * ndtr(-hb) + ndtr(hb) * ndtr(-ah_)) - _owens_t_small(hb, 1 / a_b)
    val = jnp.where(small, t_small, big)
    # a = +-inf: T(h, inf) = Q(|h|) / 2
    val = jnp.where(aa == jnp.inf, 0.5 * ndtr(-ah_), val)
    return jnp.where(a < 0, -val, val)


def wofz(z):
    """The Faddeeva function w(z) = e^(-z^2) erfc(-iz), as scipy.special.wofz (a funcgrad extra:
    jax.scipy.special has no wofz); real input gives the complex dtype of its precision.

    Weideman's rational approximation with 40 terms in the upper half plane, w(z) = 2 e^(-z^2) - w(-z)
    below: about 1e-14 relative in complex128 for |z| <= 5 in the upper half plane (in the lower half
    plane e^(-z^2) carries a relative error of about |z|^2 * eps). Holomorphic, with
    w'(z) = -2 z w(z) + 2i / sqrt(pi).
    """
    z = asarray_any(z)
    if not dtypes.is_complex(z.dtype):
        if not dtypes.is_inexact(z.dtype):
            z = z.astype(dtypes.defaults.float_)
        z = z.astype(jnp.complex64 if z.dtype == jnp.float32 else jnp.complex128)
    return _ss.wofz(z)


__all__ = ["ndtr", "log_ndtr", "ndtri", "owens_t", "dawsn", "wofz"]
