"""The Dirichlet distribution, as jax.scipy.stats.dirichlet: x has the K categories on its first axis
(shape (K,) or (K, N)), alpha has shape (K,); points off the simplex get -inf."""
from __future__ import annotations

from ... import numpy as jnp
from ..._src.prims.special import lgamma
from .._special.common import promote_float
from .._special.information import xlogy
from ._util import describe


def logpdf(x, alpha):
    x, alpha = (promote_float("dirichlet.logpdf", v) for v in (x, alpha))
    if alpha.ndim != 1:
        raise ValueError(f"dirichlet.logpdf: alpha must be one-dimensional, got shape {alpha.shape}")
    if x.shape[0] != alpha.shape[0]:
        raise ValueError(f"dirichlet.logpdf: x has {x.shape[0]} categories on its first axis, alpha "
                         f"{alpha.shape[0]}")
    a = jnp.reshape(alpha, alpha.shape + (1,) * (x.ndim - 1))
    normalize = jnp.sum(lgamma(alpha)) - lgamma(jnp.sum(alpha))
    logp = jnp.sum(xlogy(a - 1, x), axis=0) - normalize
    eps = 10 * jnp.finfo(x.dtype).eps
    on_simplex = jnp.all(x >= 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) <= eps * x.shape[0])
    return jnp.where(on_simplex, logp, -jnp.inf)


def pdf(x, alpha):
    return jnp.exp(logpdf(x, alpha))


describe(globals(), "the Dirichlet(alpha) distribution", "")

__all__ = ["logpdf", "pdf"]
