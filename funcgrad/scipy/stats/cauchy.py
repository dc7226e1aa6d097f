"""The Cauchy distribution, as jax.scipy.stats.cauchy."""
from __future__ import annotations

import math

from ... import numpy as jnp
from ._util import standardize, symmetric_quantiles


def logpdf(x, loc=0, scale=1):
    """Log of the probability density of the Cauchy distribution at x (location loc, scale scale), as
    jax.scipy.stats.cauchy.logpdf."""
    y, log_s, *_ = standardize("cauchy.logpdf", x, loc, scale)
    return -math.log(math.pi) - log_s - jnp.log1p(y * y)


def pdf(x, loc=0, scale=1):
    """The probability density of the Cauchy distribution at x (location loc, scale scale), as
    jax.scipy.stats.cauchy.pdf."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The cumulative distribution function P(X <= x) of the Cauchy distribution (location loc, scale scale), as
    jax.scipy.stats.cauchy.cdf."""
    y = standardize("cauchy.cdf", x, loc, scale)[0]
    return 0.5 + jnp.arctan(y) / math.pi


def logcdf(x, loc=0, scale=1):
    """log P(X <= x) for the Cauchy distribution (location loc, scale scale), as jax.scipy.stats.cauchy.logcdf."""
    return jnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """The survival function P(X > x) = 1 - cdf of the Cauchy distribution (location loc, scale scale), as
    jax.scipy.stats.cauchy.sf."""
    y = standardize("cauchy.sf", x, loc, scale)[0]
    return 0.5 - jnp.arctan(y) / math.pi


def logsf(x, loc=0, scale=1):
    """log P(X > x) for the Cauchy distribution (location loc, scale scale), as jax.scipy.stats.cauchy.logsf."""
    return jnp.log(sf(x, loc, scale))


ppf, isf = symmetric_quantiles("cauchy", lambda q: jnp.tan(math.pi * (q - 0.5)))


__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]
