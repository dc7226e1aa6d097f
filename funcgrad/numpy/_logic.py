"""Comparisons of whole arrays and array queries: isclose, allclose, array_equal, array_equiv,
isscalar, ndim, shape, size.

allclose, array_equal and array_equiv return a 0-d bool Array (as JAX does) rather than a Python bool,
so that they work under jit; `bool(...)` and `if ...:` on the result behave as NumPy's bool does.
"""
from __future__ import annotations

import operator

import numpy as np

from .._src.core import dtypes
from .._src.core.array import ArrayBase
from .._src.prims import elementwise as ew
from .._src.prims import reduction as red
from .._src.prims import shape as sh
from ._promote import (asarray_any, broadcast_shapes, is_python_scalar, normalize_index, result_dtype,
                       scalar_array)
from ._ufuncs import absolute, add, equal, less_equal, multiply, subtract


def _isnan(x):
    return ew.ne(x, x)


def _all(b):
    """all() of a bool array as a 0-d bool Array (True when empty)."""
    if b.size == 0:
        return sh.full((), True, dtypes.bool_)
    return red.reduce_min(b, tuple(range(b.ndim)))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise |a - b| <= atol + rtol * |b| (or a == b), with NumPy's treatment of infinities and
    NaNs, as numpy.isclose. Integer b is compared in the default float dtype."""
    x, y = (v if is_python_scalar(v) else asarray_any(v) for v in (a, b))
    rtol, atol = (v if is_python_scalar(v) else asarray_any(v) for v in (rtol, atol))
    if not is_python_scalar(y):
        dt, weak = result_dtype(y, 1.0)
        y = ew.convert_element_type(y, dt, y.weak_type)
    elif isinstance(y, int):
        y = float(y)
    if is_python_scalar(y):
        y = scalar_array(y, dtypes.python_scalar_dtype(y), True)
    if is_python_scalar(x):
        x = scalar_array(x, dtypes.python_scalar_dtype(x), True)
    close = less_equal(absolute(subtract(x, y)), add(atol, multiply(rtol, absolute(y))))
    ay = ew.abs(y)
    finite_y = ew.lt(ay, sh.full(ay.shape, np.inf, ay.dtype))  # False for inf and nan
    result = add(multiply(close, finite_y), equal(x, y))  # (close & finite) | (x == y)
    if equal_nan:
        result = add(result, multiply(_isnan(x), _isnan(y)))
    return result


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether all elements are close (see isclose), as numpy.allclose: a 0-d bool Array."""
    return _all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """Whether the arrays have the same shape and elements, as numpy.array_equal: a 0-d bool Array."""
    try:
        x, y = asarray_any(a1), asarray_any(a2)
    except Exception:
        return sh.full((), False, dtypes.bool_)
    if tuple(x.shape) != tuple(y.shape):
        return sh.full((), False, dtypes.bool_)
    eq = equal(x, y)
    if equal_nan:
        eq = add(eq, multiply(_isnan(x), _isnan(y)))
    return _all(eq)


def array_equiv(a1, a2):
    """Whether the arrays are shape-consistent (broadcastable) and equal elementwise, as
    numpy.array_equiv: a 0-d bool Array."""
    try:
        x, y = asarray_any(a1), asarray_any(a2)
    except Exception:
        return sh.full((), False, dtypes.bool_)
    try:
        broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return sh.full((), False, dtypes.bool_)
    return _all(equal(x, y))


def isscalar(element):
    """Whether element is a scalar: a Python or NumPy scalar or a 0-d array (funcgrad's or NumPy's), as
    jax.numpy.isscalar (numpy.isscalar is False for every array; JAX counts 0-d ones so that the answer
    does not change under jit)."""
    if isinstance(element, (ArrayBase, np.ndarray)):
        return element.ndim == 0
    return bool(np.isscalar(element))


def ndim(a):
    """The number of dimensions, as numpy.ndim."""
    return a.ndim if isinstance(a, ArrayBase) else np.ndim(a)


def shape(a):
    """The shape, as numpy.shape."""
    return tuple(a.shape) if isinstance(a, ArrayBase) else np.shape(a)


def size(a, axis=None):
    """The number of elements (along the given axis or axes), as numpy.size."""
    if not isinstance(a, ArrayBase):
        return np.size(a, axis) if axis is not None else np.size(a)
    if axis is None:
        return a.size
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    n = 1
    for ax in axes:
        n *= a.shape[normalize_index(operator.index(ax), a.ndim, "size")]
    return n


__all__ = ["isclose", "allclose", "array_equal", "array_equiv", "isscalar", "ndim", "shape", "size"]
