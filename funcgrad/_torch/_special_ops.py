"""Special functions on tensors (torch.special and the torch.* names among them): Bessel I0/I1 (plain and
scaled), the normal distribution's ndtr/ndtri/log_ndtr, entr, xlog1py, polygamma, multigammaln, the
regularised incomplete gamma functions (lax's igamma/igammac cards), and the orthogonal polynomials.

Each is one recorded op over funcgrad primitives (bessel_i0e/i1e, erf/erfc/erf_inv, lgamma, ...), so
gradients come from the primitive cards. Integer inputs compute in the default float dtype, as in torch (but
igamma/igammac, as torch, have no kernel for an integer or complex promoted dtype).
"""
from __future__ import annotations

import math

import numpy as np

from . import _jnp as jnp
from .._src.core.array import Array
from .._src.prims import bessel as _bs
from .._src.prims import elementwise as ew
from .._src.prims import special as _sp
from .._src.prims import scipy_special as _ssp
from .._src.prims import scipy_special as _ssc
from .._src.prims import incomplete as _inc
from ..autograd.grad_mode import state as _gs
from . import _dtype as D
from .ops import arithmetic, unary
from .ops._common import _TRUEDIV, _as_tensor, _bc, _binop, _bshape, _cast, _out, _promote
from ._tensor import Tensor, _wrap
from ._dispatch import _apply, _apply1
from ._errors import _legacy
from .ops.pointwise import mvlgamma
from ..autograd.function import Function
from ..autograd import Function
from .._src.prims.bessel import _J_SWITCH, _bessel_j


def _fdt(dt):
    return dt if D.kind(dt) in "f" else D.default_float()


def _unary(name, afn, doc=""):
    """A float elementwise op: integer/bool input computes in the default float dtype. `name`: the node's,
    torch's (torch.special's own ops carry its Special prefix: SpecialI0EBackward0; a trailing digit names
    the overload: "SpecialI10" is SpecialI1Backward0)."""
    def op(input, *, out=None):
        dt = _fdt(input._np_dtype())
        return _out(_apply1(name, lambda a: afn(_cast(a, dt)), input), out)
    op.__name__ = name.lower()
    op.__doc__ = doc
    return op


def _in64(afn):
    """afn evaluated in float64 and rounded back (for formulas whose float32 intermediates would underflow)."""
    def f(a):
        return _cast(afn(_cast(a, np.dtype(np.float64))), a.dtype)
    return f


def _full(a, v):
    return jnp.full(a.shape, v, a.dtype)


i0e = _unary("SpecialI0e", _bs.bessel_i0e, "exp(-|x|) I0(x)")
i1e = _unary("SpecialI1e", _bs.bessel_i1e, "exp(-|x|) I1(x)")
# (torch gives J0, J1, spherical J0 and the orthogonal polynomials no gradient; here they have the cards' own.
# Their nodes are named as torch would: SpecialBesselJ0Backward0)
bessel_j0 = _unary("SpecialBesselJ00", _bs.bessel_j0, "The Bessel function of the first kind of order 0.")
bessel_j1 = _unary("SpecialBesselJ10", _bs.bessel_j1, "The Bessel function of the first kind of order 1.")
# (torch's |x|, derivative 0 at 0, pairs with the i0e/i1e cards' sign(x) there: i0'(0) = 0 as torch)
def _half_in32(afn):
    """afn in float32 for float16/bfloat16 input, rounded once (torch's opmath; exp(|x|) alone overflows
    float16 from x = 11.1, where I0 itself stays finite up to 12.9)."""
    def f(a):
        if a.dtype.itemsize != 2:
            return afn(a)
        return _cast(afn(_cast(a, np.dtype(np.float32))), a.dtype)
    return f


i0 = _unary("I0", _half_in32(lambda a: _bs.bessel_i0e(a) * ew.exp(ew.abs(a, "torch"))),
            "The modified Bessel function I0.")
