"""The Hurwitz/Riemann zeta function zeta and the Bernoulli numbers bernoulli, as jax.scipy.special's."""
from __future__ import annotations

import math
import operator
from fractions import Fraction

from ... import numpy as jnp
from .common import promote_float


_ZETA_N = 12


# B_2k / (2k)! for the Euler-Maclaurin tail.
_B2K = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798]
_EM = [b / math.factorial(2 * k + 2) for k, b in enumerate(_B2K)]


def zeta(x, q=None):
    """The Hurwitz zeta function sum_k (k + q)^-x (q = 1: Riemann's), for x > 1 and q > 0 (NaN for
    x < 1; inf at x == 1 and, for an even x, at q a non-positive integer, where a term is 1/0: JAX's
    values), by Euler-Maclaurin summation; differentiable in x and q."""
    if q is None:
        q = 1.0
    x, q = promote_float("zeta", x, q)
    ok = (x > 1) & (q > 0)
    xs = jnp.where(ok, x, 2.0)
    qs = jnp.where(ok, q, 1.0)
    s = jnp.zeros_like(xs)
    for k in range(_ZETA_N):
        s = s + (qs + k) ** (-xs)
    a = qs + _ZETA_N
    s = s + a ** (1 - xs) / (xs - 1) + 0.5 * a ** (-xs)
    fac = xs  # s (s+1) ... (s+2j-2), updated per term
    power = a ** (-xs - 1)
    for j, c in enumerate(_EM):
        s = s + c * fac * power
        fac = fac * (xs + 2 * j + 1) * (xs + 2 * j + 2)
        power = power / (a * a)
    # a term (k + q)^-x = 1/0 at q a non-positive integer: +inf for an even x (as JAX and scipy); for other x
    # its sign depends on the side, and JAX gives NaN (scipy inf)
    pole = (x == 1) | ((x > 1) & (q <= 0) & (q == jnp.floor(q)) & (x == 2 * jnp.floor(x / 2)))
    return jnp.where(ok, s, jnp.where(pole, jnp.inf, jnp.nan))


def bernoulli(n: int):
    """The Bernoulli numbers B_0 .. B_n (B_1 = -1/2, as SciPy), as a float array."""
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"bernoulli: n must be a non-negative integer, got {n}")
    a = [Fraction(0)] * (n + 1)
    out = []
    for m in range(n + 1):  # Akiyama-Tanigawa
        a[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        out.append(a[0])
    if n >= 1:
        out[1] = Fraction(-1, 2)
    return jnp.asarray([float(b) for b in out])


__all__ = ["zeta", "bernoulli"]
