"""The gamma distribution with shape a, as jax.scipy.stats.gamma."""
from __future__ import annotations

from ... import numpy as jnp
from ..._src.prims.special import lgamma
from .._special.gamma import gammainc, gammaincc
from .._special.information import xlogy
from ._util import describe, promote_float


def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote_float("gamma.logpdf", x, a, loc, scale)
    y = (x - loc) / scale
    ok = y >= 0
    ys = jnp.where(ok, y, 1.0)
    return jnp.where(ok, xlogy(a - 1, ys) - ys - lgamma(a) - jnp.log(scale), -jnp.inf)


def pdf(x, a, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote_float("gamma.cdf", x, a, loc, scale)
    return gammainc(a, jnp.maximum((x - loc) / scale, 0))


def logcdf(x, a, loc=0, scale=1):
    return jnp.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote_float("gamma.sf", x, a, loc, scale)
    return gammaincc(a, jnp.maximum((x - loc) / scale, 0))


def logsf(x, a, loc=0, scale=1):
    return jnp.log(sf(x, a, loc, scale))


describe(globals(), "the gamma distribution with shape a")

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]
