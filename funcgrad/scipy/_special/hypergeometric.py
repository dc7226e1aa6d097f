"""The confluent and Gauss hypergeometric functions hyp1f1 and hyp2f1, as jax.scipy.special's.

Written with funcgrad.numpy operations (so they work under jit and vmap and differentiate through their
pieces), except that each keeps a custom_jvp rule for its x-derivative (see there). Each computes in its
input's float dtype (integers promote to the default float) and returns NaN for a domain error as SciPy does."""
from __future__ import annotations

from ... import numpy as jnp
from ..._src.control.scan import fori_loop
from ..._src.interpreters.ad import jvp as _jvp
from ..._src.interpreters.custom import custom_jvp
from ..._src.prims.special import lgamma as _lgamma
from .common import promote_float


def _is_nonpos_int(v):
    return (v <= 0) & (v == jnp.floor(v))


def _rgamma(x):
    """1 / Gamma(x), 0 at the poles."""
    pole = (x <= 0) & (x == jnp.floor(x))
    xs = jnp.where(pole, 0.5, x)
    sign = jnp.where((xs > 0) | (jnp.remainder(jnp.floor(xs), 2) == 0), 1.0, -1.0)
    return jnp.where(pole, 0.0, sign * jnp.exp(-_lgamma(xs)))


def _lgamma_sign(x):
    """(log|Gamma(x)|, sign Gamma(x)) away from the poles."""
    sign = jnp.where((x > 0) | (jnp.remainder(jnp.floor(x), 2) == 0), 1.0, -1.0)
    return _lgamma(x), sign


_HYP1F1_TERMS = 500
_HYP1F1_ASYM = 250.0  # |x| above which the large-argument expansion is used


def _hyp1f1_series(a, b, y):
    """sum_k (a)_k / (b)_k y^k / k!, 500 terms (y >= 0 by the callers)."""
    def body(k, carry):
        term, total = carry
        term = term * (a + k) / ((b + k) * (k + 1)) * y
        return term, total + term
    one = jnp.ones_like(y)
    return fori_loop(0, _HYP1F1_TERMS, body, (one, one))[1]


def _hyp1f1_impl(a, b, x):
    neg = x < 0
    # Kummer: M(a, b, x) = e^x M(b - a, b, -x), so the series runs at a positive argument
    a2 = jnp.where(neg, b - a, a)
    y = jnp.abs(x)
    big = y > _HYP1F1_ASYM
    ys = jnp.where(big, 1.0, y)
    ser = _hyp1f1_series(a2, b, ys) * jnp.where(neg, jnp.exp(jnp.where(big, 0.0, x)), 1.0)
    # large y: M(a2, b, y) ~ Gamma(b) / Gamma(a2) e^y y^(a2 - b) sum_k (b - a2)_k (1 - a2)_k / k! y^-k
    yl = jnp.where(big, y, 2 * _HYP1F1_ASYM)
    term = jnp.ones_like(yl)
    tail = jnp.ones_like(yl)
    for k in range(25):
        term = term * (b - a2 + k) * (1 - a2 + k) / ((k + 1) * yl)
        tail = tail + term
    lgb, sb = _lgamma_sign(b)
    apole = _is_nonpos_int(a2)
    lga, sa = _lgamma_sign(jnp.where(apole, 0.5, a2))
    expo = lgb - lga + jnp.where(neg, 0.0, yl) + (a2 - b) * jnp.log(yl)
    asym = jnp.where(apole, 0.0, sb * sa * jnp.exp(expo) * tail)
    out = jnp.where(big, asym, ser)
    # a polynomial (a a non-positive integer) is summed exactly by the series at any x
    poly = (a <= 0) & (a == jnp.floor(a)) & (a > -_HYP1F1_TERMS)
    direct = _hyp1f1_series(a, b, jnp.where(poly, x, 0.0))
    out = jnp.where(poly & ~neg, direct, out)
    out = jnp.where(poly & neg & ~big, direct, out)
    bpole = (b <= 0) & (b == jnp.floor(b))
    return jnp.where(bpole, jnp.inf, out)


@custom_jvp
def _hyp1f1(a, b, x):
    return _hyp1f1_impl(a, b, x)


@_hyp1f1.defjvp
def _hyp1f1_jvp(primals, tangents):
    (a, b, x), (ta, tb, tx) = primals, tangents
    # dM/dx = a / b M(a + 1, b + 1, x) exactly; the a- and b-derivatives come from differentiating the
    # series (and transformations) that compute M, with x held fixed
    _, t_ab = _jvp(lambda a_, b_: _hyp1f1_impl(a_, b_, x), (a, b), (ta, tb))
    return _hyp1f1(a, b, x), tx * (a / b) * _hyp1f1(a + 1, b + 1, x) + t_ab


def hyp1f1(a, b, x):
    """Kummer's confluent hypergeometric function 1F1(a; b; x) = M(a, b, x) for real a, b, x.

    Kummer's transformation makes the argument non-negative, then the power series (500 terms) for
    |x| <= 250 and the large-argument expansion beyond; a non-positive integer a gives the polynomial.
    inf where b is a non-positive integer (as SciPy). Agrees with SciPy to about 1e-13 relative for
    0 < a, b <= 20 where x >= 0 or b >= a (at any |x| up to overflow); for x < 0 with a > b the
    transformed series cancels and about 1e-8 is left. Differentiable in all three arguments (as JAX's):
    dM/dx = a / b M(a + 1, b + 1, x) exactly, the a- and b-derivatives by differentiating the series.
    """
    a, b, x = promote_float("hyp1f1", a, b, x)
    return _hyp1f1(a, b, x)


