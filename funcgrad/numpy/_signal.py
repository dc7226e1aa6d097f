"""1-D signal functions with NumPy's semantics: convolve, correlate and interp.

convolve and correlate are one conv_general_dilated each (a 1-D cross-correlation with full padding,
then a slice for the mode), so they are differentiable in both arguments and batch under vmap.
interp is a branchless binary search (log2(len(xp)) gathers and selects) followed by NumPy's formula,
so it is differentiable in x, xp and fp and works under jit.

dtypes: convolve/correlate keep NumPy's promoted dtype (bools compute as integers and give bool).
interp computes in float64 in NumPy; funcgrad uses the default float dtype there (float32 unless x64
is enabled; float64 when an input is float64; complex when fp is complex).
"""
from __future__ import annotations

import numpy as np

from .._src.core import dtypes
from .._src.prims import elementwise as ew
from .._src.prims import shape as sh
from .._src.prims.conv import conv_general_dilated
from .._src.prims.indexing import gather
from ._creation import array
from ._products import _conj as conj
from ._manipulation import _need_concrete, _take_axis
from ._promote import asarray_any, broadcast_to, is_python_scalar, promote_dtypes, scalar_array
from ._ufuncs import _ComplexUndefinedError

_MODES = {"valid": 0, "same": 1, "full": 2, 0: 0, 1: 1, 2: 2}


def _mode(mode) -> int:
    try:
        return _MODES[mode]
    except (KeyError, TypeError):
        raise ValueError("Use one of 'valid', 'same', or 'full' for convolve/correlate mode") from None


def _conj(x):
    return conj(x)


def _full_correlation(a, w):
    """c[k] = sum_n a[n + k - (M - 1)] * w[n] for k in [0, N + M - 1): one 1-D convolution."""
    n, m = a.shape[0], w.shape[0]
    is_bool = a.dtype == dtypes.bool_
    if is_bool:
        a, w = ew.convert_element_type(a, dtypes.int64), ew.convert_element_type(w, dtypes.int64)
    lhs = sh.reshape(a, (1, 1, n))
    rhs = sh.reshape(w, (1, 1, m))
    out = sh.reshape(conv_general_dilated(lhs, rhs, (1,), [(m - 1, m - 1)]), (n + m - 1,))
    if is_bool:
        out = ew.ne(out, sh.full(out.shape, 0, out.dtype))
    return out


def _prep(a, v, op, first, second, preferred_element_type=None):
    x, y = (array(z) if is_python_scalar(z) else asarray_any(z) for z in (a, v))  # NumPy: strong arrays
    for z in (x, y):
        if z.ndim > 1:
            raise ValueError("object too deep for desired array")
    if x.ndim == 0 or y.ndim == 0:
        if op == "correlate":
            raise ValueError("object of too small depth for desired array")
        x, y = (sh.reshape(z, (1,)) if z.ndim == 0 else z for z in (x, y))
    if x.shape[0] == 0:
        raise ValueError(first)
    if y.shape[0] == 0:
        raise ValueError(second)
    x, y = promote_dtypes(x, y)
    if preferred_element_type is None and not dtypes.is_inexact(x.dtype):
        # (as jax.numpy: promoted to inexact, NumPy's default for convolutions, unless a result type is asked)
        dt = dtypes.to_inexact(x.dtype)
        x, y = ew.convert_element_type(x, dt), ew.convert_element_type(y, dt)
    return x, y


