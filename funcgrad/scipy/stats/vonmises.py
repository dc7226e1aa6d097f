"""The von Mises distribution on the circle, as jax.scipy.stats.vonmises (no loc/scale, as in JAX)."""
from __future__ import annotations

import math

from ... import numpy as jnp
from ..._src.prims.bessel import bessel_i0e
from .._special.common import promote_float
from ._util import describe


def logpdf(x, kappa):
    """log(e^(kappa cos x) / (2 pi I0(kappa))) for kappa > 0; NaN for kappa <= 0, outside the parameter
    domain, as jax.scipy.stats.vonmises.logpdf (scipy's is NaN for kappa < 0 too)."""
    x, kappa = promote_float("vonmises.logpdf", x, kappa)
    ok = kappa > 0
    k = jnp.where(ok, kappa, 1.0)
    return jnp.where(ok, k * (jnp.cos(x) - 1) - math.log(2 * math.pi) - jnp.log(bessel_i0e(k)), jnp.nan)


def pdf(x, kappa):
    return jnp.exp(logpdf(x, kappa))


describe(globals(), "the von Mises distribution with concentration kappa", "")

__all__ = ["logpdf", "pdf"]
