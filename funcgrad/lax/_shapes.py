"""lax's shape functions: the shape and dynamic-slicing cards under their lax names, and the ones
composed of them (reshape with dimensions, full, broadcast, slicing and indexing along one axis,
collapse, split, tile, stack/unstack) and the shape rules broadcast_shapes and
reduce_window_shape_tuple."""
from __future__ import annotations

import operator

import numpy as np

from .._src.core.array import ArrayBase, canonical_array
from .._src.prims import shape as _sh
from .._src.prims.dynamic_slicing import (dynamic_index_in_dim, dynamic_slice, dynamic_slice_in_dim,
                                          dynamic_update_slice, dynamic_update_slice_in_dim)
from .._src.core.errors import IncompatibleShapesError, user_location
from .._src.prims.shape import (broadcast_in_dim, broadcasted_iota, concatenate, expand_dims, iota, pad, rev,
                                squeeze, transpose)

__all__ = ["broadcast", "broadcast_in_dim", "broadcast_shapes", "broadcast_to_rank", "broadcasted_iota",
           "collapse", "concatenate", "dynamic_index_in_dim", "dynamic_slice", "dynamic_slice_in_dim",
           "dynamic_update_index_in_dim", "dynamic_update_slice", "dynamic_update_slice_in_dim", "empty",
           "expand_dims", "full", "full_like", "index_in_dim", "iota", "pad", "reduce_window_shape_tuple",
           "reshape", "rev", "slice", "slice_in_dim", "split", "squeeze", "stack", "tile", "transpose",
           "unstack"]


def _arr(x):
    return x if isinstance(x, ArrayBase) else canonical_array(x)


def reshape(operand, new_sizes, dimensions=None):
    """lax.reshape; `dimensions` (a transpose applied first) as in JAX."""
    if dimensions is not None:
        operand = transpose(operand, dimensions)
    return _sh.reshape(operand, new_sizes)


def full(shape, fill_value, dtype=None, *, sharding=None):
    """lax.full: an array of `shape` filled with `fill_value` (a scalar; without `dtype`, its dtype: a Python
    scalar's weak default one, a NumPy scalar's canonical one for the x64 mode)."""
    if dtype is None:
        v = canonical_array(fill_value)
        if v.ndim:
            raise TypeError(f"lax.full: fill_value must be a scalar, got shape {tuple(v.shape)}")
        return broadcast_in_dim(v, tuple(shape), ())
    return _sh.full(shape, fill_value, dtype)


def full_like(x, fill_value, dtype=None, shape=None):
    """An array like x (its shape and dtype unless `shape` or `dtype` is given) filled with fill_value, as
    jax.lax.full_like (no sharding argument)."""
    return full(x.shape if shape is None else shape, fill_value, x.dtype if dtype is None else dtype)


def empty(shape, dtype, *, out_sharding=None):
    """An array of `shape` and `dtype` whose contents are unspecified (here: zeros)."""
    return _sh.full(shape, 0, dtype)


def broadcast(operand, sizes):
    """Add leading dimensions `sizes` to operand."""
    x = _arr(operand)
    sizes = tuple(operator.index(s) for s in sizes)
    return broadcast_in_dim(x, sizes + tuple(x.shape), tuple(range(len(sizes), len(sizes) + x.ndim)))


def broadcast_to_rank(x, rank: int):
    """x with leading length-1 axes added up to `rank` dimensions (x itself if it has that many)."""
    x = _arr(x)
    if rank < x.ndim:
        raise ValueError(f"broadcast_to_rank: cannot lower the rank of an array of shape {x.shape} to {rank}")
    return x if rank == x.ndim else _sh.reshape(x, (1,) * (rank - x.ndim) + tuple(x.shape))


def broadcast_shapes(*shapes) -> tuple:
    """The NumPy broadcast of shapes (ValueError if they are incompatible)."""
    shapes = [tuple(int(d) for d in s) for s in shapes]
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}") from None


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001 - lax's name
    """operand[start:limit:stride] per dimension, as jax.lax.slice: bounds outside the operand raise (JAX's
    TypeError, a ValueError too), where the engine's slice, as NumPy's, would clip them."""
    x = _arr(operand)
    starts, limits = tuple(operator.index(i) for i in start_indices), tuple(operator.index(i) for i in limit_indices)
    if len(starts) != x.ndim or len(limits) != x.ndim or \
            any(not 0 <= s <= lim <= n for s, lim, n in zip(starts, limits, x.shape)):
        raise IncompatibleShapesError(f"slice: start_indices {starts} and limit_indices {limits} must have one "
                                      f"entry per dimension of the operand of shape {tuple(x.shape)}, with "
                                      f"0 <= start <= limit <= size (at {user_location(2)})")
    if strides is not None:
        strides = tuple(operator.index(i) for i in strides)
        if len(strides) != x.ndim or any(st < 1 for st in strides):  # (NumPy would step backwards or fail)
            raise IncompatibleShapesError(f"slice: strides {strides} must have one entry per dimension of the "
                                          f"operand of shape {tuple(x.shape)}, each >= 1 (at {user_location(2)})")
    return _sh.slice(x, starts, limits, strides)