i1 = _unary("SpecialI10", _half_in32(lambda a: _bs.bessel_i1e(a) * ew.exp(ew.abs(a, "torch"))),
            "The modified Bessel function I1.")

_SQRT1_2 = 1 / math.sqrt(2.0)


def _ndtr(a):
    return _sp.erfc(-a * _SQRT1_2) * 0.5


def _log_ndtr(a):
    """log Phi(x): log(erfc(-x/sqrt2)/2) above -20; below, the asymptotic series of the Mills ratio."""
    far = ew.lt(a, _full(a, -20.0))
    near_x = ew.select(far, _full(a, -20.0), a)
    near = ew.log(_sp.erfc(-near_x * _SQRT1_2) * 0.5)
    far_x = ew.select(far, a, _full(a, -20.0))
    z2 = 1.0 / (far_x * far_x)
    series = 1.0 - z2 * (1.0 - z2 * (3.0 - z2 * (15.0 - z2 * 105.0)))
    tail = -0.5 * far_x * far_x - ew.log(-far_x) - 0.5 * math.log(2 * math.pi) + ew.log(series)
    return ew.select(far, tail, near)


ndtr = _unary("Mul1", _in64(_ndtr), "The standard normal CDF.")
ndtri = _unary("SpecialNdtri", _in64(_ssc.ndtri), "The inverse of the standard normal CDF (the JAX face's card: "
               "accurate in both tails).")
log_ndtr = _unary("SpecialLogNdtr", _in64(_log_ndtr), "log of the standard normal CDF (stable in the left tail).")


entr = _unary("SpecialEntr", lambda a: _ssc.entr_p.bind(a, kink="torch"),
              "-x log x for x > 0, 0 at 0, -inf for x < 0 (derivative -(log x + 1): +inf at 0, NaN below, as torch).")


def expit(input, *, out=None):
    return _out(unary.sigmoid(input), out)


def exp2(input, *, out=None):
    return _out(unary.exp2(input), out)


def _x_times(card):
    """torch's xlogy / xlog1py through the scipy card: x * log(y) (log1p), 0 at x == 0 unless y is NaN;
    d/dx = log(y), 0 where x == 0 and y <= 0 (-1), as torch; d/dy = x / y."""
    def f(a, b):
        if a.shape != b.shape:
            a, b = jnp.broadcast_arrays(a, b)
        nan = ew.ne(b, b)   # NaN y: x * NaN (a NaN x-gradient), with y zeroed elsewhere (no 0 * inf there)
        return ew.select(nan, ew.mul(a, ew.select(nan, b, jnp.zeros_like(b))), card(a, b))
    return _bc(f)


def xlog1py(input, other, *, out=None):
    """x * log1p(y), 0 at x == 0 (unless y is NaN)."""
    return _out(_binop(_overload("SpecialXlog1py", input, other), _x_times(_ssp.xlog1py), input, other, _TRUEDIV),
                out)


def xlogy(input, other, *, out=None):
    """x * log(y), 0 at x == 0 (unless y is NaN)."""
    return _out(_binop(_overload("Xlogy", input, other), _x_times(_ssp.xlogy), input, other, _TRUEDIV), out)


def _overload(name, input, other):
    """torch's node for a binary op by overload: a number as self (...Backward1) or as other (...Backward2)."""
    return name + "1" if not isinstance(input, Tensor) else name + "2" if not isinstance(other, Tensor) else name


def polygamma(n, input, *, out=None):
    """The n-th derivative of digamma."""
    n = int(n)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    dt = _fdt(input._np_dtype())

    def f(a):
        a = _cast(a, dt)
        r = _sp.polygamma(n, a)
        if n == 0:
            return r
        # torch's values at the edges: trigamma is 0 at +inf and NaN at -inf; for n >= 2 (through
        # zeta(n + 1, x)) a pole is (-1)^(n+1) inf and +inf gives NaN
        if n == 1:
            return ew.select(a == -np.inf, _full(a, np.nan), r)
        poles = (a <= 0) & (a == ew.floor(a))
        r = ew.select(poles, _full(a, np.inf if n % 2 else -np.inf), r)
        return ew.select(a == np.inf, _full(a, np.nan), r)
    return _out(_apply1("Polygamma", f, input), out)


