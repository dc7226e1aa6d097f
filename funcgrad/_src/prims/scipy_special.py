"""Elementwise cards for jax.scipy.special functions whose derivatives are closed formulas: entr, xlogy,
xlog1py, ndtri, exp1, expi, expn, si / ci (sici), fresnel, spence, dawsn and wofz.

Each kernel is vectorised NumPy/CuPy code computing in float64 (complex128 for wofz) and rounding back to
its operand's dtype; the algorithms are the ones funcgrad.scipy.special used to compose from funcgrad
operations (fixed-length series and continued fractions, see there for accuracy), so float64 values are
unchanged and float32 ones are now correctly rounded in practice.

Derivatives (funcgrad operations, so every order differentiates and batches):
- entr(x) = -x log x: entr' = -(log x + 1), so +inf at 0 and entr'' = -1/x (-inf) there, the one-sided
  limits JAX and torch both give; below 0 (entr = -inf) the convention is the parameter `kink`: JAX's
  select gives 0, torch's formula NaN (and -1/x for the second derivative).
- xlogy(x, y) = x log y (0 at x = 0): d/dx = log y, d/dy = x / y, with the limits at x = 0: d/dy = 0
  there (also at y = 0), and d/dx = 0 where y <= 0; xlog1py likewise with log1p y and x / (1 + y).
- ndtri' = sqrt(2 pi) exp(ndtri^2 / 2).
- exp1' = -e^-x / x, expi' = e^x / x; expn(n, x): d/dx = -E_{n-1}(x) on expn's own (JAX's) domain, as JAX's
  rule, and the order n has no derivative (its rule is None: zero, as in JAX).
- si' = sin x / x (its Taylor polynomial below 0.1, so 1 at 0), ci' = cos x / x: two cards, so that
  Si's finite derivative at 0 never meets Ci's infinite one.
- fresnel (one card, two results S, C): S' = sin(pi x^2 / 2), C' = cos(pi x^2 / 2).
- spence'(x) = log(x) / (1 - x), by its power series in x - 1 near 1 (smooth there, so higher orders too).
- dawsn' = 1 - 2 x dawsn(x).
- wofz (complex): holomorphic, w'(z) = -2 z w(z) + 2i / sqrt(pi) (JAX convention: no conjugation).
"""
from __future__ import annotations

import math

import numpy as np

from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import elementwise as ew
from ._util import check_dtype
from .shape import elementwise_batch
from .shape import full
from .special import _erf_inv_kernel, _erfc_kernel, _digamma_kernel, _errstate, _lgamma_kernel

_PI = math.pi
_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_EULER_GAMMA = 0.5772156649015329
_INV_SQRT_PI = 1 / math.sqrt(_PI)


# --- impl factories -------------------------------------------------------------------------------

def _wide(dt):
    return np.dtype(np.complex128) if np.dtype(dt).kind == "c" else np.dtype(np.float64)


def _kernel_impl(kernel, n_out: int = 1):
    """impl factory: kernel(xp, *operands in float64 / complex128) rounded back to the operands' dtype."""
    def factory(xp):
        def f(*args):
            args = [xp.asarray(a) for a in args]
            dt = args[0].dtype
            wide = _wide(dt)
            with _errstate(xp):
                out = kernel(xp, *[a.astype(wide) for a in args])
            if n_out == 1:
                return xp.asarray(out).astype(dt)
            return [xp.asarray(o).astype(dt) for o in out]
        return f
    return factory


# --- kernels (backend arrays in float64 / complex128) ---------------------------------------------

def _xlogy_kernel(xp, x, y):
    safe_y = xp.where(x == 0, 1.0, y)
    return xp.where(x == 0, 0.0, x * xp.log(safe_y))


def _xlog1py_kernel(xp, x, y):
    safe_y = xp.where(x == 0, 0.0, y)
    return xp.where(x == 0, 0.0, x * xp.log1p(safe_y))


