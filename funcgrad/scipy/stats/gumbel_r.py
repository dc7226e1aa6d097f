"""The right-skewed Gumbel (extreme value type I) distribution, as jax.scipy.stats.gumbel_r:
cdf(x) = exp(-exp(-(x - loc) / scale))."""
from __future__ import annotations

from ... import numpy as jnp
from .._special.logexp import log1mexp
from ._util import promote_float, standardize


def logpdf(x, loc=0, scale=1):
    """Log of the probability density of the right-skewed Gumbel distribution at x (location loc, scale scale), as
    jax.scipy.stats.gumbel_r.logpdf."""
    z, log_s, *_ = standardize("gumbel_r.logpdf", x, loc, scale)
    return -log_s - z - jnp.exp(-z)


def pdf(x, loc=0, scale=1):
    """The probability density of the right-skewed Gumbel distribution at x (location loc, scale scale), as
    jax.scipy.stats.gumbel_r.pdf."""
    return jnp.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """log P(X <= x) for the right-skewed Gumbel distribution (location loc, scale scale), as
    jax.scipy.stats.gumbel_r.logcdf."""
    z = standardize("gumbel_r.logcdf", x, loc, scale)[0]
    return -jnp.exp(-z)


def cdf(x, loc=0, scale=1):
    """The cumulative distribution function P(X <= x) of the right-skewed Gumbel distribution (location loc, scale
    scale), as jax.scipy.stats.gumbel_r.cdf."""
    return jnp.exp(logcdf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    """log P(X > x) for the right-skewed Gumbel distribution (location loc, scale scale), as
    jax.scipy.stats.gumbel_r.logsf."""
    return log1mexp(-logcdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """The survival function P(X > x) = 1 - cdf of the right-skewed Gumbel distribution (location loc, scale scale),
    as jax.scipy.stats.gumbel_r.sf."""
    z = standardize("gumbel_r.sf", x, loc, scale)[0]
    return -jnp.expm1(-jnp.exp(-z))


def ppf(q, loc=0, scale=1):
    """The quantile function (the inverse of cdf) of the right-skewed Gumbel distribution at probability q (location
    loc, scale scale), as jax.scipy.stats.gumbel_r.ppf."""
    q, loc, scale = promote_float("gumbel_r.ppf", q, loc, scale)
    return open_interval(q, loc - scale * jnp.log(-jnp.log(q)))


def open_interval(q, value):
    """value for 0 < q < 1, NaN elsewhere (q = 0 and q = 1 included, as jax.scipy.stats gives)."""
    return jnp.where((q > 0) & (q < 1), value, jnp.nan)


__all__ = ["logpdf", "pdf", "logcdf", "cdf", "logsf", "sf", "ppf"]