def multigammaln(input, p, *, out=None):
    return _out(mvlgamma(input, p), out)


# --- incomplete gamma: lax's igamma / igammac cards ----------------------------------------------------

def _igamma(name, upper):
    card = _inc.igammac if upper else _inc.igamma

    def op(input, other, *, out=None):
        a_t, x_t = _as_tensor(input), _as_tensor(other)
        pdt = _promote(a_t, x_t)
        if D.kind(pdt) != "f":  # (torch promotes, then has kernels for floating dtypes only)
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_legacy(pdt)}'")
        dt = _fdt(pdt)
        shape = _bshape(tuple(a_t.shape), tuple(x_t.shape))
        guard = None
        if a_t.requires_grad and _gs.enabled:  # as torch: no derivative in a, an error only if one is asked for
            guard = _no_derivative(name)(a_t)
        a_arr = jnp.broadcast_to(_cast(a_t.detach()._arr(), dt), shape)

        hi, lo = (0.0, 1.0) if upper else (1.0, 0.0)   # the limits at x = inf and at x = 0

        def f(x):
            x = jnp.broadcast_to(_cast(x, dt), shape)
            r = card(a_arr, x)
            # torch's (Cephes') special cases, from the last checked to the first: x = inf; a = inf (NaN when
            # x is inf too); x = 0 (whatever a, NaN included); a = 0 (hi for x > 0, else NaN); x < 0 or a < 0: NaN
            c = lambda v: _full(r, v)  # noqa: E731
            xinf, ainf = ew.eq(ew.abs(x), c(np.inf)), ew.eq(ew.abs(a_arr), c(np.inf))
            r = ew.select(xinf, c(hi), r)
            r = ew.select(ainf, ew.select(xinf, c(np.nan), c(lo)), r)
            r = ew.select(ew.bitwise_and(ew.eq(x, c(0.0)), ew.ne(a_arr, a_arr)), c(lo), r)  # (a NaN a; the
            # card has this value, and the gradient, for any other a)
            r = ew.select(ew.eq(a_arr, c(0.0)), ew.select(ew.gt(x, c(0.0)), c(hi), c(np.nan)), r)
            return ew.select(ew.bitwise_or(ew.lt(x, c(0.0)), ew.lt(a_arr, c(0.0))), c(np.nan), r)
        r = _apply1(name.capitalize(), f, x_t)
        if guard is not None:
            r = r + guard.expand(shape).to(r.dtype)
        return _out(r, out)
    op.__name__ = name
    return op


def _no_derivative(name):
    """A zero of a's shape whose backward raises torch's NotImplementedError (igamma's missing a-derivative)."""

    class NoDerivative(Function):
        @staticmethod
        def forward(ctx, a):
            return a.detach().new_zeros(tuple(a.shape))   # (not a * 0: NaN at a = inf)

        @staticmethod
        def backward(ctx, g):
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
    return NoDerivative.apply


igamma = gammainc = _igamma("igamma", False)
igammac = gammaincc = _igamma("igammac", True)


# --- orthogonal polynomials (three-term recurrences, n a Python int or an integer tensor) ----------------

