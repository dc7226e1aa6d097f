"""The rest of jax.scipy.special: information-theory functions (xlogy, xlog1py, entr, rel_entr, kl_div),
the normal distribution (ndtr, log_ndtr, ndtri), incomplete gamma/beta (gammainc, gammaincc, betainc,
betaln, beta), Bessel (i0, i0e, i1, i1e), zeta, multigammaln, factorial, softmax, log_softmax.

Operands broadcast and promote as NumPy's ufuncs do (integers become the default float dtype).
Everything is differentiable where JAX's is (see funcgrad._src.prims.incomplete for the
incomplete gamma/beta rules); xlogy, xlog1py, ndtri, exp1 and expi are primitive cards (see
funcgrad._src.prims.scipy_special), whose derivative rules stay finite at the points where the naive
formula gives NaN.
"""
from __future__ import annotations

import math
import operator

from .. import numpy as jnp
from .._src.core import dtypes
from ..numpy._promote import asarray_any, is_python_scalar, result_dtype, scalar_array
from .._src.prims import elementwise as _ew
from .._src.prims import scipy_special as _ss
from .._src.prims import bessel as _bessel
from .._src.prims import incomplete as _inc
from .._src.prims.special import erfc as _erfc
from .._src.prims.special import lgamma as _lgamma

_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _strong(x):
    from ..numpy._ufuncs import _strong as strong
    return strong(x)


def promote_float(name: str, *xs):
    """Broadcast `xs` and give them one inexact dtype: NumPy-style promotion (Python scalars weak, made
    straight at the result's dtype), then integers and bools to the float funcgrad.numpy gives them."""
    args = [a if is_python_scalar(a) else asarray_any(a) for a in xs]
    dt, weak = result_dtype(*args)
    if dtypes.is_complex(dt):
        from ..numpy._ufuncs import _ComplexUndefinedError  # a TypeError and a ValueError (JAX's)
        raise _ComplexUndefinedError(f"{name}: complex input is not supported")
    if not dtypes.is_inexact(dt):
        dt = dtypes.to_inexact(dt, weak)
    arrs = [scalar_array(a, dt, True) if is_python_scalar(a) else a if a.dtype == dt else a.astype(dt)
            for a in args]
    if len(arrs) > 1:
        arrs = list(jnp.broadcast_arrays(*arrs))
    return arrs if len(arrs) > 1 else arrs[0]


# --- xlogy / xlog1py and relatives ----------------------------------------------------------------

def xlogy(x, y):
    """x * log(y), and 0 where x == 0 (whatever y), as scipy.special.xlogy."""
    return _ss.xlogy(*promote_float("xlogy", x, y))


def xlog1py(x, y):
    """x * log1p(y), and 0 where x == 0, as scipy.special.xlog1py."""
    return _ss.xlog1py(*promote_float("xlog1py", x, y))


def entr(x):
    """-x log x for x > 0, 0 at 0, -inf for x < 0."""
    return _ss.entr(promote_float("entr", x))


def rel_entr(x, y):
    """x log(x / y) for x, y > 0; 0 for x == 0 <= y; inf otherwise."""
    x, y = promote_float("rel_entr", x, y)
    ok = (x > 0) & (y > 0)
    safe_x, safe_y = jnp.where(ok, x, 1), jnp.where(ok, y, 1)
    val = safe_x * jnp.log(safe_x / safe_y)
    return jnp.where(ok, val, jnp.where((x == 0) & (y >= 0), 0, jnp.inf))


def kl_div(x, y):
    """x log(x / y) - x + y for x, y > 0; y for x == 0 <= y; inf otherwise."""
    x, y = promote_float("kl_div", x, y)
    ok = (x > 0) & (y > 0)
    safe_x, safe_y = jnp.where(ok, x, 1), jnp.where(ok, y, 1)
    val = safe_x * jnp.log(safe_x / safe_y) - safe_x + safe_y
    return jnp.where(ok, val, jnp.where((x == 0) & (y >= 0), y, jnp.inf))


# --- the normal distribution ----------------------------------------------------------------------

