"""Bessel functions: the exponentially scaled modified ones of the first kind, bessel_i0e(x) = exp(-|x|) I0(x)
and bessel_i1e(x) = exp(-|x|) I1(x), as JAX's lax has them (I0, I1 themselves are these times exp(|x|)), and
the ordinary ones of the first kind, bessel_j0 and bessel_j1.

Kernels (vectorised NumPy/CuPy, computed in float64 and rounded back to the operand's dtype):
- |x| <= 20: the power series I_nu(x) = sum_k (x/2)^(2k+nu) / (k! (k+nu)!) (all terms positive, so no
  cancellation; 90 terms reach double precision at |x| = 20), times exp(-|x|);
- |x| > 20: the asymptotic expansion exp(-z) I_nu(z) ~ (2 pi z)^(-1/2) sum_k (-1)^k a_k(nu) / z^k with
  a_k = prod_{j<=k} (4 nu^2 - (2j-1)^2) / (k! 8^k), summed to 30 terms (its smallest term at z > 20 is below
  1e-17 relative); I1 is odd, I0 even.

J0, J1: the alternating power series sum_k (-1)^k (x/2)^(2k+nu) / (k! (k+nu)!) for |x| <= 16 (its largest term
there is ~2e5; summed in NumPy's extended precision, the absolute error stays ~1e-14 on x86, ~3e-11 in
plain float64), Hankel's asymptotic expansion
sqrt(2 / (pi x)) (P cos(chi) - Q sin(chi)), chi = x - (nu/2 + 1/4) pi, beyond (40 terms; the smallest term at
x > 16 is below 1e-13); J1 is odd.

Derivatives (funcgrad operations, so every order differentiates and batches):
  i0e'(x) = i1e(x) - sign(x) i0e(x),   i1e'(x) = i0e(x) - i1e(x) (sign(x) + 1/x), which is 1/2 at x = 0,
  J0' = -J1,   J1' = J0 - J1 / x, which is 1/2 at x = 0.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import elementwise as ew
from ._util import check_dtype
from .shape import elementwise_batch

_SERIES_TERMS = 90
_ASYMPTOTIC_TERMS = 30
_SWITCH = 20.0


def _scaled_bessel(xp, x, nu: int):
    z = xp.abs(x)
    small = z <= _SWITCH
    zs = xp.where(small, z, 0.0)
    half2 = (zs / 2) ** 2
    term = (zs / 2) ** nu / math.factorial(nu)
    total = term
    for k in range(1, _SERIES_TERMS):
        term = term * half2 / (k * (k + nu))
        total = total + term
    series = total * xp.exp(-zs)
    zl = xp.where(small, _SWITCH + 1, z)
    mu = 4.0 * nu * nu
    term = xp.ones_like(zl)  # (not 1 + 0 * zl: that is NaN at |x| = inf, where the answer is 0)
    acc = term
    for k in range(1, _ASYMPTOTIC_TERMS):
        term = -term * (mu - (2 * k - 1) ** 2) / (8.0 * k * zl)
        acc = acc + term
    asym = acc / xp.sqrt(2 * math.pi * zl)
    r = xp.where(small, series, asym)
    return xp.where(x < 0, -r, r) if nu % 2 else r


_J_SWITCH = 16.0


def _bessel_j(xp, x, nu: int):
    z = xp.abs(x)
    small = z <= _J_SWITCH
    # the alternating series cancels ~5 digits near the switch: sum it in extended precision where the
    # backend has it (NumPy's longdouble; 80-bit on x86)
    zs = xp.where(small, z, 0.0).astype(np.longdouble if xp is np else np.float64)
    half2 = (zs / 2) ** 2
    term = (zs / 2) ** nu / math.factorial(nu)
    total = term
    for k in range(1, 60):
        term = -term * half2 / (k * (k + nu))
        total = total + term
    total = total.astype(np.float64)
    zl = xp.where(small, _J_SWITCH + 1, z)
    mu = 4.0 * nu * nu
    a = 1.0 + 0 * zl  # a_k / z^k, k = 0, 1, 2, ...
    p = a
    q = 0 * zl
    for k in range(1, 40):
        a = a * (mu - (2 * k - 1) ** 2) / (8.0 * k * zl)
        sign = -1.0 if (k // 2) % 2 else 1.0  # P: +a0 - a2 + a4 ..., Q: +a1 - a3 + ...
        if k % 2:
            q = q + sign * a
        else:
            p = p + sign * a
    chi = zl - (nu / 2 + 0.25) * math.pi
    asym = xp.sqrt(2 / (math.pi * zl)) * (p * xp.cos(chi) - q * xp.sin(chi))
    r = xp.where(small, total, asym)
    return xp.where(x < 0, -r, r) if nu % 2 else r


def _impl(nu: int, kernel=None):
    def factory(xp):
        def f(x):
            x = xp.asarray(x)
            with np.errstate(all="ignore"):
                out = (kernel or _scaled_bessel)(xp, x.astype(np.float64), nu)
                if kernel is None:  # I_nu(x) e^-|x|: the limit 0 at +-inf (signed for odd orders), not NaN
                    out = xp.where(xp.isinf(x), xp.copysign(0.0, x) if nu % 2 else 0.0, out)
            return out.astype(x.dtype)
        return f
    return factory


def _rule(op: str):
    def rule(x: ShapedArray) -> ShapedArray:
        check_dtype(op, x, "f")
        return x
    return rule


def _i0e_deriv(ans, x):
    return bessel_i1e(x) - ew.sign(x) * ans


def _small(x):
    """|x| < 1e-3: where I1(x)/x and J1(x)/x come from their series (the quotient's derivatives would
    cancel infinities near 0: d/dx I1(x)/x has I1(x)/x^2, which overflows at |x| ~ 1e-300)."""
    return ew.lt(ew.abs(x), ew.sub(x, x) + 1e-3)


def _over_x(x, ans, signed_series):
    """ans / x away from 0, and the series 1/2 + s x^2/16 + x^4/384 (s = +1 for I1, -1 for J1; the
    next term is below 1e-22) near 0: smooth to every order, with no 0/0 at x = 0."""
    small = _small(x)
    safe = ew.select(small, ew.sub(x, x) + 1.0, x)
    tiny = ew.select(small, x, ew.sub(x, x))
    t2 = ew.mul(tiny, tiny)
    series = 0.5 + t2 * (signed_series / 16.0 + t2 / 384.0)
    return ew.select(small, series, ans / safe)


def _i1e_deriv(ans, x):
    # i1e = e^-|x| I1: i1e' = i0e - sign(x) i1e - e^-|x| I1(x)/x, and e^-|x| I1(x)/x = i1e(x)/x
    small = _small(x)
    scaled = _over_x(x, ans, 1.0)  # i1e(x)/x away from 0; I1(x)/x near 0 (times e^-|x| below)
    # e^-|x| with |x|' = sign(x), 0 at 0, matching the sign(x) term beside it (smooth at 0 to 2nd order)
    scaled = ew.select(small, ew.exp(ew.neg(ew.abs(x, "torch"))) * scaled, scaled)
    return bessel_i0e(x) - ew.sign(x) * ans - scaled


def _j0_deriv(ans, x):
    return -bessel_j1(x)


def _j1_deriv(ans, x):
    return bessel_j0(x) - _over_x(x, ans, -1.0)


def _card(name, nu, deriv, kernel=None) -> Primitive:
    p = Primitive(name, impl=_impl(nu, kernel), abstract_eval=_rule(name),
                  jvp=[lambda t, ans, x: t * deriv(ans, x)],
                  vjp=[lambda g, ans, x: g * deriv(ans, x)])
    p.batch = elementwise_batch(p)
    return p


bessel_i0e_p = _card("bessel_i0e", 0, _i0e_deriv)
bessel_i1e_p = _card("bessel_i1e", 1, _i1e_deriv)
bessel_j0_p = _card("bessel_j0", 0, _j0_deriv, _bessel_j)
bessel_j1_p = _card("bessel_j1", 1, _j1_deriv, _bessel_j)


def bessel_i0e(x):
    """exp(-|x|) I0(x)."""
    return bessel_i0e_p.bind(x)


def bessel_i1e(x):
    """exp(-|x|) I1(x)."""
    return bessel_i1e_p.bind(x)


def bessel_j0(x):
    """The Bessel function of the first kind of order 0."""
    return bessel_j0_p.bind(x)


def bessel_j1(x):
    """The Bessel function of the first kind of order 1."""
    return bessel_j1_p.bind(x)


__all__ = ["bessel_i0e", "bessel_i1e", "bessel_j0", "bessel_j1"]
