"""`funcgrad.numpy.ufunc` and `frompyfunc`: a universal function built from a scalar function written with
funcgrad operations, as jax.numpy.ufunc / jax.numpy.frompyfunc.

Calling it maps the scalar function over its broadcast arguments (`vectorize`); a binary one also gets
`reduce`, `accumulate`, `reduceat`, `outer` and `at` (inplace=False, as in JAX: arrays are immutable), each
replaceable by a faster implementation passed to the constructor (`call=`, `reduce=`, ...). The generic
methods fold or scan in order, so the function need not be associative; a multi-axis reduce needs an
identity (the function is then taken to be reorderable, as NumPy does). The built-in binary functions of
funcgrad.numpy (add, maximum, ...) carry the same methods (see _ufunc_methods.py).
"""
from __future__ import annotations

import operator
from typing import Callable

import numpy as np

from . import _ufunc_methods as m
from ._numerical import vectorize
from ._promote import asarray_any, broadcast_to


class ufunc:  # noqa: N801 - NumPy's and JAX's name
    """A universal function: `func` over broadcast arrays, with NumPy's ufunc methods when binary."""

    def __init__(self, func: Callable, /, nin: int, nout: int, *, name: str | None = None,
                 nargs: int | None = None, identity=None, call: Callable | None = None,
                 reduce: Callable | None = None, accumulate: Callable | None = None,
                 at: Callable | None = None, reduceat: Callable | None = None):
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self._func = func
        self.nin, self.nout = operator.index(nin), operator.index(nout)
        self.nargs = self.nin if nargs is None else operator.index(nargs)
        self.identity = identity
        self._call = call or vectorize(func)
        self._reduce, self._accumulate, self._at, self._reduceat = reduce, accumulate, at, reduceat

    def __repr__(self) -> str:
        return f"<funcgrad.numpy.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        if out is not None:
            raise TypeError(f"{self.__name__}: out= is not supported: funcgrad arrays are immutable")
        if where is not None:
            raise NotImplementedError(f"{self.__name__}: where= is not supported")
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes {self.nin} positional argument(s) but {len(args)} were "
                            "given")
        return self._call(*args)

    def _binary(self, method: str) -> None:
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{method} only supported for binary ufuncs with a single output; "
                             f"{self.__name__} has nin={self.nin}, nout={self.nout}")

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims: bool = False, initial=None, where=None):
        """Fold the function along `axis` (an int, a tuple, or None for all)."""
        self._binary("reduce")
        if self._reduce is not None:
            return self._reduce(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial,
                                where=where)
        return m._make_reduce(self.__name__, self._call, self.identity, None)(
            a, axis, dtype, out, keepdims, initial, True if where is None else where)

    def accumulate(self, a, axis: int = 0, dtype=None, out=None):
        """The running fold along `axis` (the first element, then f(previous, next), ...)."""
        self._binary("accumulate")
        if self._accumulate is not None:
            return self._accumulate(a, axis=axis, dtype=dtype, out=out)
        return m._make_accumulate(self.__name__, self._call, False)(a, axis, dtype, out)

    def reduceat(self, a, indices, axis: int = 0, dtype=None, out=None):
        """Reductions over the slices indices[i]:indices[i+1] along `axis`, as numpy.ufunc.reduceat."""
        self._binary("reduceat")
        if self._reduceat is not None:
            return self._reduceat(a, indices, axis=axis, dtype=dtype, out=out)
        return m._make_reduceat(self.__name__, self.reduce)(a, indices, axis, dtype, out)

    def outer(self, A, B, /):  # noqa: N803 - NumPy's names
        """f(A[i, j, ...], B[k, l, ...]) for every pair: the result's shape is A.shape + B.shape."""
        self._binary("outer")
        return m._make_outer(self.__name__, self._call)(A, B)

    def at(self, a, indices, b=None, /, *, inplace: bool = True):
        """a with a[indices] = f(a[indices], b) applied index by index (repeated indices apply again);
        inplace must be False, as in JAX."""
        if self._at is not None:
            return self._at(a, indices, b, inplace=inplace)
        if inplace:
            raise ValueError(f"{self.__name__}.at: funcgrad arrays are immutable and cannot be modified in "
                             "place; pass inplace=False to get the updated array instead")
        if b is None and self.nin != 1 or b is not None and self.nin != 2:
            raise TypeError(f"{self.__name__}.at: a {'unary' if self.nin == 1 else 'binary'} ufunc takes "
                            f"{'no second operand' if self.nin == 1 else 'a second operand b'}")
        x = asarray_any(a)
        picked = np.arange(x.size).reshape(x.shape)[_concrete_index(indices)]  # flat positions, in order
        flat = np.asarray(picked).reshape(-1)
        if b is not None:
            b = broadcast_to(asarray_any(b), np.shape(picked)).reshape(-1)
        out = x.reshape(-1)
        for k, p in enumerate(flat.tolist()):
            new = self._call(out[p]) if b is None else self._call(out[p], b[k])
            out = out.at[p].set(new)
        return out.reshape(x.shape)


def _concrete_index(indices):
    """indices with funcgrad arrays made NumPy ones (at's positions are worked out before the loop)."""
    if isinstance(indices, tuple):
        return tuple(_concrete_index(i) for i in indices)
    if hasattr(indices, "__array__") and not isinstance(indices, np.ndarray):
        return np.asarray(indices)
    return indices


def frompyfunc(func: Callable, /, nin: int, nout: int, *, identity=None) -> ufunc:
    """A ufunc from a scalar function written with funcgrad operations (jax.numpy.frompyfunc)."""
    return ufunc(func, nin, nout, identity=identity)


__all__ = ["ufunc", "frompyfunc"]