def _entr_kernel(xp, x, zero=0.0):
    """-x log x for x > 0, `zero` at 0 (-0.0 in JAX, whose entr is -xlogy(x, x); 0.0 in torch), -inf below
    and NaN at NaN."""
    pos = x > 0
    safe = xp.where(pos, x, 1.0)
    rest = xp.where(x == 0, zero, xp.where(x < 0, -np.inf, x))
    return xp.where(pos, -safe * xp.log(safe), rest)


def _log_ndtr_kernel(xp, x):
    """log(ndtr(x)) (as funcgrad.scipy.special.log_ndtr computes it)."""
    upper = x > -1
    mid = (x <= -1) & (x > -20)
    xu = xp.where(upper, x, 0.0)
    xm = xp.where(mid, x, -1.0)
    xl = xp.where(upper | mid, -20.0, x)
    up = xp.log1p(-0.5 * _erfc_kernel(xp, xu / _SQRT2))
    md = xp.log(0.5 * _erfc_kernel(xp, -xm / _SQRT2))
    z = 1 / (xl * xl)
    series = 1 + z * (-1 + z * (3 + z * (-15 + z * (105 + z * (-945)))))
    lo = -0.5 * xl * xl - xp.log(-xl) - _LOG_SQRT_2PI + xp.log(series)
    return xp.where(upper, up, xp.where(mid, md, lo))


def _ndtri_kernel(xp, p):
    # central part: erf_inv, then one Newton step on the CDF written with erfc (full relative accuracy)
    x = _SQRT2 * _erf_inv_kernel(xp, xp.asarray(2 * p - 1))
    lower = x < 0
    cdf_err = xp.where(lower, 0.5 * _erfc_kernel(xp, -x / _SQRT2) - p, (1 - p) - 0.5 * _erfc_kernel(xp, x / _SQRT2))
    pdf = xp.exp(-0.5 * x * x - _LOG_SQRT_2PI)
    step = xp.where(xp.isfinite(x) & (pdf > 0), cdf_err / xp.where(pdf > 0, pdf, 1.0), 0.0)
    central = x - step
    # lower tail (p < 1e-3, where 2p - 1 rounds away p's digits): Abramowitz & Stegun 26.2.23 as the
    # start, then Newton on log_ndtr(x) = log p
    tail = (p > 0) & (p < 1e-3)
    pl = xp.where(tail, p, 1e-3)
    t = xp.sqrt(-2 * xp.log(pl))
    xt = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1 + t * (1.432788 + t * (0.189269 + t * 0.001308))))
    for _ in range(3):
        ln = _log_ndtr_kernel(xp, xt)
        xt = xt - (ln - xp.log(pl)) * xp.exp(ln + 0.5 * xt * xt + _LOG_SQRT_2PI)
    # outside [0, 1] no quantile exists: NaN, as scipy and torch (2p - 1 rounds to -1 just below 0)
    return xp.where((p < 0) | (p > 1), np.nan, xp.where(tail, xt, central))


def _exp1_pos(xp, x):
    """E1(x) for x > 0: the power series up to 1, then the continued fraction
    e^-x / (x + 1 - 1^2/(x + 3 - 2^2/(x + 5 - ...))) evaluated from depth 100."""
    small = x <= 1
    xs = xp.where(small, x, 1.0)
    term = xp.ones_like(xs)
    series = xp.zeros_like(xs)
    for k in range(1, 26):
        term = -term * xs / k
        series = series - term / k
    low = -_EULER_GAMMA - xp.log(xp.where(xs > 0, xs, 1.0)) + series
    xl = xp.where(small, 1.0, x)
    t = xp.zeros_like(xl)
    for k in range(100, 0, -1):
        t = k * k / (xl + 2 * k + 1 - t)
    high = xp.exp(-xl) / (xl + 1 - t)
    return xp.where(small, low, high)


def _exp1_kernel(xp, x):
    pos = x > 0
    v = _exp1_pos(xp, xp.where(pos, x, 1.0))
    return xp.where(pos, v, xp.where(x == 0, np.inf, np.nan))


