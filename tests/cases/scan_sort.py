"""Cases for the scans, boolean reductions, sorting and dynamic slicing primitives.

- scans: float64 operands of rank 1-3 along any axis, both directions. cumprod draws exact zeros in
  about a third of its cases (its derivative must be exact there); cummax/cummin use distinct values
  (so the running arg-extremum is unique and finite differences see no ties); cumlogsumexp includes
  large entries (up to 800) where a naive exp would overflow.
- sort: one to three operands, num_keys 1 or 2; float keys are distinct, and with two keys the first
  is an integer key with ties (so the second decides within its groups). top_k: distinct values.
- dynamic slices: starts anywhere in [-3, n + 2], so out-of-range starts exercise JAX's clamping.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ._special import Special
from .core import BOOL, distinct, shape, uniform

I64 = np.dtype(np.int64)


def _axis(draw, shp):
    return draw(st.integers(0, len(shp) - 1))


def _scan_params(draw, shp):
    return {"axis": _axis(draw, shp), "reverse": draw(st.booleans())}


def cumsum_case(draw):
    shp = shape(draw, min_dims=1)
    return [uniform(draw, shp)], _scan_params(draw, shp)


def cumprod_case(draw):
    shp = shape(draw, min_dims=1)
    x = uniform(draw, shp, -1.5, 1.5)
    if draw(st.integers(0, 2)) == 0:  # exact zeros: one or two of them
        flat = x.reshape(-1)
        for i in draw(st.lists(st.integers(0, flat.size - 1), min_size=1, max_size=2)):
            flat[i] = 0.0
        x = flat.reshape(shp)
    return [x], _scan_params(draw, shp)


def cumlogsumexp_case(draw):
    shp = shape(draw, min_dims=1)
    x = uniform(draw, shp, -3.0, 3.0)
    if draw(st.booleans()):
        x = x + draw(st.sampled_from([-800.0, 800.0]))  # exp would overflow / underflow
    return [x], _scan_params(draw, shp)


def _extremum_case(draw):
    shp = shape(draw, min_dims=1)
    return [distinct(draw, shp)], _scan_params(draw, shp)


def _bool_reduce_case(draw):
    shp = shape(draw, min_dims=1)
    x = draw(st.lists(st.booleans(), min_size=int(np.prod(shp)), max_size=int(np.prod(shp))))
    axes = tuple(sorted(draw(st.sets(st.integers(0, len(shp) - 1), min_size=1))))
    return [np.asarray(x, BOOL).reshape(shp)], {"axes": axes}


def sort_case(draw):
    shp = shape(draw, min_dims=1)
    dimension = _axis(draw, shp)
    n_ops = draw(st.integers(1, 3))
    num_keys = draw(st.integers(1, min(2, n_ops)))
    ops = []
    if num_keys == 2:
        ops.append(draw(st.lists(st.integers(0, 2), min_size=int(np.prod(shp)),
                                 max_size=int(np.prod(shp)))))
        ops[0] = np.asarray(ops[0], I64).reshape(shp)
    while len(ops) < n_ops:
        ops.append(distinct(draw, shp) if len(ops) < num_keys else uniform(draw, shp))
    return ops, {"dimension": dimension, "is_stable": draw(st.booleans()), "num_keys": num_keys}


def top_k_case(draw):
    shp = shape(draw, min_dims=1)
    return [distinct(draw, shp)], {"k": draw(st.integers(0, shp[-1]))}


def _starts(draw, shp):
    return [np.asarray(draw(st.integers(-3, n + 2)), I64) for n in shp]


def dynamic_slice_case(draw):
    shp = shape(draw, min_dims=1)
    sizes = tuple(draw(st.integers(0, n)) for n in shp)
    return [uniform(draw, shp)] + _starts(draw, shp), {"slice_sizes": sizes}


def dynamic_update_slice_case(draw):
    shp = shape(draw, min_dims=1)
    sizes = tuple(draw(st.integers(0, n)) for n in shp)
    return [uniform(draw, shp), uniform(draw, sizes)] + _starts(draw, shp), {}


CASES = {
    "cumsum": cumsum_case,
    "cumprod": cumprod_case,
    "cumlogsumexp": cumlogsumexp_case,
    "cummax": _extremum_case,
    "cummin": _extremum_case,
    "reduce_and": _bool_reduce_case,
    "reduce_or": _bool_reduce_case,
    "sort": sort_case,
    "top_k": top_k_case,
    "dynamic_slice": dynamic_slice_case,
    "dynamic_update_slice": dynamic_update_slice_case,
}


_TIES_FD = "ties of repeated special values are kinks (which entry is the extremum / where it sorts)"
SPECIAL = {
    "cummax": Special(fd=False, why=_TIES_FD), "cummin": Special(fd=False, why=_TIES_FD),
    "sort": Special(fd=False, why=_TIES_FD), "top_k": Special(fd=False, why=_TIES_FD),
}
