"""The uniform distribution on [loc, loc + scale], as jax.scipy.stats.uniform."""
from __future__ import annotations

from ... import numpy as jnp
from ._util import describe, nan_outside, promote_float


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_float("uniform.logpdf", x, loc, scale)
    inside = (x >= loc) & (x <= loc + scale)
    return jnp.where(inside, -jnp.log(scale), -jnp.inf)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote_float("uniform.cdf", x, loc, scale)
    return jnp.clip((x - loc) / scale, 0, 1)


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote_float("uniform.ppf", q, loc, scale)
    return nan_outside(q, loc + q * scale)


describe(globals(), "the uniform distribution on [loc, loc + scale]", "")

__all__ = ["logpdf", "pdf", "cdf", "ppf"]