def _expi_pos(xp, x):
    """Ei(x) for x > 0: the power series up to 50, the asymptotic series e^x/x sum k!/x^k beyond."""
    small = x <= 50
    xs = xp.where(small, x, 1.0)
    term = xp.ones_like(xs)
    series = xp.zeros_like(xs)
    for k in range(1, 160):
        term = term * xs / k
        series = series + term / k
    low = _EULER_GAMMA + xp.log(xs) + series
    xl = xp.where(small, 51.0, x)
    term = xp.ones_like(xl)
    total = xp.ones_like(xl)
    for k in range(1, 31):
        term = term * k / xl
        total = total + term
    high = xp.exp(xl) / xl * total
    return xp.where(small, low, high)


def _expi_kernel(xp, x):
    pos = x > 0
    v_pos = _expi_pos(xp, xp.where(pos, x, 1.0))
    v_neg = -_exp1_pos(xp, xp.where(x < 0, -x, 1.0))
    return xp.where(pos, v_pos, xp.where(x < 0, v_neg, xp.where(x == 0, -np.inf, np.nan)))


_EXPN_SERIES = 30  # terms of the power series (used for x <= 1)
_EXPN_CF = 120     # depth of the continued fraction (used for x > 1)


def _expn_core(xp, n, x, big):
    """E_n(x) for x > 0: the power series (integer n >= 1) where not `big`, the continued fraction (any real
    n) where `big` (x > 1; callers select the other cases)."""
    small = ~big
    xs = xp.where(small, x, 0.5)
    nm1 = n - 1
    # series: E_n(x) = (-x)^(n-1)/(n-1)! (psi(n) - log x) - sum_{k != n-1} (-x)^k / ((k - n + 1) k!)
    total = xp.zeros_like(xs)
    term = xp.ones_like(xs)  # (-x)^k / k!
    for k in range(_EXPN_SERIES):
        if k:
            term = -term * xs / k
        d = k - nm1
        total = total - xp.where(d == 0, 0.0, term / xp.where(d == 0, 1.0, d))
    sign = xp.where(xp.remainder(nm1, 2) == 0, 1.0, -1.0)
    lead = sign * xp.exp(nm1 * xp.log(xs) - _lgamma_kernel(xp, n))
    low = total + lead * (_digamma_kernel(xp, n) - xp.log(xs))
    # continued fraction: E_n(x) = e^-x / (x + n - 1 n / (x + n + 2 - 2 (n + 1) / (x + n + 4 - ...)))
    xl = xp.where(small, 2.0, x)
    t = xp.zeros_like(xl)
    for i in range(_EXPN_CF, 0, -1):
        t = i * (nm1 + i) / (xl + n + 2 * i - t)
    high = xp.exp(-xl) / (xl + n - t)
    return xp.where(small, low, high)


def _expn_kernel(xp, n, x):
    """E_n(x) on jax.scipy.special.expn's piecewise domain (its cases in order, the last that holds wins):
    NaN for n < 0 or x < 0; E_n(0) = inf for n <= 1 and 1 / (n - 1) above (JAX: 1 / n, see the special-points
    matrix); e^-x / x for n = 0; the large-order expansion for n >= 5000; the continued fraction, valid for
    every real n, for x > 1; else the power series, for integer n only (a non-integer n gives NaN there, as
    JAX's series does: it raises -x to the power n - 1)."""
    integer = n == xp.trunc(n)
    big = x > 1
    series = (n >= 1) & integer & (x > 0) & ~big
    use = big | series
    val = _expn_core(xp, xp.where(use, n, 1.0), xp.where(use, x, 1.0), big)
    out = xp.where(series, val, np.nan)
    out = xp.where((n < 0) | (x < 0), np.nan, out)
    out = xp.where(x == 0, xp.where(n > 1, 1 / xp.where(n > 1, n - 1, 1.0), np.inf), out)
    out = xp.where((n == 0) & (x >= 0), xp.exp(-x) / x, out)
    xk = x + n  # n >= 5000: E_n(x) ~ e^-x / (x + n) (1 + n / (x + n)^2 + n (n - 2x) / (x + n)^4 + ...)
    yk = 1 / (xk * xk)
    large = yk * n * (6 * x * x - 8 * n * x + n * n)
    large = yk * (yk * (large + n * (n - 2 * x)) + n)
    out = xp.where(n >= 5000, (large + 1) * xp.exp(-x) / xk, out)
    out = xp.where(big, val, out)
    return xp.where(xp.isnan(n) | xp.isnan(x), np.nan, out)


