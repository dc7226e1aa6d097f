"""funcgrad.ops: JAX's segment reductions (`jax.ops.segment_sum` and friends).

`segment_sum(data, segment_ids, num_segments)` adds the rows `data[i]` whose `segment_ids[i]` is `s` into
row `s` of a `(num_segments,) + data.shape[1:]` result. They are written with the scatter
of `x.at[ids].add/mul/max/min`, so grad, vmap and jit come from the scatter card. Ids outside
`[0, num_segments)` are dropped (the default mode); segments that receive nothing hold the reduction's
identity (0, 1, the dtype's lowest / highest value, -inf / inf for floats).
"""
from __future__ import annotations

import numpy as np

from .. import numpy as jnp

__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]


def _identity(how: str, dtype):
    dtype = np.dtype(dtype)
    if how == "add":
        return 0
    if how == "mul":
        return 1
    if dtype.kind == "b":
        return how == "min"
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if how == "max" else info.max
    return -np.inf if how == "max" else np.inf


def _segment(how, data, segment_ids, num_segments, indices_are_sorted, unique_indices, bucket_size, mode):
    data = jnp.asarray(data)
    segment_ids = jnp.asarray(segment_ids)
    if not np.issubdtype(segment_ids.dtype, np.integer):
        raise TypeError(f"segment_{how}: segment_ids must be integers, got {segment_ids.dtype}")
    if segment_ids.ndim != 1 or data.ndim < 1 or data.shape[0] not in (1, segment_ids.shape[0]):
        raise ValueError(f"segment_{how}: segment_ids must be one-dimensional, one id per row of data "
                         f"(along its leading axis); got shapes {tuple(segment_ids.shape)} and {tuple(data.shape)}")
    if num_segments is None:
        try:
            ids = np.asarray(segment_ids)
        except Exception:
            raise ValueError(f"segment_{how}: num_segments must be given (a static int) when segment_ids "
                             "are traced, as under jit") from None
        num_segments = int(ids.max()) + 1 if ids.size else 0
    num_segments = int(num_segments)
    if num_segments < 0:
        raise ValueError(f"segment_{how}: num_segments must be non-negative, got {num_segments}")
    shape = (num_segments,) + tuple(data.shape[1:])
    out = jnp.full(shape, _identity(how, data.dtype), dtype=data.dtype)
    mode = getattr(mode, "name", mode)
    mode = "drop" if mode is None else str(mode).lower()
    if mode == "clip":
        segment_ids = jnp.clip(segment_ids, 0, max(num_segments - 1, 0))
    elif mode in ("drop", "fill", "fill_or_drop", "promise_in_bounds"):
        # JAX drops negative ids too (they are not counted from the end as in indexing)
        bad = (segment_ids < 0) | (segment_ids >= num_segments)
        segment_ids = jnp.where(bad, num_segments, segment_ids)
    else:
        raise ValueError(f"segment_{how}: unknown mode {mode!r}")
    ref = out.at[segment_ids]
    return getattr(ref, how)(data, indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                             mode="drop")


def _segment_reduction(name: str, how: str, doc: str):
    """A jax.ops segment reduction: data's rows combined by `how` (an .at[] method) per segment id."""
    def reduce(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
               bucket_size=None, mode=None):
        return _segment(how, data, segment_ids, num_segments, indices_are_sorted, unique_indices, bucket_size,
                        mode)
    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = doc
    return reduce


segment_sum = _segment_reduction("segment_sum", "add", "Sum of data's rows per segment id (bucket_size only "
                                 "splits JAX's work; the result is the same).")
segment_prod = _segment_reduction("segment_prod", "mul", "Product of data's rows per segment id (1 where a "
                                  "segment is empty).")
segment_max = _segment_reduction("segment_max", "max", "Maximum of data's rows per segment id (-inf, or the "
                                 "dtype's lowest value, where a segment is empty).")
segment_min = _segment_reduction("segment_min", "min", "Minimum of data's rows per segment id (inf, or the "
                                 "dtype's highest value, where a segment is empty).")
