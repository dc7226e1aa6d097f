"""The dtype names of funcgrad.numpy (float32, int64, bool, ...): dtype objects that are also callable.

As with NumPy's scalar types and JAX's, `jnp.float32(1.5)` makes a (0-d) array of that dtype, and the
name works wherever a dtype does: `x.dtype == jnp.float32`, `zeros(3, jnp.float32)`, `np.dtype(...)`,
dict keys (it hashes as its NumPy dtype) and dtype attributes (`.kind`, `.itemsize`, ...).
"""
from __future__ import annotations

import numpy as np
from ._creation import array


_DTYPE_LIKE: list = []  # dtype classes of higher layers (the torch face's), registered by them


def register_dtype_like(cls: type) -> None:
    """Let instances of `cls` (which carry a NumPy `.dtype`) compare equal to the scalar type of that dtype."""
    _DTYPE_LIKE.append(cls)


_KIND = {"b": "boolean", "i": "signed integer", "u": "unsigned integer", "f": "floating-point",
         "c": "complex floating-point", "V": "floating-point"}  # ("V": ml_dtypes' bfloat16)


class _DtypeDoc:
    """ScalarType's __doc__: the class's text on the class, each dtype's own text on an instance (so that
    help(jnp.float32) says what float32 is)."""

    def __init__(self, class_doc: str):
        self.class_doc = class_doc

    def __get__(self, obj, cls=None) -> str:
        if obj is None:
            return self.class_doc
        dt = obj.dtype
        bits = "" if dt.kind == "b" else f"{dt.itemsize * 8}-bit "
        wide = (dt.itemsize == 8 and dt.kind in "iuf") or dt.itemsize == 16
        return (f"The {dt.name} dtype ({bits}{_KIND.get(dt.kind, dt.kind)}), also a constructor: {dt.name}(x) "
                f"is x as a 0-d {dt.name} array." + (" The dtype is kept even with x64 off (JAX narrows it to "
                                                       "its 32-bit counterpart)." if wide else ""))


class ScalarType:
    __doc__ = _DtypeDoc("A dtype that is also a constructor of arrays of that dtype.")
    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)

    def __call__(self, x=0, /):
        """x as an array of this dtype (NumPy's values-to-dtype casting, e.g. float32(1.5) -> 1.5)."""
        return array(x, dtype=self.dtype)

    def __eq__(self, other) -> bool:
        """As JAX's: equal to the same dtype name, its NumPy dtype and NumPy scalar type
        (`x.dtype == jnp.float32`, `jnp.float32 == np.float32`), and a dtype object of the torch face
        standing for the same NumPy dtype; False for anything else (strings, values, dicts, None, ...),
        never raising and never calling into `other`."""
        if other is self:
            return True
        if isinstance(other, (ScalarType, *_DTYPE_LIKE)):
            return self.dtype == other.dtype
        if isinstance(other, np.dtype):
            return self.dtype == other
        if isinstance(other, type):
            return other is self.dtype.type
        return False

    def __ne__(self, other) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:  # as its NumPy dtype's (so it finds dict entries keyed by that dtype)
        return hash(self.dtype)

    def __getattr__(self, name):
        return getattr(self.dtype, name)

    def __repr__(self) -> str:
        return f"dtype('{self.dtype.name}')" if self.dtype.name != "bool" else "dtype('bool')"

    def __str__(self) -> str:
        return self.dtype.name

    def __reduce__(self):
        return ScalarType, (self.dtype,)
