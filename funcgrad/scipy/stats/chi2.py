"""The chi-squared distribution with df degrees of freedom, as jax.scipy.stats.chi2."""
from __future__ import annotations

import math

from ... import numpy as jnp
from ..._src.prims.special import lgamma
from .._special.gamma import gammainc, gammaincc
from .._special.information import xlogy
from ._util import describe, promote_float


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote_float("chi2.logpdf", x, df, loc, scale)
    y = (x - loc) / scale
    ok = y >= 0
    ys = jnp.where(ok, y, 1.0)
    k = df / 2
    val = xlogy(k - 1, ys) - ys / 2 - lgamma(k) - k * math.log(2.0) - jnp.log(scale)
    return jnp.where(ok, val, -jnp.inf)


def pdf(x, df, loc=0, scale=1):
    return jnp.exp(logpdf(x, df, loc, scale))


def cdf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote_float("chi2.cdf", x, df, loc, scale)
    return gammainc(df / 2, jnp.maximum((x - loc) / scale, 0) / 2)


def logcdf(x, df, loc=0, scale=1):
    return jnp.log(cdf(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote_float("chi2.sf", x, df, loc, scale)
    return gammaincc(df / 2, jnp.maximum((x - loc) / scale, 0) / 2)


def logsf(x, df, loc=0, scale=1):
    return jnp.log(sf(x, df, loc, scale))


describe(globals(), "the chi-squared distribution with df degrees of freedom")

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]
