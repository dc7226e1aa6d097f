"""The multinomial distribution, as jax.scipy.stats.multinomial: counts x (..., k) summing to n,
probabilities p (..., k)."""
from __future__ import annotations

from ... import numpy as jnp
from ..._src.prims.special import lgamma
from .._special.common import promote_float
from .._special.information import xlogy
from ._util import describe


def logpmf(x, n, p):
    x, p = (promote_float("multinomial.logpmf", v) for v in (x, p))
    n = promote_float("multinomial.logpmf", n)
    ok = (jnp.sum(x, axis=-1) == n) & jnp.all((x >= 0) & (x == jnp.floor(x)), axis=-1)
    val = lgamma(n + 1) + jnp.sum(xlogy(x, p) - lgamma(x + 1), axis=-1)
    return jnp.where(ok, val, -jnp.inf)


def pmf(x, n, p):
    return jnp.exp(logpmf(x, n, p))


describe(globals(), "the multinomial(n, p) distribution", "")

__all__ = ["logpmf", "pmf"]
