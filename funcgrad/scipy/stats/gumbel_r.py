"""The right-skewed Gumbel (extreme value type I) distribution, as jax.scipy.stats.gumbel_r:
cdf(x) = exp(-exp(-(x - loc) / scale))."""
from __future__ import annotations

from ... import numpy as jnp
from .._special.logexp import log1mexp
from ._util import describe, promote_float, standardize


def logpdf(x, loc=0, scale=1):
    z, log_s, *_ = standardize("gumbel_r.logpdf", x, loc, scale)
    return -log_s - z - jnp.exp(-z)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    z = standardize("gumbel_r.logcdf", x, loc, scale)[0]
    return -jnp.exp(-z)


def cdf(x, loc=0, scale=1):
    return jnp.exp(logcdf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    return log1mexp(-logcdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    z = standardize("gumbel_r.sf", x, loc, scale)[0]
    return -jnp.expm1(-jnp.exp(-z))


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote_float("gumbel_r.ppf", q, loc, scale)
    return open_interval(q, loc - scale * jnp.log(-jnp.log(q)))


def open_interval(q, value):
    """value for 0 < q < 1, NaN elsewhere (q = 0 and q = 1 included, as jax.scipy.stats gives)."""
    return jnp.where((q > 0) & (q < 1), value, jnp.nan)


describe(globals(), "the right-skewed Gumbel distribution")

__all__ = ["logpdf", "pdf", "logcdf", "cdf", "logsf", "sf", "ppf"]
