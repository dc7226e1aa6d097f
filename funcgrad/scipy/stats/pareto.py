"""The Pareto distribution with shape b, as jax.scipy.stats.pareto."""
from __future__ import annotations

from ... import numpy as jnp
from ._util import promote_float


def logpdf(x, b, loc=0, scale=1):
    """Log of the probability density of the Pareto distribution with shape b at x (location loc, scale scale), as
    jax.scipy.stats.pareto.logpdf."""
    x, b, loc, scale = promote_float("pareto.logpdf", x, b, loc, scale)
    y = (x - loc) / scale
    ok = y >= 1
    ys = jnp.where(ok, y, 1.0)
    return jnp.where(ok, jnp.log(b) - (b + 1) * jnp.log(ys) - jnp.log(scale), -jnp.inf)


def pdf(x, b, loc=0, scale=1):
    """The probability density of the Pareto distribution with shape b at x (location loc, scale scale), as
    jax.scipy.stats.pareto.pdf."""
    return jnp.exp(logpdf(x, b, loc, scale))


__all__ = ["logpdf", "pdf"]
