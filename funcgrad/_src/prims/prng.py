"""Random-number primitives: the Threefry-2x32 block cipher and the gamma sampler's reparameterisation
gradient. funcgrad.random builds keys, splitting and every sampler on these two cards.

- `threefry2x32(key1, key2, x1, x2)`: Threefry-2x32 with 20 rounds (Salmon et al., "Parallel random
  numbers: as easy as 1, 2, 3", SC 2011), the rotation constants and key schedule of Random123 and of
  JAX's `threefry2x32_p`, so the output bits are JAX's. Four uint32 operands of one shape, two uint32
  outputs. The kernel is plain vectorised uint32 arithmetic (wrap-around add, rotate by two shifts and
  an or, xor) written once for any array module, so NumPy and CuPy give the same bits. On NumPy it
  runs over blocks of `_util.BLOCK_SIZE` counters, all 20 rounds of a block in cache and in place, and
  a key broadcast from one value is injected as scalars; elementwise, so the bits never depend on it.
- `random_gamma_grad(a, x)`: dx/da of a Gamma(a, 1) sample x at fixed quantile, the implicit
  reparameterisation gradient -(dF/da) / (dF/dx) with F the regularised lower incomplete gamma
  function P(a, x) (Figurnov et al., "Implicit reparameterization gradients", 2018), as JAX's
  `lax.random_gamma_grad`. With `log_space=True` the second operand is log x and the result is
  d(log x)/da, which stays finite where x underflows (the log-space samples behind beta and dirichlet).

  Kernel, in float64 whatever the operand dtype: dF/dx = x^(a-1) e^-x / Gamma(a) cancels against the
  prefactor of F, leaving
    x <= max(1, a):  F = x^a e^-x / Gamma(a+1) * S,  S = sum_n x^n / ((a+1)...(a+n)),
                     dx/da = -(x/a) * ((log x - psi(a+1)) S + dS/da);
    otherwise:       1 - F = x^a e^-x / Gamma(a) * C,  C the Legendre continued fraction for Q(a, x)
                     (modified Lentz), dx/da = x * ((log x - psi(a)) C + dC/da).
  dS/da and dC/da are carried through the series and the fraction as dual numbers (forward-mode
  differentiation of the exact algorithm), so no finite difference is involved: the relative error is
  a few 1e-15 for moderate a, growing like the condition number of the series / fraction (about
  1e-13 at a = 1e4). Both loops stop when every element has converged (at most 4000 terms, enough
  for a up to about 1e6). x == 0 gives 0; a <= 0, x < 0 or NaN give NaN.

  Neither card has a derivative (differentiable=False): threefry works on bits, and the gamma gradient
  is itself only a first derivative (funcgrad.random raises a clear error for second derivatives of
  gamma samples instead of using its zero derivative).
"""
from __future__ import annotations

import contextlib

import numpy as np

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import _util
from ._util import check_dtype, check_same, type_error
from .shape import elementwise_batch

# --- threefry2x32 ---------------------------------------------------------------------------------

# Rotation distances for the even and odd groups of four rounds, and the Threefish key-schedule parity.
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA


def _threefry_rule(k1: ShapedArray, k2: ShapedArray, x1: ShapedArray, x2: ShapedArray):
    for a in (k1, k2, x1, x2):
        if a.dtype != dtypes.uint32:
            type_error("threefry2x32", "operands must be uint32, got "
                       + ", ".join(b.str_short() for b in (k1, k2, x1, x2)))
    check_same("threefry2x32", k1, k2, x1, x2)
    out = ShapedArray(x1.shape, dtypes.uint32, False)
    return [out, out]


def _is_scalar(a) -> bool:
    """a (1-d) holds one value repeated: a single element or a zero-stride broadcast view."""
    return a.shape[0] <= 1 or a.strides[0] == 0