def ndtr(x):
    """The standard normal CDF, 0.5 erfc(-x / sqrt 2) (accurate in the lower tail)."""
    x = promote_float("ndtr", x)
    return _strong(0.5 * _erfc(-x / _SQRT2))  # (strongly typed, as jax.scipy's)


def log_ndtr(x):
    """log(ndtr(x)), accurate in both tails: log1p(-ndtr(-x)) above -1, log of erfc down to -20, and
    the asymptotic series -x^2/2 - log(-x sqrt(2 pi)) + log(1 - 1/x^2 + 3/x^4 - ...) below."""
    x = promote_float("log_ndtr", x)
    upper = x > -1
    mid = (x <= -1) & (x > -20)
    xu = jnp.where(upper, x, 0.0)
    xm = jnp.where(mid, x, -1.0)
    xl = jnp.where(upper | mid, -20.0, x)
    up = jnp.log1p(-0.5 * _erfc(xu / _SQRT2))
    md = jnp.log(0.5 * _erfc(-xm / _SQRT2))
    z = 1 / (xl * xl)
    series = 1 + z * (-1 + z * (3 + z * (-15 + z * (105 + z * (-945)))))
    lo = -0.5 * xl * xl - jnp.log(-xl) - _LOG_SQRT_2PI + jnp.log(series)
    return _strong(jnp.where(upper, up, jnp.where(mid, md, lo)))


def ndtri(p):
    """The inverse of ndtr: the standard normal quantile function (NaN outside [0, 1])."""
    return _strong(_ss.ndtri(promote_float("ndtri", p)))


# --- incomplete gamma and beta --------------------------------------------------------------------

def gammainc(a, x):
    """The regularised lower incomplete gamma function P(a, x)."""
    return _inc.igamma(*promote_float("gammainc", a, x))


