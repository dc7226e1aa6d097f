"""The generalised normal distribution with shape beta, as jax.scipy.stats.gennorm."""
from __future__ import annotations

import math

from ... import numpy as jnp
from ..._src.prims.special import lgamma
from .._special.gamma import gammainc
from ._util import promote_float


def logpdf(x, beta):
    """Log of the probability density of the generalised normal distribution with shape beta at x, as
    jax.scipy.stats.gennorm.logpdf."""
    x, beta = promote_float("gennorm.logpdf", x, beta)
    return jnp.log(beta) - math.log(2.0) - lgamma(1 / beta) - jnp.abs(x) ** beta


def pdf(x, beta):
    """The probability density of the generalised normal distribution with shape beta at x, as
    jax.scipy.stats.gennorm.pdf."""
    return jnp.exp(logpdf(x, beta))


def cdf(x, beta):
    """The cumulative distribution function P(X <= x) of the generalised normal distribution with shape beta, as
    jax.scipy.stats.gennorm.cdf."""
    x, beta = promote_float("gennorm.cdf", x, beta)
    return 0.5 + jnp.sign(x) * 0.5 * gammainc(1 / beta, jnp.abs(x) ** beta)


__all__ = ["logpdf", "pdf", "cdf"]