def _threefry_impl(xp):
    u32 = xp.uint32

    def threefry2x32(k1, k2, x1, x2):
        shape = x1.shape
        if any(a.dtype != u32 or a.shape != shape for a in (k1, k2)) or x1.dtype != u32 or x2.dtype != u32 \
                or x2.shape != shape:
            raise TypeError("bad operands")  # the caller reports it with the shape rule's message
        # Work on 1-d arrays so every operation stays an array operation (NumPy 0-d arithmetic returns
        # scalars, which warn on the intended wrap-around).
        k1, k2, x1, x2 = (a.reshape(-1) for a in (k1, k2, x1, x2))
        n = x1.shape[0]
        out1, out2 = xp.empty(n, u32), xp.empty(n, u32)
        # A key broadcast from one value (the usual case: every sampler hashes many counters under one
        # key) is used as a scalar, so key injection is one scalar add per word.
        scalar_key = _is_scalar(k1) and _is_scalar(k2) and n > 0
        if scalar_key:
            a, b = int(k1[0]), int(k2[0])
            ks = (u32(a), u32(b), u32(a ^ b ^ _PARITY))
            inject = [(ks[(i + 1) % 3], u32((int(ks[(i + 2) % 3]) + i + 1) % 2 ** 32)) for i in range(5)]
        # Cache-sized blocks of counters (NumPy only: on a GPU one pass per operation is the right
        # shape): all 20 rounds of a block run in cache, written straight into the outputs.
        step = max(1, _util.BLOCK_SIZE) if xp is np else max(n, 1)
        tmp = xp.empty(min(step, n), u32)
        for s in range(0, n, step):
            e = min(n, s + step)
            x, y, t = out1[s:e], out2[s:e], tmp[:e - s]
            if scalar_key:
                xp.add(x1[s:e], ks[0], out=x)
                xp.add(x2[s:e], ks[1], out=y)
            else:
                bk1, bk2 = k1[s:e], k2[s:e]
                bks = (bk1, bk2, bk1 ^ bk2 ^ u32(_PARITY))
                xp.add(x1[s:e], bks[0], out=x)
                xp.add(x2[s:e], bks[1], out=y)
            for i in range(5):
                for r in _ROTATIONS[i % 2]:
                    x += y                              # x = x + y (mod 2^32)
                    xp.left_shift(y, u32(r), out=t)     # y = rotl(y, r) ^ x
                    y >>= u32(32 - r)
                    y |= t
                    y ^= x
                if scalar_key:                          # key injection i + 1
                    x += inject[i][0]
                    y += inject[i][1]
                else:
                    x += bks[(i + 1) % 3]
                    y += bks[(i + 2) % 3]
                    y += u32(i + 1)
        return [out1.reshape(shape), out2.reshape(shape)]
    return threefry2x32


threefry2x32_p = Primitive("threefry2x32", impl=_threefry_impl, abstract_eval=_threefry_rule,
                           jvp=[None] * 4, vjp=[None] * 4, multiple_results=True,
                           differentiable=False, weak_type=lambda w, p: False)
threefry2x32_p.batch = elementwise_batch(threefry2x32_p)  # unbatched operands are broadcast


def threefry2x32(key1, key2, x1, x2):
    """Threefry-2x32 (20 rounds) of the counter pairs (x1, x2) under the key (key1, key2): four uint32
    arrays of one shape in, two out (as JAX's threefry2x32_p)."""
    return threefry2x32_p.bind(key1, key2, x1, x2)


# --- random_gamma_grad ----------------------------------------------------------------------------

_MAX_TERMS = 4000
_EPS = 1e-16
_TINY = 1e-300
# Even Bernoulli numbers B_2 .. B_16 for the asymptotic series of digamma.
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)


def _errstate(xp):
    return np.errstate(all="ignore") if xp is np else contextlib.nullcontext()


def _digamma(xp, a):
    """psi(a) for a > 0: the recurrence psi(a) = psi(a + 1) - 1/a up to a >= 10, then Stirling."""
    acc = 0 * a
    for _ in range(10):
        low = a < 10
        acc = acc - xp.where(low, 1 / a, 0.0)
        a = xp.where(low, a + 1, a)
    inv2 = 1 / (a * a)
    series = 0 * a
    for k in reversed(range(1, len(_BERNOULLI) + 1)):
        series = series * inv2 + _BERNOULLI[k - 1] / (2 * k)
    return acc + xp.log(a) - 0.5 / a - series * inv2


def _series_grad(xp, a, x, log_x, log_space):
    """-(1/a) ((log x - psi(a+1)) S + S'), times x unless log_space (the branch x <= max(1, a))."""
    term, dterm = xp.ones_like(a), xp.zeros_like(a)        # t_0 = 1
    s, ds = xp.ones_like(a), xp.zeros_like(a)
    active = xp.ones(a.shape, dtype=bool)
    for n in range(1, _MAX_TERMS + 1):
        r = x / (a + n)                                       # t_n = t_{n-1} * x / (a + n)
        dterm = dterm * r - term * r / (a + n)
        term = term * r
        s = s + term
        ds = ds + dterm
        active = active & (xp.abs(term) > _EPS * xp.abs(s))
        if n % 8 == 0 and not bool(active.any()):
            break
    out = -((log_x - _digamma(xp, a + 1)) * s + ds) / a
    return out if log_space else out * x


