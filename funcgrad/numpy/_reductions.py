"""Reductions with NumPy's axis/keepdims/dtype semantics."""
from __future__ import annotations

import math
import operator

from .._src.core import dtypes
from .._src.core.array import Array
from .._src.core.errors import user_location
from .._src.core.trace import Tracer
from .._src.prims import elementwise as ew
from .._src.prims import reduction as red
from .._src.prims.shape import expand_dims, full, pad, reshape
from ..lax._elementwise import convert_element_type as _xla_convert
from ._promote import asarray_any, axis_error, broadcast_to, is_python_scalar, scalar_array


def normalize_axis(axis, ndim: int, op: str) -> tuple:
    """NumPy's axis argument (None, int, tuple; negative allowed) as a sorted tuple of axes.

    Out-of-range axes raise numpy's AxisError (a ValueError and an IndexError); as in JAX, a 0-d array
    has no axis 0 or -1 (NumPy's reductions accept them)."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if not isinstance(axis, (tuple, list)) else tuple(axis)
    out = []
    for a in axes:
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise axis_error(op, a, ndim)
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: duplicate value in 'axis': {axis} (at {user_location(2)})")
    return tuple(sorted(out))


_ALL_AXES = tuple(tuple(range(n)) for n in range(33))


def _keep(x, axes, keepdims):
    return expand_dims(x, axes) if keepdims and axes else x


def _strong(x):
    """x without its weak type: as in JAX, a reduction's result is strongly typed even when its input
    (a Python scalar, or a weakly typed array) is weak."""
    return ew.convert_element_type(x, x.dtype, False) if x.weak_type else x


def _sum_dtype(x, dtype):
    if dtype is not None:
        return dtypes.canonicalize(dtype)
    if x.dtype == dtypes.bool_ or (dtypes.is_integer(x.dtype) and x.dtype.itemsize < dtypes.defaults.int_.itemsize):
        # as JAX: bools and integers narrower than the mode's default int sum and multiply in the default
        # (unsigned) int: int32/uint32 with x64 off, int64/uint64 with it on
        return dtypes.defaults.int_ if x.dtype.kind != "u" else dtypes.defaults.uint_
    return None


def _cast_scalar(v, like):
    """An `initial=` value cast to the reduction's dtype, as NumPy does."""
    if is_python_scalar(v):
        import numpy as np
        return scalar_array(np.array(v).astype(like.dtype).item(), like.dtype, like.weak_type)
    return ew.convert_element_type(asarray_any(v), like.dtype, like.weak_type)


def _accumulate(name, reduce, combine, identity, a, axis, dtype, out, keepdims, initial, where):
    """numpy.sum / numpy.prod off the hot path: a in the accumulation dtype (_sum_dtype), the positions that where=
    excludes set to the identity, reduced over axis, then combined with initial."""
    _no_out(out, name)
    x = _strong(asarray_any(a))
    axes = normalize_axis(axis, x.ndim, name)
    dt = _sum_dtype(x, dtype)
    if dt is not None:
        x = _xla_convert(x, dt, x.weak_type)  # (float to int: XLA's saturating conversion, as jnp)
    x = _masked(x, where, identity)
    r = _keep(reduce(x, axes), axes, keepdims)
    return r if initial is None else combine(r, _bcast(_cast_scalar(initial, r), r))


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Sum of elements over the given axes, as numpy.sum (bools and small ints sum in int64)."""
    if axis is None and dtype is None and out is None and not keepdims and initial is None and where is None:
        c = a.__class__
        if (c is Array or c is Tracer) and a.dtype.kind in "fc" and not a.weak_type:  # the hot path
            nd = len(a.shape)
            return red.reduce_sum_p.bind(a, axes=_ALL_AXES[nd]) if 0 < nd < len(_ALL_AXES) else sum(a, ())
    return _accumulate("sum", red.reduce_sum, ew.add, 0, a, axis, dtype, out, keepdims, initial, where)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product of elements over the given axes, as numpy.prod."""
    return _accumulate("prod", red.reduce_prod, ew.mul, 1, a, axis, dtype, out, keepdims, initial, where)


