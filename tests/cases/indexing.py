"""Cases for the indexing primitives: gather and scatter (every mode).

Indices are in bounds. For scatter-add/set/mul they may repeat (set's derivative routes to the last
write, which is what its implementation keeps; mul's to the product of the other rows); for min/max
they are unique, and their updates stay 0.25 away from the operand values they meet, so there are no ties.
"""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ._special import Special

_VALUES = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False, width=64)


def _values(draw, shape):
    return draw(hnp.arrays(np.float64, tuple(shape), elements=_VALUES))


def _operand_and_axes(draw, min_axes: int):
    shape = draw(st.lists(st.integers(1, 4), min_size=max(1, min_axes), max_size=3))
    order = draw(st.permutations(range(len(shape))))
    k = draw(st.integers(min_axes, len(shape)))
    return tuple(shape), tuple(order[:k])


def _batch(draw) -> tuple:
    """Index batch shape B; sometimes with a zero-length axis, so the index array is empty."""
    return tuple(draw(st.lists(st.integers(0, 3), max_size=2)))


def gather_case(draw):
    shape, axes = _operand_and_axes(draw, 0)
    batch = _batch(draw)
    cols = [draw(hnp.arrays(np.int64, batch, elements=st.integers(0, shape[a] - 1))) for a in axes]
    idx = np.stack(cols, -1) if cols else np.zeros(batch + (0,), np.int64)
    return [_values(draw, shape), idx], {"axes": axes}


def scatter_case(draw):
    mode = draw(st.sampled_from(["add", "set", "mul", "min", "max"]))
    shape, axes = _operand_and_axes(draw, 1)
    rest = tuple(shape[d] for d in range(len(shape)) if d not in axes)
    sizes = tuple(shape[a] for a in axes)
    if mode in ("add", "set", "mul"):
        batch = _batch(draw)
        cols = [draw(hnp.arrays(np.int64, batch, elements=st.integers(0, n - 1))) for n in sizes]
        idx = np.stack(cols, -1)
    else:  # unique rows: distinct flat positions
        m = draw(st.integers(0, math.prod(sizes)))
        flat = draw(st.permutations(range(math.prod(sizes))))[:m]
        idx = np.stack(np.unravel_index(np.asarray(flat, np.int64), sizes), -1).astype(np.int64)
    x = _values(draw, shape)
    upd = _values(draw, idx.shape[:-1] + rest)
    if mode in ("min", "max"):
        rest_ix = [d for d in range(len(shape)) if d not in axes]
        met = np.transpose(x, list(axes) + rest_ix)[tuple(idx[..., j] for j in range(len(axes)))]
        upd = np.where(np.abs(upd - met) < 0.25, met + 0.5, upd)
    return [x, idx, upd], {"axes": axes, "mode": mode}


CASES = {"gather": gather_case, "scatter": scatter_case}


SPECIAL = {"scatter": Special(fd=False, why="modes min and max: an update equal to the operand value it meets is a "
                                            "kink, and special values tie often")}
