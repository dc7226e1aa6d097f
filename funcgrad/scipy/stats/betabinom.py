"""The beta-binomial distribution, as jax.scipy.stats.betabinom (k shifted by loc)."""
from __future__ import annotations

from ... import numpy as jnp
from ..._src.prims.special import lgamma
from .._special.gamma import betaln
from ._util import describe, promote_float, SHIFTED


def logpmf(k, n, a, b, loc=0):
    k, n, a, b, loc = promote_float("betabinom.logpmf", k, n, a, b, loc)
    x = k - loc
    ok = (x >= 0) & (x <= n) & (x == jnp.floor(x))
    xs = jnp.where(ok, x, 0.0)
    comb = lgamma(n + 1) - lgamma(xs + 1) - lgamma(n - xs + 1)
    return jnp.where(ok, comb + betaln(xs + a, n - xs + b) - betaln(a, b), -jnp.inf)


def pmf(k, n, a, b, loc=0):
    return jnp.exp(logpmf(k, n, a, b, loc))


describe(globals(), "the beta-binomial(n, a, b) distribution", SHIFTED)

__all__ = ["logpmf", "pmf"]
