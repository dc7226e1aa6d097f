"""NumPy's polynomial helpers on coefficient arrays (highest power first): polyadd, polysub, polymul,
polyder, polyint, polyfit, plus unwrap. Written with funcgrad's functions, so they differentiate."""
from __future__ import annotations

import math
import operator

import numpy as np

from .._src.core import dtypes
from .._src.core.trace import Tracer
from .._src.prims import elementwise as ew
from . import _ufuncs as u
from . import _ufuncs as _uf  # (polydiv's parameter is named u, as in NumPy)
from . import linalg
from ._creation import arange, eye, zeros
from ._manipulation import concatenate, expand_dims
from ._numerical import vander
from ._promote import asarray_any, normalize_index, promote_dtypes
from ._reductions import sum as _sum
from ._signal import convolve
from ._sorting import cumsum


def _poly(p, op):
    x = asarray_any(p)
    if x.ndim != 1:
        raise ValueError(f"{op}: polynomial coefficients must be 1-d, got shape {tuple(x.shape)}")
    return x


def _pad_front(x, n):
    return x if n <= 0 else concatenate([zeros(n, x.dtype), x])


def polyadd(a1, a2):
    """The sum of two polynomials."""
    a, b = promote_dtypes(_poly(a1, "polyadd"), _poly(a2, "polyadd"))
    n = max(a.shape[0], b.shape[0])
    return u.add(_pad_front(a, n - a.shape[0]), _pad_front(b, n - b.shape[0]))


def polysub(a1, a2):
    """The difference of two polynomials."""
    a, b = promote_dtypes(_poly(a1, "polysub"), _poly(a2, "polysub"))
    n = max(a.shape[0], b.shape[0])
    return u.subtract(_pad_front(a, n - a.shape[0]), _pad_front(b, n - b.shape[0]))


def polymul(a1, a2, *, trim_leading_zeros: bool = False):
    """The product of two polynomials (the convolution of their coefficients). With trim_leading_zeros
    (concrete coefficients only), leading zeros of the result are removed, as numpy.polymul does."""
    out = convolve(_poly(a1, "polymul"), _poly(a2, "polymul"))
    return _trim_leading(out, "polymul") if trim_leading_zeros else out


def _trim_leading(x, op, rtol: float = 0.0):
    """x without its leading zeros (|c| <= rtol * max|x|), keeping at least one element; needs concrete x."""
    if isinstance(x, Tracer) and x.val is None:
        raise TypeError(f"{op}: trimming leading zeros needs concrete coefficients (the result's length would "
                        "depend on their values); under jit leave the trimming option off")
    v = np.asarray(x)
    tol = rtol * float(np.max(np.abs(v))) if v.size else 0.0
    k = 0
    while k < v.size - 1 and abs(v[k]) <= tol:
        k += 1
    return x[k:]


def polydiv(u, v, *, trim_leading_zeros: bool = False):
    """(quotient, remainder) of polynomial division u / v, as jax.numpy.polydiv: the remainder keeps u's
    length (its leading entries are the zeros the division leaves) unless trim_leading_zeros, which drops
    them as numpy.polydiv does (concrete coefficients only). Results are inexact."""
    a, b = promote_dtypes(_poly(u, "polydiv"), _poly(v, "polydiv"))
    if a.dtype.kind not in "fc":
        dt = dtypes.to_inexact(a.dtype)
        a, b = a.astype(dt), b.astype(dt)
    m, n = a.shape[0] - 1, b.shape[0] - 1
    if b.shape[0] == 0:
        raise ValueError("polydiv: the divisor has no coefficients")
    scale = _uf.divide(1.0, b[0])
    q = zeros(max(m - n + 1, 1), a.dtype)
    r = a
    for k in range(m - n + 1):
        d = scale * r[k]
        q = q.at[k].set(d)
        r = r.at[k:k + n + 1].add(-d * b)
    if trim_leading_zeros:
        r = _trim_leading(r, "polydiv", rtol=1e-14)
    return q, r


def roots(p, *, strip_zeros: bool = True):
    """The roots of a polynomial (highest power first) as complex numbers: the eigenvalues of its companion
    matrix, as jax.numpy.roots. strip_zeros removes leading zero coefficients first (concrete input only);
    without it a leading zero gives an infinite (NaN) root."""
    x = _poly(p, "roots")
    if x.dtype.kind not in "fc":
        x = x.astype(dtypes.to_inexact(x.dtype))
    if strip_zeros:
        x = _trim_leading(x, "roots")
        if x.shape[0] == 1 and float(np.abs(np.asarray(x[0]))) == 0.0:
            x = x[:0]
    n = x.shape[0] - 1
    cdt = np.result_type(x.dtype, np.complex64)
    if n < 1:
        return zeros((0,), cdt)
    top = expand_dims(_uf.negative(x[1:]) / x[0], 0)
    below = concatenate([eye(n - 1, dtype=x.dtype), zeros((n - 1, 1), x.dtype)], axis=1)
    return linalg.eigvals(concatenate([top, below], axis=0)).astype(cdt)


