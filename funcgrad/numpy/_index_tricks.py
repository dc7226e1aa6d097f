"""NumPy's index helpers: unravel_index, ravel_multi_index, tril/triu/diag indices, ix_, fill_diagonal.

Helpers that depend only on shapes compute their (concrete) index arrays directly; those taking
index arrays are written with funcgrad's functions, so they trace under jit and vmap."""
from __future__ import annotations

import math
import operator

import numpy as np

from .._src.core import dtypes
from .._src.core.array import to_array
from .._src.core.trace import Tracer
from .._src.prims import elementwise as ew
from . import _ufuncs as u
from ._manipulation import broadcast_arrays, clip as _clip, expand_dims, ravel, reshape, stack, tile
from ._promote import asarray_any
from ._sorting import nonzero, take_along_axis


def _dims(shape, op) -> tuple:
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    shape = tuple(operator.index(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"{op}: dimensions must be non-negative, got {shape}")
    return shape


def _int_indices(x, op):
    x = asarray_any(x)
    if not dtypes.is_integer(x.dtype):
        raise TypeError(f"{op}: only int indices permitted, got {x.dtype}")
    return ew.convert_element_type(x, dtypes.int64, x.weak_type)


def unravel_index(indices, shape, order="C"):
    """A tuple of coordinate arrays for flat `indices` into an array of `shape`, as numpy.unravel_index
    (out-of-range concrete indices raise ValueError; traced ones are clamped, as in JAX)."""
    dims = _dims(shape, "unravel_index")
    if order not in ("C", "F"):
        raise ValueError(f"unravel_index: order must be 'C' or 'F', got {order!r}")
    given = asarray_any(indices)
    idx = _int_indices(given, "unravel_index")
    size = math.prod(dims)
    c = _concrete(idx)
    if c is not None:
        if c.size and (c.min() < 0 or c.max() >= size):
            raise ValueError(f"unravel_index: index {int(c.max() if c.max() >= size else c.min())} is out of "
                             f"bounds for array with size {size}")
    elif size:
        idx = _clip(idx, 0, size - 1)
    out = []
    for d in (reversed(dims) if order == "C" else dims):
        out.append(u.remainder(idx, d) if d else idx)
        idx = u.floor_divide(idx, d) if d else idx
    out = [_like_given(o, given) for o in out]  # (computed in int64; as JAX, in the indices' dtype)
    return tuple(reversed(out)) if order == "C" else tuple(out)


def _like_given(x, given):
    return ew.convert_element_type(x, given.dtype, given.weak_type)


def _concrete(x):
    if isinstance(x, Tracer):
        return None
    return np.asarray(x)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """Flat indices of coordinate arrays into an array of shape `dims`, as numpy.ravel_multi_index
    (mode 'raise' checks concrete indices, 'wrap' and 'clip' map them into range)."""
    dims = _dims(dims, "ravel_multi_index")
    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: parameter multi_index must be a sequence of length {len(dims)}")
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    idx = []
    given = None
    for i, d, m in zip(multi_index, dims, modes):
        i = asarray_any(i)
        given = i if given is None else given
        i = _int_indices(i, "ravel_multi_index")
        if m == "wrap":
            i = u.remainder(i, d)
        elif m == "clip":
            i = _clip(i, 0, d - 1)
        elif m == "raise":
            c = _concrete(i)
            if c is not None and c.size and (c.min() < 0 or c.max() >= d):
                raise ValueError("ravel_multi_index: invalid entry in coordinates array")
        else:
            raise ValueError(f"ravel_multi_index: clipmode must be 'raise', 'wrap' or 'clip', got {m!r}")
        idx.append(i)
    strides = np.cumprod((1,) + (dims[::-1] if order == "C" else dims)[:-1])
    strides = strides[::-1] if order == "C" else strides
    out = u.multiply(idx[0], int(strides[0]))
    for i, s in zip(idx[1:], strides[1:]):
        out = u.add(out, u.multiply(i, int(s)))
    return _like_given(out, given)


def _pair(rows, cols):
    dt = dtypes.defaults.int_  # JAX's index dtype for the x64 mode
    return to_array(rows.astype(dt)), to_array(cols.astype(dt))


def tril_indices(n, k=0, m=None):
    """Row and column indices of the lower triangle (diagonal offset k) of an n x m array."""
    n, k = operator.index(n), operator.index(k)
    m = n if m is None else operator.index(m)
    r, c = np.nonzero(np.arange(m)[None, :] - np.arange(n)[:, None] <= k)
    return _pair(r, c)


def triu_indices(n, k=0, m=None):
    """Row and column indices of the upper triangle (diagonal offset k) of an n x m array."""
    n, k = operator.index(n), operator.index(k)
    m = n if m is None else operator.index(m)
    r, c = np.nonzero(np.arange(m)[None, :] - np.arange(n)[:, None] >= k)
    return _pair(r, c)


def _square_2d(arr, op):
    shape = tuple(asarray_any(arr).shape) if not isinstance(arr, np.ndarray) else arr.shape
    if len(shape) != 2:
        raise ValueError(f"{op}: input array must be 2-d, got shape {shape}")
    return shape


def tril_indices_from(arr, k=0):
    """tril_indices for arr's shape (arr must be 2-d)."""
    n, m = _square_2d(arr, "tril_indices_from")
    return tril_indices(n, k, m)


def triu_indices_from(arr, k=0):
    """triu_indices for arr's shape (arr must be 2-d)."""
    n, m = _square_2d(arr, "triu_indices_from")
    return triu_indices(n, k, m)


def diag_indices(n, ndim=2):
    """ndim copies of arange(n): the indices of the main diagonal of an n x ... x n array."""
    i = to_array(np.arange(operator.index(n), dtype=dtypes.defaults.int_))
    return (i,) * operator.index(ndim)


def diag_indices_from(arr):
    """diag_indices for arr, whose dimensions must all be equal (and at least 2)."""
    shape = tuple(asarray_any(arr).shape)
    if len(shape) < 2:
        raise ValueError("diag_indices_from: input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError(f"diag_indices_from: all dimensions of input must be of equal length, got {shape}")
    return diag_indices(shape[0], len(shape))


def ix_(*args):
    """Open-mesh index arrays from 1-d sequences (boolean ones through their nonzero positions), as
    numpy.ix_: the k-th has shape (1, ..., n_k, ..., 1)."""
    out = []
    nd = len(args)
    for k, a in enumerate(args):
        x = asarray_any(a) if not (isinstance(a, (list, tuple)) and len(a) == 0) else to_array(np.zeros(0, np.int64))
        if x.ndim != 1:
            raise ValueError(f"ix_: cross index must be 1 dimensional, got shape {tuple(x.shape)}")
        if x.dtype == dtypes.bool_:
            x = nonzero(x)[0]
        elif not dtypes.is_integer(x.dtype):
            raise TypeError(f"ix_: arrays used as indices must be of integer (or boolean) type, got {x.dtype}")
        out.append(reshape(x, (1,) * k + (x.shape[0],) + (1,) * (nd - k - 1)))
    return tuple(out)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """a with its main diagonal set to val (repeated cyclically), as numpy.fill_diagonal, but returning a
    new array: funcgrad arrays are immutable, so inplace=False is required (as in JAX)."""
    if inplace:
        raise ValueError("fill_diagonal: funcgrad arrays are immutable and cannot be modified in place; "
                         "pass inplace=False to get the updated array instead")
    x = asarray_any(a)
    if x.ndim < 2:
        raise ValueError("fill_diagonal: array must be at least 2-d")
    if x.ndim > 2 and len(set(x.shape)) != 1:
        raise ValueError(f"fill_diagonal: all dimensions of input must be of equal length, got {tuple(x.shape)}")
    if x.ndim == 2:
        n, m = x.shape
        step = m + 1
        end = n * m if wrap else min(n, m) * m
    else:
        step = int(sum(x.shape[0] ** i for i in range(x.ndim)))  # 1 + n + n**2 + ...
        end = x.size
    pos = to_array(np.arange(0, end, step, dtype=np.int64))
    v = ravel(asarray_any(val))
    if pos.shape[0] == 0 or v.size == 0:
        return x
    reps = -(-pos.shape[0] // v.shape[0])
    v = tile(v, reps)[:pos.shape[0]]
    flat = ravel(x).at[pos].set(ew.convert_element_type(v, x.dtype))
    return reshape(flat, x.shape)


def _index_mode(i, n, mode, op, negative_ok=True):
    """Integer indices i into a length-n axis under NumPy's mode ('raise' checks concrete ones;
    negative ones count from the end where negative_ok)."""
    if mode == "wrap":
        return u.remainder(i, n)
    if mode == "clip":
        return _clip(i, 0, n - 1)
    if mode in (None, "raise"):
        c = _concrete(i)
        if c is not None and c.size and (c.min() < (-n if negative_ok else 0) or c.max() >= n):
            raise IndexError(f"{op}: index {int(c.max() if c.max() >= n else c.min())} is out of bounds for "
                             f"size {n}")
        return u.where(u.less(i, 0), u.add(i, n), i)
    raise ValueError(f"{op}: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")


def put(a, ind, v, mode=None, *, inplace=True):
    """a with the flat positions `ind` set to v (repeated cyclically), as numpy.put, but returning a new
    array: funcgrad arrays are immutable, so inplace=False is required (as in JAX)."""
    if inplace:
        raise ValueError("put: funcgrad arrays are immutable and cannot be modified in place; "
                         "pass inplace=False to get the updated array instead")
    x = asarray_any(a)
    idx = ravel(_int_indices(ind, "put"))
    vals = ravel(asarray_any(v))
    if idx.shape[0] == 0 or vals.shape[0] == 0:
        return x
    if x.size == 0:
        raise IndexError("put: cannot replace in an empty array")
    idx = _index_mode(idx, x.size, mode, "put")
    vals = tile(vals, -(-idx.shape[0] // vals.shape[0]))[:idx.shape[0]]
    return reshape(ravel(x).at[idx].set(ew.convert_element_type(vals, x.dtype)), x.shape)


def place(arr, mask, vals, *, inplace=True):
    """arr with its positions where `mask` is True set to the first values of `vals` in order (repeated
    cyclically), as numpy.place, but returning a new array: inplace=False is required (as in JAX). The
    mask must be concrete: how many values are placed depends on it."""
    if inplace:
        raise ValueError("place: funcgrad arrays are immutable and cannot be modified in place; "
                         "pass inplace=False to get the updated array instead")
    x = asarray_any(arr)
    m = np.asarray(mask, dtype=bool)
    if m.size != x.size:
        raise ValueError(f"place: mask and data must be the same size, got {m.size} and {x.size}")
    positions = np.flatnonzero(m)
    if positions.size == 0:
        return x
    vals = ravel(asarray_any(vals))
    if vals.shape[0] == 0:
        raise ValueError("place: cannot insert from an empty array")
    vals = tile(vals, -(-positions.size // vals.shape[0]))[:positions.size]
    return reshape(ravel(x).at[positions].set(ew.convert_element_type(vals, x.dtype)), x.shape)


def choose(a, choices, out=None, mode="raise"):
    """Entries picked from `choices` by the integer array a (all broadcast together), as numpy.choose."""
    if out is not None:
        raise TypeError("choose: out= is not supported: funcgrad arrays are immutable; use the return value")
    idx = _int_indices(a, "choose")
    cs = [asarray_any(c) for c in choices]
    if not cs:
        raise ValueError("choose: choices must not be empty")
    idx, *cs = broadcast_arrays(idx, *cs)
    idx = _index_mode(idx, len(cs), mode, "choose", negative_ok=False)
    return take_along_axis(stack(cs), expand_dims(idx, 0), 0)[0]


def iterable(y) -> bool:
    """Whether y can be iterated over (a 0-d array cannot), as numpy.iterable."""
    try:
        iter(y)
    except TypeError:
        return False
    return True
