"""Statistics with NumPy semantics: var/std, ptp, average, median/quantile/percentile, the nan-ignoring
reductions, any/all, histograms and counting, cov/corrcoef, and a numerically stable logsumexp.

Conventions (those of funcgrad.numpy): integer and bool data are averaged in the default float dtype
(NumPy: float64); float16 accumulates in float32 and returns float16. Everything is built on
primitives, so it differentiates (var, std, median, quantile through the sort's permutation,
logsumexp with the softmax as its gradient), batches and compiles. Data-dependent sizes (bincount
without length=, histogram edges from bins="auto") need concrete input.

`logsumexp` is not a NumPy name: it is importable from here (SciPy's signature) for scipy.special.
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from .._src.core import dtypes
from .._src.core.array import ArrayBase, to_array
from .._src.core.errors import ConcretizationError, user_location
from .._src.core.trace import concrete_value
from .._src.prims import cumulative as cum
from .._src.prims import elementwise as ew
from .._src.prims import reduction as red
from .._src.prims import shape as sh
from .._src.prims.indexing import gather_p, scatter_p
from . import _reductions as _r
from . import _sorting as _s
from ._creation import linspace
from ._products import _conj, matmul
from ._manipulation import concatenate
from ._promote import asarray_any, broadcast_to, result_dtype, scalar_array
from ._reductions import _keep, normalize_axis
from ._ufuncs import _ComplexUndefinedError, _to_inexact, subtract

INDEX = dtypes.int64


# --- helpers --------------------------------------------------------------------------------------

def _const(shape, value, dtype):
    return sh.full(tuple(shape), value, dtype)


def _isnan(x):
    return _s._isnan(x)


def _real_dtype(dt):
    return {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}.get(dt, dt)


def _calc_dtype(x, dtype, op):
    """(computation dtype, result dtype) for a float-valued statistic of x, as NumPy picks them."""
    if dtype is not None:
        dt = dtypes.canonicalize(dtype)
        return (dt if dtypes.is_inexact(dt) else dtypes.defaults.float_), dt
    if dtypes.is_inexact(x.dtype):
        return (dtypes.float32 if x.dtype == dtypes.float16 else x.dtype), x.dtype
    dt = dtypes.to_inexact(x.dtype)  # as JAX: float32 for bools and ints up to 32 bits
    return dt, dt


def _bcast_mask(where, x):
    w = asarray_any(where)
    return broadcast_to(_s._truthy(w), x.shape)


def _count(x, axes, mask, dtype, keepdims=True):
    """Number of entries reduced over `axes` (a Python int, or an array when there is a mask)."""
    if mask is None:
        return math.prod(x.shape[a] for a in axes)
    c = red.reduce_sum(ew.convert_element_type(mask, dtype), axes)
    return _keep(c, axes, keepdims)


def _masked_sum(x, axes, mask, keepdims):
    if mask is not None:
        x = ew.select(mask, x, ew.zeros_like(x))
    return _keep(red.reduce_sum(x, axes), axes, keepdims)


def _div(num, den):
    """num / den for den a Python number or an array (broadcast), keeping num's dtype."""
    if not hasattr(den, "shape"):
        return ew.div(num, _const(num.shape, den, num.dtype))
    return ew.div(num, broadcast_to(ew.convert_element_type(den, num.dtype), num.shape))


def _abs2(d):
    """|d|^2 in d's real dtype."""
    if not dtypes.is_complex(d.dtype):
        return ew.mul(d, d)
    rdt = _real_dtype(d.dtype)
    re = ew.convert_element_type(d, rdt)
    im = ew.convert_element_type(ew.mul(d, broadcast_to(scalar_array(-1j, d.dtype, False), d.shape)), rdt)
    return ew.add(ew.mul(re, re), ew.mul(im, im))


def _no_out(out, op):
    if out is not None:
        raise TypeError(f"{op}: out= is not supported: funcgrad arrays are immutable; use the return value")


# --- var, std, ptp, average -----------------------------------------------------------------------

def _ddof(ddof, correction, op):
    """The degrees-of-freedom correction: NumPy's ddof or the Array API's correction (default 0.0)."""
    if correction is not None and correction != 0:
        if ddof != 0:
            raise ValueError(f"{op}: ddof and correction can't be provided simultaneously.")
        return correction
    return ddof


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=0.0):
    """Variance over the given axes, as numpy.var (ddof or the Array API's correction; complex input
    gives a real result; where= masks entries)."""
    _no_out(out, "var")
    ddof = _ddof(ddof, correction, "var")
    x = asarray_any(a)
    axes = normalize_axis(axis, x.ndim, "var")
    if dtype is not None and dtypes.is_complex(x.dtype) and not dtypes.is_complex(dtypes.canonicalize(dtype)):
        raise ValueError(f"var: a real dtype= ({np.dtype(dtype)}) for the variance of complex input is not "
                         "supported (as jax.numpy.var); pass a complex dtype or take the variance of x.real")
    if dtype is not None and not dtypes.is_inexact(dtypes.canonicalize(dtype)):
        return _integer_var(x, axes, dtypes.canonicalize(dtype), ddof, keepdims, where, mean)
    real_input = not dtypes.is_complex(x.dtype)
    calc, res = _calc_dtype(x, dtype, "var")
    x = ew.convert_element_type(x, calc)
    mask = None if where is None else _bcast_mask(where, x)
    rcalc = _real_dtype(calc)
    n = _count(x, axes, mask, rcalc)
    if mean is not None:
        m = broadcast_to(ew.convert_element_type(asarray_any(mean), calc), _keep_shape(x, axes))
    else:
        m = _div(_masked_sum(x, axes, mask, True), n if not hasattr(n, "shape") else
                 ew.convert_element_type(n, calc))
    d = ew.sub(x, broadcast_to(m, x.shape))
    ss = _masked_sum(_abs2(d), axes, mask, keepdims)
    # ss / (n - ddof), NaN where n - ddof <= 0, as jax.numpy (NumPy's max(n - ddof, 0) gives inf for a
    # nonzero sum); the division stays unguarded as JAX's, so its derivatives there are JAX's too
    if hasattr(n, "shape"):
        den = ew.sub(n, _const(n.shape, ddof, rcalc))
        den = den if keepdims else sh.reshape(den, ss.shape)
        v = ew.select(ew.gt(den, _const(den.shape, 0, rcalc)), ew.div(ss, den), _const(ss.shape, np.nan, ss.dtype))
    else:
        v = _div(ss, n - ddof)
        if n - ddof <= 0:
            v = ew.select(_const(v.shape, False, dtypes.bool_), v, _const(v.shape, np.nan, v.dtype))
    # (a complex dtype= for real input gives a complex result, as jax.numpy: the real variance cast to it)
    return ew.convert_element_type(v, res if dtype is not None and dtypes.is_complex(res) and
                                   real_input else _real_dtype(res))


