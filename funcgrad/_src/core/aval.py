"""Abstract values: what a tracer knows about an array (shape, dtype, weak type) without its contents."""
from __future__ import annotations

import math

import numpy as np

from . import dtypes


class Shaped:
    """The shape queries of everything with a `shape` tuple: avals, ShapeDtypeStruct, Array and tracers."""
    __slots__ = ()

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)


class ShapedArray(Shaped):
    """The abstract value of an array: shape, dtype and whether its dtype is weak (from a Python scalar)."""
    __slots__ = ("shape", "dtype", "weak_type", "_hash")

    def __init__(self, shape, dtype, weak_type: bool = False):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)

    def update(self, shape=None, dtype=None, weak_type=None) -> "ShapedArray":
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def str_short(self) -> str:
        return f"{dtypes.short_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    def _key(self):
        return (self.shape, self.dtype, self.weak_type)

    def __eq__(self, other) -> bool:
        return isinstance(other, ShapedArray) and self._key() == other._key()

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:  # (computed on first use: most avals are never hashed)
            h = self._hash = hash(self._key())
            return h

    def __str__(self) -> str:
        """As JAX prints an aval: the dtype's full name and the shape, e.g. float32[2,3]."""
        return f"{self.dtype.name}[{','.join(map(str, self.shape))}]"

    def __repr__(self) -> str:
        return f"ShapedArray({self}{', weak_type=True' if self.weak_type else ''})"


_interned: dict = {}


def shaped(shape: tuple, dtype: np.dtype, weak_type: bool) -> ShapedArray:
    """The ShapedArray for an already normalised (tuple of ints, numpy dtype, bool) triple, shared:
    avals are never mutated, and tracing makes one per recorded value, so reuse saves the constructor."""
    key = (shape, dtype, weak_type)
    av = _interned.get(key)
    if av is None:
        if len(_interned) >= 4096:
            _interned.clear()
        av = _interned[key] = ShapedArray(shape, dtype, weak_type)
    return av


class ShapeDtypeStruct(Shaped):
    """A stand-in for an array of a given shape and dtype: input to `eval_shape`, `pure_callback`'s
    result shapes, and what `eval_shape` returns."""
    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape, dtype, *, sharding=None, weak_type: bool = False):
        try:
            self.shape = tuple(int(d) for d in shape)
        except TypeError:
            raise TypeError(f"ShapeDtypeStruct: shape must be a sequence of ints, got {shape!r}") from None
        if dtype is None:
            raise ValueError("ShapeDtypeStruct: dtype must be given")
        self.dtype = dtypes.canonicalize(dtype)
        self.weak_type = bool(weak_type)
        self.sharding = sharding

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype, self.weak_type)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __eq__(self, other) -> bool:
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"
