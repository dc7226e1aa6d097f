"""Slices at run-time offsets: dynamic_slice and dynamic_update_slice (jax.lax's).

The start indices are operands (0-d integer arrays, one per operand dimension), so they may be traced;
the slice sizes are static. As in JAX (XLA), each start is clamped into [0, n - size] so the window
always fits inside the operand: out-of-range starts move the window, they never fail or read padding.
(The lax-style wrappers below first map negative starts to n + start, as jax.lax does by default.)

Derivatives: dynamic_slice is linear in the operand (its vjp writes the cotangent into zeros with
dynamic_update_slice); dynamic_update_slice is linear in (operand, update) (the operand's cotangent
is the incoming one with the window zeroed, the update's is the window sliced out). Starts get none.
"""
from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import elementwise as ew
from ._util import batch_size, type_error, value_error
from .shape import to_front
from .indexing import gather_p, scatter_p
from .shape import broadcast_in_dim, broadcasted_iota, concatenate, full, reshape, slice as lslice, squeeze
from ..core.array import ArrayBase, to_array
from ..core.errors import IncompatibleShapesError, user_location


def _check_starts(op: str, x: ShapedArray, starts) -> None:
    if len(starts) != x.ndim:  # JAX: ValueError
        value_error(op, f"needs one start index per operand dimension ({x.ndim} for {x.str_short()}), "
                       f"got {len(starts)}")
    for s in starts:
        if s.ndim != 0 or not dtypes.is_integer(s.dtype):
            type_error(op, f"start indices must be 0-d integer arrays, got {s.str_short()}")


def _clamped_starts(starts, shape, sizes) -> tuple:
    """Concrete start positions, clamped so each window fits (host side, in the impls)."""
    return tuple(int(min(max(int(s), 0), n - k)) for s, n, k in zip(starts, shape, sizes))


class _FirstArgs:
    """Per-argument rules for a variadic primitive: the given rules, then None for each start index."""

    def __init__(self, *rules):
        self.rules = rules

    def __getitem__(self, i):
        return self.rules[i] if i < len(self.rules) else None


# --- dynamic_slice --------------------------------------------------------------------------------

def _ds_rule(x: ShapedArray, *starts: ShapedArray, slice_sizes) -> ShapedArray:
    _check_starts("dynamic_slice", x, starts)
    if len(slice_sizes) != x.ndim:  # JAX: ValueError for a count that differs, TypeError for a size too big
        value_error("dynamic_slice", f"slice_sizes {tuple(slice_sizes)} must have one entry per dimension "
                                     f"of {x.str_short()}")
    if any(not 0 <= k <= n for k, n in zip(slice_sizes, x.shape)):
        raise IncompatibleShapesError(  # (NumPy-style callers expect a ValueError)
            f"dynamic_slice: slice_sizes {tuple(slice_sizes)} must each lie between 0 and the size of the "
            f"dimension of {x.str_short()} they slice (at {user_location(2)})")
    return ShapedArray(tuple(slice_sizes), x.dtype, x.weak_type)


def _ds_impl(xp):
    def f(x, *starts, slice_sizes):
        if len(starts) != x.ndim or len(slice_sizes) != x.ndim or \
                any(not 0 <= k <= n for k, n in zip(slice_sizes, x.shape)):
            raise ValueError("bad operands")  # the caller reports it with the shape rule's message
        lo = _clamped_starts(starts, x.shape, slice_sizes)
        return x[tuple(slice(s, s + k) for s, k in zip(lo, slice_sizes))]
    return f


def _ds_jvp(t, ans, x, *starts, slice_sizes):
    return dynamic_slice_p.bind(t, *starts, slice_sizes=slice_sizes)


def _ds_vjp(g, ans, x, *starts, slice_sizes):
    return dynamic_update_slice_p.bind(full(x.shape, 0, g.dtype), g, *starts)


def _batched_starts(starts, dims, n, shape, sizes):
    """The starts as int64 arrays of shape (n,), clamped so each window fits (traced side)."""
    out = []
    for s, d, dim, k in zip(starts, dims, shape, sizes):
        s = ew.convert_element_type(s, dtypes.int64)
        s = broadcast_in_dim(s, (n,), ()) if d is None else s
        lo, hi = full((n,), 0, dtypes.int64), full((n,), dim - k, dtypes.int64)
        out.append(ew.min(ew.max(s, lo), hi))
    return out


