"""Operators and methods of Arrays and tracers, attached here so both share one implementation."""
from __future__ import annotations

import numpy as np

from .._src.core import dtypes
from .._src.core.array import Array, ArrayBase
from .._src.core.trace import Tracer
from .._src.prims import elementwise as ew
from ..lax._elementwise import convert_element_type as _xla_convert
from . import _manipulation as m
from . import _products as _p
from . import _reductions as r
from . import _ufuncs as u
from ._device import put
from ._promote import asarray_any
from ._sorting import compress


def _swap(f):
    return lambda self, other: f(other, self)


def _astype(self, dtype, copy=False):
    """The array converted to `dtype` (always strongly typed), as ndarray.astype."""
    return _xla_convert(self, dtypes.canonicalize(dtype))


def _is_int_like(v) -> bool:
    return isinstance(v, (int, np.integer)) or (hasattr(v, "__index__") and not hasattr(v, "__len__"))


def _reshape(self, *shape, order="C"):
    """a.reshape(2, 3) or a.reshape((2, 3)), as ndarray.reshape."""
    if len(shape) == 1 and not _is_int_like(shape[0]):
        shape = shape[0]
    return m.reshape(self, shape, order)


def _transpose(self, *axes):
    """a.transpose(1, 0) or a.transpose((1, 0)); no arguments reverses the axes."""
    if len(axes) == 1 and (axes[0] is None or not _is_int_like(axes[0])):
        axes = axes[0]
    return m.transpose(self, axes or None)


def _round(self, decimals=0, out=None):
    """The array rounded to `decimals` places (ties to even), as ndarray.round."""
    return u.round(self, decimals, out)


_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


def _array_namespace(self, /, *, api_version=None):
    """funcgrad.numpy, the Array API namespace (a superset of versions 2021.12 to 2024.12)."""
    if api_version is not None and api_version not in _API_VERSIONS:
        raise ValueError(f"__array_namespace__: api_version={api_version!r} is not supported; "
                         f"funcgrad.numpy implements the Array API versions {', '.join(_API_VERSIONS)}")
    import funcgrad.numpy  # (cycle: the namespace imports this module)
    return funcgrad.numpy


def _to_device(self, device, /, stream=None):
    """The array on `device` (a Device from funcgrad.devices() or its name, e.g. 'cpu')."""
    return put(self, device, "to_device")


def _compress(self, condition, axis=None, out=None):
    """The entries (or slices along axis) where condition is true, as ndarray.compress."""
    return compress(condition, self, axis, out=out)


def _mT(self):
    if self.ndim < 2:
        raise ValueError(f"mT: matrix transpose needs at least 2 dimensions, got shape {tuple(self.shape)}")
    return m.swapaxes(self, -1, -2)


def _copy(self):
    """A new Array with its own buffer, as in JAX: it outlives a delete() or a jit donation of this one.
    (A tracer is its own copy.)"""
    return Array(self._buf.copy(), self.weak_type) if self.__class__ is Array else self


