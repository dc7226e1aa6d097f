"""Array creation with NumPy's signatures (Python floats default to float32, see funcgrad.config)."""
from __future__ import annotations

import math

import numpy as np

from ..core import dtypes
from ..core.array import ArrayBase, to_array
from ..primitives import elementwise as ew
from ..primitives.shape import broadcasted_iota, full as _full


def _shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def _dtype(dtype, default=None):
    return dtypes.canonicalize(dtype) if dtype is not None else (default or dtypes.defaults.float_)


def array(object, dtype=None, copy=True, ndmin: int = 0):
    """Create an Array from a list, NumPy array, scalar or Array, as numpy.array."""
    if isinstance(object, ArrayBase):
        x = object if dtype is None else ew.convert_element_type(object, dtypes.canonicalize(dtype))
    elif isinstance(object, (list, tuple)) and any(isinstance(v, ArrayBase) for v in _flat(object)):
        from ._manipulation import stack
        x = stack([array(v) for v in object])
        if dtype is not None:
            x = ew.convert_element_type(x, dtypes.canonicalize(dtype))
    else:
        x = to_array(object, dtype=dtype)
        if isinstance(object, (bool, int, float, complex)) and not isinstance(object, np.generic):
            x = ew.convert_element_type(x, x.dtype, False)  # a standalone array is strongly typed
    if x.ndim < ndmin:
        from ..primitives.shape import reshape
        x = reshape(x, (1,) * (ndmin - x.ndim) + tuple(x.shape))
    return x


def _flat(xs):
    for v in xs:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        else:
            yield v


def asarray(a, dtype=None, copy=None):
    """Convert to an Array without copying an Array that already matches, as numpy.asarray."""
    if isinstance(a, ArrayBase) and (dtype is None or np.dtype(dtype) == a.dtype):
        return a
    return array(a, dtype=dtype, copy=bool(copy))


def zeros(shape, dtype=None):
    return _full(_shape(shape), 0, _dtype(dtype))


def ones(shape, dtype=None):
    return _full(_shape(shape), 1, _dtype(dtype))


def empty(shape, dtype=None):
    return zeros(shape, dtype)


def full(shape, fill_value, dtype=None):
    if isinstance(fill_value, ArrayBase):
        from ._promote import broadcast_to
        fv = fill_value if dtype is None else ew.convert_element_type(fill_value, dtypes.canonicalize(dtype))
        return broadcast_to(fv, _shape(shape))
    dt = dtypes.canonicalize(dtype) if dtype is not None else dtypes.python_scalar_dtype(fill_value) \
        if isinstance(fill_value, (bool, int, float, complex)) else np.asarray(fill_value).dtype
    return _full(_shape(shape), fill_value, dt)


def _like(name, value):
    def f(a, dtype=None, shape=None):
        a_dt = a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype
        a_shape = a.shape if hasattr(a, "shape") else np.shape(a)
        return _full(_shape(a_shape if shape is None else shape), value,
                     dtypes.canonicalize(dtype) if dtype is not None else a_dt)
    f.__name__ = name
    return f


zeros_like = _like("zeros_like", 0)
ones_like = _like("ones_like", 1)
empty_like = _like("empty_like", 0)


def full_like(a, fill_value, dtype=None, shape=None):
    return _full(_shape(a.shape if shape is None else shape), fill_value,
                 dtypes.canonicalize(dtype) if dtype is not None else a.dtype)


def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values in [start, stop), as numpy.arange (concrete bounds only)."""
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    for v in (start, stop, step):
        if isinstance(v, ArrayBase):
            from ..core.trace import Tracer
            if isinstance(v, Tracer) and v.val is None:
                from ..core.errors import ConcretizationError
                raise ConcretizationError("arange: bounds must be concrete (not traced); "
                                          "pass them as static arguments")
    start, stop, step = (v.item() if isinstance(v, ArrayBase) else v for v in (start, stop, step))
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, stop, step))
        dt = dtypes.defaults.float_ if is_float else dtypes.defaults.int_
    else:
        dt = dtypes.canonicalize(dtype)
    if step == 0:
        raise ValueError("arange: step must not be zero")
    n = max(0, math.ceil((stop - start) / step))
    r = broadcasted_iota(dt if dtypes.is_integer(dt) else dtypes.float64, (n,), 0)
    if start == 0 and step == 1:
        return ew.convert_element_type(r, dt)
    # Compute in float64/int64 then convert, to match NumPy's values.
    return to_array(np.arange(start, stop, step).astype(dt))


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False, dtype=None, axis: int = 0):
    """num evenly spaced samples over [start, stop], as numpy.linspace."""
    from ._promote import asarray_any
    s, e = asarray_any(start), asarray_any(stop)
    dt = dtypes.canonicalize(dtype) if dtype is not None else dtypes.result_type(
        (s.dtype, s.weak_type), (e.dtype, e.weak_type), (dtypes.defaults.float_, True))[0]
    if not dtypes.is_inexact(dt):
        calc = dtypes.defaults.float_
    else:
        calc = dt
    div = (num - 1) if endpoint else num
    s = ew.convert_element_type(s, calc)
    e = ew.convert_element_type(e, calc)
    i = ew.convert_element_type(broadcasted_iota(dtypes.int64, (num,), 0), calc)
    from ._promote import broadcast_to
    step = (e - s) / div if div > 0 else e * np.nan
    shape = (num,) + tuple(s.shape)
    from ..primitives.shape import broadcast_in_dim
    ib = broadcast_in_dim(i, shape, (0,))
    out = broadcast_to(s, shape) + ib * broadcast_to(step if div > 0 else e - s, shape)
    if endpoint and num > 1:
        from ..primitives.shape import concatenate, slice as lslice
        last = broadcast_in_dim(e, (1,) + tuple(s.shape), tuple(range(1, len(shape))))
        out = concatenate([lslice(out, (0,) * len(shape), (num - 1,) + tuple(s.shape)), last], 0)
    if axis != 0 and out.ndim > 1:
        from ._manipulation import moveaxis
        out = moveaxis(out, 0, axis)
    out = ew.convert_element_type(out, dt) if not dtypes.is_inexact(dt) or dt != calc else out
    if retstep:
        return out, step
    return out


def eye(N: int, M: int | None = None, k: int = 0, dtype=None):
    """A 2-D array with ones on the k-th diagonal, as numpy.eye."""
    M = N if M is None else M
    r = broadcasted_iota(dtypes.int64, (N, M), 0)
    c = broadcasted_iota(dtypes.int64, (N, M), 1)
    return ew.convert_element_type(ew.eq(r + k, c), _dtype(dtype))


def identity(n: int, dtype=None):
    return eye(n, dtype=dtype)