def _integer_var(x, axes, dt, ddof, keepdims, where, mean):
    """var with an integer dtype=, as jax.numpy computes it: in that dtype throughout (the mean, the sum of
    squares and the division by n - ddof truncate), then NaN where n - ddof <= 0, which makes the result a
    weakly typed float of the default float dtype."""
    if dt == dtypes.bool_:
        raise TypeError("var: div does not accept dtype bool at position 0. Accepted dtypes at position 0 are "
                        "subtypes of integer, floating, complexfloating (jax.numpy.var computes in dtype=; pass "
                        "an integer or inexact dtype)")
    x = ew.convert_element_type(x, dt)
    mask = None if where is None else _bcast_mask(where, x)
    n = _count(x, axes, mask, dt)
    n = _const((), n, dt) if not hasattr(n, "shape") else n
    if mean is not None:
        m = broadcast_to(ew.convert_element_type(asarray_any(mean), dt), _keep_shape(x, axes))
    else:
        s = _masked_sum(x, axes, mask, True)
        m = ew.div(s, broadcast_to(n, s.shape))
    d = ew.sub(x, broadcast_to(m, x.shape))
    ss = _masked_sum(ew.mul(d, d), axes, mask, keepdims)
    den = ew.sub(n, _const(n.shape, ddof, dt))
    den = broadcast_to(den if keepdims or not den.ndim else sh.reshape(den, ss.shape), ss.shape)
    fdt = dtypes.defaults.float_
    v = ew.convert_element_type(ew.div(ss, den), fdt, True)
    return ew.select(ew.gt(den, _const(den.shape, 0, dt)), v, ew.convert_element_type(
        _const(ss.shape, np.nan, fdt), fdt, True))


def _keep_shape(x, axes):
    return tuple(1 if i in axes else s for i, s in enumerate(x.shape))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=0.0):
    """Standard deviation over the given axes (sqrt of var), as numpy.std."""
    _no_out(out, "std")
    if dtype is not None and not dtypes.is_inexact(dtypes.canonicalize(dtype)):
        raise ValueError(f"dtype argument to std must be inexact (as jax.numpy.std); got {np.dtype(dtype)}")
    v = var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction)
    return ew.sqrt(v)