def _crop(full, n, m, mode, same_start):
    if mode == 2:
        return full
    if mode == 1:
        start, length = same_start, max(n, m)
    else:
        start, length = min(n, m) - 1, abs(n - m) + 1
    return sh.slice(full, (start,), (start + length,))


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """Cross-correlation c[k] = sum_n a[n + k] * conj(v[n]) of two 1-D sequences, as jax.numpy.correlate
    (modes 'valid' (default), 'same', 'full'; integer and bool input computed in the inexact dtype unless
    preferred_element_type is given)."""
    m_ = _mode(mode)
    x, y = _prep(a, v, "correlate", "first array argument cannot be empty",
                 "second array argument cannot be empty", preferred_element_type)
    n, m = x.shape[0], y.shape[0]
    full = _full_correlation(x, _conj(y))
    same_start = (m - 1) // 2 if n >= m else n // 2
    return _crop(full, n, m, m_, same_start)


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """Discrete linear convolution of two 1-D sequences, as jax.numpy.convolve (modes 'full' (default),
    'same', 'valid'; integer and bool input computed in the inexact dtype unless preferred_element_type is
    given)."""
    m_ = _mode(mode)
    x, y = _prep(a, v, "convolve", "a cannot be empty", "v cannot be empty", preferred_element_type)
    n, m = x.shape[0], y.shape[0]
    full = _full_correlation(x, sh.rev(y, (0,)))
    return _crop(full, n, m, m_, (min(n, m) - 1) // 2)


# --- interp ---------------------------------------------------------------------------------------------

def _take(arr, idx):
    """arr[idx] for a 1-D arr and an integer index array (clamped into range)."""
    return gather(arr, sh.reshape(idx, tuple(idx.shape) + (1,)), (0,))


def _count_le(xp, x):
    """For each x, how many elements of the sorted xp are <= x (numpy.searchsorted(xp, x, 'right')):
    a branchless binary search."""
    m = xp.shape[0]
    pos = sh.full(x.shape, 0, dtypes.int64)
    step = 1 << (m.bit_length() - 1) if m else 0
    while step:
        cand = ew.add(pos, sh.full(x.shape, step, dtypes.int64))
        in_range = ew.le(cand, sh.full(x.shape, m, dtypes.int64))
        probe = _take(xp, ew.sub(cand, sh.full(x.shape, 1, dtypes.int64)))
        ok = ew.select(in_range, ew.le(probe, x), in_range)
        pos = ew.select(ok, cand, pos)
        step >>= 1
    return pos


def _floor_mod(x, p):
    """x mod p for positive p, as NumPy's float % (fmod, then + p where the signs differ)."""
    if hasattr(ew, "rem"):
        r = ew.rem(x, p)
    else:  # pragma: no cover - older primitive sets
        r = ew.sub(x, ew.mul(ew.convert_element_type(ew.convert_element_type(ew.div(x, p), dtypes.int64),
                                                     x.dtype), p))
    neg = ew.lt(r, ew.zeros_like(r))
    return ew.select(neg, ew.add(r, p), r)


def interp(x, xp, fp, left=None, right=None, period=None):
    """One-dimensional piecewise-linear interpolation of the points (xp, fp) at x, as numpy.interp.

    xp must be increasing (not checked, as in NumPy), or with `period`, is sorted here (xp must then be
    concrete). left/right: the values below xp[0] / above xp[-1] (default fp[0] / fp[-1])."""
    xs, xps, fps = asarray_any(x), asarray_any(xp), asarray_any(fp)
    if xps.ndim != 1 or fps.ndim != 1:
        raise ValueError("object too deep for desired array" if max(xps.ndim, fps.ndim) > 1
                         else "object of too small depth for desired array")
    if xps.shape[0] != fps.shape[0]:
        raise ValueError("fp and xp are not of the same length.")
    if xps.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    # NumPy computes in float64 (complex128 for complex fp): here the default float, or float64 if given
    keys = [(xs.dtype, xs.weak_type), (xps.dtype, xps.weak_type), (dtypes.defaults.float_, False)]
    real_dt, _ = dtypes.result_type(*keys)
    real_dt = real_dt if not dtypes.is_complex(real_dt) else dtypes.float64
    f_dt, _ = dtypes.result_type((fps.dtype, fps.weak_type), (real_dt, False))
    if dtypes.is_complex(xs.dtype) or dtypes.is_complex(xps.dtype):
        raise _ComplexUndefinedError("interp: x and xp must be real")
    xs, xps = ew.convert_element_type(xs, real_dt), ew.convert_element_type(xps, real_dt)
    fps = ew.convert_element_type(fps, f_dt)
    if period is not None:
        if is_python_scalar(period) and period == 0:
            raise ValueError("period must be a non-zero value")
        p = ew.abs(asarray_any(period)) if not is_python_scalar(period) else abs(period)
        p = scalar_array(p, real_dt, False) if is_python_scalar(p) else ew.convert_element_type(p, real_dt)
        left = right = None
        xs = _floor_mod(xs, sh.broadcast_in_dim(p, xs.shape, ()))
        xps = _floor_mod(xps, sh.broadcast_in_dim(p, xps.shape, ()))
        order = np.argsort(np.asarray(_need_concrete(xps, "interp", "xp (with period)")), kind="stable")
        xps, fps = _take_axis(xps, order, 0), _take_axis(fps, order, 0)
        m = xps.shape[0]
        p1 = sh.reshape(p, (1,))
        xps = sh.concatenate([ew.sub(sh.slice(xps, (m - 1,), (m,)), p1), xps,
                              ew.add(sh.slice(xps, (0,), (1,)), p1)], 0)
        fps = sh.concatenate([sh.slice(fps, (m - 1,), (m,)), fps, sh.slice(fps, (0,), (1,))], 0)
    shape = tuple(xs.shape)
    lval = None if left is None else _fill(left, f_dt, shape)
    rval = None if right is None else _fill(right, f_dt, shape)
    if not dtypes.is_complex(f_dt):
        return _interp_real(xs, xps, fps, lval, rval)
    # NumPy interpolates the real and imaginary parts separately (and gives nan+0j at nan x)
    parts = [_interp_real(xs, xps, _part(fps, k), None if lval is None else _part(lval, k),
                          None if rval is None else _part(rval, k)) for k in (0, 1)]
    c = [ew.convert_element_type(p_, f_dt) for p_ in parts]
    res = ew.add(c[0], ew.mul(c[1], sh.full(shape, 1j, f_dt)))
    if xps.shape[0] > 1:
        res = ew.select(ew.ne(xs, xs), ew.convert_element_type(xs, f_dt), res)
    return res


def _part(z, k):
    """The real (k=0) or imaginary (k=1) part of a complex array."""
    real_dt = dtypes.float32 if z.dtype == dtypes.complex64 else dtypes.float64
    if k == 1:
        z = ew.mul(z, sh.full(z.shape, -1j, z.dtype))  # Re(-i z) = Im(z)
    return ew.convert_element_type(z, real_dt)


def _interp_real(xs, xps, fps, lval, rval):
    """numpy.interp's formula (arr_interp in NumPy's C code) for real fp."""
    m = xps.shape[0]
    shape = tuple(xs.shape)
    fps = ew.convert_element_type(fps, xs.dtype) if fps.dtype != xs.dtype else fps
    first = lambda arr: sh.broadcast_in_dim(sh.reshape(sh.slice(arr, (0,), (1,)), ()), shape, ())  # noqa: E731
    last = lambda arr: sh.broadcast_in_dim(sh.reshape(sh.slice(arr, (m - 1,), (m,)), ()), shape, ())  # noqa: E731
    lval = first(fps) if lval is None else ew.convert_element_type(lval, fps.dtype)
    rval = last(fps) if rval is None else ew.convert_element_type(rval, fps.dtype)
    if m == 1:
        res = first(fps)
    else:
        pos = _count_le(xps, xs)
        j = ew.sub(pos, sh.full(shape, 1, dtypes.int64))
        jc = ew.min(ew.max(j, sh.full(shape, 0, dtypes.int64)), sh.full(shape, m - 2, dtypes.int64))
        j1 = ew.add(jc, sh.full(shape, 1, dtypes.int64))
        x0, x1 = _take(xps, jc), _take(xps, j1)
        f0, f1 = _take(fps, jc), _take(fps, j1)
        dx = ew.sub(x1, x0)
        # dx == 0 only where a select below overrides the formula: keep it finite (and its gradient)
        dx = ew.select(ew.eq(dx, ew.zeros_like(dx)), ew.ones_like(dx), dx)
        slope = ew.div(ew.sub(f1, f0), dx)
        res = ew.add(ew.mul(slope, ew.sub(xs, x0)), f0)
        nan = ew.ne(res, res)  # then try from the other end, and if still nan with f0 == f1 use f0
        res = ew.select(nan, ew.add(ew.mul(slope, ew.sub(xs, x1)), f1), res)
        nan = ew.ne(res, res)
        res = ew.select(ew.select(nan, ew.eq(f0, f1), nan), f0, res)
        # At a knot x == xp[j] the value is fp[j] exactly (NumPy's); where the segment's formula already
        # gives it, the formula is kept so that the derivative is the slope of the segment to the right of
        # the knot (of the last segment at x == xp[-1]), as jax.numpy.interp's
        res = ew.select(ew.bitwise_and(ew.eq(x0, xs), ew.ne(res, f0)), f0, res)
        end = ew.add(ew.mul(slope, ew.sub(xs, x1)), f1)
        at_end = ew.eq(pos, sh.full(shape, m, dtypes.int64))
        res = ew.select(at_end, ew.select(ew.eq(end, last(fps)), end, last(fps)), res)
    res = ew.select(ew.lt(xs, first(xps)), lval, res)
    res = ew.select(ew.gt(xs, last(xps)), rval, res)
    if m > 1:
        res = ew.select(ew.ne(xs, xs), xs, res)  # nan x gives nan
    return res


def _fill(v, dt, shape):
    if is_python_scalar(v) or isinstance(v, np.generic):
        return sh.full(shape, complex(v) if dtypes.is_complex(dt) else float(v), dt)
    a = asarray_any(v)
    if a.ndim != 0:
        raise TypeError("interp: left and right must be scalars")
    return broadcast_to(ew.convert_element_type(a, dt), shape)


__all__ = ["convolve", "correlate", "interp"]
