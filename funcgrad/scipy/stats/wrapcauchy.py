"""The wrapped Cauchy distribution on [0, 2 pi], as jax.scipy.stats.wrapcauchy:
pdf(x, c) = (1 - c^2) / (2 pi (1 + c^2 - 2 c cos x)) for 0 < c < 1."""
from __future__ import annotations

import math

from ... import numpy as jnp
from ._util import describe, promote_float


def logpdf(x, c):
    """-inf outside [0, 2 pi]; NaN where c is not in (0, 1)."""
    x, c = promote_float("wrapcauchy.logpdf", x, c)
    inside = (x >= 0) & (x <= 2 * math.pi)
    value = jnp.log1p(-c * c) - math.log(2 * math.pi) - jnp.log1p(c * c - 2 * c * jnp.cos(x))
    value = jnp.where(inside, value, -jnp.inf)
    return jnp.where((c > 0) & (c < 1), value, jnp.nan)


def pdf(x, c):
    return jnp.exp(logpdf(x, c))


describe(globals(), "the wrapped Cauchy distribution with shape c", "")

__all__ = ["logpdf", "pdf"]
