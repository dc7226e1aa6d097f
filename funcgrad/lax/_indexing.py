"""lax's gathers and scatters with JAX's signatures: `gather(operand, start_indices, GatherDimensionNumbers,
slice_sizes, mode=, fill_value=)` and `scatter[_add|_sub|_mul|_min|_max|_apply](operand, scatter_indices,
updates, ScatterDimensionNumbers, mode=)`, checked as JAX checks them (its TypeError/ValueError messages).

They lower to the engine's gather/scatter cards (`_src/prims/indexing.py`: index rows along some operand
axes, the other axes carried whole), so their derivatives and batching are those cards' rules:
- an operand dimension addressed by the indices, a batching dimension, or one read by a window narrower
  than the operand is an *indexed* axis: each element of a window gets its own index row (start + offset);
  the other dimensions (whole windows) stay the cards' rest axes, so x.at[...]-style dimension numbers
  keep the cards' direct path (the index rows are the indices themselves);
- out-of-bounds windows follow `mode` as JAX's: CLIP clamps each start so the whole window fits;
  FILL_OR_DROP fills a gathered window with `fill_value` (NaN, the dtype's min for signed, max for unsigned,
  True for bool by default) and drops a scattered window if any part is out of bounds; PROMISE_IN_BOUNDS
  (gather's default) clamps in gather and drops in scatter, as XLA on CPU does.
The `axes` form of the cards (`gather(x, indices, axes)`, `scatter_add(x, indices, updates, axes)`) is kept:
a dimension-numbers argument that is a plain sequence of ints is taken as `axes`.
"""
from __future__ import annotations

import numpy as np

from .._src.core import dtypes
from .._src.core.array import ArrayBase, canonical_array, to_array
from .._src.core.trace import concrete_value
from .._src.prims import elementwise as _ew
from .._src.prims import shape as _sh
from .._src.prims.indexing import gather_p, scatter_p
from .._src.prims.reduction import reduce_min
from ._types import GatherScatterMode

__all__ = ["gather", "index_take", "scatter", "scatter_add", "scatter_apply", "scatter_max", "scatter_min",
           "scatter_mul", "scatter_sub"]

_INT = dtypes.int64  # index arithmetic (start + window offset) runs in this dtype


def _arr(x):
    return x if isinstance(x, ArrayBase) else canonical_array(x)


def index_take(src, idxs, axes):
    """src at the index arrays `idxs` (one per axis of `axes`, of one length N): a (N,) + rest array, the
    axes of src not in `axes` following in their order."""
    src = _arr(src)
    axes = tuple(int(a) % src.ndim for a in axes)
    idxs = tuple(idxs)
    if len(idxs) != len(axes):
        raise ValueError(f"index_take: {len(idxs)} index arrays for {len(axes)} axes")
    rest = [d for d in range(src.ndim) if d not in axes]
    moved = _sh.transpose(src, axes + tuple(rest))
    return moved[tuple(_arr(i) for i in idxs)]


# --- JAX's checks of the dimension numbers (its messages, in its order) ----------------------------------

def _is_sorted(dims, op, name):
    for i in range(1, len(dims)):
        if dims[i] < dims[i - 1]:
            raise TypeError(f"{name} in {op} op must be sorted; got {dims}")


def _dims_in_range(dims, rank, op, name):
    for dim in dims:
        if dim < 0 or dim >= rank:
            raise TypeError(f"Invalid {name} set in {op} op; valid range is [0, {rank}); got: {dim}.")


def _sorted_dims_in_range(dims, rank, op, name):
    if dims:
        bad = dims[0] if dims[0] < 0 else (dims[-1] if dims[-1] >= rank else None)
        if bad:
            raise TypeError(f"Invalid {name} set in {op} op; valid range is [0, {rank}); got: {bad}.")


def _no_duplicate_dims(dims, op, name):
    if len(set(dims)) != len(dims):
        raise TypeError(f"{name} in {op} op must not repeat; got: {dims}.")


def _disjoint_dims(dims1, dims2, op, name1, name2):
    if not set(dims1).isdisjoint(set(dims2)):
        raise TypeError(f"{name1} and {name2} in {op} op must be disjoint; got: {dims1} and {dims2}.")


def _ints(dims) -> tuple:
    return tuple(int(d) for d in dims)


