"""The normal distribution truncated to [a, b] (in standardised units), as jax.scipy.stats.truncnorm.

log(Phi(b) - Phi(a)) is computed in whichever tail keeps it accurate (the upper one when a > 0)."""
from __future__ import annotations

import math

from ... import numpy as jnp
from .._special.error import log_ndtr
from ._util import describe, promote_float

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _log_diff(hi, lo):
    """log(exp(hi) - exp(lo)) for hi >= lo."""
    return hi + jnp.log1p(-jnp.exp(lo - hi))


def _log_mass(a, b):
    """log(Phi(b) - Phi(a))."""
    upper = a > 0
    return jnp.where(upper, _log_diff(log_ndtr(-a), log_ndtr(-b)), _log_diff(log_ndtr(b), log_ndtr(a)))


def _std(name, x, a, b, loc, scale):
    x, a, b, loc, scale = promote_float(name, x, a, b, loc, scale)
    return (x - loc) / scale, a, b, scale


def logpdf(x, a, b, loc=0, scale=1):
    y, a, b, scale = _std("truncnorm.logpdf", x, a, b, loc, scale)
    val = -0.5 * y * y - _LOG_SQRT_2PI - _log_mass(a, b) - jnp.log(scale)
    return jnp.where((y >= a) & (y <= b), val, -jnp.inf)


def pdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, b, loc, scale))


def _log_cdf_sf(name, x, a, b, loc, scale):
    """(log cdf, log sf), each taken as log1p(-other) where it is near 1 (no cancellation)."""
    y, a, b, _ = _std(name, x, a, b, loc, scale)
    yc = jnp.clip(y, a, b)
    total = _log_mass(a, b)
    log_c = _log_mass(a, yc) - total
    log_s = _log_mass(yc, b) - total
    half = -math.log(2.0)
    lc = jnp.where(log_c > half, jnp.log1p(-jnp.exp(log_s)), log_c)
    ls = jnp.where(log_s > half, jnp.log1p(-jnp.exp(log_c)), log_s)
    lc = jnp.where(y <= a, -jnp.inf, jnp.where(y >= b, 0.0, lc))
    ls = jnp.where(y <= a, 0.0, jnp.where(y >= b, -jnp.inf, ls))
    return lc, ls


def logcdf(x, a, b, loc=0, scale=1):
    return _log_cdf_sf("truncnorm.logcdf", x, a, b, loc, scale)[0]


def cdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    return _log_cdf_sf("truncnorm.logsf", x, a, b, loc, scale)[1]


def sf(x, a, b, loc=0, scale=1):
    return jnp.exp(logsf(x, a, b, loc, scale))


describe(globals(), "the normal distribution truncated to [a, b] (in standard units)")

__all__ = ["logpdf", "pdf", "logcdf", "cdf", "logsf", "sf"]