def polyder(p, m=1):
    """The m-th derivative of a polynomial."""
    m = operator.index(m)
    if m < 0:
        raise ValueError("polyder: order of derivative must be positive (see polyint)")
    x = _poly(p, "polyder")  # integer coefficients stay integers, as NumPy
    for _ in range(m):
        n = x.shape[0] - 1
        if n <= 0:
            return x[:0]
        x = u.multiply(x[:-1], ew.convert_element_type(arange(n, 0, -1), x.dtype))
    return x


def polyint(p, m=1, k=None):
    """The m-th antiderivative of a polynomial, with integration constants k (default 0)."""
    m = operator.index(m)
    if m < 0:
        raise ValueError("polyint: order of integral must be positive (see polyder)")
    x = _poly(p, "polyint")
    if not dtypes.is_inexact(x.dtype):
        x = ew.convert_element_type(x, dtypes.defaults.float_)
    ks = [0.0] * m if k is None else ([k] * m if not hasattr(k, "__len__") else list(k))
    if len(ks) != m:
        raise ValueError("polyint: k must be a scalar or a rank-1 array of length 1 or m")
    for i in range(m):
        n = x.shape[0]
        x = concatenate([u.divide(x, ew.convert_element_type(arange(n, 0, -1), x.dtype)),
                         u.add(zeros(1, x.dtype), ks[i])])
    return x


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares polynomial fit of degree deg to points (x, y), as numpy.polyfit (coefficients,
    highest power first; y may be 2-d for several fits). full=True also returns (residuals, rank,
    singular values, rcond); cov is not supported."""
    if cov:
        raise NotImplementedError("polyfit: cov=True is not supported")
    deg = operator.index(deg)
    if deg < 0:
        raise ValueError("polyfit: expected deg >= 0")
    xs, ys = asarray_any(x), asarray_any(y)
    if xs.ndim != 1 or ys.ndim not in (1, 2) or xs.shape[0] != ys.shape[0]:
        raise TypeError(f"polyfit: expected 1-d x and 1- or 2-d y of the same length, got {tuple(xs.shape)} "
                        f"and {tuple(ys.shape)}")
    xs = xs if dtypes.is_inexact(xs.dtype) else ew.convert_element_type(xs, dtypes.defaults.float_)
    ys = ew.convert_element_type(ys, xs.dtype) if not dtypes.is_inexact(ys.dtype) else ys
    lhs = vander(xs, deg + 1)
    rhs = ys
    if w is not None:
        ww = asarray_any(w)
        lhs = u.multiply(lhs, expand_dims(ww, 1))
        rhs = u.multiply(rhs, ww if rhs.ndim == 1 else expand_dims(ww, 1))
    if rcond is None:
        rcond = xs.shape[0] * float(np.finfo(xs.dtype).eps)
    scale = u.sqrt(_colsum(u.multiply(lhs, lhs)))  # columns scaled to unit norm, for conditioning
    scale = u.where(u.equal(scale, 0), u.add(ew.zeros_like(scale), 1.0), scale)
    c, resids, rank, s = linalg.lstsq(u.divide(lhs, scale), rhs, rcond)
    c = u.divide(c, scale if c.ndim == 1 else expand_dims(scale, 1))
    return (c, resids, rank, s, rcond) if full else c


def _colsum(v):
    return _sum(v, axis=0)


def unwrap(p, discont=None, axis=-1, *, period=2 * math.pi):
    """p with jumps larger than max(discont, period/2) along `axis` undone by adding multiples of
    period, as numpy.unwrap."""
    x = asarray_any(p)
    x = x if dtypes.is_inexact(x.dtype) else ew.convert_element_type(x, dtypes.defaults.float_)
    ax = normalize_index(axis, x.ndim, "unwrap")
    half = period / 2
    discont = half if discont is None else max(discont, half)
    idx = [slice(None)] * x.ndim
    lo, hi = list(idx), list(idx)
    lo[ax], hi[ax] = slice(None, -1), slice(1, None)
    dd = u.subtract(x[tuple(hi)], x[tuple(lo)])
    ddmod = u.subtract(u.remainder(u.add(dd, half), period), half)
    ddmod = u.where(u.logical_and(u.equal(ddmod, -half), u.greater(dd, 0)), u.add(ew.zeros_like(ddmod), half),
                    ddmod)
    correction = u.subtract(ddmod, dd)
    correction = u.where(u.less(u.absolute(dd), discont), ew.zeros_like(correction), correction)
    first = [slice(None)] * x.ndim
    first[ax] = slice(0, 1)
    total = concatenate([ew.zeros_like(x[tuple(first)]), cumsum(correction, axis=ax)], ax)
    return u.add(x, total)