def _check_indices_dtype(indices) -> None:
    if not dtypes.is_integer(indices.dtype):
        raise ValueError("indices must have an integer type")


def _check_gather(operand, indices, dn, slice_sizes) -> tuple:
    """JAX's gather shape rule; returns the output shape."""
    offset_dims, collapsed = _ints(dn.offset_dims), _ints(dn.collapsed_slice_dims)
    start_index_map, obd = _ints(dn.start_index_map), _ints(dn.operand_batching_dims)
    sibd = _ints(dn.start_indices_batching_dims)
    r, ivd = operand.ndim, indices.ndim - 1
    if ivd < 0:
        raise TypeError(f"Gather index leaf dimension must be within [0, rank(indices) + 1). rank(indices) is "
                        f"{indices.ndim} and gather index leaf dimension is {ivd}.")
    _is_sorted(offset_dims, "gather", "offset_dims")
    _no_duplicate_dims(offset_dims, "gather", "offset_dims")
    out_rank = len(offset_dims) + indices.ndim - 1
    for i, d in enumerate(offset_dims):
        if d < 0 or d >= out_rank:
            raise TypeError(f"Offset dimension {i} in gather op is out of bounds; got {d}, but should have been "
                            f"in [0, {out_rank})")
    if len(start_index_map) != indices.shape[ivd]:
        raise TypeError(f"Gather op has {len(start_index_map)} elements in start_index_map and the bound of "
                        f"dimension index_vector_dim={ivd} of indices is {indices.shape[ivd]}. These two "
                        f"numbers must be equal.")
    for i, d in enumerate(start_index_map):
        if d < 0 or d >= r:
            raise TypeError(f"Invalid start_index_map; domain is [0, {r}), got: {i}->{d}.")
    _no_duplicate_dims(start_index_map, "gather", "start_index_map")
    _is_sorted(collapsed, "gather", "collapsed_slice_dims")
    _sorted_dims_in_range(collapsed, r, "gather", "collapsed_slice_dims")
    _no_duplicate_dims(collapsed, "gather", "collapsed_slice_dims")
    _no_duplicate_dims(obd, "gather", "operand_batching_dims")
    _is_sorted(obd, "gather", "operand_batching_dims")
    _sorted_dims_in_range(obd, r, "gather", "operand_batching_dims")
    _disjoint_dims(collapsed, obd, "gather", "collapsed_slice_dims", "operand_batching_dims")
    _disjoint_dims(start_index_map, obd, "gather", "start_index_map", "operand_batching_dims")
    _no_duplicate_dims(sibd, "gather", "start_indices_batching_dims")
    _dims_in_range(sibd, indices.ndim, "gather", "start_indices_batching_dims")
    if ivd in sibd:
        raise TypeError(f"Gather op cannot have the index vector dimension as a batching dimension; got {sibd}.")
    if len(obd) != len(sibd):
        raise TypeError(f"Gather op requires equal numbers of operand_batching_dims and "
                        f"start_indices_batching_dims, got {obd} and{sibd}.")
    ob_shape = tuple(operand.shape[i] for i in obd)
    ib_shape = tuple(indices.shape[i] for i in sibd)
    if ob_shape != ib_shape:
        raise TypeError(f"Gather op requires operand batching dimensions and indices batching dimensions to "
                        f"have the same shape, got {ob_shape} and {ib_shape}.")
    if r != len(slice_sizes):
        raise TypeError(f"Gather op must have one slice size for every input dimension; got: "
                        f"len(slice_sizes)={len(slice_sizes)}, input_shape.rank={r}")
    if len(slice_sizes) != len(offset_dims) + len(collapsed) + len(obd):
        raise TypeError(f"All components of the offset index in a gather op must either be a offset dimension or "
                        f"explicitly collapsed/batching; got len(slice_sizes)={len(slice_sizes)}, "
                        f"output_slice_sizes={offset_dims}, collapsed_slice_dims={collapsed}, "
                        f"operand_batching_dims={obd}.")
    for i, (s, n) in enumerate(zip(slice_sizes, operand.shape)):
        if 0 not in tuple(indices.shape) and not 0 <= s <= n:
            raise TypeError(f"Slice size at index {i} in gather op is out of range, must be within [0, {n} + 1), "
                            f"got {s}.")
    for i, d in enumerate(collapsed):
        if slice_sizes[d] != 1:
            raise TypeError(f"Gather op can only collapse slice dims with bound 1, but bound is {slice_sizes[d]} "
                            f"for index {d} at position {i}.")
    for i, d in enumerate(obd):
        if slice_sizes[d] > 1:
            raise TypeError(f"Gather op can only have operand batching dims with bound 0/1, but bound is "
                            f"{slice_sizes[d]} for index {d} at position {i}.")
    batch = iter(indices.shape[:-1])
    window = iter(s for i, s in enumerate(slice_sizes) if i not in collapsed and i not in obd)
    return tuple(next(window) if i in offset_dims else next(batch) for i in range(out_rank))


