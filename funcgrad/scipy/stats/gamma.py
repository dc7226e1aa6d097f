"""The gamma distribution with shape a, as jax.scipy.stats.gamma."""
from __future__ import annotations

from ... import numpy as jnp
from ..._src.prims.special import lgamma
from .._special.gamma import gammainc, gammaincc
from .._special.information import xlogy
from ._util import promote_float


def logpdf(x, a, loc=0, scale=1):
    """Log of the probability density of the gamma distribution with shape a at x (location loc, scale scale), as
    jax.scipy.stats.gamma.logpdf."""
    x, a, loc, scale = promote_float("gamma.logpdf", x, a, loc, scale)
    y = (x - loc) / scale
    ok = y >= 0
    ys = jnp.where(ok, y, 1.0)
    return jnp.where(ok, xlogy(a - 1, ys) - ys - lgamma(a) - jnp.log(scale), -jnp.inf)


def pdf(x, a, loc=0, scale=1):
    """The probability density of the gamma distribution with shape a at x (location loc, scale scale), as
    jax.scipy.stats.gamma.pdf."""
    return jnp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    """The cumulative distribution function P(X <= x) of the gamma distribution with shape a (location loc, scale
    scale), as jax.scipy.stats.gamma.cdf."""
    x, a, loc, scale = promote_float("gamma.cdf", x, a, loc, scale)
    return gammainc(a, jnp.maximum((x - loc) / scale, 0))


def logcdf(x, a, loc=0, scale=1):
    """log P(X <= x) for the gamma distribution with shape a (location loc, scale scale), as
    jax.scipy.stats.gamma.logcdf."""
    return jnp.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    """The survival function P(X > x) = 1 - cdf of the gamma distribution with shape a (location loc, scale scale),
    as jax.scipy.stats.gamma.sf."""
    x, a, loc, scale = promote_float("gamma.sf", x, a, loc, scale)
    return gammaincc(a, jnp.maximum((x - loc) / scale, 0))


def logsf(x, a, loc=0, scale=1):
    """log P(X > x) for the gamma distribution with shape a (location loc, scale scale), as
    jax.scipy.stats.gamma.logsf."""
    return jnp.log(sf(x, a, loc, scale))


__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]