def slice_in_dim(operand, start_index, limit_index, stride: int = 1, axis: int = 0):
    """operand[start:limit:stride] along `axis` (None start/limit: the ends; negatives count from the end)."""
    x = _arr(operand)
    axis = operator.index(axis) % x.ndim
    n = x.shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = n if limit_index is None else operator.index(limit_index)
    start = start + n if start < 0 else start
    limit = limit + n if limit < 0 else limit
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return _sh.slice(x, tuple(starts), tuple(limits), tuple(strides))


def index_in_dim(operand, index, axis: int = 0, keepdims: bool = True):
    """operand[index] along `axis` (a static int), keeping that axis (size 1) unless keepdims=False."""
    x = _arr(operand)
    axis = operator.index(axis) % x.ndim
    n = x.shape[axis]
    i = operator.index(index)
    if not -n <= i < n:
        raise IndexError(f"index_in_dim: index {i} is out of bounds for axis {axis} with size {n}")
    i %= n
    out = slice_in_dim(x, i, i + 1, 1, axis)
    return out if keepdims else _sh.squeeze(out, (axis,))


def dynamic_update_index_in_dim(operand, update, index, axis: int):
    """operand with `update` written at run-time `index` along `axis` (update may lack that axis)."""
    operand, update = _arr(operand), _arr(update)
    axis = operator.index(axis) % operand.ndim
    if update.ndim == operand.ndim - 1:
        update = _sh.expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis)


def collapse(operand, start_dimension: int, stop_dimension: int | None = None):
    """Merge dimensions start_dimension..stop_dimension-1 into one."""
    x = _arr(operand)
    start = operator.index(start_dimension) % max(x.ndim, 1)
    stop = x.ndim if stop_dimension is None else operator.index(stop_dimension)
    stop = stop + x.ndim if stop < 0 else stop
    if not 0 <= start <= stop <= x.ndim:
        raise ValueError(f"collapse: invalid dimensions [{start_dimension}, {stop_dimension}) for rank {x.ndim}")
    merged = int(np.prod(x.shape[start:stop], dtype=np.int64))
    return _sh.reshape(x, tuple(x.shape[:start]) + (merged,) + tuple(x.shape[stop:]))


def split(operand, sizes, axis: int = 0):
    """operand cut into consecutive pieces of the given sizes along `axis` (they must sum to its size)."""
    x = _arr(operand)
    axis = operator.index(axis) % x.ndim
    sizes = [operator.index(n) for n in sizes]
    if sum(sizes) != x.shape[axis] or any(n < 0 for n in sizes):
        raise ValueError(f"split: sizes {sizes} must be non-negative and sum to the size {x.shape[axis]} of "
                         f"axis {axis}")
    out, start = [], 0
    for n in sizes:
        out.append(slice_in_dim(x, start, start + n, 1, axis))
        start += n
    return out


def tile(operand, reps):
    """operand repeated reps[i] times along each axis i (one rep per axis, as jax.lax.tile)."""
    x = _arr(operand)
    reps = tuple(operator.index(r) for r in reps)
    if len(reps) != x.ndim:
        raise TypeError(f"tile: reps length must be equal to the ndim of x, got len(reps)={len(reps)} and "
                        f"x.ndim={x.ndim}.")
    # x broadcast to (r0, s0, r1, s1, ...) and merged pairwise
    wide = broadcast_in_dim(x, tuple(d for r, s in zip(reps, x.shape) for d in (r, s)),
                            tuple(range(1, 2 * x.ndim, 2)))
    return _sh.reshape(wide, tuple(r * s for r, s in zip(reps, x.shape)))


def stack(operands, axis: int = 0):
    """Arrays of one shape and dtype stacked along a new axis."""
    xs = [_arr(x) for x in operands]
    if not xs:
        raise ValueError("stack: need at least one array to stack")
    for x in xs[1:]:
        if x.dtype != xs[0].dtype:
            raise TypeError(f"lax.stack requires arguments to have the same dtypes, got "
                            f"{', '.join(str(v.dtype) for v in xs)}.")
        if x.shape != xs[0].shape:
            raise ValueError(f"stack: all input arrays must have the same shape, got "
                             f"{[tuple(v.shape) for v in xs]}")
    axis = operator.index(axis)
    axis = axis + xs[0].ndim + 1 if axis < 0 else axis
    return concatenate([_sh.expand_dims(x, (axis,)) for x in xs], axis)


def unstack(x, axis: int = 0) -> tuple:
    """The slices of x along `axis`, as a tuple (the inverse of stack)."""
    x = _arr(x)
    axis = axis % x.ndim if x.ndim else axis
    return tuple(index_in_dim(x, i, axis, keepdims=False) for i in range(x.shape[axis]))


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding, base_dilation=None,
                              window_dilation=None) -> tuple:
    """The shape reduce_window gives: explicit (lo, hi) padding, optional base and window dilations."""
    n = len(operand_shape)
    base_dilation = (1,) * n if base_dilation is None else base_dilation
    window_dilation = (1,) * n if window_dilation is None else window_dilation
    out = []
    for d, w, s, (lo, hi), b, wd in zip(operand_shape, window_dimensions, window_strides, padding,
                                        base_dilation, window_dilation):
        size = (0 if d == 0 else (d - 1) * b + 1) + lo + hi
        win = (w - 1) * wd + 1
        out.append(max(0, (size - win) // s + 1))
    return tuple(out)
