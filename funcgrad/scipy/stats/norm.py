"""The normal distribution N(loc, scale^2), as jax.scipy.stats.norm."""
from __future__ import annotations

import math

from ... import numpy as jnp
from .._special.error import log_ndtr, ndtr, ndtri
from ._util import describe, standardize, symmetric_quantiles

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def logpdf(x, loc=0, scale=1):
    """Log of the probability density of the normal distribution at x (location loc, scale scale), as
    jax.scipy.stats.norm.logpdf.

    Examples:
        >>> import funcgrad.numpy as jnp
        >>> from funcgrad.scipy.stats import norm
        >>> norm.logpdf(jnp.array([0., 1.]), loc=1., scale=2.)
        Array([-1.7370857, -1.6120857], dtype=float32)
    """
    y, log_s, *_ = standardize("norm.logpdf", x, loc, scale)
    return -0.5 * y * y - _LOG_SQRT_2PI - log_s


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    return ndtr(standardize("norm.cdf", x, loc, scale)[0])


def logcdf(x, loc=0, scale=1):
    return log_ndtr(standardize("norm.logcdf", x, loc, scale)[0])


def sf(x, loc=0, scale=1):
    return ndtr(-standardize("norm.sf", x, loc, scale)[0])


def logsf(x, loc=0, scale=1):
    return log_ndtr(-standardize("norm.logsf", x, loc, scale)[0])


ppf, isf = symmetric_quantiles("norm", ndtri)


describe(globals(), "the normal distribution")

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]
