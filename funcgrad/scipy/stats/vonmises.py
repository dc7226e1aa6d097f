"""The von Mises distribution on the circle, as jax.scipy.stats.vonmises (no loc/scale, as in JAX)."""
from __future__ import annotations

import math

from ... import numpy as jnp
from ...primitives.special_functions2 import bessel_i0e
from .._special_more import promote_float


def logpdf(x, kappa):
    x, kappa = promote_float("vonmises.logpdf", x, kappa)
    return kappa * (jnp.cos(x) - 1) - math.log(2 * math.pi) - jnp.log(bessel_i0e(kappa))


def pdf(x, kappa):
    return jnp.exp(logpdf(x, kappa))


__all__ = ["logpdf", "pdf"]