def _check_scatter(operand, indices, updates, dn) -> None:
    """JAX's scatter dtype and shape rules."""
    _check_indices_dtype(indices)
    if updates.dtype != operand.dtype:
        raise TypeError(f"lax.scatter requires arguments to have the same dtypes, got {operand.dtype}, "
                        f"{updates.dtype}.")
    uwd, inserted = _ints(dn.update_window_dims), _ints(dn.inserted_window_dims)
    sdod, obd = _ints(dn.scatter_dims_to_operand_dims), _ints(dn.operand_batching_dims)
    sibd = _ints(dn.scatter_indices_batching_dims)
    r, ivd = operand.ndim, indices.ndim - 1
    if ivd < 0:
        raise TypeError(f"Scatter index leaf dimension must be within [0, rank(indices) + 1). rank(indices) is "
                        f"{indices.ndim} and scatter index leaf dimension is {ivd}.")
    want_rank = indices.ndim - 1 + len(uwd)
    if updates.ndim != want_rank:
        raise TypeError(f"Updates tensor must be of rank {want_rank}; got {updates.ndim}.")
    _is_sorted(uwd, "scatter", "update_window_dims")
    _no_duplicate_dims(uwd, "scatter", "update_window_dims")
    _sorted_dims_in_range(uwd, updates.ndim, "scatter", "update_window_dims")
    _is_sorted(inserted, "scatter", "inserted_window_dims")
    _no_duplicate_dims(inserted, "scatter", "inserted_window_dims")
    _sorted_dims_in_range(inserted, r, "scatter", "inserted_window_dims")
    _is_sorted(obd, "scatter", "operand_batching_dims")
    _no_duplicate_dims(obd, "scatter", "operand_batching_dims")
    _sorted_dims_in_range(obd, r, "scatter", "operand_batching_dims")
    _disjoint_dims(inserted, obd, "scatter", "inserted_window_dims", "operand_batching_dims")
    _disjoint_dims(sdod, obd, "scatter", "scatter_dims_to_operand_dims", "operand_batching_dims")
    _no_duplicate_dims(sibd, "scatter", "scatter_indices_batching_dims")
    _dims_in_range(sibd, indices.ndim, "scatter", "scatter_indices_batching_dims")
    if ivd in sibd:
        raise TypeError(f"Scatter op cannot have the index vector dimension as a batching dimension; got {sibd}.")
    if len(obd) != len(sibd):
        raise TypeError(f"Scatter op requires equal numbers of operand_batching_dims and "
                        f"scatter_indices_batching_dims, got {obd} and {sibd}.")
    ob_shape = tuple(operand.shape[i] for i in obd)
    ib_shape = tuple(indices.shape[i] for i in sibd)
    if ob_shape != ib_shape:
        raise TypeError(f"Scatter op requires operand batching dimensions and indices batching dimensions to "
                        f"have the same shape, got {ob_shape} and {ib_shape}.")
    scatter_dims = [d for d in range(updates.ndim) if d not in uwd]
    ub_shape = tuple(updates.shape[scatter_dims[i]] for i in sibd)
    if ob_shape != ub_shape:
        raise TypeError(f"Scatter op requires operand batching dimensions and updates batching dimensions to "
                        f"have the same shape, got {ob_shape} and {ub_shape}.")
    window_size = len(uwd) + len(inserted) + len(obd)
    if r != window_size:
        raise TypeError(f"Scatter op has window of size {window_size}; doesn't match operand of rank {r}.")
    if len(sdod) != indices.shape[ivd]:
        raise TypeError(f"Scatter op has {len(sdod)} elements in scatter_dims_to_operand_dims and the bound of "
                        f"dimension index_vector_dim={ivd} of indices is {indices.shape[ivd]}. These two numbers "
                        f"must be equal")
    for i, d in enumerate(sdod):
        if d < 0 or d >= r:
            raise TypeError(f"Invalid scatter_dims_to_operand_dims mapping; domain is [0, {r}), got: {i}->{d}.")
    _no_duplicate_dims(sdod, "scatter", "scatter_dims_to_operand_dims")
    max_sizes = [operand.shape[i] for i in range(r) if i not in inserted and i not in obd]
    for i, d in enumerate(uwd):
        if max_sizes[i] < updates.shape[d]:
            raise TypeError(f"Bounds of the window dimensions of updates must not exceed the bounds of the "
                            f"corresponding dimensions of operand. For dimension {d}, updates bound is "
                            f"{updates.shape[d]}, operand bound is {max_sizes[i]}.")
    for i, d in enumerate(scatter_dims):
        if updates.shape[d] != indices.shape[i]:
            raise TypeError(f"Bounds of the scatter dimensions of updates must be the same as the bounds of the "
                            f"corresponding dimensions of scatter indices. For scatter dimension {d}, updates "
                            f"bound is {updates.shape[d]}, indices bound is {indices.shape[i]}.")


