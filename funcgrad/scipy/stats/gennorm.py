"""The generalised normal distribution with shape beta, as jax.scipy.stats.gennorm."""
from __future__ import annotations

import math

from ... import numpy as jnp
from ..._src.prims.special import lgamma
from .._special.gamma import gammainc
from ._util import describe, promote_float


def logpdf(x, beta):
    x, beta = promote_float("gennorm.logpdf", x, beta)
    return jnp.log(beta) - math.log(2.0) - lgamma(1 / beta) - jnp.abs(x) ** beta


def pdf(x, beta):
    return jnp.exp(logpdf(x, beta))


def cdf(x, beta):
    x, beta = promote_float("gennorm.cdf", x, beta)
    return 0.5 + jnp.sign(x) * 0.5 * gammainc(1 / beta, jnp.abs(x) ** beta)


describe(globals(), "the generalised normal distribution with shape beta", "")

__all__ = ["logpdf", "pdf", "cdf"]
