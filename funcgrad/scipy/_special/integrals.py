"""Exponential and trigonometric integrals and their kin, as jax.scipy.special has them: exp1, expi, expn, the
sine/cosine integrals sici, the Fresnel integrals fresnel and Spence's function (the dilogarithm) spence.

Each is a card in funcgrad._src.prims.scipy_special (fixed-length series / continued fractions in NumPy, with
the exact derivatives E1' = -e^-x / x, Ei' = e^x / x, E_n' = -E_{n-1}, Si' = sin x / x, Ci' = cos x / x,
S' = sin(pi x^2 / 2), C' = cos(pi x^2 / 2), spence'(x) = log(x) / (1 - x)); the functions here promote their
operands."""
from __future__ import annotations

from ... import numpy as jnp
from ..._src.prims import scipy_special as _ss
from .common import _strong, promote_float


def exp1(x):
    """The exponential integral E1(x) = int_x^inf e^-t / t dt for real x > 0 (inf at 0, NaN below).

    The power series up to 1, then a continued fraction (the `exp1` card in
    funcgrad._src.prims.scipy_special). Differentiable: E1'(x) = -e^-x / x."""
    return _ss.exp1(promote_float("exp1", x))


def expi(x):
    """The exponential integral Ei(x) (principal value) for real x; Ei(x) = -E1(-x) for x < 0.

    The power series up to 50, the asymptotic series beyond (the `expi` card). Ei'(x) = e^x / x."""
    return _ss.expi(promote_float("expi", x))


def expn(n, x):
    """The generalised exponential integral E_n(x) = int_1^inf e^(-x t) / t^n dt on JAX's domain: integer
    n >= 0 and x >= 0 (as SciPy), and also any real n (negative included) at x > 1; NaN for n < 0 or x < 0
    and for a non-integer n at 0 < x <= 1 (SciPy instead truncates n), inf at x = 0 for n <= 1. E_n(0) is
    1 / (n - 1) for n > 1 (JAX's gives 1 / n).

    The power series for x <= 1 and a 120-term continued fraction above; agrees with SciPy to about
    1e-13 relative in float64. Differentiable in x (dE_n/dx = -E_{n-1}, on the same domain, as JAX's
    rule: so NaN for n = 0 at 0 < x <= 1); n gets no derivative (as in JAX).
    """
    n, x = promote_float("expn", n, x)
    return _ss.expn(n, x)


def sici(x):
    """The sine and cosine integrals (Si(x), Ci(x)) = (int_0^x sin t / t dt, gamma + log|x| +
    int_0^x (cos t - 1) / t dt), as scipy.special.sici (for x < 0, Si is odd and Ci(x) = Ci(-x), the
    real part).

    The power series for |x| <= 4, the continued fraction of E1(ix) above; about 1e-13 relative in
    float64 (absolute near the zeros of Ci). Differentiable: Si' = sin x / x, Ci' = cos x / x.
    """
    x = promote_float("sici", x)
    return _ss.si(x), _ss.ci(x)


def fresnel(x):
    """The Fresnel integrals (S(x), C(x)) = (int_0^x sin(pi t^2 / 2) dt, int_0^x cos(pi t^2 / 2) dt),
    in SciPy's order; odd in x, +-1/2 at +-inf.

    The power series for |x| <= 1.8, the continued fraction of erfc at a complex argument above; about
    1e-13 relative in float64 for |x| <= 100 (the phase pi x^2 / 2 loses digits as x grows).
    Differentiable: S' = sin(pi x^2 / 2), C' = cos(pi x^2 / 2).
    """
    return _ss.fresnel(promote_float("fresnel", x))


def spence(x):
    """Spence's function int_1^x log(t) / (1 - t) dt = Li2(1 - x) for real x >= 0 (NaN below 0, and at
    +inf as SciPy returns).

    Reduced to |log(1 - y)| <= log 2 by the reflection and inversion formulas, then the Bernoulli
    series of the dilogarithm; about 1e-14 relative in float64. Differentiable:
    spence'(x) = log(x) / (1 - x) (-1 at x = 1).
    """
    return _strong(_ss.spence(promote_float("spence", x)))  # (strongly typed, as jax.scipy's)


__all__ = ["exp1", "expi", "expn", "sici", "fresnel", "spence"]