def _window_rows(starts, n, sizes, with_batch_column: bool):
    """Index rows of shape (n,) + sizes + (ndim [+ 1],): example b's window at its clamped starts."""
    shape = (n,) + tuple(sizes)
    cols = [broadcasted_iota(dtypes.int64, shape, 0)] if with_batch_column else []
    for d, s in enumerate(starts):
        cols.append(ew.add(broadcast_in_dim(s, shape, (0,)), broadcasted_iota(dtypes.int64, shape, d + 1)))
    return concatenate([broadcast_in_dim(c, shape + (1,), tuple(range(len(shape)))) for c in cols], len(shape))


def _ds_batch(args, dims, *, slice_sizes):
    x, starts = args[0], args[1:]
    xd, sds = dims[0], dims[1:]
    n = batch_size(args, dims)
    if all(d is None for d in sds):
        zero = full((), 0, dtypes.int64)
        return dynamic_slice_p.bind(to_front(x, xd, n), zero, *starts,
                                    slice_sizes=(n,) + tuple(slice_sizes)), 0
    lo = _batched_starts(starts, sds, n, x.shape if xd is None else
                         tuple(s for i, s in enumerate(x.shape) if i != xd), slice_sizes)
    if xd is None:
        rows = _window_rows(lo, n, slice_sizes, False)
        return gather_p.bind(x, rows, axes=tuple(range(x.ndim))), 0
    rows = _window_rows(lo, n, slice_sizes, True)
    return gather_p.bind(to_front(x, xd, n), rows, axes=tuple(range(x.ndim))), 0


dynamic_slice_p = Primitive(
    "dynamic_slice", impl=_ds_impl, abstract_eval=_ds_rule, jvp=_FirstArgs(_ds_jvp),
    vjp=_FirstArgs(_ds_vjp), batch=_ds_batch, weak_type=lambda w, params: w[0])


# --- dynamic_update_slice -------------------------------------------------------------------------

def _dus_rule(x: ShapedArray, upd: ShapedArray, *starts: ShapedArray) -> ShapedArray:
    _check_starts("dynamic_update_slice", x, starts)
    if upd.ndim != x.ndim or any(k > n for k, n in zip(upd.shape, x.shape)):
        type_error("dynamic_update_slice", f"update {upd.str_short()} must have the operand's rank and fit "
                                           f"inside the operand {x.str_short()}")
    if upd.dtype != x.dtype:
        type_error("dynamic_update_slice", f"update dtype {upd.dtype} must equal the operand dtype {x.dtype}")
    return ShapedArray(x.shape, x.dtype, x.weak_type and upd.weak_type)


def _dus_impl(xp):
    def f(x, upd, *starts):
        if len(starts) != x.ndim or upd.ndim != x.ndim or upd.dtype != x.dtype or \
                any(k > n for k, n in zip(upd.shape, x.shape)):
            raise ValueError("bad operands")  # the caller reports it with the shape rule's message
        lo = _clamped_starts(starts, x.shape, upd.shape)
        out = xp.array(x, copy=True)
        out[tuple(slice(s, s + k) for s, k in zip(lo, upd.shape))] = upd
        return out
    return f


def _dus_jvp_x(t, ans, x, upd, *starts):
    return dynamic_update_slice_p.bind(t, full(upd.shape, 0, t.dtype), *starts)


def _dus_jvp_u(t, ans, x, upd, *starts):
    return dynamic_update_slice_p.bind(full(x.shape, 0, t.dtype), t, *starts)


def _dus_vjp_u(g, ans, x, upd, *starts):
    return dynamic_slice_p.bind(g, *starts, slice_sizes=tuple(upd.shape))


