"""The Laplace distribution, as jax.scipy.stats.laplace."""
from __future__ import annotations

import math

from ... import numpy as jnp
from ._util import describe, standardize


def logpdf(x, loc=0, scale=1):
    y, log_s, *_ = standardize("laplace.logpdf", x, loc, scale)
    return -math.log(2.0) - log_s - jnp.abs(y)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    y = standardize("laplace.cdf", x, loc, scale)[0]
    return jnp.where(y < 0, 0.5 * jnp.exp(jnp.minimum(y, 0)), 1 - 0.5 * jnp.exp(-jnp.maximum(y, 0)))


describe(globals(), "the Laplace distribution")

__all__ = ["logpdf", "pdf", "cdf"]
