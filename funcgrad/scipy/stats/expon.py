"""The exponential distribution, as jax.scipy.stats.expon."""
from __future__ import annotations

from ... import numpy as jnp
from ._util import describe, nan_outside, promote_float, standardize


def logpdf(x, loc=0, scale=1):
    y, log_s, *_ = standardize("expon.logpdf", x, loc, scale)
    return jnp.where(y < 0, -jnp.inf, -y - log_s)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    y = standardize("expon.cdf", x, loc, scale)[0]
    return jnp.where(y < 0, 0.0, -jnp.expm1(-jnp.maximum(y, 0)))


def logcdf(x, loc=0, scale=1):
    return jnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    y = standardize("expon.sf", x, loc, scale)[0]
    return jnp.where(y < 0, 1.0, jnp.exp(-jnp.maximum(y, 0)))


def logsf(x, loc=0, scale=1):
    y = standardize("expon.logsf", x, loc, scale)[0]
    return jnp.where(y < 0, 0.0, -y)


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote_float("expon.ppf", q, loc, scale)
    return nan_outside(q, loc - scale * jnp.log1p(-q))


describe(globals(), "the exponential distribution")

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]