# --- the lowering onto the cards ------------------------------------------------------------------------

def _index_rows(operand_shape, indices, start_map, obd, ibd, window, mode, scatter: bool):
    """Index rows for the cards and the indexed axes: (rows, axes, window_axes, mask).

    `window[d]` is the window size along operand dim d. rows has shape B + (window sizes of the indexed
    axes whose window is not 1) + (len(axes),); mask (shape B, or None) says which windows are in bounds
    (FILL_OR_DROP's gather fills the others; scatter's drops are already in rows, as a coordinate -1)."""
    r = len(operand_shape)
    axes = tuple(sorted(set(start_map) | set(obd) | {d for d in range(r) if window[d] != operand_shape[d]}))
    nb = indices.ndim - 1
    batch = tuple(indices.shape[:nb])
    widened = tuple(d for d in axes if window[d] != 1)
    clamp = mode is GatherScatterMode.CLIP or (mode is GatherScatterMode.PROMISE_IN_BOUNDS and not scatter)
    if not obd and not widened and axes == tuple(sorted(start_map)):
        # One coordinate per window, all from the indices: the cards read/drop out-of-range rows
        # themselves (gather clamps each coordinate, scatter drops the row), as JAX does with windows of 1.
        rows = indices
        if scatter and clamp:
            hi = to_array(np.array([operand_shape[d] - 1 for d in start_map], dtype=indices.dtype))
            rows = _ew.clamp(_sh.full(indices.shape, 0, indices.dtype), indices,
                             _sh.broadcast_in_dim(hi, indices.shape, (nb,)))
        mask = None
        if mode is GatherScatterMode.FILL_OR_DROP and not scatter and start_map:
            mask = _in_range(indices, [operand_shape[d] - 1 for d in start_map])
        return rows, tuple(start_map), (), mask
    idx = _ew.convert_element_type(indices, _INT)
    shape = batch + tuple(window[d] for d in widened)
    mask = None
    if start_map and not clamp:
        mask = _in_range(idx, [operand_shape[d] - window[d] for d in start_map])
    cols = []
    for d in axes:
        if d in start_map:
            j = start_map.index(d)
            start = _sh.reshape(_sh.slice(idx, (0,) * nb + (j,), batch + (j + 1,)), batch)
            hi = operand_shape[d] - window[d]
            start = _ew.clamp(_sh.full(batch, 0, _INT), start, _sh.full(batch, max(hi, 0), _INT))
        elif d in obd:
            start = _sh.broadcasted_iota(_INT, batch, ibd[obd.index(d)])
        else:
            start = None
        col = None if start is None else _sh.broadcast_in_dim(start, shape, tuple(range(nb)))
        if d in widened:
            off = _sh.broadcasted_iota(_INT, shape, nb + widened.index(d))
            col = off if col is None else _ew.add(col, off)
        elif col is None:
            col = _sh.full(shape, 0, _INT)
        cols.append(col)
    if scatter and mask is not None:  # a dropped window: its rows get coordinate -1, which the card drops
        m = _sh.broadcast_in_dim(mask, shape, tuple(range(nb)))
        cols[0] = _ew.select(m, cols[0], _sh.full(shape, -1, _INT))
        mask = None
    rows = _sh.concatenate([_sh.reshape(c, shape + (1,)) for c in cols], len(shape)) if cols else \
        _sh.full(shape + (0,), 0, _INT)
    return rows, axes, widened, mask