def _poly(name, first, step):
    def op(input, n, *, out=None):
        x = _as_tensor(input)
        ns = n._host() if isinstance(n, Tensor) else np.asarray(n)
        dt = _fdt(_promote(x, n) if isinstance(n, Tensor) else x._np_dtype())
        nmax = int(ns.max()) if ns.size else 0
        shape = _bshape(tuple(x.shape), ns.shape)
        nb = Array(np.broadcast_to(ns, shape).astype(np.int64).copy())

        def f(a):
            a = jnp.broadcast_to(_cast(a, dt), shape)
            p0 = jnp.ones_like(a)
            p1 = first(a)
            res = ew.select(ew.eq(nb, Array(np.zeros(shape, np.int64))), p0, jnp.zeros_like(a))
            if nmax >= 1:
                res = ew.select(ew.eq(nb, Array(np.ones(shape, np.int64))), p1, res)
            for k in range(1, nmax):
                p0, p1 = p1, step(a, p1, p0, k)
                res = ew.select(ew.eq(nb, Array(np.full(shape, k + 1, np.int64))), p1, res)
            return ew.select(ew.lt(nb, Array(np.zeros(shape, np.int64))), jnp.zeros_like(a), res)
        return _out(_apply1(name, f, x), out)
    op.__name__ = name
    return op


chebyshev_polynomial_t = _poly("chebyshev_polynomial_t", lambda x: x, lambda x, p1, p0, k: 2 * x * p1 - p0)
chebyshev_polynomial_u = _poly("chebyshev_polynomial_u", lambda x: 2 * x, lambda x, p1, p0, k: 2 * x * p1 - p0)
hermite_polynomial_h = _poly("hermite_polynomial_h", lambda x: 2 * x, lambda x, p1, p0, k: 2 * x * p1 - 2 * k * p0)
hermite_polynomial_he = _poly("hermite_polynomial_he", lambda x: x, lambda x, p1, p0, k: x * p1 - k * p0)
laguerre_polynomial_l = _poly("laguerre_polynomial_l", lambda x: 1 - x,
                              lambda x, p1, p0, k: ((2 * k + 1 - x) * p1 - k * p0) / (k + 1))
legendre_polynomial_p = _poly("legendre_polynomial_p", lambda x: x,
                              lambda x, p1, p0, k: ((2 * k + 1) * x * p1 - k * p0) / (k + 1))


chebyshev_polynomial_v = _poly("chebyshev_polynomial_v", lambda x: 2 * x - 1, lambda x, p1, p0, k: 2 * x * p1 - p0)
chebyshev_polynomial_w = _poly("chebyshev_polynomial_w", lambda x: 2 * x + 1, lambda x, p1, p0, k: 2 * x * p1 - p0)


def _shifted(poly, name):
    def op(input, n, *, out=None):
        x = _as_tensor(input)
        x = x if D.kind(x._np_dtype()) == "f" else x.to(D.from_np(D.default_float()))
        return poly(arithmetic.sub(arithmetic.mul(x, 2), 1), n, out=out)
    op.__name__ = name
    return op