_SICI_SERIES = 40
_SICI_CF = 60


def _sici_pos(xp, x):
    """(Si(x), Ci(x)) for x > 0: power series up to 4; above, E1(ix) = -Ci(x) + i (Si(x) - pi/2) by the
    continued fraction e^-z / (z + 1 - 1/(z + 3 - 4/(z + 5 - ...))) at z = ix, in real arithmetic."""
    small = x <= 4
    xs = xp.where(small, x, 1.0)
    x2 = xs * xs
    si = xp.zeros_like(xs)
    ci = xp.zeros_like(xs)
    term = xs  # (-1)^k x^(2k+1) / (2k+1)!
    for k in range(_SICI_SERIES):
        si = si + term / (2 * k + 1)
        term = -term * x2 / ((2 * k + 2) * (2 * k + 3))
    term = -x2 / 2  # (-1)^k x^(2k) / (2k)!, from k = 1
    for k in range(1, _SICI_SERIES):
        ci = ci + term / (2 * k)
        term = -term * x2 / ((2 * k + 1) * (2 * k + 2))
    ci = ci + _EULER_GAMMA + xp.log(xs)
    xl = xp.where(small, 5.0, x)
    # t = tr + i ti; t <- k^2 / (z + 2k + 1 - t) with z = i xl
    tr = xp.zeros_like(xl)
    ti = xp.zeros_like(xl)
    for k in range(_SICI_CF, 0, -1):
        dr = 2 * k + 1 - tr
        di = xl - ti
        den = dr * dr + di * di
        tr = k * k * dr / den
        ti = -k * k * di / den
    dr = 1 - tr
    di = xl - ti
    den = dr * dr + di * di
    qr, qi = dr / den, -di / den  # 1 / (z + 1 - t)
    c, s = xp.cos(xl), xp.sin(xl)  # e^-z = c - i s
    er = c * qr + s * qi
    ei = c * qi - s * qr
    si_l, ci_l = ei + _PI / 2, -er
    # far out (where the fraction's x^2 would overflow): the auxiliary functions f ~ 1/x, g ~ 1/x^2
    huge = x > 1e8
    xh = xp.where(huge, x, 1e8)
    f, g = 1 / xh, 1 / xh / xh
    si_l = xp.where(huge, _PI / 2 - f * c - g * s, si_l)
    ci_l = xp.where(huge, f * s - g * c, ci_l)
    return xp.where(small, si, si_l), xp.where(small, ci, ci_l)


def _sici_kernel(xp, x):
    ax = xp.abs(x)
    pos = (ax > 0) & (ax < np.inf)
    si, ci = _sici_pos(xp, xp.where(pos, ax, 1.0))
    si = xp.where(pos, si, xp.where(ax == 0, 0.0, _PI / 2))
    ci = xp.where(pos, ci, xp.where(ax == 0, -np.inf, 0.0))
    ci = xp.where(x == -np.inf, np.nan, ci)
    si = xp.where(x < 0, -si, si)
    nan = xp.isnan(x)
    return xp.where(nan, np.nan, si), xp.where(nan, np.nan, ci)


_FRESNEL_SERIES = 40
_FRESNEL_CF = 80
_FRESNEL_SPLIT = 1.8


