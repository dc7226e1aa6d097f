"""Student's t distribution, as jax.scipy.stats.t."""
from __future__ import annotations

import math

from ... import numpy as jnp
from ..._src.prims.special import lgamma
from ._util import describe, promote_float


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote_float("t.logpdf", x, df, loc, scale)
    y = (x - loc) / scale
    return (lgamma((df + 1) / 2) - lgamma(df / 2) - 0.5 * jnp.log(df * math.pi) - jnp.log(scale)
            - (df + 1) / 2 * jnp.log1p(y * y / df))


def pdf(x, df, loc=0, scale=1):
    return jnp.exp(logpdf(x, df, loc, scale))


describe(globals(), "the Student's t distribution with df degrees of freedom")

__all__ = ["logpdf", "pdf"]
