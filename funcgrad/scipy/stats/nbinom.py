"""The negative binomial distribution (failures before n successes), as jax.scipy.stats.nbinom."""
from __future__ import annotations

from ... import numpy as jnp
from ..._src.prims.special import lgamma
from .._special.information import xlog1py, xlogy
from ._util import describe, promote_float, SHIFTED


def logpmf(k, n, p, loc=0):
    k, n, p, loc = promote_float("nbinom.logpmf", k, n, p, loc)
    x = k - loc
    ok = (x >= 0) & (x == jnp.floor(x))
    xs = jnp.where(ok, x, 0.0)
    comb = lgamma(xs + n) - lgamma(n) - lgamma(xs + 1)
    return jnp.where(ok, comb + xlogy(n, p) + xlog1py(xs, -p), -jnp.inf)


def pmf(k, n, p, loc=0):
    return jnp.exp(logpmf(k, n, p, loc))


describe(globals(), "the negative binomial(n, p) distribution (failures before the n-th success)", SHIFTED)

__all__ = ["logpmf", "pmf"]
