"""The gamma-function family of jax.scipy.special: the regularised incomplete gamma functions gammainc /
gammaincc and incomplete beta betainc (cards in funcgrad._src.prims.incomplete), beta and betaln, gammasgn,
poch, factorial and multigammaln. (gamma, gammaln, digamma and polygamma are in funcgrad.scipy.special.)"""
from __future__ import annotations

import math
import operator

from ... import numpy as jnp
from ..._src.prims import incomplete as _inc
from ..._src.prims.special import lgamma as _lgamma
from .common import promote_float


def gammainc(a, x):
    """The regularised lower incomplete gamma function P(a, x)."""
    return _inc.igamma(*promote_float("gammainc", a, x))


def gammaincc(a, x):
    """The regularised upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _inc.igammac(*promote_float("gammaincc", a, x))


def betainc(a, b, x):
    """The regularised incomplete beta function I_x(a, b) (differentiable in x only, as in JAX)."""
    return _inc.betainc(*promote_float("betainc", a, b, x))


def betaln(a, b):
    """log |B(a, b)| = lgamma(a) + lgamma(b) - lgamma(a + b)."""
    a, b = promote_float("betaln", a, b)
    return _lgamma(a) + _lgamma(b) - _lgamma(a + b)


def beta(a, b):
    """The beta function B(a, b) = sgn Gamma(a) sgn Gamma(b) sgn Gamma(a + b) exp(betaln(a, b)), signed also
    at negative arguments (B(-0.5, 1) = -2) and NaN at the poles of Gamma, as jax.scipy.special.beta."""
    a, b = promote_float("beta", a, b)
    return gammasgn(a) * gammasgn(b) * gammasgn(a + b) * jnp.exp(betaln(a, b))


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension d (a concrete int)."""
    try:
        d = operator.index(d)
    except TypeError:
        raise TypeError(f"multigammaln: d must be a concrete int, got {type(d).__name__}") from None
    a = promote_float("multigammaln", a)
    out = jnp.full_like(a, d * (d - 1) / 4 * math.log(math.pi))
    for j in range(d):
        out = out + _lgamma(a - j / 2)
    return out


def factorial(n, exact: bool = False):
    """n! = Gamma(n + 1) (0 for n < 0); exact=True is not supported (as in JAX)."""
    if exact:
        raise NotImplementedError("factorial with exact=True is not supported")
    n = promote_float("factorial", n)
    return jnp.where(n < 0, 0.0, jnp.exp(_lgamma(n + 1)))


def gammasgn(x):
    """The sign of the gamma function: 1 for x > 0 (and +0, +inf), -1 at -0, (-1)^ceil(-x) between the
    poles below 0, NaN at negative integers, -inf and NaN."""
    x = promote_float("gammasgn", x)
    neg_sign = jnp.where(jnp.remainder(jnp.floor(-x), 2) == 0, -1.0, 1.0)
    pole = (x < 0) & (x == jnp.floor(x))
    out = jnp.where(x > 0, 1.0, neg_sign)
    out = jnp.where(x == 0, jnp.copysign(1.0, x), out)
    return jnp.where(pole | jnp.isnan(x), jnp.nan, out).astype(x.dtype)


def poch(z, m):
    """The rising factorial Gamma(z + m) / Gamma(z), signed (poch(0.5, -1) = -2); 1 at m = 0 (also where z is a
    pole of Gamma, as scipy and JAX), 0 where only z is a pole (poch(-1, 2) = (-1)(0)), inf where only z + m
    is one (scipy's value)."""
    z, m = promote_float("poch", z, m)
    w = z + m
    z_pole = (z <= 0) & (z == jnp.floor(z))
    w_pole = (w <= 0) & (w == jnp.floor(w))
    sign = jnp.where(z_pole, 1.0, gammasgn(z)) * jnp.where(w_pole, 1.0, gammasgn(w))
    val = sign * jnp.exp(_lgamma(w) - _lgamma(z))
    return jnp.where((m == 0) & z_pole, 1.0, val)


__all__ = ["gammainc", "gammaincc", "betainc", "betaln", "beta", "gammasgn", "poch", "factorial", "multigammaln"]