def _in_range(idx, highs):
    """Bool array of shape B: whether 0 <= idx[..., j] <= highs[j] for every j (idx: B + (k,))."""
    nb = idx.ndim - 1
    idx = _ew.convert_element_type(idx, _INT)
    hi = to_array(np.array(highs, dtype=np.dtype(_INT)))
    ok = _ew.bitwise_and(_ew.ge(idx, _sh.full(idx.shape, 0, idx.dtype)),
                         _ew.le(idx, _sh.broadcast_in_dim(hi, idx.shape, (nb,))))
    return reduce_min(ok, (nb,))


def _layout(operand_shape, axes, window):
    """For the card's result B + (widened windows) + rest: the axis where each operand dim's window lies
    once the indexed axes of window 1 are put back as size-1 axes (B + axes' windows + rest)."""
    rest = [d for d in range(len(operand_shape)) if d not in axes]
    full_win = tuple(window[d] for d in axes) + tuple(operand_shape[d] for d in rest)
    where = {d: i for i, d in enumerate(tuple(axes) + tuple(rest))}
    return full_win, where


def _fill_value(dtype, fill_value):
    if fill_value is not None:
        return fill_value
    dt = np.dtype(dtype)
    if dtypes.is_inexact(dt):
        return np.nan
    if dt.kind == "i":
        return int(np.iinfo(dt).min)
    if dt.kind == "u":
        return int(np.iinfo(dt).max)
    if dt.kind == "b":
        return True
    raise ValueError(f"Unsupported dtype for gather fill_value {dt}")


def _gather_dnums(operand, indices, dn, slice_sizes, mode, fill_value):
    _check_indices_dtype(indices)
    slice_sizes = _ints(slice_sizes)
    out_shape = _check_gather(operand, indices, dn, slice_sizes)
    mode = GatherScatterMode.from_any(GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else mode)
    if mode is GatherScatterMode.ONE_HOT:
        raise NotImplementedError("gather: mode ONE_HOT")
    start_map, obd = _ints(dn.start_index_map), _ints(dn.operand_batching_dims)
    rows, axes, widened, mask = _index_rows(operand.shape, indices, start_map, obd,
                                            _ints(dn.start_indices_batching_dims), slice_sizes, mode, False)
    got = gather_p.bind(operand, rows, axes=axes)
    nb = indices.ndim - 1
    full_win, where = _layout(operand.shape, axes, slice_sizes)
    got = _sh.reshape(got, tuple(indices.shape[:nb]) + full_win)
    collapsed = set(_ints(dn.collapsed_slice_dims)) | set(obd)
    kept = [d for d in range(operand.ndim) if d not in collapsed]
    offset_dims = _ints(dn.offset_dims)
    batch_axes = iter(range(nb))
    perm = [nb + where[kept[offset_dims.index(o)]] if o in offset_dims else next(batch_axes)
            for o in range(len(out_shape))]
    perm += [nb + where[d] for d in sorted(collapsed)]
    got = _sh.reshape(_sh.transpose(got, perm), out_shape)
    if mode is GatherScatterMode.FILL_OR_DROP and mask is not None:
        value = _fill_value(operand.dtype, fill_value)
        bdims = tuple(o for o in range(len(out_shape)) if o not in offset_dims)
        got = _ew.select(_sh.broadcast_in_dim(mask, out_shape, bdims), got,
                         _sh.full(out_shape, value, operand.dtype, weak_type=got.weak_type))
    return got