def ptp(a, axis=None, out=None, keepdims=False):
    """Range (maximum - minimum) over the given axes, as numpy.ptp (integers wrap around)."""
    _no_out(out, "ptp")
    x = asarray_any(a)
    return subtract(_r.max(x, axis, keepdims=keepdims), _r.min(x, axis, keepdims=keepdims))


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """(Weighted) average over the given axes, as numpy.average; returned=True also gives the sum of
    the weights (broadcast to the result's shape)."""
    x = asarray_any(a)
    axes = normalize_axis(axis, x.ndim, "average")
    if weights is None:
        avg = _r.mean(x, axis, keepdims=keepdims)
        scl = _const(avg.shape, math.prod(x.shape[i] for i in axes), avg.dtype)
    else:
        w = asarray_any(weights)
        # as JAX: the data's and weights' promoted dtype made inexact (int8 with int32 weights: float32)
        dt = dtypes.to_inexact(dtypes.result_type((x.dtype, x.weak_type), (w.dtype, w.weak_type))[0])
        if w.shape != x.shape:
            if axis is None:
                raise TypeError("average: Axis must be specified when shapes of a and weights differ.")
            given = [operator.index(a) % x.ndim for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]
            if tuple(w.shape) != tuple(x.shape[i] for i in given):
                raise ValueError("average: Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            w = sh.transpose(w, [int(i) for i in np.argsort(given)])
            w = broadcast_to(sh.reshape(w, tuple(s if i in axes else 1 for i, s in enumerate(x.shape))), x.shape)
        x, w = ew.convert_element_type(x, dt), ew.convert_element_type(w, dt)
        scl = _keep(red.reduce_sum(w, axes), axes, keepdims)
        c = concrete_value(scl)
        if c is not None and np.any(np.asarray(c) == 0):
            raise ZeroDivisionError("average: Weights sum to zero, can't be normalized")
        avg = ew.div(_keep(red.reduce_sum(ew.mul(x, w), axes), axes, keepdims), scl)
    if returned:
        return avg, broadcast_to(ew.convert_element_type(scl, avg.dtype), avg.shape)
    return avg


# --- quantiles ------------------------------------------------------------------------------------

# NumPy's continuous methods as (alpha, beta) of virtual index n*q + alpha + q*(1 - alpha - beta) - 1.
_CONTINUOUS = {"linear": (1.0, 1.0), "hazen": (0.5, 0.5), "weibull": (0.0, 0.0),
               "median_unbiased": (1 / 3, 1 / 3), "normal_unbiased": (3 / 8, 3 / 8),
               "interpolated_inverted_cdf": (0.0, 1.0)}
_DISCRETE = ("lower", "higher", "nearest", "midpoint")
_UNSUPPORTED = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation")


def _floor(y):
    t = ew.convert_element_type(ew.convert_element_type(y, INDEX), y.dtype)
    return ew.sub(t, ew.convert_element_type(ew.gt(t, y), y.dtype))


def _round_half_even(y):
    f = _floor(y)
    frac = ew.sub(y, f)
    half = _const(y.shape, 0.5, y.dtype)
    one = _const(y.shape, 1, y.dtype)
    two = _const(y.shape, 2, y.dtype)
    f_odd = ew.ne(ew.sub(f, ew.mul(_floor(ew.div(f, two)), two)), ew.zeros_like(f))
    up = _s._or(ew.gt(frac, half), _s._and(ew.eq(frac, half), f_odd))
    return ew.select(up, ew.add(f, one), f)


def _take_last(s, idx):
    """s[b..., idx[q..., b...]]: read the sorted last axis of s (shape B + (N,)) at int64 idx (Q + B)."""
    nb = s.ndim - 1
    nq = idx.ndim - nb
    cols = [sh.broadcasted_iota(INDEX, idx.shape, nq + d) for d in range(nb)] + [idx]
    rows = sh.concatenate([sh.expand_dims(c, (idx.ndim,)) for c in cols], idx.ndim)
    return gather_p.bind(s, rows, axes=tuple(range(s.ndim)))


def _lerp(a, b, t):
    """NumPy's _lerp: a + (b - a) t, computed from b's side for t >= 0.5."""
    diff = ew.sub(b, a)
    one = _const(t.shape, 1, t.dtype)
    return ew.select(ew.ge(t, _const(t.shape, 0.5, t.dtype)), ew.sub(b, ew.mul(diff, ew.sub(one, t))),
                     ew.add(a, ew.mul(diff, t)))


def _quantile(a, q, axis, method, keepdims, omit_nan: bool, op: str, scale=1.0):
    if method not in _CONTINUOUS and method not in _DISCRETE:
        if method in _UNSUPPORTED:
            raise NotImplementedError(f"{op}: method {method!r} is not supported by funcgrad")
        raise ValueError(f"{op}: {method!r} is not a valid method. Use one of: "
                         f"{sorted(_CONTINUOUS) + list(_DISCRETE) + list(_UNSUPPORTED)}")
    x = asarray_any(a)
    if dtypes.is_complex(x.dtype):
        raise _ComplexUndefinedError(f"{op}: a must be an array of real numbers")
    if x.ndim == 0 and (axis is None or axis == ()):  # as jax.numpy: one element, kept as shape (1,)
        x, axis = sh.reshape(x, (1,)), None
    axes = normalize_axis(axis, x.ndim, op)
    rest = [d for d in range(x.ndim) if d not in axes]
    bshape = tuple(x.shape[d] for d in rest)
    N = math.prod(x.shape[d] for d in axes)
    flat = sh.reshape(sh.transpose(x, rest + list(axes)), bshape + (N,))
    discrete_int = method in ("lower", "higher", "nearest") and not dtypes.is_inexact(x.dtype)
    calc = dtypes.to_inexact(x.dtype)
    if isinstance(q, ArrayBase):  # an array operand: promoted with the data, divided by `scale` here
        if not dtypes.is_inexact(q.dtype):
            q = ew.convert_element_type(q, dtypes.defaults.float_)
        calc = result_dtype(ew.convert_element_type(x, calc), q)[0]
        qv = ew.convert_element_type(q, calc)
        if scale != 1.0:
            qv = ew.div(qv, _const(qv.shape, scale, calc))
        hq = concrete_value(qv)
    else:  # Python numbers, lists, NumPy arrays: weakly typed, computed in the data's float dtype
        hq = np.asarray(q, dtype=np.float64) / scale
        qv = to_array(hq.astype(calc))
    if hq is not None:
        hq = np.asarray(hq)
        if not (np.all(hq >= 0) and np.all(hq <= 1)):
            what = "Percentiles must be in the range [0, 100]" if scale != 1 else \
                "Quantiles must be in the range [0, 1]"
            raise ValueError(f"{op}: {what}")
    out_shape = tuple(qv.shape) + bshape
    nq = qv.ndim
    qb = sh.broadcast_in_dim(qv, out_shape, tuple(range(nq)))
    if N == 0:  # as jax.numpy (NumPy gives NaN): its gather of the sorted values is out of range, a TypeError,
        # or for a nan-function's 0-d result the IndexError of indexing an empty axis
        if omit_nan and not out_shape and not keepdims:
            raise IndexError(f"{op}: index is out of bounds for axis 0 with size 0: the reduced axes are empty "
                             f"(at {user_location(3)})")
        raise TypeError(f"{op}: slice size 1 of the sorted values is out of range of the empty reduced axes "
                        f"(size 0), as in jax.numpy; reduce over non-empty axes (at {user_location(3)})")
    s = _s._sort_along([flat], flat.ndim - 1)[0]
    if omit_nan:
        valid = red.reduce_sum(ew.convert_element_type(_s._not(_isnan(flat)), INDEX), (flat.ndim - 1,))
        n = sh.broadcast_in_dim(ew.convert_element_type(valid, calc), out_shape, tuple(range(nq, nq + len(bshape))))
        n_int = sh.broadcast_in_dim(valid, out_shape, tuple(range(nq, nq + len(bshape))))
    else:
        n = _const(out_shape, N, calc)
        n_int = _const(out_shape, N, INDEX)
    one = _const(out_shape, 1, calc)
    last = ew.max(ew.sub(n_int, _const(out_shape, 1, INDEX)), _const(out_shape, 0, INDEX))
    nm1 = ew.sub(n, one)

    def clip_index(i):
        return ew.min(ew.max(i, _const(out_shape, 0, INDEX)), last)

    def at(i):
        return _take_last(s, clip_index(i))

    if method in _CONTINUOUS:
        alpha, beta = _CONTINUOUS[method]
        if method == "linear":
            virtual = ew.mul(nm1, qb)
        else:
            virtual = ew.sub(ew.add(ew.mul(n, qb), ew.add(_const(out_shape, alpha, calc),
                                                          ew.mul(qb, _const(out_shape, 1 - alpha - beta, calc)))),
                             one)
        lo_f = _floor(virtual)
        lo = ew.convert_element_type(lo_f, INDEX)
        below = ew.lt(virtual, ew.zeros_like(virtual))
        above = ew.ge(virtual, nm1)
        lo = ew.select(below, _const(out_shape, 0, INDEX), ew.select(above, last, lo))
        hi = ew.select(below, lo, ew.select(above, last, ew.add(lo, _const(out_shape, 1, INDEX))))
        t = ew.sub(virtual, ew.convert_element_type(lo, calc))
        res = _lerp(_as(at(lo), calc), _as(at(hi), calc), t)
    else:
        pos = ew.mul(nm1, qb)
        if method == "lower":
            res = at(ew.convert_element_type(_floor(pos), INDEX))
        elif method == "higher":
            res = at(ew.convert_element_type(ew.neg(_floor(ew.neg(pos))), INDEX))
        elif method == "nearest":
            res = at(ew.convert_element_type(_round_half_even(pos), INDEX))
        else:  # midpoint: the mean of the two neighbours (the value itself at an integer position)
            lo = at(ew.convert_element_type(_floor(pos), INDEX))
            hi = at(ew.convert_element_type(ew.neg(_floor(ew.neg(pos))), INDEX))
            lo, hi = _as(lo, calc), _as(hi, calc)
            res = ew.mul(ew.add(lo, hi), _const(out_shape, 0.5, calc))
        if not discrete_int:
            res = _as(res, calc)
    if dtypes.is_inexact(x.dtype):
        if omit_nan:
            bad = ew.eq(n_int, _const(out_shape, 0, INDEX))
        else:  # NaN sort last: a slice holding one has NaN at its end
            tail = sh.reshape(sh.slice(s, (0,) * (s.ndim - 1) + (N - 1,), tuple(s.shape)), bshape)
            bad = sh.broadcast_in_dim(_isnan(tail), out_shape, tuple(range(nq, nq + len(bshape))))
        res = ew.select(bad, _const(out_shape, np.nan, res.dtype), res)
    if x.dtype == dtypes.float16 and not discrete_int:
        res = ew.convert_element_type(res, dtypes.float16)
    return _finish(res, x, axes, keepdims, nq)


def _as(v, dt):
    return ew.convert_element_type(v, dt)


def _finish(res, x, axes, keepdims, nq):
    if keepdims and axes:
        res = sh.expand_dims(res, tuple(nq + a for a in axes))
    return res


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
             weights=None, interpolation=None):
    """q-th quantiles (q in [0, 1], any shape: it leads the result's shape) over the given axes, as
    numpy.quantile. Methods: linear (default), lower, higher, midpoint, nearest, and NumPy's
    continuous ones (hazen, weibull, median_unbiased, normal_unbiased, interpolated_inverted_cdf).
    A slice holding NaN gives NaN. Differentiable in a (through the sort) and in q."""
    _no_out(out, "quantile")
    if weights is not None:
        raise NotImplementedError("quantile: weights= is not supported by funcgrad")
    return _quantile(a, q, axis, interpolation or method, keepdims, False, "quantile")


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
               weights=None, interpolation=None):
    """q-th percentiles (q in [0, 100]), as numpy.percentile (see quantile)."""
    _no_out(out, "percentile")
    if weights is not None:
        raise NotImplementedError("percentile: weights= is not supported by funcgrad")
    return _quantile(a, q, axis, interpolation or method, keepdims, False, "percentile", 100.0)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median over the given axes (the mean of the two middle values for even counts), as numpy.median."""
    _no_out(out, "median")
    return _quantile(a, 0.5, axis, "midpoint", keepdims, False, "median")


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                weights=None, interpolation=None):
    """quantile ignoring NaN (an all-NaN slice gives NaN), as numpy.nanquantile."""
    _no_out(out, "nanquantile")
    return _quantile(a, q, axis, interpolation or method, keepdims, True, "nanquantile")


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                  weights=None, interpolation=None):
    """percentile ignoring NaN, as numpy.nanpercentile."""
    _no_out(out, "nanpercentile")
    return _quantile(a, q, axis, interpolation or method, keepdims, True, "nanpercentile", 100.0)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """median ignoring NaN, as numpy.nanmedian."""
    _no_out(out, "nanmedian")
    return _quantile(a, 0.5, axis, "midpoint", keepdims, True, "nanmedian")


# --- nan-ignoring reductions ----------------------------------------------------------------------

def _nan_to(x, value):
    if not dtypes.is_inexact(x.dtype):
        return x
    return ew.select(_isnan(x), _const(x.shape, value, x.dtype), x)


def _nan_extreme(op, base, fill):
    def f(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        _no_out(out, op)
        x = asarray_any(a)
        if not dtypes.is_inexact(x.dtype):
            return base(x, axis, keepdims=keepdims, initial=initial, where=where)
        r = base(_nan_to(x, fill), axis, keepdims=keepdims, initial=initial, where=where)
        if initial is not None:
            return r
        invalid = _isnan(x)  # entries that cannot be the result: NaN, or masked out by where
        if where is not None:
            invalid = _s._or(invalid, _s._not(_bcast_mask(where, x)))
        all_nan = all(invalid, axis=axis, keepdims=keepdims)
        return ew.select(broadcast_to(all_nan, r.shape), _const(r.shape, np.nan, r.dtype), r)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = f"numpy.{op}: the {base.__name__}imum ignoring NaN (an all-NaN slice gives NaN)."
    return f


nanmin = _nan_extreme("nanmin", _r.min, np.inf)
nanmax = _nan_extreme("nanmax", _r.max, -np.inf)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Sum treating NaN as zero, as numpy.nansum."""
    _no_out(out, "nansum")
    return _r.sum(_nan_to(asarray_any(a), 0), axis, dtype, keepdims=keepdims, initial=initial, where=where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product treating NaN as one, as numpy.nanprod."""
    _no_out(out, "nanprod")
    return _r.prod(_nan_to(asarray_any(a), 1), axis, dtype, keepdims=keepdims, initial=initial, where=where)


def _nan_where(x, where):
    m = _s._not(_isnan(x))
    return m if where is None else _s._and(m, _bcast_mask(where, x))


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Mean ignoring NaN (an all-NaN slice gives NaN), as numpy.nanmean."""
    _no_out(out, "nanmean")
    x = asarray_any(a)
    if not dtypes.is_inexact(x.dtype):
        return _r.mean(x, axis, dtype, keepdims=keepdims, where=where)
    # NaN are zeroed as well as masked: mean(where=) weights entries by 0/1, and NaN * 0 is NaN.
    return _r.mean(_nan_to(x, 0), axis, dtype, keepdims=keepdims, where=_nan_where(x, where))


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
           correction=None):
    """Variance ignoring NaN, as numpy.nanvar."""
    _no_out(out, "nanvar")
    x = asarray_any(a)
    w = where if not dtypes.is_inexact(x.dtype) else _nan_where(x, where)
    return var(x, axis, dtype, None, ddof, keepdims, where=w, mean=mean, correction=correction)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
           correction=None):
    """Standard deviation ignoring NaN, as numpy.nanstd."""
    return ew.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction))


