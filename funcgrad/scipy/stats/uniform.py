"""The uniform distribution on [loc, loc + scale], as jax.scipy.stats.uniform."""
from __future__ import annotations

from ... import numpy as jnp
from ._util import nan_outside, promote_float


def logpdf(x, loc=0, scale=1):
    """Log of the probability density of the uniform distribution on [loc, loc + scale] at x, as
    jax.scipy.stats.uniform.logpdf."""
    x, loc, scale = promote_float("uniform.logpdf", x, loc, scale)
    inside = (x >= loc) & (x <= loc + scale)
    return jnp.where(inside, -jnp.log(scale), -jnp.inf)


def pdf(x, loc=0, scale=1):
    """The probability density of the uniform distribution on [loc, loc + scale] at x, as
    jax.scipy.stats.uniform.pdf."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The cumulative distribution function P(X <= x) of the uniform distribution on [loc, loc + scale], as
    jax.scipy.stats.uniform.cdf."""
    x, loc, scale = promote_float("uniform.cdf", x, loc, scale)
    return jnp.clip((x - loc) / scale, 0, 1)


def ppf(q, loc=0, scale=1):
    """The quantile function (the inverse of cdf) of the uniform distribution on [loc, loc + scale] at probability
    q, as jax.scipy.stats.uniform.ppf."""
    q, loc, scale = promote_float("uniform.ppf", q, loc, scale)
    return nan_outside(q, loc + q * scale)


__all__ = ["logpdf", "pdf", "cdf", "ppf"]
