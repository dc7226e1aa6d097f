"""NumPy's ufunc methods on funcgrad.numpy's binary functions: `reduce`, `accumulate`, `reduceat`, `outer`
and `at` (the last returning a new array, inplace=False, as in JAX), plus `nin`/`nout`/`nargs`/`identity`.

The functions themselves stay plain functions (the dispatch hot path is unchanged); the methods are
attributes attached here. Reductions and scans map to funcgrad's reductions and `lax` scans where one
exists, and otherwise fold along the axis."""
from __future__ import annotations

import operator

import numpy as np

from .._src.core import dtypes
from . import _ufuncs as u
from ._manipulation import expand_dims, moveaxis, stack
from ._promote import asarray_any, normalize_index

# name -> (identity, the matching reduction in funcgrad.numpy, associative)
_BINARY = {
    "add": (0, "sum", True), "multiply": (1, "prod", True), "maximum": (None, "max", True),
    "minimum": (None, "min", True), "logical_and": (True, "all", True), "logical_or": (False, "any", True),
    "logical_xor": (False, None, True), "bitwise_and": (-1, None, True), "bitwise_or": (0, None, True),
    "bitwise_xor": (0, None, True), "fmax": (None, None, True), "fmin": (None, None, True),
    "subtract": (None, None, False), "divide": (None, None, False), "true_divide": (None, None, False),
    "floor_divide": (None, None, False), "power": (None, None, False), "remainder": (None, None, False),
    "mod": (None, None, False), "fmod": (None, None, False), "arctan2": (None, None, False),
    "hypot": (0, None, True), "logaddexp": (-np.inf, None, True), "logaddexp2": (-np.inf, None, True),
    "equal": (None, None, False), "not_equal": (None, None, False), "less": (None, None, False),
    "less_equal": (None, None, False), "greater": (None, None, False), "greater_equal": (None, None, False),
    "gcd": (0, None, True), "lcm": (None, None, True), "left_shift": (None, None, False),
    "right_shift": (None, None, False), "copysign": (None, None, False), "nextafter": (None, None, False),
    "heaviside": (None, None, False), "float_power": (None, None, False), "ldexp": (None, None, False),
}
_SCANS = {"add": "cumsum", "multiply": "cumprod", "maximum": "cummax", "minimum": "cummin"}


def _fnp():
    from .. import numpy as fnp  # (cycle: the namespace imports this module)
    return fnp


def _operand(name, array, dtype):
    """The array as the ufunc's loop sees it: logical_* work on bools."""
    x = asarray_any(array)
    if dtype is not None:
        x = x.astype(dtype)
    if name.startswith("logical_") and x.dtype != dtypes.bool_:
        x = u.not_equal(x, 0)
    return x


def _move_first(x, axis, op):
    return moveaxis(x, normalize_index(axis, x.ndim, op), 0)


def _make_reduce(name, f, identity, reduction):
    def reduce(array, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=True):
        if out is not None:
            raise TypeError(f"{name}.reduce: out= is not supported: funcgrad arrays are immutable")
        fnp = _fnp()
        x = _operand(name, array, dtype)
        kw = {"keepdims": keepdims}
        if reduction is not None:
            if where is not True:
                kw["where"] = where
            if initial is not None:
                kw["initial"] = initial
            if reduction in ("sum", "prod") and dtype is not None:
                kw["dtype"] = dtype
            return getattr(fnp, reduction)(x, axis=axis, **kw)
        if where is not True:
            raise NotImplementedError(f"{name}.reduce: where= is supported for add, multiply, maximum, minimum, "
                                      "logical_and and logical_or")
        axes = tuple(range(x.ndim)) if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
        axes = sorted((normalize_index(a, x.ndim, f"{name}.reduce") for a in axes), reverse=True)
        if len(axes) > 1 and identity is None:
            raise ValueError(f"reduction operation '{name}' is not reorderable, so at most one axis may be "
                             "specified")
        for ax in axes:
            x = _fold(f, name, x, ax, identity, initial, keepdims)
        return x

    return reduce


def _fold(f, name, x, ax, identity, initial, keepdims):
    y = _move_first(x, ax, f"{name}.reduce")
    n = y.shape[0]
    if n == 0:
        if initial is None and identity is None:
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
        acc = u.add(_fnp().zeros(y.shape[1:], y.dtype), identity if initial is None else initial)
    else:
        acc = y[0] if initial is None else f(initial, y[0])
        for i in range(1, n):
            acc = f(acc, y[i])
    return expand_dims(acc, ax) if keepdims else acc


