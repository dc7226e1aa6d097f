"""The binomial distribution, as jax.scipy.stats.binom (k is shifted by loc)."""
from __future__ import annotations

from ... import numpy as jnp
from ..._src.prims.special import lgamma
from .._special.information import xlog1py, xlogy
from ._util import describe, promote_float, SHIFTED


def logpmf(k, n, p, loc=0):
    k, n, p, loc = promote_float("binom.logpmf", k, n, p, loc)
    x = k - loc
    ok = (x >= 0) & (x <= n) & (x == jnp.floor(x))
    xs = jnp.where(ok, x, 0.0)
    comb = lgamma(n + 1) - lgamma(xs + 1) - lgamma(n - xs + 1)
    return jnp.where(ok, comb + xlogy(xs, p) + xlog1py(n - xs, -p), -jnp.inf)


def pmf(k, n, p, loc=0):
    return jnp.exp(logpmf(k, n, p, loc))


describe(globals(), "the binomial(n, p) distribution", SHIFTED)

__all__ = ["logpmf", "pmf"]
