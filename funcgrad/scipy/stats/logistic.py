"""The logistic distribution, as jax.scipy.stats.logistic."""
from __future__ import annotations

from ... import numpy as jnp
from ..special import expit, logit
from ._util import standardize, symmetric_quantiles


def logpdf(x, loc=0, scale=1):
    """Log of the probability density of the logistic distribution at x (location loc, scale scale), as
    jax.scipy.stats.logistic.logpdf."""
    y, log_s, *_ = standardize("logistic.logpdf", x, loc, scale)
    a = jnp.abs(y)  # symmetric: -|y| - 2 log1p(exp(-|y|)) is stable for both signs
    return -a - 2 * jnp.log1p(jnp.exp(-a)) - log_s


def pdf(x, loc=0, scale=1):
    """The probability density of the logistic distribution at x (location loc, scale scale), as
    jax.scipy.stats.logistic.pdf."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The cumulative distribution function P(X <= x) of the logistic distribution (location loc, scale scale), as
    jax.scipy.stats.logistic.cdf."""
    return expit(standardize("logistic.cdf", x, loc, scale)[0])


def logcdf(x, loc=0, scale=1):
    """log P(X <= x) for the logistic distribution (location loc, scale scale), as jax.scipy.stats.logistic.logcdf."""
    y = standardize("logistic.logcdf", x, loc, scale)[0]
    return -jnp.logaddexp(0.0, -y)


def sf(x, loc=0, scale=1):
    """The survival function P(X > x) = 1 - cdf of the logistic distribution (location loc, scale scale), as
    jax.scipy.stats.logistic.sf."""
    return expit(-standardize("logistic.sf", x, loc, scale)[0])


def logsf(x, loc=0, scale=1):
    """log P(X > x) for the logistic distribution (location loc, scale scale), as jax.scipy.stats.logistic.logsf."""
    y = standardize("logistic.logsf", x, loc, scale)[0]
    return -jnp.logaddexp(0.0, y)


ppf, isf = symmetric_quantiles("logistic", logit)


__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]
