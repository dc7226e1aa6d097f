"""The incomplete gamma and beta functions, as JAX's lax has them: igamma, igammac (regularised incomplete
gamma), igamma_grad_a (its derivative in a) and betainc (regularised incomplete beta).

Kernels run in float64 (rounded back to the operand dtype), vectorised, iterating until every element
has converged:
- igamma P(a, x) / igammac Q(a, x): the series P = x^a e^-x / Gamma(a+1) sum_n x^n / ((a+1)...(a+n))
  for x < a + 1, else the Legendre continued fraction for Q (modified Lentz); the other one is its
  complement, so each is computed where it is not a difference of nearly equal numbers.
- betainc I_x(a, b): the continued fraction of I_x(a, b) (modified Lentz) for x < (a+1)/(a+b+2), else
  1 - I_{1-x}(b, a).

Derivatives (funcgrad operations, so they batch and nest): dP/dx = x^(a-1) e^-x / Gamma(a),
dQ/dx = -dP/dx; dP/da by the `igamma_grad_a` card (whose kernel is funcgrad.random's implicit
gamma-gradient series, times dP/dx), which like JAX's has no derivative of its own: second derivatives
with respect to a raise NotImplementedError. betainc: d/dx = x^(a-1) (1-x)^(b-1) / B(a, b); with respect
to a and b it raises ValueError, as JAX does.
"""
from __future__ import annotations

import numpy as np

from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import elementwise as ew
from ._util import check_dtype, check_same
from .prng import _gamma_grad_impl
from .shape import elementwise_batch
from .shape import full
from .special import _errstate, _lgamma_kernel, lgamma

_MAX_TERMS = 5000
_EPS = 1e-16
_TINY = 1e-300


def _flat64(xp, *xs):
    shape = np.broadcast_shapes(*[x.shape for x in xs])
    return shape, [xp.broadcast_to(xp.asarray(x, dtype=np.float64), shape).reshape(-1) for x in xs]


# --- kernels --------------------------------------------------------------------------------------

def _igamma_series(xp, a, x):
    """P(a, x) by its power series (used for x < a + 1)."""
    term = xp.ones_like(a)
    s = xp.ones_like(a)
    active = xp.ones(a.shape, dtype=bool)
    for n in range(1, _MAX_TERMS + 1):
        term = term * x / (a + n)
        s = s + term
        active = active & (term > _EPS * s)
        if n % 8 == 0 and not bool(active.any()):
            break
    return xp.exp(a * xp.log(x) - x - _lgamma_kernel(xp, a + 1)) * s