def _fresnel_pos(xp, x):
    """(S(x), C(x)) for 0 <= x < inf."""
    small = x <= _FRESNEL_SPLIT
    xs = xp.where(small, x, 1.0)
    w = _PI / 2 * xs * xs
    w2 = w * w
    s = xp.zeros_like(xs)
    c = xp.zeros_like(xs)
    term = xp.ones_like(xs)  # (-1)^k w^(2k) / (2k)!
    for k in range(_FRESNEL_SERIES):
        c = c + term / (4 * k + 1)
        s = s + term * w / ((2 * k + 1) * (4 * k + 3))
        term = -term * w2 / ((2 * k + 1) * (2 * k + 2))
    s, c = xs * s, xs * c
    # C + iS = (1 + i)/2 (1 - erfc(z)) with z = sqrt(pi)/2 (1 - i) x, z^2 = -i pi x^2 / 2, and
    # erfc(z) = 2z e^(-z^2) / sqrt(pi) / (2z^2 + 1 - 1*2/(2z^2 + 5 - 3*4/(2z^2 + 9 - ...)))
    xl = xp.where(small, 2.0, x)
    p = _PI * xl * xl  # 2z^2 = -i p
    tr = xp.zeros_like(xl)
    ti = xp.zeros_like(xl)
    for j in range(_FRESNEL_CF, 0, -1):
        a = (2 * j - 1) * (2 * j)
        dr = 4 * j + 1 - tr
        di = -p - ti
        den = dr * dr + di * di
        tr = a * dr / den
        ti = -a * di / den
    dr = 1 - tr
    di = -p - ti
    den = dr * dr + di * di
    qr, qi = dr / den, -di / den
    # 2z / sqrt(pi) = (1 - i) x ; e^(-z^2) = cos(p/2) + i sin(p/2)
    half = p / 2
    cr, ci_ = xp.cos(half), xp.sin(half)
    ar, ai = xl * (cr + ci_), xl * (ci_ - cr)  # (1 - i) x (cr + i ci)
    er = ar * qr - ai * qi
    ei = ar * qi + ai * qr  # erfc(z)
    # (1 + i)/2 (1 - e) : real = ((1 - er) + ei)/2, imag = ((1 - er) - ei)/2
    cl = ((1 - er) + ei) / 2
    sl = ((1 - er) - ei) / 2
    return xp.where(small, s, sl), xp.where(small, c, cl)


def _fresnel_kernel(xp, x):
    ax = xp.abs(x)
    fin = ax < np.inf
    s, c = _fresnel_pos(xp, xp.where(fin, ax, 1.0))
    s = xp.where(fin, s, 0.5)
    c = xp.where(fin, c, 0.5)
    neg = x < 0
    nan = xp.isnan(x)
    return xp.where(nan, np.nan, xp.where(neg, -s, s)), xp.where(nan, np.nan, xp.where(neg, -c, c))


# B_k / (k + 1)! for k = 0, 1, 2, 4, ..., 2 * 11 (the odd ones beyond B_1 vanish)
_BERN = [1.0, -0.5, 1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798,
         -174611 / 330, 854513 / 138]
_ZETA2 = _PI * _PI / 6


def _li2_u(u):
    """Li2(y) from u = -log(1 - y), |u| <= log 2: sum_k B_k u^(k+1) / (k+1)!."""
    u2 = u * u
    out = u - u2 / 4
    pw = u * u2  # u^(2j+1)
    for j in range(1, len(_BERN) - 1):
        out = out + _BERN[j + 1] / math.factorial(2 * j + 1) * pw
        pw = pw * u2
    return out


