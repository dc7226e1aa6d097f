"""The Bernoulli distribution, as jax.scipy.stats.bernoulli (k is shifted by loc)."""
from __future__ import annotations

from ... import numpy as jnp
from .._special.information import xlog1py, xlogy
from ._util import describe, promote_float, SHIFTED


def logpmf(k, p, loc=0):
    k, p, loc = promote_float("bernoulli.logpmf", k, p, loc)
    x = k - loc
    ok = (x == 0) | (x == 1)
    return jnp.where(ok, xlogy(x, p) + xlog1py(1 - x, -p), -jnp.inf)


def pmf(k, p, loc=0):
    return jnp.exp(logpmf(k, p, loc))


def cdf(k, p, loc=0):
    k, p, loc = promote_float("bernoulli.cdf", k, p, loc)
    x = k - loc
    return jnp.where(x < 0, 0.0, jnp.where(x < 1, 1 - p, 1.0))


def ppf(q, p):
    """The quantile function (the inverse of cdf) of the Bernoulli(p) distribution at probability q, as
    jax.scipy.stats.bernoulli.ppf."""
    q, p = promote_float("bernoulli.ppf", q, p)
    return jnp.where((q < 0) | (q > 1), jnp.nan, jnp.where(q <= 1 - p, 0.0, 1.0))


describe(globals(), "the Bernoulli(p) distribution", SHIFTED)

__all__ = ["logpmf", "pmf", "cdf", "ppf"]