def _scatter_dnums(operand, indices, updates, dn, mode, how):
    """operand with `updates` combined (how: set/add/mul/min/max) through JAX's ScatterDimensionNumbers."""
    _check_scatter(operand, indices, updates, dn)
    mode = GatherScatterMode.from_any(mode)
    if mode is GatherScatterMode.ONE_HOT:
        raise NotImplementedError(f"scatter ({how}): mode ONE_HOT")
    uwd, inserted = _ints(dn.update_window_dims), _ints(dn.inserted_window_dims)
    start_map, obd = _ints(dn.scatter_dims_to_operand_dims), _ints(dn.operand_batching_dims)
    r, nb = operand.ndim, indices.ndim - 1
    sizes = iter(updates.shape[d] for d in uwd)
    window = tuple(1 if d in inserted or d in obd else next(sizes) for d in range(r))
    rows, axes, widened, _ = _index_rows(operand.shape, indices, start_map, obd,
                                         _ints(dn.scatter_indices_batching_dims), window, mode, True)
    full_win, where = _layout(operand.shape, axes, window)
    # updates as B + (window of every operand dim, in operand order), then in the card's axis order
    scatter_dims = [d for d in range(updates.ndim) if d not in uwd]
    u = _sh.transpose(updates, tuple(scatter_dims) + uwd)
    batch = tuple(indices.shape[:nb])
    u = _sh.reshape(u, batch + window)
    order = sorted(range(r), key=lambda d: where[d])
    u = _sh.transpose(u, tuple(range(nb)) + tuple(nb + d for d in order))
    rest = tuple(operand.shape[d] for d in range(r) if d not in axes)
    u = _sh.reshape(u, batch + tuple(window[d] for d in widened) + rest)
    return scatter_p.bind(operand, rows, u, axes=axes, mode=how)


# --- the public functions --------------------------------------------------------------------------------

def _is_gather_dnums(x) -> bool:
    return hasattr(x, "offset_dims") and hasattr(x, "start_index_map")


def _is_dnums(x) -> bool:
    return hasattr(x, "update_window_dims") and hasattr(x, "scatter_dims_to_operand_dims")


def _axes_of(operand, axes) -> tuple:
    return tuple(int(a) % operand.ndim if operand.ndim else int(a) for a in axes)


def _updates(operand, updates):
    if isinstance(updates, (int, float, complex, bool)):  # a weak Python scalar takes the operand's dtype
        return to_array(np.asarray(updates, dtype=operand.dtype))
    return _arr(updates)


def gather(operand, start_indices, dimension_numbers=None, slice_sizes=None, *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode=None, fill_value=None, axes=None):
    """Slices of `operand` at `start_indices`, as jax.lax.gather (XLA's Gather): `dimension_numbers` is a
    GatherDimensionNumbers, `slice_sizes` one size per operand dimension; mode None is PROMISE_IN_BOUNDS
    (starts clamped so each window fits), "fill" fills out-of-bounds windows with `fill_value`.

    funcgrad's card form: gather(x, indices, axes) reads x at the index rows `indices` along `axes`."""
    operand, indices = _arr(operand), _arr(start_indices)
    if axes is None and not _is_gather_dnums(dimension_numbers):
        axes = dimension_numbers
    if axes is not None:
        return gather_p.bind(operand, indices, axes=_axes_of(operand, axes))
    if slice_sizes is None:
        raise TypeError("gather() missing required argument: 'slice_sizes'")
    return _gather_dnums(operand, indices, dimension_numbers, slice_sizes, mode, fill_value)


def _dn_or_axes(dimension_numbers, axes):
    """The dimension numbers, or funcgrad's `axes` (given by keyword or in their place)."""
    if axes is not None:
        return axes
    if dimension_numbers is None:
        raise TypeError("scatter: missing the dimension_numbers argument (a lax.ScatterDimensionNumbers)")
    return dimension_numbers


def _scatter(how, operand, scatter_indices, updates, dimension_numbers, mode):
    operand, indices = _arr(operand), _arr(scatter_indices)
    updates = _updates(operand, updates)
    if _is_dnums(dimension_numbers):
        return _scatter_dnums(operand, indices, updates, dimension_numbers, mode, how)
    return scatter_p.bind(operand, indices, updates, axes=_axes_of(operand, dimension_numbers), mode=how)