def attach(cls) -> None:
    """Install NumPy-style operators and methods on `cls` (Array and Tracer share ArrayBase)."""
    ops = {
        "__add__": u.add, "__radd__": _swap(u.add),
        "__sub__": u.subtract, "__rsub__": _swap(u.subtract),
        "__mul__": u.multiply, "__rmul__": _swap(u.multiply),
        "__truediv__": u.true_divide, "__rtruediv__": _swap(u.true_divide),
        "__pow__": u.power, "__rpow__": _swap(u.power),
        "__matmul__": _p.matmul, "__rmatmul__": _swap(_p.matmul),
        "__floordiv__": u.floor_divide, "__rfloordiv__": _swap(u.floor_divide),
        "__mod__": u.remainder, "__rmod__": _swap(u.remainder),
        "__divmod__": u.divmod, "__rdivmod__": _swap(u.divmod),
        "__and__": u.bitwise_and, "__rand__": _swap(u.bitwise_and),
        "__or__": u.bitwise_or, "__ror__": _swap(u.bitwise_or),
        "__xor__": u.bitwise_xor, "__rxor__": _swap(u.bitwise_xor),
        "__lshift__": u.left_shift, "__rlshift__": _swap(u.left_shift),
        "__rshift__": u.right_shift, "__rrshift__": _swap(u.right_shift),
        "__neg__": u.negative, "__pos__": u.positive, "__abs__": u.absolute, "__invert__": u.invert,
        "__eq__": u.equal, "__ne__": u.not_equal,
        "__lt__": u.less, "__le__": u.less_equal, "__gt__": u.greater, "__ge__": u.greater_equal,
    }
    for name, f in ops.items():
        setattr(cls, name, _operator(name, f))
    cls.__hash__ = None
    methods = {
        "astype": _astype, "reshape": _reshape, "transpose": _transpose,
        "sum": r.sum, "mean": r.mean, "prod": r.prod, "max": r.max, "min": r.min,
        "argmax": r.argmax, "argmin": r.argmin,
        "squeeze": m.squeeze, "ravel": m.ravel, "flatten": m.ravel, "dot": _p.dot,
        "clip": m.clip, "swapaxes": m.swapaxes, "copy": _copy,
        "conj": u.conjugate, "conjugate": u.conjugate, "round": _round,
        "__array_namespace__": _array_namespace,
    }
    for name in ("all", "any", "cumsum", "cumprod", "var", "std", "ptp", "diagonal", "trace", "repeat",
                 "take", "sort", "argsort", "nonzero", "searchsorted", "flatten", "argpartition"):
        methods.setdefault(name, _namespace_method(name))
    methods["flatten"] = m.ravel
    methods["to_device"] = _to_device
    methods["compress"] = _compress
    for name, f in methods.items():
        setattr(cls, name, f)
    cls.itemsize = property(lambda self: self.dtype.itemsize, doc="Bytes per element, as ndarray.itemsize.")
    cls.nbytes = property(lambda self: self.size * self.dtype.itemsize, doc="Bytes of all elements.")
    cls.real = property(u.real, doc="The real part (the array itself for real dtypes).")
    cls.imag = property(u.imag, doc="The imaginary part (zeros for real dtypes).")
    cls.T = property(lambda self: m.transpose(self))
    cls.mT = property(_mT, doc="The transpose of the last two axes (a stack of matrices).")
    for name, op in _IN_PLACE.items():
        setattr(cls, name, _in_place(name, getattr(cls, op)))


def _namespace_method(name):
    """x.name(...) as funcgrad.numpy.name(x, ...), looked up at call time (as JAX's Array methods;
    `sort` returns a sorted copy, since arrays are immutable)."""
    def method(self, *args, **kwargs):
        from .. import numpy as fnp  # (cycle: the namespace imports this module)
        return getattr(fnp, name)(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"Same as funcgrad.numpy.{name}(self, ...)."
    return method


_UNARY = ("__neg__", "__pos__", "__abs__", "__invert__")


def _operator(name, f):
    if name in _UNARY:
        def op(self, /):
            return f(self)
    else:
        def op(self, other, /):
            c = other.__class__
            if c is Array or c is Tracer or c is float or c is int:
                return f(self, other)
            if not isinstance(other, (ArrayBase, int, float, complex, bool)) and not hasattr(other, "__array__") \
                    and not isinstance(other, (list, tuple)):
                return NotImplemented
            return f(self, other)
    op.__name__ = name
    return op


_IN_PLACE = {"__iadd__": "__add__", "__isub__": "__sub__", "__imul__": "__mul__", "__itruediv__": "__truediv__",
             "__ifloordiv__": "__floordiv__", "__imod__": "__mod__", "__ipow__": "__pow__",
             "__imatmul__": "__matmul__", "__iand__": "__and__", "__ior__": "__or__", "__ixor__": "__xor__",
             "__ilshift__": "__lshift__", "__irshift__": "__rshift__"}


def _in_place(name, f):
    """x op= y: rebinds x to x op y (arrays are immutable), which must keep x's shape and dtype, as the
    Array API requires and NumPy enforces: a result of the same kind is cast back to x's dtype (float32 +=
    float64 stays float32), another kind (int += float) raises TypeError, a new shape raises ValueError."""
    def op(self, other, /):
        out = f(self, other)
        if out is NotImplemented:
            return out
        if out.shape != self.shape:
            raise ValueError(f"{name}: the result's shape {tuple(out.shape)} differs from the in-place "
                             f"operand's shape {tuple(self.shape)} (an in-place operation cannot broadcast it)")
        if out.dtype != self.dtype:
            if not np.can_cast(out.dtype, self.dtype, "same_kind"):
                raise TypeError(f"{name}: cannot cast the result from {out.dtype} to the in-place operand's "
                                f"dtype {self.dtype} (same_kind casting rule)")
            out = ew.convert_element_type(out, self.dtype)
        return out
    op.__name__ = name
    return op


attach(ArrayBase)