def gammaincc(a, x):
    """The regularised upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _inc.igammac(*promote_float("gammaincc", a, x))


def betainc(a, b, x):
    """The regularised incomplete beta function I_x(a, b) (differentiable in x only, as in JAX)."""
    return _inc.betainc(*promote_float("betainc", a, b, x))


def betaln(a, b):
    """log |B(a, b)| = lgamma(a) + lgamma(b) - lgamma(a + b)."""
    a, b = promote_float("betaln", a, b)
    return _lgamma(a) + _lgamma(b) - _lgamma(a + b)


def beta(a, b):
    """The beta function B(a, b) = sgn Gamma(a) sgn Gamma(b) sgn Gamma(a + b) exp(betaln(a, b)), signed also
    at negative arguments (B(-0.5, 1) = -2) and NaN at the poles of Gamma, as jax.scipy.special.beta."""
    a, b = promote_float("beta", a, b)
    return gammasgn(a) * gammasgn(b) * gammasgn(a + b) * jnp.exp(betaln(a, b))


# --- Bessel ---------------------------------------------------------------------------------------

def i0e(x):
    """Exponentially scaled modified Bessel function of order 0, e^-|x| I_0(x)."""
    return _bessel.bessel_i0e(promote_float("i0e", x))


def i1e(x):
    """Exponentially scaled modified Bessel function of order 1, e^-|x| I_1(x)."""
    return _bessel.bessel_i1e(promote_float("i1e", x))


def _abs_sign(x):
    """|x| whose derivative is sign(x) (0 at 0): it pairs with the i0e/i1e cards' sign(x) terms, so that
    exp(|x|) * i0e(x) is smooth at 0 to every order (i0'(0) = 0, i0''(0) = 1/2). With JAX's select(x >= 0)
    convention the product has a spurious kink there (JAX's own i0'(0) is 1: a reference's error at a
    smooth point is not a target)."""
    return _ew.abs(x, "torch")


def i0(x):
    """The modified Bessel function of order 0."""
    x = promote_float("i0", x)
    return jnp.exp(_abs_sign(x)) * _bessel.bessel_i0e(x)


def i1(x):
    """The modified Bessel function of order 1."""
    x = promote_float("i1", x)
    return jnp.exp(_abs_sign(x)) * _bessel.bessel_i1e(x)


# --- zeta, multigammaln, factorial ----------------------------------------------------------------

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


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension d (a concrete int)."""
    try:
        d = operator.index(d)
    except TypeError:
        raise TypeError(f"multigammaln: d must be a concrete int, got {type(d).__name__}") from None
    a = promote_float("multigammaln", a)
    out = jnp.full_like(a, d * (d - 1) / 4 * math.log(math.pi))
    for j in range(d):
        out = out + _lgamma(a - j / 2)
    return out


def factorial(n, exact: bool = False):
    """n! = Gamma(n + 1) (0 for n < 0); exact=True is not supported (as in JAX)."""
    if exact:
        raise NotImplementedError("factorial with exact=True is not supported")
    n = promote_float("factorial", n)
    return jnp.where(n < 0, 0.0, jnp.exp(_lgamma(n + 1)))


def gammasgn(x):
    """The sign of the gamma function: 1 for x > 0 (and +0, +inf), -1 at -0, (-1)^ceil(-x) between the
    poles below 0, NaN at negative integers, -inf and NaN."""
    x = promote_float("gammasgn", x)
    neg_sign = jnp.where(jnp.remainder(jnp.floor(-x), 2) == 0, -1.0, 1.0)
    pole = (x < 0) & (x == jnp.floor(x))
    out = jnp.where(x > 0, 1.0, neg_sign)
    out = jnp.where(x == 0, jnp.copysign(1.0, x), out)
    return jnp.where(pole | jnp.isnan(x), jnp.nan, out).astype(x.dtype)


def exp1(x):
    """The exponential integral E1(x) = int_x^inf e^-t / t dt for real x > 0 (inf at 0, NaN below).

    The power series up to 1, then a continued fraction (the `exp1` card in
    funcgrad._src.prims.scipy_special). Differentiable: E1'(x) = -e^-x / x."""
    return _ss.exp1(promote_float("exp1", x))


def expi(x):
    """The exponential integral Ei(x) (principal value) for real x; Ei(x) = -E1(-x) for x < 0.

    The power series up to 50, the asymptotic series beyond (the `expi` card). Ei'(x) = e^x / x."""
    return _ss.expi(promote_float("expi", x))


def bernoulli(n: int):
    """The Bernoulli numbers B_0 .. B_n (B_1 = -1/2, as SciPy), as a float array."""
    from fractions import Fraction
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


def poch(z, m):
    """The rising factorial Gamma(z + m) / Gamma(z), signed (poch(0.5, -1) = -2); 1 at m = 0 (also where z is a
    pole of Gamma, as scipy and JAX), 0 where only z is a pole (poch(-1, 2) = (-1)(0)), inf where only z + m
    is one (scipy's value)."""
    z, m = promote_float("poch", z, m)
    w = z + m
    z_pole = (z <= 0) & (z == jnp.floor(z))
    w_pole = (w <= 0) & (w == jnp.floor(w))
    sign = jnp.where(z_pole, 1.0, gammasgn(z)) * jnp.where(w_pole, 1.0, gammasgn(w))
    val = sign * jnp.exp(_lgamma(w) - _lgamma(z))
    return jnp.where((m == 0) & z_pole, 1.0, val)


def softmax(x, /, *, axis=None):
    """exp(x - logsumexp(x, axis)) (axis None: over all axes), as jax.scipy.special.softmax."""
    from ..numpy._statistics import logsumexp
    x = promote_float("softmax", x)
    return jnp.exp(x - logsumexp(x, axis=axis, keepdims=True))


def log_softmax(x, /, *, axis=None):
    """x - logsumexp(x, axis) (axis None: over all axes)."""
    from ..numpy._statistics import logsumexp
    x = promote_float("log_softmax", x)
    return x - logsumexp(x, axis=axis, keepdims=True)


__all__ = ["xlogy", "xlog1py", "entr", "rel_entr", "kl_div", "ndtr", "log_ndtr", "ndtri", "gammainc",
           "gammaincc", "betainc", "betaln", "beta", "i0", "i0e", "i1", "i1e", "zeta", "multigammaln",
           "factorial", "gammasgn", "poch", "exp1", "expi", "bernoulli", "softmax", "log_softmax"]


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