def _nan_arg(op, base, fill):
    def f(a, axis=None, out=None, *, keepdims=False):
        _no_out(out, op)
        x = asarray_any(a)
        if not dtypes.is_inexact(x.dtype):
            return base(x, axis, keepdims=keepdims)
        r = base(_nan_to(x, fill), axis, keepdims=keepdims)
        all_nan = all(_isnan(x), axis=axis, keepdims=keepdims)
        c = concrete_value(all_nan)
        if c is not None:
            if np.any(np.asarray(c)):
                raise ValueError(f"{op}: All-NaN slice encountered")
            return r
        # Traced: as JAX, -1 marks an all-NaN slice.
        all_nan = broadcast_to(all_nan, r.shape)
        return ew.select(all_nan, _const(r.shape, -1, r.dtype), r)
    f.__name__ = f.__qualname__ = op
    f.__doc__ = (f"numpy.{op}: indices of the {op[6:]}imum ignoring NaN; an all-NaN slice raises "
                 "ValueError (traced: gives -1, as JAX).")
    return f


nanargmin = _nan_arg("nanargmin", _r.argmin, np.inf)
nanargmax = _nan_arg("nanargmax", _r.argmax, -np.inf)


# --- any / all ------------------------------------------------------------------------------------

def _logical_reduce(op, lax_fn, neutral):
    def f(a, axis=None, out=None, keepdims=False, *, where=None):
        _no_out(out, op)
        x = _s._truthy(asarray_any(a))
        axes = normalize_axis(axis, x.ndim, op)
        if where is not None:
            x = ew.select(_bcast_mask(where, x), x, _const(x.shape, neutral, dtypes.bool_))
        return _keep(lax_fn(x, axes), axes, keepdims)
    f.__name__ = f.__qualname__ = op
    return f


