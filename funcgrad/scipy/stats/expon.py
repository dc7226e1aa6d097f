"""The exponential distribution, as jax.scipy.stats.expon."""
from __future__ import annotations

from ... import numpy as jnp
from ._util import nan_outside, promote_float, standardize


def logpdf(x, loc=0, scale=1):
    """Log of the probability density of the exponential distribution at x (location loc, scale scale), as
    jax.scipy.stats.expon.logpdf."""
    y, log_s, *_ = standardize("expon.logpdf", x, loc, scale)
    return jnp.where(y < 0, -jnp.inf, -y - log_s)


def pdf(x, loc=0, scale=1):
    """The probability density of the exponential distribution at x (location loc, scale scale), as
    jax.scipy.stats.expon.pdf."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The cumulative distribution function P(X <= x) of the exponential distribution (location loc, scale scale),
    as jax.scipy.stats.expon.cdf."""
    y = standardize("expon.cdf", x, loc, scale)[0]
    return jnp.where(y < 0, 0.0, -jnp.expm1(-jnp.maximum(y, 0)))


def logcdf(x, loc=0, scale=1):
    """log P(X <= x) for the exponential distribution (location loc, scale scale), as jax.scipy.stats.expon.logcdf."""
    return jnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """The survival function P(X > x) = 1 - cdf of the exponential distribution (location loc, scale scale), as
    jax.scipy.stats.expon.sf."""
    y = standardize("expon.sf", x, loc, scale)[0]
    return jnp.where(y < 0, 1.0, jnp.exp(-jnp.maximum(y, 0)))


def logsf(x, loc=0, scale=1):
    """log P(X > x) for the exponential distribution (location loc, scale scale), as jax.scipy.stats.expon.logsf."""
    y = standardize("expon.logsf", x, loc, scale)[0]
    return jnp.where(y < 0, 0.0, -y)


def ppf(q, loc=0, scale=1):
    """The quantile function (the inverse of cdf) of the exponential distribution at probability q (location loc,
    scale scale), as jax.scipy.stats.expon.ppf."""
    q, loc, scale = promote_float("expon.ppf", q, loc, scale)
    return nan_outside(q, loc - scale * jnp.log1p(-q))


__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]