def _make_accumulate(name, f, associative):
    def accumulate(array, axis=0, dtype=None, out=None):
        if out is not None:
            raise TypeError(f"{name}.accumulate: out= is not supported: funcgrad arrays are immutable")
        from .. import lax  # (cycle: lax.linalg imports numpy, a listed arrow)
        x = _operand(name, array, dtype)
        ax = normalize_index(axis, x.ndim, f"{name}.accumulate")
        if name in _SCANS and not (name in ("add", "multiply") and x.dtype == dtypes.bool_):
            return getattr(lax, _SCANS[name])(x, axis=ax) if name in ("maximum", "minimum") else \
                getattr(_fnp(), _SCANS[name])(x, axis=ax, dtype=dtype)
        if associative and x.shape[ax] > 0:
            return lax.associative_scan(f, x, axis=ax)
        y = _move_first(x, ax, f"{name}.accumulate")
        if y.shape[0] == 0:
            return x
        outs = [y[0]]
        for i in range(1, y.shape[0]):
            outs.append(f(outs[-1], y[i]))
        return moveaxis(stack(outs), 0, ax)

    return accumulate


def _make_reduceat(name, reduce):
    def reduceat(array, indices, axis=0, dtype=None, out=None):
        if out is not None:
            raise TypeError(f"{name}.reduceat: out= is not supported: funcgrad arrays are immutable")
        x = _operand(name, array, None)
        ax = normalize_index(axis, x.ndim, f"{name}.reduceat")
        idx = [operator.index(i) for i in np.asarray(indices).tolist()]
        y = moveaxis(x, ax, 0)
        n = y.shape[0]
        parts = []
        for k, i in enumerate(idx):
            if not 0 <= i < n:
                raise IndexError(f"{name}.reduceat: index {i} out-of-bounds in reduceat (size {n})")
            j = idx[k + 1] if k + 1 < len(idx) else n
            parts.append(reduce(y[i:j], axis=0, dtype=dtype) if i < j else
                         (y[i] if dtype is None else y[i].astype(dtype)))
        return moveaxis(stack(parts), 0, ax)

    return reduceat


def _make_outer(name, f):
    def outer(A, B, /, **kwargs):  # noqa: N803 - NumPy's names
        if kwargs.get("out") is not None:
            raise TypeError(f"{name}.outer: out= is not supported: funcgrad arrays are immutable")
        a, b = asarray_any(A), asarray_any(B)
        return f(a.reshape(tuple(a.shape) + (1,) * b.ndim), b)

    return outer


_AT = {"add": "add", "multiply": "mul", "maximum": "max", "minimum": "min"}


def _make_at(name, f):
    def at(a, indices, b=None, /, *, inplace=True):
        if inplace:
            raise ValueError(f"{name}.at: funcgrad arrays are immutable and cannot be modified in place; "
                             "pass inplace=False to get the updated array instead")
        x = asarray_any(a)
        if b is None:
            raise TypeError(f"{name}.at: a second operand b is required for a binary ufunc")
        if name in _AT:
            return getattr(x.at[indices], _AT[name])(b)
        if name == "subtract":
            return x.at[indices].add(u.negative(asarray_any(b)))
        raise NotImplementedError(f"{name}.at: supported for add, subtract, multiply, maximum and minimum "
                                  "(repeated indices accumulate)")

    return at


def attach(namespace) -> None:
    """Give each binary ufunc of `namespace` NumPy's ufunc methods and attributes."""
    for name, (identity, reduction, associative) in _BINARY.items():
        f = getattr(namespace, name, None)
        if f is None or hasattr(f, "reduce"):
            continue
        f.reduce = _make_reduce(name, f, identity, reduction)
        f.accumulate = _make_accumulate(name, f, associative)
        f.reduceat = _make_reduceat(name, f.reduce)
        f.outer = _make_outer(name, f)
        f.at = _make_at(name, f)
        f.nin, f.nout, f.nargs, f.identity = 2, 1, 3, identity
        for m in ("reduce", "accumulate", "reduceat", "outer", "at"):
            getattr(f, m).__name__ = m
            getattr(f, m).__qualname__ = f"{name}.{m}"
            getattr(f, m).__doc__ = f"numpy.{name}.{m} (see funcgrad.numpy._ufunc_methods)."
