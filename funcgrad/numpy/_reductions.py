"""Reductions with NumPy's axis/keepdims/dtype semantics."""
from __future__ import annotations

from ..core import dtypes
from ..core.errors import user_location
from ..primitives import elementwise as ew
from ..primitives import reduction as red
from ..primitives.shape import expand_dims
from ._promote import asarray_any


def normalize_axis(axis, ndim: int, op: str) -> tuple:
    """NumPy's axis argument (None, int, tuple; negative allowed) as a sorted tuple of axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if not isinstance(axis, (tuple, list)) else tuple(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < (ndim if ndim > 1 else 1) or (ndim == 0 and a not in (0, -1)):
            raise ValueError(f"{op}: axis {a} is out of bounds for array of dimension {ndim} "
                             f"(at {user_location(2)})")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: repeated axis in {axis}")
    return tuple(sorted(out)) if ndim else ()


def _keep(x, axes, keepdims):
    return expand_dims(x, axes) if keepdims and axes else x


def _sum_dtype(x, dtype):
    if dtype is not None:
        return dtypes.canonicalize(dtype)
    if x.dtype == dtypes.bool_ or (dtypes.is_integer(x.dtype) and x.dtype.itemsize < 8):
        # NumPy sums small integers and bools in the default integer dtype.
        return dtypes.defaults.int_ if x.dtype.kind != "u" else dtypes.uint64
    return None


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Sum of elements over the given axes, as numpy.sum."""
    _no_out(out, "sum")
    x = _masked(asarray_any(a), where, 0)
    dt = _sum_dtype(x, dtype)
    if dt is not None:
        x = ew.convert_element_type(x, dt, x.weak_type)
    axes = normalize_axis(axis, x.ndim, "sum")
    r = _keep(red.reduce_sum(x, axes), axes, keepdims)
    return r if initial is None else r + initial


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product of elements over the given axes, as numpy.prod."""
    _no_out(out, "prod")
    x = _masked(asarray_any(a), where, 1)
    dt = _sum_dtype(x, dtype)
    if dt is not None:
        x = ew.convert_element_type(x, dt, x.weak_type)
    axes = normalize_axis(axis, x.ndim, "prod")
    r = _keep(red.reduce_prod(x, axes), axes, keepdims)
    return r if initial is None else r * initial


def mean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """Arithmetic mean over the given axes, as numpy.mean (integers average in the default float)."""
    _no_out(out, "mean")
    x = asarray_any(a)
    if not dtypes.is_inexact(x.dtype):
        x = ew.convert_element_type(x, dtypes.defaults.float_ if dtype is None else dtype, x.weak_type)
    elif dtype is not None:
        x = ew.convert_element_type(x, dtypes.canonicalize(dtype))
    axes = normalize_axis(axis, x.ndim, "mean")
    if where is not None:
        w = ew.convert_element_type(asarray_any(where), x.dtype)
        return sum(x * w, axis=axis, keepdims=keepdims) / sum(w + ew.zeros_like(x), axis=axis, keepdims=keepdims)
    n = 1
    for ax in axes:
        n *= x.shape[ax]
    return _keep(red.reduce_sum(x, axes), axes, keepdims) / n


def _extreme(op, lax_fn):
    def f(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        _no_out(out, op)
        x = asarray_any(a)
        axes = normalize_axis(axis, x.ndim, op)
        if where is not None:
            if initial is None:
                raise ValueError(f"{op}: reduction with where= needs an initial value")
            x = ew.select(_bcast_bool(where, x), x, _fill(x, initial))
        if any(x.shape[ax] == 0 for ax in axes) and initial is None:
            raise ValueError(f"zero-size array to reduction operation {op} which has no identity")
        r = _keep(lax_fn(x, axes), axes, keepdims)
        if initial is not None:
            from ._ufuncs import maximum, minimum
            r = (maximum if op in ("max", "amax") else minimum)(r, initial)
        return r
    f.__name__ = op
    f.__doc__ = f"The {op}imum over the given axes, as numpy.{op}."
    return f


def _fill(x, v):
    from ..primitives.shape import full
    return full(x.shape, v, x.dtype)


def _bcast_bool(where, x):
    from ._promote import broadcast_to
    w = asarray_any(where)
    return broadcast_to(w if w.dtype == dtypes.bool_ else w != 0, x.shape)


def _masked(x, where, identity):
    if where is None:
        return x
    return ew.select(_bcast_bool(where, x), x, _fill(x, identity))


max = _extreme("max", red.reduce_max)  # noqa: A001
min = _extreme("min", red.reduce_min)  # noqa: A001
amax, amin = max, min


def _arg(op, lax_fn):
    def f(a, axis=None, out=None, keepdims=False):
        _no_out(out, op)
        x = asarray_any(a)
        if axis is None:
            from ..primitives.shape import reshape
            x = reshape(x, (x.size,))
            ax = 0
        else:
            ax = normalize_axis(axis, x.ndim, op)[0]
        if x.shape[ax] == 0:
            raise ValueError(f"attempt to get {op} of an empty sequence")
        r = lax_fn(x, ax, dtypes.defaults.int_)
        if keepdims:
            r = expand_dims(r, tuple(range(asarray_any(a).ndim)) if axis is None else (ax,))
        return r
    f.__name__ = op
    f.__doc__ = f"Indices of the {op[3:]}imum values along an axis, as numpy.{op}."
    return f


argmax = _arg("argmax", red.argmax)
argmin = _arg("argmin", red.argmin)


def _no_out(out, op):
    if out is not None:
        raise TypeError(f"{op}: out= is not supported: funcgrad arrays are immutable; use the return value")
