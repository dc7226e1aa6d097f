"""The geometric distribution on k = 1, 2, ... (k shifted by loc), as jax.scipy.stats.geom."""
from __future__ import annotations

from ... import numpy as jnp
from .._special.information import xlog1py
from ._util import describe, promote_float, SHIFTED


def logpmf(k, p, loc=0):
    k, p, loc = promote_float("geom.logpmf", k, p, loc)
    x = k - loc
    ok = (x >= 1) & (x == jnp.floor(x))
    xs = jnp.where(ok, x, 1.0)
    return jnp.where(ok, xlog1py(xs - 1, -p) + jnp.log(p), -jnp.inf)


def pmf(k, p, loc=0):
    return jnp.exp(logpmf(k, p, loc))


describe(globals(), "the geometric(p) distribution (trials up to the first success)", SHIFTED)

__all__ = ["logpmf", "pmf"]