def _spence_kernel(xp, x):
    ok = (x >= 0) & (x < np.inf)
    xs = xp.where(ok, x, 1.0)
    mid = (xs >= 0.5) & (xs <= 2)
    big = xs > 2
    low = xs < 0.5
    # x in [1/2, 2]: Li2(1 - x) with u = -log x
    xm = xp.where(mid, xs, 1.0)
    v_mid = _li2_u(-xp.log(xm))
    # x > 2: Li2(y) = -zeta(2) - log(-y)^2 / 2 - Li2(1/y), y = 1 - x; 1/y has u = log1p(-1/x)
    xb = xp.where(big, xs, 4.0)
    lb = xp.log(xb - 1)
    v_big = -_ZETA2 - 0.5 * lb * lb - _li2_u(xp.log1p(-1 / xb))
    # x < 1/2: Li2(1 - x) = zeta(2) - log(1 - x) log(x) - Li2(x), Li2(x) with u = -log1p(-x)
    xl = xp.where(low & (xs > 0), xs, 0.25)
    v_low = _ZETA2 - xp.log1p(-xl) * xp.log(xl) - _li2_u(-xp.log1p(-xl))
    v_low = xp.where(xs == 0, _ZETA2, v_low)
    out = xp.where(mid, v_mid, xp.where(big, v_big, v_low))
    return xp.where(ok, out, np.nan)


_DAWSN_CF = 60


def _dawsn_kernel(xp, x):
    ax = xp.abs(x)
    huge = ax > 1e8
    xs = xp.where(huge, 1.0, ax)
    x2 = xs * xs
    # D(x) = x / (1 + 2x^2 - 4x^2 / (3 + 2x^2 - 8x^2 / (5 + 2x^2 - ...))), convergent for all x
    t = xp.zeros_like(xs)
    for k in range(_DAWSN_CF, 0, -1):
        t = 4 * k * x2 / (2 * k + 1 + 2 * x2 - t)
    val = xs / (1 + 2 * x2 - t)
    xh = xp.where(huge, ax, 1e8)
    val = xp.where(huge, 1 / (2 * xh) + 1 / (4 * xh * xh * xh), val)
    val = xp.where(ax == np.inf, 0.0, val)
    return xp.copysign(val, x)


def _weideman(n):
    """Weideman's (1994) rational approximation of the Faddeeva function: its scale L and the n
    coefficients (highest power first) of the polynomial in Z = (L + iz) / (L - iz), from the FFT of
    e^(-t^2) (L^2 + t^2) sampled at t = L tan(theta / 2)."""
    m = 2 * n
    k = np.arange(-m + 1, m)
    L = math.sqrt(n / math.sqrt(2))
    t = L * np.tan(k * math.pi / m / 2)
    f = np.concatenate([[0.0], np.exp(-t * t) * (L * L + t * t)])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return L, [float(c) for c in a[1:n + 1][::-1]]


_W_L, _W_COEF = _weideman(40)


def _wofz_upper(xp, z):
    """w(z) for Im z >= 0."""
    d = _W_L - 1j * z
    Z = (_W_L + 1j * z) / d
    p = xp.zeros_like(z)
    for c in _W_COEF:
        p = p * Z + c
    return 2 * p / (d * d) + _INV_SQRT_PI / d


def _wofz_kernel(xp, z):
    lower = xp.imag(z) < 0
    infinite = xp.isinf(xp.real(z)) | xp.isinf(xp.imag(z))
    zu = xp.where(lower, -z, z)
    wu = _wofz_upper(xp, xp.where(infinite, 0.0, zu))
    # w(z) = 2 e^(-z^2) - w(-z) in the lower half plane
    out = xp.where(lower, 2 * xp.exp(-z * z) - wu, wu)
    return xp.where(infinite & ~lower, 0.0, out)


# --- rule helpers (funcgrad operations) -----------------------------------------------------------

def _const(x, v):
    return full(x.shape, v, x.dtype)


def _where(c, a, b):
    """select(c, a, b) with a Python scalar on either side made an array like the other."""
    if not hasattr(a, "shape"):
        a = _const(b, a)
    if not hasattr(b, "shape"):
        b = _const(a, b)
    return ew.select(c, a, b)


def _is_zero(x):
    return ew.eq(x, _const(x, 0))


