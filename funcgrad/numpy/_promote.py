"""Turning NumPy-style arguments into primitive operands: conversion, dtype promotion, broadcasting."""
from __future__ import annotations

import operator
import sys

import numpy as np

from .._src.core import dtypes
from .._src.core import options as _options
from .._src.core.array import Array, ArrayBase, to_array, wrap, canonical_array
from .._src.core.errors import IncompatibleShapesError, user_location
from .._src.core.trace import Tracer
from .._src.prims.elementwise import convert_element_type
from .._src.prims.shape import broadcast_in_dim

try:
    from numpy.exceptions import AxisError
except ImportError:  # pragma: no cover - NumPy < 1.25
    from numpy import AxisError


def is_python_scalar(x) -> bool:
    """A Python bool/int/float/complex (weakly typed under NEP 50), but not a NumPy scalar."""
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def asarray_any(x):
    """An Array or tracer for x; Python scalars become weakly typed arrays."""
    if isinstance(x, ArrayBase):
        return x
    if isinstance(x, (list, tuple)) and _holds_array(x):
        from ._creation import asarray  # a sequence holding tracers: stacked, as jnp.asarray does
        return asarray(x)
    return canonical_array(x)


def _holds_array(seq) -> bool:
    for v in seq:
        if isinstance(v, ArrayBase) or (isinstance(v, (list, tuple)) and _holds_array(v)):
            return True
    return False


def scalar_array(v, dtype, weak: bool):
    """A Python scalar as a 0-d Array of `dtype`; like NumPy 2, a Python int that does not fit an
    integer dtype raises OverflowError instead of wrapping around."""
    dtype = np.dtype(dtype)
    if isinstance(v, int) and not isinstance(v, bool) and dtypes.is_integer(dtype):
        info = np.iinfo(dtype)
        if not info.min <= v <= info.max:
            raise OverflowError(f"Python integer {v} out of bounds for {dtype}")
    return wrap(np.array(v, dtype=dtype), weak)


def axis_error(op: str, axis, ndim: int, skip: int = 3):
    """NumPy's AxisError (a ValueError and an IndexError) naming the operation."""
    return AxisError(f"{op}: axis {axis} is out of bounds for array of dimension {ndim} "
                     f"(at {user_location(skip)})")


def normalize_index(axis, ndim: int, op: str) -> int:
    """One axis argument (negative allowed) as an index in [0, ndim); AxisError when out of range."""
    a = operator.index(axis)
    if not -ndim <= a < ndim:
        raise axis_error(op, a, ndim)
    return a % ndim


def _as_shape(s) -> tuple:
    if isinstance(s, (int, np.integer)):
        return (int(s),)
    return tuple(operator.index(d) for d in s)


def broadcast_shapes(*shapes, op: str = "broadcast_shapes") -> tuple:
    """NumPy's broadcasting of shapes; ValueError naming the operation and the shapes otherwise."""
    shapes = [_as_shape(s) for s in shapes]
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        size = 1
        for s in shapes:
            d = s[i - ndim + len(s)] if i - ndim + len(s) >= 0 else 1
            if d != 1:
                if size != 1 and size != d:
                    raise IncompatibleShapesError(f"{op}: operands could not be broadcast together with shapes "
                                     + " ".join(str(tuple(s)) for s in shapes) + f" (at {user_location(2)})")
                size = d
        out.append(size)
    return tuple(out)



def broadcast_to(array, shape):
    """`array` broadcast to `shape` (NumPy's rules: new leading axes, size-1 axes stretched)."""
    x = asarray_any(array)
    shape = _as_shape(shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"broadcast_to: all elements of broadcast shape must be non-negative, got {shape}")
    if tuple(x.shape) == shape:
        return x
    nd = len(shape)
    if x.ndim > nd:
        raise ValueError(f"broadcast_to: cannot broadcast array of shape {tuple(x.shape)} to shape {shape}: "
                         f"the target has fewer dimensions (at {user_location(2)})")
    for a, b in zip(x.shape[::-1], shape[::-1]):
        if a != 1 and a != b:
            raise ValueError(f"broadcast_to: cannot broadcast array of shape {tuple(x.shape)} to shape {shape} "
                             f"(at {user_location(2)})")
    return broadcast_in_dim(x, shape, tuple(range(nd - x.ndim, nd)))


def promote_dtypes(*xs):
    """Convert operands (Arrays/tracers) to their common dtype under NEP 50 (weak Python scalars)."""
    dt, weak = dtypes.result_type(*[(x.dtype, x.weak_type) for x in xs])
    return [convert_element_type(x, dt, weak) for x in xs]


