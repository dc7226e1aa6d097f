"""The beta distribution, as jax.scipy.stats.beta."""
from __future__ import annotations

from ... import numpy as jnp
from .._special.gamma import betainc, betaln
from .._special.information import xlog1py, xlogy
from ._util import describe, promote_float


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote_float("beta.logpdf", x, a, b, loc, scale)
    y = (x - loc) / scale
    ok = (y >= 0) & (y <= 1)
    ys = jnp.where(ok, y, 0.5)
    val = xlogy(a - 1, ys) + xlog1py(b - 1, -ys) - betaln(a, b) - jnp.log(scale)
    return jnp.where(ok, val, -jnp.inf)


def pdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, b, loc, scale))


def cdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote_float("beta.cdf", x, a, b, loc, scale)
    return betainc(a, b, jnp.clip((x - loc) / scale, 0, 1))


def logcdf(x, a, b, loc=0, scale=1):
    return jnp.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote_float("beta.sf", x, a, b, loc, scale)
    return betainc(b, a, 1 - jnp.clip((x - loc) / scale, 0, 1))


def logsf(x, a, b, loc=0, scale=1):
    return jnp.log(sf(x, a, b, loc, scale))


describe(globals(), "the beta(a, b) distribution")

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]