# --- derivative formulas --------------------------------------------------------------------------

def _xlogy_dx(ans, x, y):
    # log y, and 0 at x == 0 where y <= 0 (the function is 0 on x == 0 and undefined or infinite beside it)
    return ew.log(_where(ew.bitwise_and(_is_zero(x), ew.le(y, _const(y, 0))), 1.0, y))


def _xlogy_dy(ans, x, y):
    # x / y: 0 at x == 0 (also where y is 0, infinite or NaN there); d/dx of it stays 1 / y
    bad = ew.bitwise_or(_is_zero(y), ew.bitwise_not(ew.is_finite(y)))
    return x / _where(ew.bitwise_and(_is_zero(x), bad), 1.0, y)


def _xlog1py_dx(ans, x, y):
    return ew.log1p(_where(ew.bitwise_and(_is_zero(x), ew.le(y, _const(y, -1))), 0.0, y))


def _xlog1py_dy(ans, x, y):
    bad = ew.bitwise_or(ew.eq(y, _const(y, -1)), ew.bitwise_not(ew.is_finite(y)))
    return x / (1 + _where(ew.bitwise_and(_is_zero(x), bad), 0.0, y))


def _entr_d(x, kink="jax"):
    """entr'(x) = -(log x + 1): +inf at 0 (the one-sided limit, JAX's and torch's), NaN below 0 in torch,
    where JAX's select(x < 0, -inf, -x log x) gives 0 (its jvp; its grad is NaN there, a zero cotangent
    times log(x) + 1); its own derivative is -1/x (-inf at 0, +inf at -0.0, as both libraries)."""
    d = -(ew.log(x) + 1)
    if kink == "jax":
        return _where(ew.lt(x, _const(x, 0)), 0.0, d)
    return d


def _expn_dx(n, x):
    # E_n' = -E_{n-1}, on the same domain as JAX's rule (so -E_{-1}: NaN for n = 0 at 0 < x <= 1)
    return -expn(n - 1, x)


def _si_d(ans, x):
    # sin x / x; below 0.1 its Taylor polynomial in x^2 (so it is 1 at 0 and every higher derivative
    # stays finite at tiny x, where sin x / x^2 would overflow)
    small = ew.lt(ew.abs(x), _const(x, 0.1))
    xs = _where(small, 1.0, x)
    xt = _where(small, x, 0.0)
    x2 = xt * xt
    poly = _const(x2, 0)
    for k in range(6, -1, -1):
        poly = (-1) ** k / math.factorial(2 * k + 1) + x2 * poly
    return _where(small, poly, ew.sin(xs) / xs)


def _spence_d(ans, x):
    # log(x) / (1 - x) = -log1p(w) / w with w = x - 1: its power series near x = 1 (smooth there, so
    # higher derivatives are right too)
    w = x - 1
    near = ew.lt(ew.abs(w), _const(w, 0.1))
    wn = _where(near, w, 0.0)
    ser = _const(wn, 0)
    for k in range(17, -1, -1):
        ser = 1 / (k + 1) - wn * ser
    xs = _where(near, 2.0, x)
    return _where(near, -ser, ew.log(xs) / (1 - xs))


# --- the cards ------------------------------------------------------------------------------------

def _unary(name, kernel, deriv, kinds="f"):
    return ew.unary(name, _kernel_impl(kernel), deriv, kinds)


def _entr_rule(x: ShapedArray, *, kink: str = "jax") -> ShapedArray:
    check_dtype("entr", x, "f")
    ew._check_kink("entr", kink)
    return x


def _entr_impl(xp):
    jax_, torch_ = (_kernel_impl(lambda xp_, x, z=z: _entr_kernel(xp_, x, z))(xp) for z in (-0.0, 0.0))
    return lambda x, kink="jax": jax_(x) if kink == "jax" else torch_(x)