def _igammac_fraction(xp, a, x):
    """Q(a, x) by the Legendre continued fraction (used for x >= a + 1)."""
    b = x + 1 - a
    c = xp.full_like(a, 1 / _TINY)
    d = 1 / b
    h = d
    active = xp.ones(a.shape, dtype=bool)
    for i in range(1, _MAX_TERMS + 1):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = xp.where(xp.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = xp.where(xp.abs(c) < _TINY, _TINY, c)
        d = 1 / d
        delta = c * d
        h = h * delta
        active = active & (xp.abs(delta - 1) > _EPS)
        if i % 8 == 0 and not bool(active.any()):
            break
    return xp.exp(a * xp.log(x) - x - _lgamma_kernel(xp, a)) * h


def _igamma_both(xp, a, x):
    """(P, Q) for flat float64 a, x."""
    p = xp.full(a.shape, np.nan)
    q = xp.full(a.shape, np.nan)
    ok = (a > 0) & (x >= 0)
    zero = ok & (x == 0)
    inf = ok & (x == np.inf)
    ser = ok & ~zero & ~inf & (x < a + 1)
    frac = ok & ~zero & ~inf & ~ser
    if bool(ser.any()):
        v = _igamma_series(xp, a[ser], x[ser])
        p[ser], q[ser] = v, 1 - v
    if bool(frac.any()):
        v = _igammac_fraction(xp, a[frac], x[frac])
        p[frac], q[frac] = 1 - v, v
    p[zero], q[zero] = 0.0, 1.0
    p[inf], q[inf] = 1.0, 0.0
    a0 = (a == 0) & (x > 0)  # the limit a -> 0+: P(0, x) = 1, Q(0, x) = 0 (scipy's and JAX's values)
    p[a0], q[a0] = 1.0, 0.0
    return p, q


def _igamma_impl(which):
    def factory(xp):
        def f(a, x):
            dt = np.result_type(a, x)
            shape, (a64, x64) = _flat64(xp, a, x)
            with _errstate(xp):
                p, q = _igamma_both(xp, a64, x64)
            return (p if which == 0 else q).reshape(shape).astype(dt)
        return f
    return factory


def _igamma_grad_a_impl(xp):
    rgg = _gamma_grad_impl(xp)

    def f(a, x):
        dt = np.result_type(a, x)
        shape, (a64, x64) = _flat64(xp, a, x)
        with _errstate(xp):
            dxda = rgg(a64, x64)  # -(dP/da) / (dP/dx)
            dpdx = xp.exp((a64 - 1) * xp.log(x64) - x64 - _lgamma_kernel(xp, a64))
            out = xp.where((x64 == 0) & (a64 > 0), 0.0, -dxda * dpdx)  # (P is NaN for a <= 0: so is this)
            out = xp.where(x64 == np.inf, 0.0, out)
        return out.reshape(shape).astype(dt)
    return f


def _betainc_fraction(xp, a, b, x):
    """I_x(a, b) by its continued fraction (used for x < (a+1)/(a+b+2))."""
    qab, qap, qam = a + b, a + 1, a - 1
    c = xp.ones_like(a)
    d = 1 - qab * x / qap
    d = 1 / xp.where(xp.abs(d) < _TINY, _TINY, d)
    h = d
    active = xp.ones(a.shape, dtype=bool)
    for m in range(1, _MAX_TERMS + 1):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1 + aa * d
            d = 1 / xp.where(xp.abs(d) < _TINY, _TINY, d)
            c = 1 + aa / c
            c = xp.where(xp.abs(c) < _TINY, _TINY, c)
            delta = d * c
            h = h * delta
        active = active & (xp.abs(delta - 1) > _EPS)
        if m % 8 == 0 and not bool(active.any()):
            break
    log_front = (a * xp.log(x) + b * xp.log1p(-x) - _lgamma_kernel(xp, a) - _lgamma_kernel(xp, b)
                 + _lgamma_kernel(xp, a + b))
    return xp.exp(log_front) * h / a


def _betainc_impl(xp):
    def f(a, b, x):
        dt = np.result_type(a, b, x)
        shape, (a, b, x) = _flat64(xp, a, b, x)
        out = xp.full(a.shape, np.nan)
        with _errstate(xp):
            ok = (a > 0) & (b > 0) & (x >= 0) & (x <= 1)
            lo = ok & (x == 0)
            hi = ok & (x == 1)
            mid = ok & ~lo & ~hi
            direct = mid & (x < (a + 1) / (a + b + 2))
            flipped = mid & ~direct
            if bool(direct.any()):
                out[direct] = _betainc_fraction(xp, a[direct], b[direct], x[direct])
            if bool(flipped.any()):
                out[flipped] = 1 - _betainc_fraction(xp, b[flipped], a[flipped], 1 - x[flipped])
            out[lo], out[hi] = 0.0, 1.0
        return out.reshape(shape).astype(dt)
    return f


# --- cards ----------------------------------------------------------------------------------------

def _binary_rule(op):
    def rule(a: ShapedArray, x: ShapedArray) -> ShapedArray:
        check_dtype(op, a, "f")
        check_same(op, a, x)
        return ShapedArray(a.shape, a.dtype, a.weak_type and x.weak_type)
    return rule


def _ternary_rule(a: ShapedArray, b: ShapedArray, x: ShapedArray) -> ShapedArray:
    check_dtype("betainc", a, "f")
    check_same("betainc", a, b, x)
    return ShapedArray(a.shape, a.dtype, a.weak_type and b.weak_type and x.weak_type)


def _unary_rule(op):
    def rule(x: ShapedArray) -> ShapedArray:
        check_dtype(op, x, "f")
        return x
    return rule


def _igamma_dx(a, x):
    """x^(a-1) e^-x / Gamma(a), the density of Gamma(a, 1) at x; at x = 0 its limit: inf for a < 1,
    1 / Gamma(1) = 1 for a = 1, 0 for a > 1 (and 0 for x < 0, where P is constant)."""
    zero = ew.zeros_like(x)
    one = ew.ones_like(x)
    pos = ew.gt(x, zero)
    safe_x = ew.select(pos, x, one)
    log_pdf = (a - 1) * ew.log(safe_x) - safe_x - lgamma(a)
    at_zero = ew.select(ew.lt(a, one), full(x.shape, np.inf, x.dtype), ew.select(ew.eq(a, one), one, zero))
    return ew.select(pos, ew.exp(log_pdf), ew.select(ew.eq(x, zero), at_zero, zero))


def _no_second_derivative(*args, **params):
    raise NotImplementedError("igamma_grad_a (the derivative of igamma with respect to a) has no derivative "
                              "rule, as in JAX: second derivatives of igamma/igammac/gammainc with respect "
                              "to a are not supported")


igamma_grad_a_p = Primitive("igamma_grad_a", impl=_igamma_grad_a_impl, abstract_eval=_binary_rule("igamma_grad_a"),
                            jvp_full=_no_second_derivative, vjp_full=_no_second_derivative, register=False)
igamma_grad_a_p.batch = elementwise_batch(igamma_grad_a_p)


def igamma_grad_a(a, x):
    """d/da of the regularised lower incomplete gamma function P(a, x)."""
    return igamma_grad_a_p.bind(a, x)


igamma_p = Primitive(
    "igamma", impl=_igamma_impl(0), abstract_eval=_binary_rule("igamma"),
    jvp=[lambda t, ans, a, x: t * igamma_grad_a(a, x), lambda t, ans, a, x: t * _igamma_dx(a, x)],
    vjp=[lambda g, ans, a, x: g * igamma_grad_a(a, x), lambda g, ans, a, x: g * _igamma_dx(a, x)])
igamma_p.batch = elementwise_batch(igamma_p)
igammac_p = Primitive(
    "igammac", impl=_igamma_impl(1), abstract_eval=_binary_rule("igammac"),
    jvp=[lambda t, ans, a, x: -(t * igamma_grad_a(a, x)), lambda t, ans, a, x: -(t * _igamma_dx(a, x))],
    vjp=[lambda g, ans, a, x: -(g * igamma_grad_a(a, x)), lambda g, ans, a, x: -(g * _igamma_dx(a, x))])
igammac_p.batch = elementwise_batch(igammac_p)


def _betainc_dx(a, b, x):
    log_b = lgamma(a) + lgamma(b) - lgamma(a + b)
    return ew.exp((a - 1) * ew.log(x) + (b - 1) * ew.log1p(-x) - log_b)


def _betainc_ab(*args, **params):
    raise ValueError("Betainc gradient with respect to a and b not supported (as in JAX); only the "
                     "derivative with respect to x is")


betainc_p = Primitive(
    "betainc", impl=_betainc_impl, abstract_eval=_ternary_rule,
    jvp=[_betainc_ab, _betainc_ab, lambda t, ans, a, b, x: t * _betainc_dx(a, b, x)],
    vjp=[_betainc_ab, _betainc_ab, lambda g, ans, a, b, x: g * _betainc_dx(a, b, x)])
betainc_p.batch = elementwise_batch(betainc_p)


def igamma(a, x):
    """The regularised lower incomplete gamma function P(a, x) (a, x of one shape and float dtype)."""
    return igamma_p.bind(a, x)


def igammac(a, x):
    """The regularised upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return igammac_p.bind(a, x)


def betainc(a, b, x):
    """The regularised incomplete beta function I_x(a, b)."""
    return betainc_p.bind(a, b, x)


__all__ = ["igamma", "igammac", "igamma_grad_a", "betainc"]
