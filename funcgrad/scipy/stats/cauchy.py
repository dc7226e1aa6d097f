"""The Cauchy distribution, as jax.scipy.stats.cauchy."""
from __future__ import annotations

import math

from ... import numpy as jnp
from ._util import describe, standardize, symmetric_quantiles


def logpdf(x, loc=0, scale=1):
    y, log_s, *_ = standardize("cauchy.logpdf", x, loc, scale)
    return -math.log(math.pi) - log_s - jnp.log1p(y * y)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    y = standardize("cauchy.cdf", x, loc, scale)[0]
    return 0.5 + jnp.arctan(y) / math.pi


def logcdf(x, loc=0, scale=1):
    return jnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    y = standardize("cauchy.sf", x, loc, scale)[0]
    return 0.5 - jnp.arctan(y) / math.pi


def logsf(x, loc=0, scale=1):
    return jnp.log(sf(x, loc, scale))


ppf, isf = symmetric_quantiles("cauchy", lambda q: jnp.tan(math.pi * (q - 0.5)))


describe(globals(), "the Cauchy distribution")

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]