_HYP2F1_TERMS = 400


def _hyp2f1_series(a, b, c, w):
    def body(k, carry):
        term, total = carry
        term = term * (a + k) * (b + k) / ((c + k) * (k + 1)) * w
        return term, total + term
    one = jnp.ones_like(w)
    return fori_loop(0, _HYP2F1_TERMS, body, (one, one))[1]


def _hyp2f1_unit(a, b, c, w):
    """2F1(a, b; c; w) for 0 <= w < 1: the series up to 0.6, the 1 - w connection formula above
    (the series again where c - a - b is an integer, which it cannot handle)."""
    s = c - a - b
    int_s = s == jnp.round(s)
    use_conn = (w > 0.6) & ~int_s & ~_is_nonpos_int(a) & ~_is_nonpos_int(b)
    wd = jnp.where(use_conn, 0.0, w)
    direct = _hyp2f1_series(a, b, c, wd)
    v = jnp.where(use_conn, 1 - w, 0.0)
    ss = jnp.where(use_conn, s, 0.5)
    lgc, sgc = _lgamma_sign(c)
    lgs, sgs = _lgamma_sign(ss)
    lgms, sgms = _lgamma_sign(-ss)
    coef1 = sgc * sgs * jnp.exp(lgc + lgs) * _rgamma(c - a) * _rgamma(c - b)
    coef2 = sgc * sgms * jnp.exp(lgc + lgms) * _rgamma(a) * _rgamma(b)
    f1 = _hyp2f1_series(a, b, 1 - ss, v)
    f2 = _hyp2f1_series(c - a, c - b, 1 + ss, v)
    conn = coef1 * f1 + coef2 * v ** ss * f2
    return jnp.where(use_conn, conn, direct)


def _hyp2f1_impl(a, b, c, x):
    # Pfaff: 2F1(a, b; c; x) = (1 - x)^-a 2F1(a, c - b; c; x / (x - 1)) takes x < 0 into (0, 1)
    neg = x < 0
    xn = jnp.where(neg, x, -1.0)
    w = jnp.where(neg, xn / (xn - 1), jnp.where((x >= 0) & (x < 1), x, 0.0))
    bb = jnp.where(neg, c - b, b)
    val = _hyp2f1_unit(a, bb, c, w) * jnp.where(neg, (1 - xn) ** (-a), 1.0)
    # x == 1: Gauss's sum where c - a - b > 0, inf otherwise
    s = c - a - b
    spos = jnp.where(s > 0, s, 1.0)
    lgc, sgc = _lgamma_sign(c)
    lgs, sgs = _lgamma_sign(spos)
    gauss = sgc * sgs * jnp.exp(lgc + lgs) * _rgamma(c - a) * _rgamma(c - b)
    val = jnp.where(x == 1, jnp.where(s > 0, gauss, jnp.inf), val)
    # a polynomial (a or b a non-positive integer) is summed exactly at any x; otherwise inf beyond 1
    poly = (_is_nonpos_int(a) & (a > -_HYP2F1_TERMS)) | (_is_nonpos_int(b) & (b > -_HYP2F1_TERMS))
    direct = _hyp2f1_series(a, b, c, jnp.where(poly, x, 0.0))
    val = jnp.where(x > 1, jnp.inf, val)
    val = jnp.where(poly & ((x > 1) | (jnp.abs(x) <= 1)), direct, val)
    val = jnp.where(_is_nonpos_int(c), jnp.inf, val)
    return jnp.where(x == 0, 1.0, val)


@custom_jvp
def _hyp2f1(a, b, c, x):
    return _hyp2f1_impl(a, b, c, x)


@_hyp2f1.defjvp
def _hyp2f1_jvp(primals, tangents):
    (a, b, c, x), (ta, tb, tc, tx) = primals, tangents
    # the x-derivative exactly; those in a, b, c by differentiating the computation with x held fixed
    _, t_abc = _jvp(lambda a_, b_, c_: _hyp2f1_impl(a_, b_, c_, x), (a, b, c), (ta, tb, tc))
    return _hyp2f1(a, b, c, x), tx * (a * b / c) * _hyp2f1(a + 1, b + 1, c + 1, x) + t_abc


def hyp2f1(a, b, c, x):
    """The Gauss hypergeometric function 2F1(a, b; c; x) for real a, b, c and x <= 1.

    Pfaff's transformation maps x < 0 into (0, 1); there the power series (400 terms) up to 0.6 and the
    1 - x connection formula above. Gauss's sum at x = 1; inf beyond 1 and where c is a non-positive
    integer (as SciPy), the polynomial where a or b is a non-positive integer. For |a|, |b| <= 5,
    0 < c <= 10 it agrees with SciPy to about 1e-13 relative on [-1, 0.6] and 1e-11 on [-20, 0.95] (the
    connection formula's gamma factors cancel); where c - a - b (after Pfaff's map, b - a) is an
    integer the series is used instead, which converges slowly as the argument nears 1 (about 1e-10
    at 0.9).
    Differentiable in all four arguments: d/dx = a b / c 2F1(a + 1, b + 1; c + 1; x) exactly, the
    parameter derivatives by differentiating the series and transformations that compute the value.
    """
    a, b, c, x = promote_float("hyp2f1", a, b, c, x)
    return _hyp2f1(a, b, c, x)


__all__ = ["hyp1f1", "hyp2f1"]
