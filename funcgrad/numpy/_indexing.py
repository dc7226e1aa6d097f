"""NumPy indexing for reads (x[idx]) on Arrays and tracers.

Basic indexing (ints, slices, None, Ellipsis) lowers to slice/rev/reshape; advanced (integer array or
boolean mask) indexing lowers to gather.
"""
from __future__ import annotations

import numpy as np

from .._src.core.array import Array, ArrayBase
from .._src.core.errors import ConcretizationError, NonConcreteSliceError, user_location
from .._src.core.primitive import _rec_state, hooks
from .._src.prims import shape as sh


def _expand_index(idx, ndim: int) -> list:
    """The index as a list with Ellipsis expanded; None entries kept."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    n_ell = sum(1 for i in idx if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for i in idx if i is not None and i is not Ellipsis and not _is_bool_mask(i)
                   and not _is_bool_scalar(i)) \
        + sum(np.ndim(i) for i in idx if _is_bool_mask(i))
    if consumed > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but {consumed} were "
                         f"indexed (at {user_location(3)})")
    out = []
    for i in idx:
        if i is Ellipsis:
            out.extend([slice(None)] * (ndim - consumed))
        else:
            out.append(i)
    if n_ell == 0:
        out.extend([slice(None)] * (ndim - consumed))
    return out


def _is_bool_mask(i) -> bool:
    return (isinstance(i, (ArrayBase, np.ndarray)) and i.dtype == np.bool_) or \
        (isinstance(i, list) and len(i) > 0 and all(isinstance(v, bool) for v in i))


def _is_bool_scalar(i) -> bool:
    """A Python/NumPy bool index adds a dimension of size 1 (True) or 0 (False), as in NumPy."""
    return isinstance(i, (bool, np.bool_))


def _is_advanced(i) -> bool:
    if _is_bool_scalar(i):
        return True
    return isinstance(i, (ArrayBase, np.ndarray, list)) or (
        not isinstance(i, (slice, int, np.integer, type(None))) and i is not Ellipsis)


def slice_indices(s: slice, n: int) -> tuple:
    """s.indices(n), with JAX's IndexError for a traced start, stop or step."""
    try:
        return s.indices(n)
    except ConcretizationError:
        raise NonConcreteSliceError(
            f"Slice entries must be static integers; got {s} at {user_location(4)}. Under jit or vmap a "
            "slice bound that depends on an argument is not known while tracing: use "
            "funcgrad.lax.dynamic_slice(x, (start,), (size,)) for a traced start with a static size, or "
            "mark the argument static.") from None


def getitem(x, idx):
    """x[idx] with NumPy semantics."""
    if idx.__class__ is int:  # the hot path, x[i]: a slice of the first dimension, then a reshape
        if x.__class__ is Array and (not hooks.active or _rec_state.rec is None):
            buf = x._buf  # concrete and not recorded: the view slice + reshape would make, made directly
            if buf.ndim and -buf.shape[0] <= idx < buf.shape[0]:
                return Array(buf[idx, ...], x.weak_type)
        shape = tuple(x.shape)
        if shape and -shape[0] <= idx < shape[0]:
            k = idx % shape[0]
            rest = (0,) * (len(shape) - 1)
            y = sh.slice_p.bind(x, start_indices=(k,) + rest, limit_indices=(k + 1,) + shape[1:],
                                strides=(1,) * len(shape))
            return sh.reshape_p.bind(y, new_sizes=shape[1:])
    elif idx.__class__ is slice:  # x[a:b:k], k > 0: one slice of the first dimension
        shape = tuple(x.shape)
        if shape:
            start, stop, step = slice_indices(idx, shape[0])
            if step > 0:
                size = max(0, -(-(stop - start) // step))
                limit = start + (size - 1) * step + 1 if size else start
                rest = (0,) * (len(shape) - 1)
                return sh.slice(x, (start,) + rest, (limit,) + shape[1:], (step,) + (1,) * len(rest))
    elif idx.__class__ is tuple and len(idx) <= len(x.shape):
        for i in idx:  # ints and slices only: basic indexing without the general normalisation
            if i.__class__ is not int and i.__class__ is not slice:
                break
        else:
            return basic_getitem(x, list(idx) + [slice(None)] * (len(x.shape) - len(idx)))
    items = _expand_index(idx, x.ndim)
    if any(_is_advanced(i) for i in items):
        from ._advanced_indexing import advanced_getitem  # (cycle: _advanced_indexing builds on basic_getitem here)
        return advanced_getitem(x, items)
    return basic_getitem(x, items)


def basic_getitem(x, items):
    starts, limits, strides, flips = [], [], [], []
    out_shape = []
    dim = 0
    for i in items:
        if i is None:
            out_shape.append(1)
            continue
        n = x.shape[dim]
        if isinstance(i, slice):
            start, stop, step = slice_indices(i, n)
            if step > 0:
                size = max(0, -(-(stop - start) // step))
                starts.append(start)
                limits.append(start + (size - 1) * step + 1 if size else start)
                strides.append(step)
            else:
                size = max(0, -(-(start - stop) // -step))
                # Reverse the dimension, then take a positive-stride slice of it.
                lo = n - 1 - start
                starts.append(lo)
                limits.append(lo + (size - 1) * (-step) + 1 if size else lo)
                strides.append(-step)
                flips.append(dim)
            out_shape.append(size)
        else:
            k = int(i)
            if n == 0:
                raise IndexError(f"index {k} is out of bounds for axis {dim} with size 0 "
                                 f"(at {user_location(3)})")
            k = min(max(k + n if k < 0 else k, 0), n - 1)  # JAX clamps an out-of-range int read
            starts.append(k)
            limits.append(k + 1)
            strides.append(1)
        dim += 1
    y = sh.rev(x, flips) if flips else x
    y = sh.slice(y, starts, limits, strides)
    if tuple(out_shape) != tuple(y.shape):
        y = sh.reshape(y, out_shape)
    return y


def attach(cls) -> None:
    cls.__getitem__ = getitem


attach(ArrayBase)