def _bcast(v, like):
    return broadcast_to(v, like.shape)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """Arithmetic mean over the given axes, as numpy.mean.

    Integers and bools average in the default float dtype (NumPy: float64); float16 accumulates in
    float32 and returns float16, and an integer `dtype=` truncates the result, as in NumPy."""
    if axis is None and dtype is None and out is None and not keepdims and where is None:
        c = a.__class__
        if (c is Array or c is Tracer) and a.dtype.kind in "fc" and a.dtype != dtypes.float16 \
                and not a.weak_type:
            shape = tuple(a.shape)  # the hot path: the mean of a whole float32/64 (complex) array
            if 0 < len(shape) < len(_ALL_AXES):
                return red.reduce_sum_p.bind(a, axes=_ALL_AXES[len(shape)]) / math.prod(shape)
    _no_out(out, "mean")
    x = _strong(asarray_any(a))
    if x.ndim == 0 and axis is not None and axis != ():
        raise axis_error("mean", axis, 0, skip=2)  # NumPy's mean (unlike sum) rejects axis 0 on 0-d input
    axes = normalize_axis(axis, x.ndim, "mean")
    if dtype is not None:
        dt = dtypes.canonicalize(dtype)
        if dt == dtypes.bool_:
            raise TypeError("mean: dtype=bool is not supported (jax.numpy divides in the requested dtype, and "
                            "lax.div does not accept bool); pass an integer or floating dtype")
    elif dtypes.is_inexact(x.dtype):
        dt = x.dtype
    else:
        dt = dtypes.to_inexact(x.dtype)  # as JAX: float32 for bools and ints up to 32 bits
    calc = dt if dtypes.is_inexact(dt) else dtypes.defaults.float_
    if not dtypes.is_inexact(dt):  # as NumPy: the sum accumulates in the integer dtype (wrapping)
        total = sum(x, axis=axis, dtype=dt, keepdims=keepdims, where=where)
        count = sum(ew.ones_like(ew.convert_element_type(x, dt)), axis=axis, dtype=dtypes.int64,
                    keepdims=keepdims, where=where)
        r = ew.div(ew.convert_element_type(total, calc), ew.convert_element_type(count, calc))
        return ew.convert_element_type(r, dt)
    if calc == dtypes.float16 and dtype is None:
        calc = dtypes.float32
    x = ew.convert_element_type(x, calc, x.weak_type)
    if where is not None:
        mask = _bcast_bool(where, x)
        w = ew.convert_element_type(mask, calc)
        kept = ew.select(mask, x, ew.zeros_like(x))  # masked-out NaNs must not reach the sum
        r = sum(kept, axis=axis, keepdims=keepdims) / sum(w, axis=axis, keepdims=keepdims)
    else:
        n = 1
        for ax in axes:
            n *= x.shape[ax]
        r = _keep(red.reduce_sum(x, axes), axes, keepdims) / n
    return ew.convert_element_type(r, dt, r.weak_type)


def _extreme(op, lax_fn):
    def f(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        _no_out(out, op)
        x = _strong(asarray_any(a))
        axes = normalize_axis(axis, x.ndim, op)
        if where is not None:
            if initial is None:
                raise ValueError(f"{op}: reduction with where= needs an initial value")
            x = ew.select(_bcast_bool(where, x), x, _fill(x, initial))
        if any(x.shape[ax] == 0 for ax in axes):
            if initial is None:
                raise ValueError(f"zero-size array to reduction operation {op}imum which has no identity "
                                 f"(shape {tuple(x.shape)}, axis {axis})")
            # Append one `initial` entry along each reduced axis, so the reduction has something to take.
            x = pad(x, _cast_scalar(initial, x), [(0, 1 if i in axes else 0, 0) for i in range(x.ndim)])
        r = _keep(lax_fn(x, axes), axes, keepdims)
        if initial is not None:
            r = (ew.max if op == "max" else ew.min)(r, _bcast(_cast_scalar(initial, r), r))
        return r
    f.__name__ = f.__qualname__ = op
    f.__doc__ = f"The {op}imum over the given axes, as numpy.{op}."
    return f


def _fill(x, v):
    return full(x.shape, v, x.dtype)


def _bcast_bool(where, x):
    w = asarray_any(where)
    return broadcast_to(w if w.dtype == dtypes.bool_ else ew.ne(w, ew.zeros_like(w)), x.shape)


def _masked(x, where, identity):
    if where is None:
        return x
    return ew.select(_bcast_bool(where, x), x, _fill(x, identity))


max = _extreme("max", red.reduce_max)  # noqa: A001
min = _extreme("min", red.reduce_min)  # noqa: A001
amax, amin = max, min


def _arg(op, lax_fn):
    def f(a, axis=None, out=None, *, keepdims=False):
        _no_out(out, op)
        x0 = asarray_any(a)
        x = x0
        if isinstance(axis, (tuple, list)):
            raise TypeError(f"{op}: axis must be an integer or None, got {axis!r}")
        if axis is None:
            x = reshape(x, (x.size,))
            ax = 0
        else:
            ax = normalize_axis(axis, x.ndim, op)[0]
        if dtypes.is_complex(x.dtype):  # (after the axis check, as jax.numpy: its error comes first)
            raise TypeError(f"{op}: complex input ({x.dtype}) has no ordering; jax.numpy's comparisons refuse "
                            "it (compare the real parts or the absolute values instead)")
        if x.shape[ax] == 0:
            raise ValueError(f"attempt to get {op} of an empty sequence")
        r = lax_fn(x, ax, dtypes.defaults.int_)
        if keepdims:
            if axis is None:
                r = expand_dims(r, tuple(range(x0.ndim))) if x0.ndim else r
            else:
                r = expand_dims(r, (ax,)) if x0.ndim else r
        elif x0.ndim == 0 and r.ndim:
            r = reshape(r, ())
        return r
    f.__name__ = f.__qualname__ = op
    f.__doc__ = f"Indices of the {op[3:]}imum values along an axis, as numpy.{op} (int64)."
    return f


argmax = _arg("argmax", red.argmax)
argmin = _arg("argmin", red.argmin)


def _no_out(out, op):
    if out is not None:
        raise TypeError(f"{op}: out= is not supported: funcgrad arrays are immutable; use the return value")
