"""The logistic distribution, as jax.scipy.stats.logistic."""
from __future__ import annotations

from ... import numpy as jnp
from ..special import expit, logit
from ._util import describe, standardize, symmetric_quantiles


def logpdf(x, loc=0, scale=1):
    y, log_s, *_ = standardize("logistic.logpdf", x, loc, scale)
    a = jnp.abs(y)  # symmetric: -|y| - 2 log1p(exp(-|y|)) is stable for both signs
    return -a - 2 * jnp.log1p(jnp.exp(-a)) - log_s


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    return expit(standardize("logistic.cdf", x, loc, scale)[0])


def logcdf(x, loc=0, scale=1):
    y = standardize("logistic.logcdf", x, loc, scale)[0]
    return -jnp.logaddexp(0.0, -y)


def sf(x, loc=0, scale=1):
    return expit(-standardize("logistic.sf", x, loc, scale)[0])


def logsf(x, loc=0, scale=1):
    y = standardize("logistic.logsf", x, loc, scale)[0]
    return -jnp.logaddexp(0.0, y)


ppf, isf = symmetric_quantiles("logistic", logit)


describe(globals(), "the logistic distribution")

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]