def result_dtype(*args) -> tuple:
    """(dtype, weak) that NumPy-style arguments promote to; Python scalars count as weak."""
    keys = []
    for a in args:
        if is_python_scalar(a):
            keys.append((dtypes.python_scalar_dtype(a), not isinstance(a, bool)))
        else:
            keys.append((a.dtype, a.weak_type))
    return dtypes.result_type(*keys)


def check_python_int(v: int) -> None:
    """A Python int operand of a jax.numpy function must fit the default integer type (int64 with x64,
    int32 without): JAX raises OverflowError otherwise, whatever the dtype it would convert to."""
    dt = dtypes.defaults.int_
    if not -(1 << (8 * dt.itemsize - 1)) <= v < 1 << (8 * dt.itemsize - 1):
        raise OverflowError(f"Python int {v} is out of bounds for {dt}, the default integer type that a Python "
                            "int operand of a jax.numpy function takes first (turn on jax_enable_x64 for int64, "
                            "or pass an array of an explicit dtype)")


def python_scalar_operand(v, dtype, weak: bool):
    """A Python scalar operand converted to the promoted dtype, as jax.numpy: an int must fit the default
    integer type (check_python_int) and then wraps around into a narrower integer dtype (uint8 array + -1
    adds 255, as XLA's convert), where NumPy 2 raises OverflowError."""
    if v.__class__ is int:
        check_python_int(v)
        dtype = np.dtype(dtype)
        if dtypes.is_integer(dtype):
            info = np.iinfo(dtype)
            if not info.min <= v <= info.max:
                return wrap(np.array(v, dtypes.defaults.int_).astype(dtype), weak)
    return scalar_array(v, dtype, weak)


_SCALARS: dict = {}  # (value, dtype) -> a weak 0-d Array: the Python constants of a loop recur


def _weak_scalar(v, dtype) -> Array:
    """A Python int/float as a weakly typed 0-d Array of a float or complex dtype (cached; the buffer
    is read-only, so sharing it is safe). Keys carry the type, and float zeros are never cached, so
    -0.0 never shares an entry with 0.0 or 0."""
    if v.__class__ is int and not -0x80000000 <= v <= 0x7FFFFFFF:
        check_python_int(v)  # (before the cache: the x64 mode may have changed since)
    key = (v, dtype, v.__class__)
    x = _SCALARS.get(key)
    if x is None:
        buf = np.array(v, dtype)
        buf.flags.writeable = False
        x = Array(buf, True)
        if v or v.__class__ is int:
            if len(_SCALARS) >= 512:
                _SCALARS.clear()
            _SCALARS[key] = x
    return x


_FILLED: dict = {}  # (value, dtype, type, shape) -> a weak read-only broadcast of _weak_scalar


def weak_filled(v, dtype, shape: tuple) -> Array:
    """A Python int/float as a weakly typed Array of `shape` (a zero-stride view of one element,
    cached like _weak_scalar): the operand a traced array meets in `x + 1.0`, made once rather than
    promoted and broadcast on every call."""
    if not shape:
        return _weak_scalar(v, dtype)
    if v.__class__ is int and not -0x80000000 <= v <= 0x7FFFFFFF:
        check_python_int(v)  # (before the cache: the x64 mode may have changed since)
    key = (v, dtype, v.__class__, shape)
    x = _FILLED.get(key)
    if x is None:
        x = Array(np.broadcast_to(_weak_scalar(v, dtype)._buf, shape), True)
        if v or v.__class__ is int:
            if len(_FILLED) >= 512:
                _FILLED.clear()
            _FILLED[key] = x
    return x


def _convert_operands(args):
    """Operands as Arrays/tracers (Python scalars kept). A foreign operand (NumPy data) is canonicalised for
    the x64 mode, unless an Array operand already holds a 64-bit dtype the mode would narrow (made by the
    torch face or at an explicit request): then it keeps its dtype too, so that no precision is lost where
    JAX itself could never be (with x64 off JAX has no such Arrays)."""
    wide = False
    foreign = False
    for a in args:
        if isinstance(a, ArrayBase):
            if a.dtype in dtypes._narrow:
                wide = True
        elif not is_python_scalar(a):
            foreign = True
    if foreign and wide:
        return [a if isinstance(a, ArrayBase) or is_python_scalar(a)
                else (asarray_any(a) if isinstance(a, (list, tuple)) and _holds_array(a) else to_array(a, copy=False))
                for a in args]
    return [a if is_python_scalar(a) else asarray_any(a) for a in args]