def _fraction_grad(xp, a, x, log_x, log_space):
    """x ((log x - psi(a)) C + C'), divided by x if log_space (the branch x > max(1, a)).

    C = 1/(b0 - 1(1-a)/(b1 - 2(2-a)/(b2 - ...))), b_i = x + 2i + 1 - a, by the modified Lentz method
    with every quantity a dual number (value, d/da)."""
    b, db = x + 1 - a, -xp.ones_like(a)
    c, dc = xp.full_like(a, 1 / _TINY), xp.zeros_like(a)
    d, dd = 1 / b, db * -1 / (b * b)
    h, dh = d, dd
    active = xp.ones(a.shape, dtype=bool)
    for i in range(1, _MAX_TERMS + 1):
        an, dan = -i * (i - a), i * xp.ones_like(a)
        b = b + 2                                              # db is unchanged
        # d = 1 / (an * d + b)
        den, dden = an * d + b, dan * d + an * dd + db
        small = xp.abs(den) < _TINY
        den = xp.where(small, _TINY, den)
        dden = xp.where(small, 0.0, dden)
        d, dd = 1 / den, -dden / (den * den)
        # c = b + an / c
        cn, dcn = b + an / c, db + (dan * c - an * dc) / (c * c)
        small = xp.abs(cn) < _TINY
        c, dc = xp.where(small, _TINY, cn), xp.where(small, 0.0, dcn)
        delta, ddelta = c * d, dc * d + c * dd
        h, dh = h * delta, dh * delta + h * ddelta
        active = active & (xp.abs(delta - 1) > _EPS)
        if i % 8 == 0 and not bool(active.any()):
            break
    out = (log_x - _digamma(xp, a)) * h + dh
    return out if log_space else out * x


def _gamma_grad_impl(xp):
    def random_gamma_grad(a, x, *, log_space=False):
        shape, dtype = a.shape, a.dtype
        if x.shape != shape or x.dtype != dtype or dtype.kind != "f":
            raise TypeError("bad operands")  # the caller reports it with the shape rule's message
        a = xp.asarray(a, dtype=np.float64).reshape(-1)
        x = xp.asarray(x, dtype=np.float64).reshape(-1)
        out = xp.full(a.shape, np.nan)
        with _errstate(xp):
            log_x = x if log_space else xp.log(x)
            x = xp.exp(x) if log_space else x
            ok = (a > 0) & (x >= 0) & ~xp.isnan(log_x) & ~xp.isnan(a) & (x < np.inf)
            zero = ok & (x == 0)
            use_fraction = ok & ~zero & (x > 1) & (x > a)
            use_series = ok & ~zero & ~use_fraction
            for mask, branch in ((use_series, _series_grad), (use_fraction, _fraction_grad)):
                if bool(mask.any()):
                    out[mask] = branch(xp, a[mask], x[mask], log_x[mask], log_space)
            # x == 0: dx/da = 0; in log space the limit of -(log x - psi(a + 1))/a is +inf.
            out[zero] = np.inf if log_space else 0.0
        return out.reshape(shape).astype(dtype)
    return random_gamma_grad


def _gamma_grad_rule(a: ShapedArray, x: ShapedArray, *, log_space: bool = False) -> ShapedArray:
    check_dtype("random_gamma_grad", a, "f")
    check_same("random_gamma_grad", a, x)
    if not isinstance(log_space, bool):
        type_error("random_gamma_grad", f"log_space must be a bool, got {log_space!r}")
    return ShapedArray(a.shape, a.dtype, False)


random_gamma_grad_p = Primitive("random_gamma_grad", impl=_gamma_grad_impl, abstract_eval=_gamma_grad_rule,
                                jvp=[None, None], vjp=[None, None], differentiable=False,
                                weak_type=lambda w, p: False)
random_gamma_grad_p.batch = elementwise_batch(random_gamma_grad_p)


def random_gamma_grad(a, x, log_space: bool = False):
    """dx/da of Gamma(a) samples x at fixed quantile (d(log x)/da with log_space, x then holding log x).
    a and x: floating arrays of one shape and dtype."""
    return random_gamma_grad_p.bind(a, x, log_space=bool(log_space))


__all__ = ["threefry2x32", "threefry2x32_p", "random_gamma_grad", "random_gamma_grad_p"]
