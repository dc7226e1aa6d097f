"""The Poisson distribution, as jax.scipy.stats.poisson (k is shifted by loc)."""
from __future__ import annotations

from ... import numpy as jnp
from ..._src.prims.special import lgamma
from .._special.gamma import gammaincc
from .._special.information import xlogy
from ._util import describe, promote_float, SHIFTED


def logpmf(k, mu, loc=0):
    k, mu, loc = promote_float("poisson.logpmf", k, mu, loc)
    x = k - loc
    ok = (x >= 0) & (x == jnp.floor(x))
    xs = jnp.where(ok, x, 0.0)
    return jnp.where(ok, xlogy(xs, mu) - lgamma(xs + 1) - mu, -jnp.inf)


def pmf(k, mu, loc=0):
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    k, mu, loc = promote_float("poisson.cdf", k, mu, loc)
    x = jnp.floor(k - loc)
    ok = x >= 0
    return jnp.where(ok, gammaincc(jnp.where(ok, x, 0.0) + 1, mu), 0.0)


def logcdf(k, mu, loc=0):
    return jnp.log(cdf(k, mu, loc))


describe(globals(), "the Poisson(mu) distribution", SHIFTED)

__all__ = ["logpmf", "pmf", "cdf", "logcdf"]
