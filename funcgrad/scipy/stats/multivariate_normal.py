"""The multivariate normal distribution, as jax.scipy.stats.multivariate_normal: x (..., d), mean
(..., d), cov (..., d, d) (a scalar or vector cov means a scaled identity or a diagonal)."""
from __future__ import annotations

import math

from ... import numpy as jnp
from ...numpy import linalg
from ..._src.prims.linalg_decomp import triangular_solve
from .._special.common import promote_float


def logpdf(x, mean, cov, allow_singular=None):
    """Log of the probability density of the multivariate normal distribution N(mean, cov) at x, as
    jax.scipy.stats.multivariate_normal.logpdf. allow_singular must be None (NotImplementedError
    otherwise, as in JAX)."""
    if allow_singular is not None:
        raise NotImplementedError("multivariate_normal.logpdf: allow_singular is not supported")
    x, mean, cov = (promote_float("multivariate_normal.logpdf", v) for v in (x, mean, cov))
    if mean.ndim == 0:
        d = x.shape[-1] if x.ndim else 1
    else:
        d = mean.shape[-1]
    if cov.ndim < 2:
        if mean.ndim == 0 and cov.ndim == 0 and x.ndim == 0:  # univariate
            y = (x - mean) ** 2 / cov
            return -0.5 * (y + jnp.log(2 * math.pi * cov))
        var = jnp.broadcast_to(cov, (d,))
        y = (x - mean) ** 2 / var
        return -0.5 * (jnp.sum(y, axis=-1) + jnp.sum(jnp.log(var)) + d * math.log(2 * math.pi))
    if cov.shape[-1] != d or cov.shape[-2] != d:
        raise ValueError(f"multivariate_normal.logpdf: cov of shape {cov.shape} does not match the "
                         f"dimension {d} of mean/x")
    L = linalg.cholesky(cov)
    diff = jnp.broadcast_to(x - mean, jnp.broadcast_shapes(x.shape, mean.shape))
    batch = jnp.broadcast_shapes(diff.shape[:-1], L.shape[:-2])
    Lb = jnp.broadcast_to(L, batch + (d, d))
    db = jnp.broadcast_to(diff, batch + (d,))
    y = triangular_solve(Lb, db[..., None], left_side=True, lower=True)[..., 0]
    log_det = jnp.sum(jnp.log(jnp.diagonal(Lb, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * jnp.sum(y * y, axis=-1) - log_det - 0.5 * d * math.log(2 * math.pi)


def pdf(x, mean, cov, allow_singular=None):
    """The probability density of the multivariate normal distribution N(mean, cov) at x, as
    jax.scipy.stats.multivariate_normal.pdf. allow_singular must be None (NotImplementedError
    otherwise, as in JAX)."""
    return jnp.exp(logpdf(x, mean, cov, allow_singular))


__all__ = ["logpdf", "pdf"]