shifted_chebyshev_polynomial_t = _shifted(chebyshev_polynomial_t, "shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _shifted(chebyshev_polynomial_u, "shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _shifted(chebyshev_polynomial_v, "shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _shifted(chebyshev_polynomial_w, "shifted_chebyshev_polynomial_w")


erfcx = _unary("SpecialErfcx", _sp.erfcx, "The scaled complementary error function exp(x^2) erfc(x).")


def spherical_bessel_j0(input, *, out=None):
    """sin(x) / x (1 at 0)."""
    def f(a):
        z = ew.eq(a, jnp.zeros_like(a))
        inf = ew.eq(ew.abs(a), jnp.full_like(a, np.inf))
        safe = ew.select(ew.bitwise_or(z, inf), jnp.ones_like(a), a)
        return ew.select(z, jnp.ones_like(a), ew.select(inf, jnp.zeros_like(a), ew.sin(safe) / safe))
    dt = _fdt(input._np_dtype())
    return _out(_apply1("SpecialSphericalBesselJ00", lambda a: f(_cast(a, dt)), input), out)


_ = _apply


# --- Hurwitz zeta (values on the host; torch has no derivative for it either) -------------------------

_B2J = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798, -174611 / 330,
        854513 / 138, -236364091 / 2730]  # B_2, B_4, ..., B_24


def _zeta_host(s: np.ndarray, q: np.ndarray) -> np.ndarray:
    """sum_k (q + k)^(-s): direct terms until q + k >= 10, then Euler-Maclaurin with 12 Bernoulli terms."""
    s, q = np.broadcast_arrays(np.asarray(s, np.float64), np.asarray(q, np.float64))
    with np.errstate(all="ignore"):
        n = np.clip(np.ceil(10 - q), 0, None)
        n = np.where(np.isfinite(n), n, 0)
        total = np.zeros(s.shape)
        for k in range(int(n.max()) if n.size else 0):
            total = total + np.where(k < n, np.power(q + k, -s), 0.0)
        w = q + n
        total = total + np.power(w, 1 - s) / (s - 1) + 0.5 * np.power(w, -s)
        poch = s.copy()  # s (s+1) ... (s+2j-2)
        fact = 2.0  # (2j)!
        for j, b in enumerate(_B2J, start=1):
            total = total + b / fact * poch * np.power(w, -s - 2 * j + 1)
            poch = poch * (s + 2 * j - 1) * (s + 2 * j)
            fact = fact * (2 * j + 1) * (2 * j + 2)
        total = np.where(s == 1, np.inf, total)
        total = np.where(s < 1, np.nan, total)
        q_int = (q <= 0) & (q == np.floor(q))
        total = np.where(q_int & (s >= 1), np.inf, total)
        total = np.where((q < 0) & ~q_int & (s != np.floor(s)), np.nan, total)
    return total


def zeta(input, other, *, out=None):
    """The Hurwitz zeta function sum_k (other + k)^(-input) (input is s, other is q); no derivative, as in torch
    (backward raises NotImplementedError)."""
    a = input if isinstance(input, Tensor) else None
    b = other if isinstance(other, Tensor) else None
    if a is None and b is None:
        raise TypeError("zeta(): expected at least one Tensor argument")
    x_t, q_t = _as_tensor(input), _as_tensor(other)
    dt = _fdt(_promote(input, other))
    shape = _bshape(tuple(x_t.shape), tuple(q_t.shape))

    class _Zeta(Function):
        @staticmethod
        def forward(ctx, *ts):
            return _wrap(Array(_zeta_host(x_t._host(), q_t._host()).astype(dt).reshape(shape)))

        @staticmethod
        def backward(ctx, *grads):
            raise NotImplementedError("the derivative for 'zeta' is not implemented.")
    return _out(_Zeta.apply(*[t for t in (a, b) if t is not None]), out)


for _f in (xlogy, xlog1py, zeta):
    _f._numbers_ok = True


# --- Bessel functions of the second kind and modified ones of the third kind (values only) ------------------
# torch returns these without a gradient; so do these host kernels (float64, results rounded to the input's
# float dtype).

_EULER = 0.57721566490153286061


_K_SERIES = 2.0  # K0 / K1 by their power series up to here (the integral's 400 steps cover x >= 1e-6 only)


def _k_series_host(x: np.ndarray, nu: int) -> np.ndarray:
    """K0 / K1 for 0 < x <= 2 by the logarithmic power series (A&S 9.6.13, 9.6.11) in extended precision:
    K0 = -(log(x/2) + gamma) I0(x) + sum_k H_k q^k / k!^2 and
    K1 = 1/x + log(x/2) I1(x) - (1/2) sum_k (psi(k+1) + psi(k+2)) (x/2) q^k / (k! (k+1)!), q = x^2/4, so
    the log and 1/x terms that dominate at tiny x are exact (K0(1e-300) = 690.89, K1(1e-300) = 1e300);
    the terms stay below 10 K(x) up to 2 (no cancellation worth a digit)."""
    z = x.astype(np.longdouble)
    q = (z / 2) ** 2
    lg = np.log(z / 2)
    if nu == 0:
        term = np.ones_like(z)
        i0, s, h = term.copy(), np.zeros_like(z), np.longdouble(0)
        for k in range(1, 30):
            term = term * q / (k * k)
            h += np.longdouble(1) / k
            i0, s = i0 + term, s + h * term
        k_ = -(lg + np.longdouble(_EULER)) * i0 + s
    else:
        term = z / 2
        psi1, psi2 = np.longdouble(-_EULER), np.longdouble(1 - _EULER)
        i1, s = term.copy(), term * (psi1 + psi2)
        for k in range(1, 30):
            term = term * q / (k * (k + 1))
            psi1 += np.longdouble(1) / k
            psi2 += np.longdouble(1) / (k + 1)
            i1, s = i1 + term, s + term * (psi1 + psi2)
        k_ = 1 / z + lg * i1 - s / 2
    return np.asarray(k_ * np.exp(z), np.float64)   # (scaled; 1/x of a subnormal x overflows to inf)


def _k_scaled_host(x: np.ndarray, nu: int) -> np.ndarray:
    """exp(x) K_nu(x): the power series up to _K_SERIES for nu = 0, 1 (_k_series_host); beyond it (and for
    other orders) int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt by the trapezoidal rule, which converges
    geometrically fast for this analytic, doubly-exponentially decaying integrand: step min(1/16, 0.6/sqrt(x))
    (the integrand's width near 0 is 1/sqrt(x)), 400 steps (past exp(-745) for every x >= 1e-6)."""
    out = np.full(x.shape, np.nan)
    small = (x > 0) & (x <= _K_SERIES) if nu in (0, 1) else np.zeros(x.shape, bool)
    if small.any():
        with np.errstate(over="ignore"):
            out[small] = _k_series_host(x[small], nu)
    pos = (x > 0) & ~small
    xp = x[pos]
    if xp.size:
        h = np.minimum(1 / 16, 0.6 / np.sqrt(xp))[:, None]
        t = np.arange(400)[None, :] * h
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            vals = np.exp(-xp[:, None] * (2 * np.sinh(t / 2) ** 2)) * np.cosh(nu * t)  # cosh t - 1, no cancellation
        vals = np.nan_to_num(vals, nan=0.0, posinf=0.0)
        out[pos] = h[:, 0] * (vals.sum(1) - 0.5 * vals[:, 0])
    out[x == 0] = np.inf
    return out


def _y_host(x: np.ndarray, nu: int) -> np.ndarray:
    """Y0 / Y1: the logarithmic power series in extended precision up to 16, Hankel's expansion beyond."""
    out = np.full(x.shape, np.nan)
    small = (x > 0) & (x <= _J_SWITCH)
    big = x > _J_SWITCH
    if small.any():
        z = x[small].astype(np.longdouble)
        q = (z / 2) ** 2
        jn = np.asarray(_bessel_j(np, x[small], nu), np.longdouble)
        lg = np.log(z / 2)
        if nu == 0:
            term = np.ones_like(z)
            h = np.longdouble(0)
            s = np.zeros_like(z)
            for k in range(1, 70):
                term = -term * q / (k * k)
                h += np.longdouble(1) / k
                s = s - h * term
            y = (2 / np.pi) * ((lg + _EULER) * jn + s)
        else:
            # Y1 = (2/pi) J1 ln(x/2) - 2/(pi x) - (1/pi) sum_k (-1)^k (psi(k+1) + psi(k+2)) (x/2)^(2k+1)/(k!(k+1)!)
            term = z / 2
            psi1 = np.longdouble(-_EULER)
            psi2 = np.longdouble(1 - _EULER)
            s = term * (psi1 + psi2)
            for k in range(1, 70):
                term = -term * q / (k * (k + 1))
                psi1 += np.longdouble(1) / k
                psi2 += np.longdouble(1) / (k + 1)
                s = s + term * (psi1 + psi2)
            y = (2 / np.pi) * jn * lg - 2 / (np.pi * z) - s / np.pi
        out[small] = np.asarray(y, np.float64)
    if big.any():
        z = x[big]
        mu = 4.0 * nu * nu
        a = np.ones_like(z)
        p, qq = a.copy(), np.zeros_like(z)
        for k in range(1, 40):
            a = a * (mu - (2 * k - 1) ** 2) / (8.0 * k * z)
            sign = -1.0 if (k // 2) % 2 else 1.0
            if k % 2:
                qq = qq + sign * a
            else:
                p = p + sign * a
        chi = z - (nu / 2 + 0.25) * np.pi
        out[big] = np.sqrt(2 / (np.pi * z)) * (p * np.sin(chi) + qq * np.cos(chi))
    out[x == 0] = -np.inf
    return out


def _host_special(name, fn):
    def op(input, *, out=None):
        dt = _fdt(input._np_dtype())
        v = np.asarray(input._host(), np.float64)
        return _out(_wrap(Array(fn(v).astype(dt))), out)
    op.__name__ = name
    op.__doc__ = f"torch.special.{name} (no gradient, as in torch)."
    return op


bessel_y0 = _host_special("bessel_y0", lambda v: _y_host(v, 0))
bessel_y1 = _host_special("bessel_y1", lambda v: _y_host(v, 1))
scaled_modified_bessel_k0 = _host_special("scaled_modified_bessel_k0", lambda v: _k_scaled_host(v, 0))
scaled_modified_bessel_k1 = _host_special("scaled_modified_bessel_k1", lambda v: _k_scaled_host(v, 1))
modified_bessel_k0 = _host_special("modified_bessel_k0", lambda v: _k_scaled_host(v, 0) * np.exp(-v))
modified_bessel_k1 = _host_special("modified_bessel_k1", lambda v: _k_scaled_host(v, 1) * np.exp(-v))


def _airy_host(x: np.ndarray) -> np.ndarray:
    """Ai(x): the Maclaurin series c1 f(x) - c2 g(x) in extended precision on [-8, 2]; (1/pi) sqrt(x/3)
    K_{1/3}(zeta) beyond 2 and the asymptotic expansion (zeta = 2/3 |x|^(3/2)) below -8."""
    out = np.full(x.shape, np.nan)
    mid = (x >= -8) & (x <= 2)
    if mid.any():
        z = x[mid].astype(np.longdouble)
        z3 = z ** 3
        f = t = np.ones_like(z)
        g = u = z.copy()
        for k in range(1, 80):
            t = t * z3 / ((3 * k - 1) * (3 * k))
            u = u * z3 / ((3 * k) * (3 * k + 1))
            f, g = f + t, g + u
        c1 = np.longdouble("0.355028053887817239260063186004183176")
        c2 = np.longdouble("0.258819403792806798405183560189203963")
        out[mid] = np.asarray(c1 * f - c2 * g, np.float64)
    hi = x > 2
    if hi.any():
        z = x[hi]
        zeta = 2 / 3 * z ** 1.5
        out[hi] = np.sqrt(z / 3) / np.pi * _k_scaled_host(zeta, 1 / 3) * np.exp(-zeta)
    lo = x < -8
    if lo.any():
        z = -x[lo]
        zeta = 2 / 3 * z ** 1.5
        uk = 1.0
        p, q = np.ones_like(z), np.zeros_like(z)
        for k in range(1, 30):
            uk = uk * (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216 * k)
            term = uk / zeta ** k
            sign = -1.0 if (k // 2) % 2 else 1.0
            if k % 2:
                q = q + sign * term
            else:
                p = p + sign * term
        ph = zeta + np.pi / 4
        out[lo] = (np.sin(ph) * p - np.cos(ph) * q) / (np.sqrt(np.pi) * z ** 0.25)
    out[np.isposinf(x)] = 0.0
    return out


airy_ai = _host_special("airy_ai", _airy_host)
