"""lax's gathers and scatters: the cards under their lax names (funcgrad's `axes` convention), scatter_sub
and scatter_apply (also accepting JAX's ScatterDimensionNumbers for whole-dimension windows, as x.at[...]
makes them), and index_take."""
from __future__ import annotations

import numpy as np

from .._src.core.array import ArrayBase, canonical_array, to_array
from .._src.prims import elementwise as _ew
from .._src.prims import shape as _sh
from .._src.prims.indexing import gather, scatter, scatter_add, scatter_max, scatter_min, scatter_mul
from ._types import GatherScatterMode

__all__ = ["gather", "index_take", "scatter", "scatter_add", "scatter_apply", "scatter_max", "scatter_min",
           "scatter_mul", "scatter_sub"]


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


def _from_dimension_numbers(operand, indices, updates, dnums, mode, what):
    """JAX's (scatter_indices, updates, ScatterDimensionNumbers) as funcgrad's (indices, updates, axes), for
    scatters whose windows are whole operand dimensions (x.at[idx] style); others: NotImplementedError."""
    uw = tuple(int(d) for d in dnums.update_window_dims)
    inserted = tuple(int(d) for d in dnums.inserted_window_dims)
    to_operand = tuple(int(d) for d in dnums.scatter_dims_to_operand_dims)
    if tuple(getattr(dnums, "operand_batching_dims", ())) or sorted(inserted) != sorted(to_operand):
        raise NotImplementedError(f"{what}: funcgrad supports scatters whose indexed operand dimensions are "
                                  "exactly the inserted window dimensions (no batching dimensions)")
    rest = [d for d in range(operand.ndim) if d not in inserted]
    indices = _arr(indices)
    if updates is not None:
        updates = _arr(updates)
        batch = [d for d in range(updates.ndim) if d not in uw]
        if [updates.shape[d] for d in uw] != [operand.shape[d] for d in rest]:
            raise NotImplementedError(f"{what}: funcgrad supports windows spanning whole operand dimensions "
                                      f"(updates {tuple(updates.shape)}, operand {tuple(operand.shape)})")
        updates = _sh.transpose(updates, tuple(batch) + uw)
    mode = GatherScatterMode.from_any(mode)
    if mode is GatherScatterMode.CLIP:  # each index (the last axis of indices) into [0, its dimension)
        last = (indices.ndim - 1,)
        hi = to_array(np.array([operand.shape[d] - 1 for d in to_operand], dtype=indices.dtype))
        indices = _ew.clamp(_sh.full(indices.shape, 0, indices.dtype), indices,
                            _sh.broadcast_in_dim(hi, indices.shape, last))
    elif mode is GatherScatterMode.ONE_HOT:
        raise NotImplementedError(f"{what}: mode ONE_HOT")
    return indices, updates, to_operand


def _is_dnums(x) -> bool:
    return hasattr(x, "update_window_dims") and hasattr(x, "scatter_dims_to_operand_dims")


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """operand with updates subtracted at the indexed positions. `dimension_numbers` is JAX's
    ScatterDimensionNumbers (whole-dimension windows, as x.at[...] makes) or funcgrad's `axes`."""
    operand = _arr(operand)
    if _is_dnums(dimension_numbers):
        scatter_indices, updates, axes = _from_dimension_numbers(operand, scatter_indices, updates,
                                                                 dimension_numbers, mode, "scatter_sub")
    else:
        axes = dimension_numbers
    return scatter_add(operand, scatter_indices, _ew.neg(_arr(updates)), axes)


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """operand with func applied at the indexed positions (each position once). `dimension_numbers`:
    JAX's ScatterDimensionNumbers (whole-dimension windows) or funcgrad's `axes`."""
    operand = _arr(operand)
    if _is_dnums(dimension_numbers):
        scatter_indices, _, axes = _from_dimension_numbers(operand, scatter_indices, None, dimension_numbers,
                                                           mode, "scatter_apply")
    else:
        axes = dimension_numbers
    taken = gather(operand, scatter_indices, axes)
    return scatter(operand, scatter_indices, func(taken), axes, "set")