def scatter(operand, scatter_indices, updates, dimension_numbers=None, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode=None, axes=None):
    """operand with `updates` written at the windows `scatter_indices` selects, as jax.lax.scatter (with
    duplicate windows the last write wins, as on JAX's CPU backend); out-of-bounds windows are dropped
    (mode None/"drop"/"promise_in_bounds") or clamped to fit ("clip").

    funcgrad's card form: scatter(x, indices, updates, axes[, mode]) with mode one of "set", "add", "mul",
    "min", "max" (a string naming a card mode there, not an out-of-bounds mode)."""
    if axes is not None or not _is_dnums(dimension_numbers):
        how = mode if isinstance(mode, str) and mode in ("set", "add", "mul", "min", "max") else "set"
        return _scatter(how, operand, scatter_indices, updates, dimension_numbers if axes is None else axes,
                        None)
    return _scatter("set", operand, scatter_indices, updates, dimension_numbers, mode)


def scatter_add(operand, scatter_indices, updates, dimension_numbers=None, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode=None, axes=None):
    """operand with `updates` added at the selected windows (duplicates accumulate), as jax.lax.scatter_add;
    `dimension_numbers` may also be funcgrad's `axes`."""
    return _scatter("add", operand, scatter_indices, updates, _dn_or_axes(dimension_numbers, axes), mode)


def scatter_sub(operand, scatter_indices, updates, dimension_numbers=None, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode=None, axes=None):
    """operand with `updates` subtracted at the selected windows, as jax.lax.scatter_sub."""
    operand = _arr(operand)
    return _scatter("add", operand, scatter_indices, _ew.neg(_updates(operand, updates)),
                    _dn_or_axes(dimension_numbers, axes), mode)


def scatter_mul(operand, scatter_indices, updates, dimension_numbers=None, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode=None, axes=None):
    """operand multiplied by `updates` at the selected windows (duplicates multiply), as jax.lax.scatter_mul."""
    return _scatter("mul", operand, scatter_indices, updates, _dn_or_axes(dimension_numbers, axes), mode)


def scatter_min(operand, scatter_indices, updates, dimension_numbers=None, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode=None, axes=None):
    """operand's entries at the selected windows replaced by their minimum with `updates`, as
    jax.lax.scatter_min."""
    return _scatter("min", operand, scatter_indices, updates, _dn_or_axes(dimension_numbers, axes), mode)


def scatter_max(operand, scatter_indices, updates, dimension_numbers=None, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode=None, axes=None):
    """operand's entries at the selected windows replaced by their maximum with `updates`, as
    jax.lax.scatter_max."""
    return _scatter("max", operand, scatter_indices, updates, _dn_or_axes(dimension_numbers, axes), mode)


def scatter_apply(operand, scatter_indices, func, dimension_numbers=None, *, update_shape=(),
                  indices_are_sorted: bool = False, unique_indices: bool = False, mode=None, axes=None):
    """operand with the elementwise `func` applied at the selected windows, as jax.lax.scatter_apply: an
    element selected n times gets func applied n times. `update_shape` is the shape the updates of such a
    scatter would have; `dimension_numbers` may also be funcgrad's `axes`."""
    operand = _arr(operand)
    indices = _arr(scatter_indices)
    dimension_numbers = _dn_or_axes(dimension_numbers, axes)
    if _is_dnums(dimension_numbers):
        ones = _sh.full(tuple(update_shape), 1, dtypes.int32)
        zeros = _sh.full(operand.shape, 0, dtypes.int32)
        counts = _scatter_dnums(zeros, indices, ones, dimension_numbers, mode, "add")
    else:
        axes = _axes_of(operand, dimension_numbers)
        ones = _sh.full(tuple(indices.shape[:-1]) + tuple(n for d, n in enumerate(operand.shape) if d not in axes),
                        1, dtypes.int32)
        counts = scatter_p.bind(_sh.full(operand.shape, 0, dtypes.int32), indices, ones, axes=axes, mode="add")
    c = concrete_value(counts)  # traced: as many rounds as there are windows (the most one element can get)
    times = int(np.asarray(c).max(initial=0)) if c is not None else int(np.prod(indices.shape[:-1]))
    out = operand
    for i in range(times):  # the elements selected more than i times get one more application
        hit = _ew.gt(counts, _sh.full(counts.shape, i, counts.dtype))
        out = _ew.select(hit, func(out), out)
    return out
