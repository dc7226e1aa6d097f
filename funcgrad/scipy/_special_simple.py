"""Small jax.scipy.special functions built from others: the Box-Cox transforms boxcox / boxcox1p, the
binomial coefficient comb, and the real log-gamma loggamma. Compositions of funcgrad operations, so their
derivatives come from the pieces; each unused branch of a `where` is fed a safe value, so gradients stay
finite where the chosen branch is."""
from __future__ import annotations

from .. import numpy as jnp
from .._src.prims.special import lgamma as _lgamma
from ._special.common import promote_float


def boxcox(x, lmbda):
    """The Box-Cox transform: log(x) where lmbda == 0, else (x**lmbda - 1) / lmbda (NaN for x < 0)."""
    x, lmbda = promote_float("boxcox", x, lmbda)
    return _box(jnp.log(x), lmbda)


def boxcox1p(x, lmbda):
    """The Box-Cox transform of 1 + x: log1p(x) where lmbda == 0, else ((1 + x)**lmbda - 1) / lmbda."""
    x, lmbda = promote_float("boxcox1p", x, lmbda)
    return _box(jnp.log1p(x), lmbda)


def _box(logx, lmbda):
    zero = lmbda == 0
    safe = jnp.where(zero, 1.0, lmbda)
    return jnp.where(zero, logx, jnp.expm1(safe * logx) / safe)


def comb(N, k, *, repetition: bool = False):
    """The number of combinations of N things taken k at a time, exp(lgamma(N+1) - lgamma(k+1) -
    lgamma(N-k+1)) as scipy.special.comb(exact=False); with repetition, comb(N + k - 1, k). 0 where
    k > N, k < 0 or N < 0."""
    N, k = promote_float("comb", N, k)
    # one way to take nothing with repetition (where N + k - 1 < k): the constant 1, as JAX's; without
    # repetition k = 0 lies inside the formula's domain, whose derivative in k there is
    # psi(N + 1) - psi(1) (JAX's, from the same formula)
    empty = (k == 0) & (N >= 0) if repetition else jnp.zeros_like(k, dtype=bool)
    if repetition:
        N = jnp.where(N >= 0, N + k - 1, N)
    valid = ((k >= 0) & (N >= 0) & (k <= N)) | empty
    n_ = jnp.where(valid & ~empty, N, 1.0)
    k_ = jnp.where(valid & ~empty, k, 0.0)
    val = jnp.exp(_lgamma(n_ + 1) - _lgamma(k_ + 1) - _lgamma(n_ - k_ + 1))
    return jnp.where(valid, val, 0.0)


def loggamma(x):
    """The principal branch of log(Gamma(x)) for real x: gammaln(x) for x >= 0 and NaN for x < 0 (where
    Gamma is negative or infinite and the real logarithm is undefined), as jax.scipy.special.loggamma."""
    x = promote_float("loggamma", x)
    neg = x < 0
    return jnp.where(neg, jnp.nan, _lgamma(jnp.where(neg, 1.0, x)))