any = _logical_reduce("any", cum.reduce_or, False)  # noqa: A001 - NumPy name
any.__doc__ = "Whether any element along the given axes is true (non-zero), as numpy.any."
all = _logical_reduce("all", cum.reduce_and, True)  # noqa: A001 - NumPy name
all.__doc__ = "Whether all elements along the given axes are true (non-zero), as numpy.all."


# --- logsumexp ------------------------------------------------------------------------------------

def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over the given axes, computed stably (scipy.special.logsumexp).

    The maximum is subtracted first (held constant for differentiation, which is exact since the
    result does not depend on it), so large inputs do not overflow and the gradient is the softmax
    b * exp(a - result). -inf entries contribute nothing and get a zero gradient; a slice whose sum is
    zero (all -inf) gives -inf with a NaN gradient, as JAX (torch.logsumexp's is 0). With return_sign=True returns
    (log|sum|, sign(sum)), allowing negative b. Complex input gives the principal log of the sum (the
    maximum real part subtracted), as jax.scipy.special.logsumexp.

    Examples:
        >>> import funcgrad.numpy as jnp
        >>> from funcgrad.scipy.special import logsumexp
        >>> logsumexp(jnp.array([1000., 1000.]))
        Array(1000.6932, dtype=float32)
    """
    x = _to_inexact(asarray_any(a))
    if b is not None:
        bb = asarray_any(b)
        dt, _ = dtypes.result_type((x.dtype, x.weak_type), (bb.dtype, bb.weak_type))
        dt = dt if dtypes.is_inexact(dt) else x.dtype
        shape = np.broadcast_shapes(tuple(x.shape), tuple(bb.shape))
        x = broadcast_to(ew.convert_element_type(x, dt), shape)
        bb = broadcast_to(ew.convert_element_type(bb, dt), shape)
    axes = normalize_axis(axis, x.ndim, "logsumexp")
    mask = None
    if where is not None:
        mask = _bcast_mask(where, x)
    if b is not None:
        nz = ew.ne(bb, ew.zeros_like(bb))
        mask = nz if mask is None else _s._and(mask, nz)
    neg_inf = _const(x.shape, -np.inf, x.dtype)
    xm = x if mask is None else ew.select(mask, x, neg_inf)
    cplx = dtypes.is_complex(x.dtype)  # (complex: the maximum of the real parts is subtracted, as JAX)
    if x.size == 0 or builtins.any(x.shape[i] == 0 for i in axes):
        m = _const(_keep_shape(x, axes), 0, x.dtype)
    else:
        m = _keep(red.reduce_max(ew.stop_gradient(ew.real(xm) if cplx else xm), axes), axes, True)
        m = ew.select(cum._isfinite(m), m, ew.zeros_like(m))
        m = ew.convert_element_type(m, x.dtype) if cplx else m
    e = ew.exp(ew.sub(xm, broadcast_to(m, x.shape)))
    if b is not None:
        e = ew.mul(e, bb)
    if mask is not None:
        e = ew.select(mask, e, ew.zeros_like(e))
    s = red.reduce_sum(e, axes)
    m = sh.reshape(m, s.shape)
    # an empty sum (all -inf): log(0) = -inf, with JAX's NaN gradient (log's 1/0 times exp's 0)
    lg = ew.log(ew.abs(s) if return_sign else s)
    out = ew.add(lg, ew.real(m) if cplx and not dtypes.is_complex(lg.dtype) else m)
    if getattr(out, "weak_type", False):  # JAX's result is strongly typed, also for a Python scalar
        out = ew.convert_element_type(out, out.dtype, False)
    out = _keep(out, axes, keepdims)
    if out.weak_type:  # as JAX: strongly typed, also for a Python scalar (or weakly typed) input
        out = ew.convert_element_type(out, out.dtype, False)
    if return_sign:
        sign = _keep(ew.sign(s), axes, keepdims)
        return out, (ew.convert_element_type(sign, sign.dtype, False) if sign.weak_type else sign)
    return out


# --- counting and histograms ----------------------------------------------------------------------

def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts (or summed weights) of each value of a 1-D array of integers, as jax.numpy.bincount (negative
    values count in bin 0, where NumPy raises). Under jit pass a static `length` (values >= length are dropped). With weights the
    result has the weights' dtype (integers: the default float); NumPy always gives float64."""
    xa = asarray_any(x)
    if xa.ndim != 1:
        raise ValueError(f"bincount: object of too small/large depth for desired array: x must be 1-D, "
                         f"got shape {tuple(xa.shape)}")
    if not (dtypes.is_integer(xa.dtype) or xa.dtype == dtypes.bool_):
        raise TypeError(f"bincount: Cannot cast array data from dtype('{xa.dtype}') to dtype('int64') "
                        "according to the rule 'safe'")
    minlength = operator.index(minlength) if minlength is not None else 0
    if minlength < 0:
        raise ValueError("bincount: 'minlength' must not be negative")
    xi = ew.convert_element_type(xa, INDEX)
    c = concrete_value(xi)
    if length is None:
        if c is None:
            raise ConcretizationError("bincount: the length of the result depends on the values of a traced "
                                      f"array (at {user_location(2)}); pass a static length=")
        h = np.asarray(c)
        length = builtins.max(int(h.max()) + 1 if h.size else 0, minlength)
    length = operator.index(length)
    if weights is None:
        upd = _const(xi.shape, 1, dtypes.defaults.int_)  # counts in JAX's default int
    else:
        w = asarray_any(weights)
        if tuple(w.shape) != tuple(xi.shape):
            raise ValueError("bincount: The weights and list don't have the same length.")
        upd = ew.convert_element_type(w, w.dtype if dtypes.is_inexact(w.dtype) else dtypes.defaults.float_)
    xi = ew.max(xi, _const(xi.shape, 0, INDEX))  # (as jax.numpy: a negative value counts in bin 0)
    return scatter_p.bind(_const((length,), 0, upd.dtype), sh.expand_dims(xi, (1,)), upd, axes=(0,), mode="add")


def digitize(x, bins, right=False):
    """Indices of the bins each value of x falls in, as numpy.digitize (bins increasing or decreasing)."""
    xa = asarray_any(x)
    if dtypes.is_complex(xa.dtype):
        raise _ComplexUndefinedError("digitize: x may not be complex")
    bn = asarray_any(bins)
    if bn.ndim != 1:
        raise ValueError("digitize: bins must be 1-dimensional")
    hb = concrete_value(bn)
    n = bn.shape[0]
    side = "left" if right else "right"
    if n == 0:
        return _const(xa.shape, 0, dtypes.int32)
    i32 = dtypes.int32  # jax.numpy's dtype for the result (NumPy: int64)
    inc = _s.searchsorted(bn, xa, side=side)
    dec = ew.sub(_const(inc.shape, n, inc.dtype), _s.searchsorted(sh.rev(bn, (0,)), xa, side=side))
    if hb is not None:
        h = np.asarray(hb)
        d = np.diff(h)
        if np.all(d >= 0):
            return ew.convert_element_type(inc, i32)
        if np.all(d <= 0):
            return ew.convert_element_type(dec, i32)
        raise ValueError("digitize: bins must be monotonically increasing or decreasing")
    first = sh.reshape(sh.slice(bn, (0,), (1,)), ())
    lastv = sh.reshape(sh.slice(bn, (n - 1,), (n,)), ())
    decreasing = broadcast_to(ew.gt(first, lastv), inc.shape)
    return ew.convert_element_type(ew.select(decreasing, dec, inc), i32)


def _bin_type(x):
    """The dtype of bin edges: the data's made inexact (jax.dtypes.to_inexact_dtype, as JAX)."""
    return dtypes.to_inexact(x.dtype, x.weak_type)


def _known(v):
    """v's concrete value (NumPy) when it has one (a Python number, an Array, a tracer under grad), else None."""
    if isinstance(v, ArrayBase):
        c = concrete_value(v)
        return None if c is None else np.asarray(c)
    return v


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002 - NumPy name
    """Edges of the bins histogram would use, as numpy.histogram_bin_edges. An integer `bins` gives
    equal-width bins over `range` (default: the data's min to max); string rules ("auto", ...) are
    NumPy's, computed from concrete data."""
    x = sh.reshape(asarray_any(a), (asarray_any(a).size,))
    if isinstance(bins, str):
        h = _s._host(x, "histogram_bin_edges", "pass an integer number of bins or the edges under jit")
        return asarray_any(np.histogram_bin_edges(h, bins, range).astype(_bin_type(x)))
    if not isinstance(bins, (int, np.integer)):
        edges = asarray_any(bins)
        if edges.ndim != 1:
            raise ValueError("histogram_bin_edges: `bins` must be 1d, when an array")
        he = concrete_value(edges)
        if he is not None and np.any(np.diff(np.asarray(he)) < 0):
            raise ValueError("histogram_bin_edges: `bins` must increase monotonically, when an array")
        bt = _bin_type(x)  # as JAX: given edges take the data's inexact dtype
        return edges if edges.dtype == bt else ew.convert_element_type(edges, bt)
    nbins = operator.index(bins)
    if nbins < 1:
        raise ValueError("histogram_bin_edges: `bins` must be positive, when an integer")
    bt = _bin_type(x)
    if range is not None:
        lo, hi = range
        # (the checks read the values where known: under grad the bounds are tracers of concrete values)
        clo, chi = (_known(v) for v in (lo, hi))
        if clo is not None and chi is not None:
            if clo > chi:
                raise ValueError("histogram_bin_edges: max must be larger than min in range parameter.")
            if not (np.isfinite(clo) and np.isfinite(chi)):
                raise ValueError(f"histogram_bin_edges: supplied range of [{clo}, {chi}] is not finite")
            if clo == chi:
                lo, hi = lo - 0.5, hi + 0.5
        return linspace(lo, hi, nbins + 1, dtype=bt)
    if x.size == 0:
        return linspace(0, 1, nbins + 1, dtype=bt)
    lo = red.reduce_min(x, (0,))
    hi = red.reduce_max(x, (0,))
    ch = concrete_value(lo), concrete_value(hi)
    if ch[0] is not None and ch[1] is not None and not (np.isfinite(np.asarray(ch[0])) and
                                                        np.isfinite(np.asarray(ch[1]))):
        raise ValueError(f"histogram_bin_edges: autodetected range of [{np.asarray(ch[0])}, "
                         f"{np.asarray(ch[1])}] is not finite")
    if not dtypes.is_inexact(x.dtype):
        lo, hi = ew.convert_element_type(lo, dtypes.float64), ew.convert_element_type(hi, dtypes.float64)
    same = ew.eq(lo, hi)
    half = _const((), 0.5, lo.dtype)
    lo = ew.select(same, ew.sub(lo, half), lo)
    hi = ew.select(same, ew.add(hi, half), hi)
    return linspace(lo, hi, nbins + 1, dtype=bt)


def _hist_dtype(x, w=None):
    """The inexact dtype JAX's histograms compute in: promote_dtypes_inexact(sample, weights)."""
    ops = [(x.dtype, x.weak_type)] + ([] if w is None else [(w.dtype, w.weak_type)])
    dt, weak = dtypes.result_type(*ops)
    return dtypes.to_inexact(dt, weak)


def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002 - NumPy name
    """(counts, edges) of the flattened data, as numpy.histogram: bin i holds edges[i] <= v < edges[i+1],
    the last bin also its right edge; values outside are ignored. Counts and edges have JAX's dtype: the data's
    and weights' promoted dtype made inexact; density=True normalises to a probability density."""
    x = asarray_any(a)
    w = None
    if weights is not None:
        w = asarray_any(weights)
        if tuple(w.shape) != tuple(x.shape):
            raise ValueError("histogram: weights should have the same shape as a.")
        w = sh.reshape(w, (w.size,))
    # as JAX (promote_dtypes_inexact(a, weights)): data, weights, edges and counts in one inexact dtype
    cdt = _hist_dtype(x, w)
    x = ew.convert_element_type(sh.reshape(x, (x.size,)), cdt)
    edges = histogram_bin_edges(x, bins, range)
    if edges.dtype != cdt:
        edges = ew.convert_element_type(edges, cdt)
    nb = edges.shape[0] - 1
    xs = x
    e = edges
    pos = _s.searchsorted(e, xs, side="right")  # (int32, as jnp.searchsorted)
    idx = ew.sub(pos, _const(xs.shape, 1, pos.dtype))
    last_edge = sh.broadcast_in_dim(sh.reshape(sh.slice(e, (nb,), (nb + 1,)), ()), xs.shape, ())
    idx = ew.select(ew.eq(xs, last_edge), _const(xs.shape, nb - 1, pos.dtype), idx)
    upd = _const(xs.shape, 1, cdt) if w is None else ew.convert_element_type(w, cdt)
    hist = scatter_p.bind(_const((nb,), 0, upd.dtype), sh.expand_dims(idx, (1,)), upd, axes=(0,), mode="add")
    if density:
        dt = dtypes.result_type((hist.dtype if dtypes.is_inexact(hist.dtype) else dtypes.defaults.float_, False),
                                (edges.dtype if dtypes.is_inexact(edges.dtype) else dtypes.defaults.float_, False))[0]
        hf = ew.convert_element_type(hist, dt)
        widths = ew.convert_element_type(_s.diff(edges), dt)
        total = red.reduce_sum(hf, (0,))
        hist = ew.div(ew.div(hf, widths), sh.broadcast_in_dim(total, hf.shape, ()))
    return hist, edges


# --- covariance and correlation -------------------------------------------------------------------

def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """Covariance matrix of the variables in the rows (rowvar=True) of m (and y), as numpy.cov, with
    frequency and analytic weights."""
    X = asarray_any(m)
    if X.ndim > 2:
        raise ValueError("cov: m has more than 2 dimensions")
    calc = dtypes.canonicalize(dtype) if dtype is not None else dtypes.to_inexact(X.dtype)  # (JAX's rule)
    if dtype is None and y is not None:
        calc = dtypes.promote_types(calc, dtypes.to_inexact(asarray_any(y).dtype))
    X = ew.convert_element_type(X, calc)
    if not rowvar and X.ndim == 2:
        X = sh.transpose(X, (1, 0))
    X = sh.reshape(X, (1, X.size)) if X.ndim < 2 else X
    if y is not None:
        Y = ew.convert_element_type(asarray_any(y), calc)
        Y = sh.reshape(Y, (1, Y.size)) if Y.ndim < 2 else Y
        if not rowvar and Y.shape[0] != 1:
            Y = sh.transpose(Y, (1, 0))
        X = concatenate([X, Y], 0)
    if X.shape[0] == 0:
        return _const((0, 0), 0, calc)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        w = ew.convert_element_type(asarray_any(fweights), calc)
    if aweights is not None:
        aw = ew.convert_element_type(asarray_any(aweights), calc)
        w = aw if w is None else ew.mul(w, aw)
    avg, w_sum = average(X, axis=1, weights=None if w is None else broadcast_to(w, X.shape), returned=True)
    w_sum = sh.reshape(sh.slice(w_sum, (0,), (1,)), ())
    if w is None:
        fact = _const((), X.shape[1] - ddof, calc)
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = ew.sub(w_sum, _const((), ddof, calc))
    else:
        fact = ew.sub(w_sum, ew.div(ew.mul(_const((), ddof, calc), red.reduce_sum(ew.mul(w, aw), (0,))), w_sum))
    fact = ew.max(fact, ew.zeros_like(fact))
    Xc = ew.sub(X, sh.broadcast_in_dim(avg, X.shape, (0,)))
    Xw = Xc if w is None else ew.mul(Xc, sh.broadcast_in_dim(w, X.shape, (1,)))
    c = matmul(Xc, sh.transpose(_conj(Xw), (1, 0)))
    c = ew.div(c, broadcast_to(ew.convert_element_type(fact, c.dtype), c.shape))
    return sh.reshape(c, ()) if c.shape == (1, 1) else c


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson correlation coefficients, as numpy.corrcoef (real parts clipped to [-1, 1])."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return ew.div(c, c)
    n = c.shape[0]
    eye = ew.eq(sh.broadcasted_iota(INDEX, (n, n), 0), sh.broadcasted_iota(INDEX, (n, n), 1))
    d = red.reduce_sum(ew.select(eye, c, ew.zeros_like(c)), (1,))
    sd = ew.sqrt(ew.convert_element_type(d, _real_dtype(d.dtype)))
    sd = ew.convert_element_type(sd, c.dtype)
    c = ew.div(c, sh.broadcast_in_dim(sd, c.shape, (0,)))
    c = ew.div(c, sh.broadcast_in_dim(sd, c.shape, (1,)))
    if not dtypes.is_complex(c.dtype):
        one = _const(c.shape, 1, c.dtype)
        c = ew.min(ew.max(c, ew.neg(one)), one)
    return c


__all__ = ["all", "any", "average", "bincount", "corrcoef", "cov", "digitize", "histogram",
           "histogram_bin_edges", "logsumexp", "median", "nanargmax", "nanargmin", "nanmax", "nanmean",
           "nanmedian", "nanmin", "nanpercentile", "nanprod", "nanquantile", "nanstd", "nansum", "nanvar",
           "percentile", "ptp", "quantile", "std", "var"]