# entr with the face's convention below 0 as the parameter `kink` (see elementwise's module docstring)
entr_p = Primitive("entr", impl=_entr_impl, abstract_eval=_entr_rule,
                   jvp=[lambda t, ans, x, kink="jax": t * _entr_d(x, kink)],
                   vjp=[lambda g, ans, x, kink="jax": g * _entr_d(x, kink)])
entr_p.batch = elementwise_batch(entr_p)
xlogy_p = ew.binary_partials("xlogy", _kernel_impl(_xlogy_kernel), _xlogy_dx, _xlogy_dy, "f")
xlog1py_p = ew.binary_partials("xlog1py", _kernel_impl(_xlog1py_kernel), _xlog1py_dx, _xlog1py_dy, "f")
ndtri_p = _unary("ndtri", _ndtri_kernel, lambda ans, p: ew.exp(0.5 * ans * ans + _LOG_SQRT_2PI))
exp1_p = _unary("exp1", _exp1_kernel, lambda ans, x: -ew.exp(-x) / x)
expi_p = _unary("expi", _expi_kernel, lambda ans, x: ew.exp(x) / x)
expn_p = ew.binary("expn", _kernel_impl(_expn_kernel),
                   [None, lambda t, ans, n, x: t * _expn_dx(n, x)],
                   [None, lambda g, ans, n, x: g * _expn_dx(n, x)], "f")
si_p = _unary("si", lambda xp, x: _sici_kernel(xp, x)[0], _si_d)
ci_p = _unary("ci", lambda xp, x: _sici_kernel(xp, x)[1], lambda ans, x: ew.cos(x) / x)
spence_p = _unary("spence", _spence_kernel, _spence_d)
dawsn_p = _unary("dawsn", _dawsn_kernel, lambda ans, x: 1 - 2 * x * ans)
wofz_p = _unary("wofz", _wofz_kernel, lambda ans, z: -2 * z * ans + 2j * _INV_SQRT_PI, kinds="c")


def _fresnel_rule(x: ShapedArray) -> list:
    check_dtype("fresnel", x, "f")
    return [x, x]


def _fresnel_d(x):
    w = _PI / 2 * x * x
    return ew.sin(w), ew.cos(w)


def _fresnel_jvp(primals, tangents, ans):
    (x,), (t,) = primals, tangents
    ds, dc = _fresnel_d(x)
    return [t * ds, t * dc]


def _fresnel_vjp(cts, ans, args, needs):
    (x,), (gs, gc) = args, cts
    if gs is None and gc is None:
        return [None]
    ds, dc = _fresnel_d(x)
    out = None if gs is None else gs * ds
    if gc is not None:
        out = gc * dc if out is None else out + gc * dc
    return [out]


fresnel_p = Primitive("fresnel", impl=_kernel_impl(_fresnel_kernel, n_out=2), abstract_eval=_fresnel_rule,
                      jvp_full=_fresnel_jvp, vjp_full=_fresnel_vjp, multiple_results=True)
fresnel_p.batch = elementwise_batch(fresnel_p)


# --- lax-style functions (operands of one shape and dtype; funcgrad.scipy.special promotes) -------

def entr(x): return entr_p.bind(x)
def xlogy(x, y): return xlogy_p.bind(x, y)
def xlog1py(x, y): return xlog1py_p.bind(x, y)
def ndtri(p): return ndtri_p.bind(p)
def exp1(x): return exp1_p.bind(x)
def expi(x): return expi_p.bind(x)
def expn(n, x): return expn_p.bind(n, x)
def si(x): return si_p.bind(x)
def ci(x): return ci_p.bind(x)
def spence(x): return spence_p.bind(x)
def dawsn(x): return dawsn_p.bind(x)
def wofz(z): return wofz_p.bind(z)
def fresnel(x): return tuple(fresnel_p.bind(x))


__all__ = ["entr", "xlogy", "xlog1py", "ndtri", "exp1", "expi", "expn", "si", "ci", "fresnel", "spence", "dawsn",
           "wofz"]
