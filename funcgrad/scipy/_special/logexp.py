"""Log-sum-exp relatives: softmax and log_softmax (jax.scipy.special's) and log1mexp (jax.nn.log1mexp, also
the stable tail of scipy.stats' Gumbel distributions)."""
from __future__ import annotations

import math

from ... import numpy as jnp
from ...numpy import _softmax as _sm
from .common import promote_float


def softmax(x, /, *, axis=None):
    """jax.scipy.special.softmax: jax.nn.softmax's formula (numpy/_softmax.py), axis None meaning every axis."""
    return _sm.softmax(promote_float("softmax", x), axis)


def log_softmax(x, /, *, axis=None):
    """jax.scipy.special.log_softmax: jax.nn.log_softmax's formula, axis None meaning every axis."""
    return _sm.log_softmax(promote_float("log_softmax", x), axis)


def log1mexp(x):
    """log(1 - exp(-x)), accurate for small and large x > 0 (-inf at 0, NaN below): jax.nn.log1mexp, also
    the stable tail of scipy.stats' Gumbel distributions."""
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        x = x.astype(jnp.result_type(float))
    small = x < math.log(2.0)
    # log(-expm1(-x)) near 0, log1p(-exp(-x)) for large x; each branch fed a safe value
    near = jnp.log(-jnp.expm1(-jnp.where(small, x, 1.0)))
    far = jnp.log1p(-jnp.exp(-jnp.where(small, 1.0, x)))
    return jnp.where(small, near, far)


__all__ = ["softmax", "log_softmax", "log1mexp"]