def _dus_batch(args, dims):
    x, upd, starts = args[0], args[1], args[2:]
    xd, ud, sds = dims[0], dims[1], dims[2:]
    n = batch_size(args, dims)
    x, upd = to_front(x, xd, n), to_front(upd, ud, n)
    if all(d is None for d in sds):
        return dynamic_update_slice_p.bind(x, upd, full((), 0, dtypes.int64), *starts), 0
    lo = _batched_starts(starts, sds, n, tuple(x.shape[1:]), tuple(upd.shape[1:]))
    rows = _window_rows(lo, n, tuple(upd.shape[1:]), True)
    return scatter_p.bind(x, rows, upd, axes=tuple(range(x.ndim)), mode="set"), 0


dynamic_update_slice_p = Primitive(
    "dynamic_update_slice", impl=_dus_impl, abstract_eval=_dus_rule,
    jvp=_FirstArgs(_dus_jvp_x, _dus_jvp_u), vjp=_FirstArgs(_dus_jvp_x, _dus_vjp_u), batch=_dus_batch,
    weak_type=lambda w, params: w[0] and w[1])


# --- lax-style functions --------------------------------------------------------------------------

def _start_arrays(op: str, operand, start_indices, allow_negative_indices: bool):
    """Start indices as 0-d integer arrays; negative ones count from the end when allowed."""
    if isinstance(start_indices, ArrayBase) or isinstance(start_indices, np.ndarray):
        if start_indices.ndim != 1:
            raise TypeError(f"start_indices must be a sequence of scalars or a 1-d array, got shape "
                            f"{tuple(start_indices.shape)}")
        start_indices = [reshape(lslice(to_array(start_indices) if isinstance(start_indices, np.ndarray)
                                        else start_indices, (i,), (i + 1,)), ())
                         for i in range(start_indices.shape[0])]
    out = []
    for s, n in zip(start_indices, operand.shape):
        if isinstance(s, (np.ndarray, np.generic)):
            s = to_array(s)
        if isinstance(s, ArrayBase):
            if s.ndim != 0 or not dtypes.is_integer(s.dtype):
                raise TypeError(f"dynamic slicing: start indices must be integer scalars or 0-d integer arrays, "
                                f"got {s.aval.str_short()}")
            if allow_negative_indices:
                neg = ew.lt(s, full((), 0, s.dtype))
                s = ew.select(neg, ew.add(s, full((), n, s.dtype)), s)
        else:
            s = int(s)
            if allow_negative_indices and s < 0:
                s += n
            s = to_array(np.asarray(s, dtype=np.int64))
        out.append(s)
    if len(start_indices) != operand.ndim:  # JAX: ValueError
        raise ValueError(f"{op}: needs one start index per operand dimension ({operand.ndim} for shape "
                         f"{tuple(operand.shape)}), got {len(start_indices)} (at {user_location(3)})")
    return out


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices: bool = True):
    """operand[start:start + size] per dimension with run-time starts, as jax.lax.dynamic_slice.

    Starts are clamped so the window fits; negative starts count from the end (JAX's default)."""
    starts = _start_arrays("dynamic_slice", operand, start_indices, allow_negative_indices)
    return dynamic_slice_p.bind(operand, *starts, slice_sizes=tuple(int(k) for k in slice_sizes))


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices: bool = True):
    """operand with `update` written at run-time starts, as jax.lax.dynamic_update_slice (clamped)."""
    starts = _start_arrays("dynamic_update_slice", operand, start_indices, allow_negative_indices)
    return dynamic_update_slice_p.bind(operand, update, *starts)


def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0):
    """dynamic_slice along one axis (the others whole), as jax.lax.dynamic_slice_in_dim."""
    axis = int(axis) % operand.ndim
    starts = [0] * operand.ndim
    starts[axis] = start_index
    sizes = list(operand.shape)
    sizes[axis] = int(slice_size)
    return dynamic_slice(operand, starts, sizes)


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True):
    """The slice at `index` along `axis`, as jax.lax.dynamic_index_in_dim."""
    axis = int(axis) % operand.ndim
    out = dynamic_slice_in_dim(operand, index, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis: int):
    """dynamic_update_slice along one axis, as jax.lax.dynamic_update_slice_in_dim."""
    axis = int(axis) % operand.ndim
    starts = [0] * operand.ndim
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts)