def promote_args(op: str, *args):
    """Operands of an elementwise NumPy function converted to one dtype (NEP 50), not yet broadcast.

    Python scalars are converted straight to the result dtype as jax.numpy converts them: a Python int
    wraps around into a narrower integer dtype (uint8 array + 300 adds 44), and raises OverflowError only
    beyond the default integer type (python_scalar_operand)."""
    if len(args) == 2:  # hot paths: two arrays of one dtype; a float array with a Python float/int
        a, b = args
        ca, cb = a.__class__, b.__class__
        if ca is Array or ca is Tracer:
            if cb is Array or cb is Tracer:
                if a.dtype == b.dtype and a.weak_type == b.weak_type:
                    return args
            elif (cb is float or cb is int) and a.dtype.kind in "fc":
                return [a, _weak_scalar(b, a.dtype)]
        elif (cb is Array or cb is Tracer) and (ca is float or ca is int) and b.dtype.kind in "fc":
            return [_weak_scalar(a, b.dtype), b]
    args = _convert_operands(args)
    x0 = args[0]
    if not is_python_scalar(x0) and all(
            not is_python_scalar(x) and x.dtype == x0.dtype and x.weak_type == x0.weak_type for x in args[1:]):
        return args
    dt, weak = result_dtype(*args)
    return [python_scalar_operand(a, dt, weak) if is_python_scalar(a) else convert_element_type(a, dt, weak)
            for a in args]


rank_promotion = "allow"  # config "jax_numpy_rank_promotion": "allow", "warn" or "raise"
_RANK_PROMOTION = ("allow", "warn", "raise")


def _check_rank_promotion(name: str, value):
    if value not in _RANK_PROMOTION:
        raise ValueError(f"jax_numpy_rank_promotion must be one of {_RANK_PROMOTION}, got {value!r}")
    return value


_options.register(sys.modules[__name__], {"numpy_rank_promotion": "rank_promotion"}, check=_check_rank_promotion)


def _rank_promotion(op: str, shapes) -> None:
    """Warn or raise (as configured) when operands of different non-zero ranks broadcast together."""
    if len({len(s) for s in shapes if len(s)}) < 2:
        return
    msg = (f"{op}: operands could not be combined with shapes {' '.join(map(str, shapes))} without implicit "
           f"rank promotion, which the config option jax_numpy_rank_promotion={rank_promotion!r} forbids "
           f"(at {user_location(4)}); add the missing leading axes explicitly (reshape / expand_dims / "
           "x[None]) or set the option to 'allow'")
    if rank_promotion == "raise":
        raise ValueError(msg)
    import warnings
    warnings.warn(msg, UserWarning, stacklevel=4)


def broadcast_all(op: str, xs, lazy: bool = False):
    """Operands broadcast to one shape. With `lazy`, concrete Arrays outside any transform are left as
    they are once the shapes are checked (for a backend call that broadcasts them itself)."""
    shape = xs[0].shape
    if len(xs) == 2:
        other = xs[1].shape
        if other == shape:
            return xs
        if rank_promotion != "allow":
            _rank_promotion(op, [shape, other])
        if lazy and xs[0].__class__ is Array and xs[1].__class__ is Array:
            for a, b in zip(shape[::-1], other[::-1]):  # NumPy's rule, checked without building the result
                if a != b and a != 1 and b != 1:
                    broadcast_shapes(shape, other, op=op)  # raises NumPy's error
            return xs
    if any(x.shape != shape for x in xs[1:]):
        if rank_promotion != "allow" and len(xs) != 2:
            _rank_promotion(op, [x.shape for x in xs])
        if lazy and all(x.__class__ is Array for x in xs):
            if not all(x.shape == () or x.shape == shape for x in xs):
                broadcast_shapes(*[x.shape for x in xs], op=op)  # raises for incompatible shapes
            return xs
        shape = broadcast_shapes(*[x.shape for x in xs], op=op)
        xs = [broadcast_to(x, shape) for x in xs]
    return xs


def promote_and_broadcast(op: str, *args, lazy: bool = False):
    """Operands of an elementwise NumPy function: converted, promoted to one dtype and one shape
    (see broadcast_all for `lazy`, used by the elementwise functions that bind one primitive)."""
    return broadcast_all(op, promote_args(op, *args), lazy)
