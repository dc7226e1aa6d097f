"""The Pareto distribution with shape b, as jax.scipy.stats.pareto."""
from __future__ import annotations

from ... import numpy as jnp
from ._util import describe, promote_float


def logpdf(x, b, loc=0, scale=1):
    x, b, loc, scale = promote_float("pareto.logpdf", x, b, loc, scale)
    y = (x - loc) / scale
    ok = y >= 1
    ys = jnp.where(ok, y, 1.0)
    return jnp.where(ok, jnp.log(b) - (b + 1) * jnp.log(ys) - jnp.log(scale), -jnp.inf)


def pdf(x, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, b, loc, scale))


describe(globals(), "the Pareto distribution with shape b")

__all__ = ["logpdf", "pdf"]
