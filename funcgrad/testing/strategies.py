"""Hypothesis strategies for derivative and property tests (requires the `hypothesis` test extra).

    from hypothesis import given
    from funcgrad.testing import arrays, shapes, float_dtypes

    @given(arrays(float_dtypes(), shapes()))
    def test_tanh(x): ...

Arrays are NumPy arrays (pass them to funcgrad functions directly or via funcgrad.numpy.asarray).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

try:
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("funcgrad.testing strategies need Hypothesis: pip install 'funcgrad[test]' "
                      "(or pip install hypothesis)") from e

from ..core import dtypes as _dt

def _as_strategy(x):
    return x if isinstance(x, st.SearchStrategy) else st.just(x)


def _default_elements(dtype: np.dtype) -> st.SearchStrategy:
    """Finite, moderate values: floats in [-10, 10], small integers, any bool."""
    if dtype == _dt.bool_:
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return st.integers(max(int(info.min), -100), min(int(info.max), 100))
    if dtype.kind == "c":
        return st.complex_numbers(max_magnitude=10, allow_nan=False, allow_infinity=False,
                                  width=8 * dtype.itemsize)
    width = {2: 16, 4: 32}.get(dtype.itemsize, 64)
    return st.floats(-10, 10, allow_nan=False, allow_infinity=False, allow_subnormal=False, width=width)


@st.composite
def _draw_array(draw, dtype, shape, elements):
    dt = _dt.canonicalize(draw(_as_strategy(dtype)))
    shp = tuple(int(s) for s in draw(_as_strategy(shape)))
    is_bf16 = _dt.bfloat16 is not None and dt == _dt.bfloat16
    if elements is None:
        if is_bf16:
            f32 = np.dtype(np.float32)
            return draw(hnp.arrays(f32, shp, elements=_default_elements(f32))).astype(dt)
        return draw(hnp.arrays(dt, shp, elements=_default_elements(dt)))
    if dt.kind == "f" or is_bf16:
        return draw(hnp.arrays(np.float64, shp, elements=elements)).astype(dt)
    if dt.kind == "c":
        return draw(hnp.arrays(np.complex128, shp, elements=elements)).astype(dt)
    return draw(hnp.arrays(dt, shp, elements=elements))


def arrays(dtype, shape, elements: st.SearchStrategy | None = None) -> st.SearchStrategy:
    """NumPy arrays of `dtype` and `shape` (each a value or a strategy).

    `elements` draws the entries (default: finite floats in [-10, 10], integers in [-100, 100], any
    bool). For float16/float32/bfloat16 the entries are drawn as float64 and rounded to the dtype, so
    any float strategy may be given (a bound may move by the rounding).
    """
    return _draw_array(dtype, shape, elements)


def shapes(min_dims: int = 0, max_dims: int = 3, min_side: int = 1, max_side: int = 5) -> st.SearchStrategy:
    """Array shapes (tuples) with min_dims..max_dims dimensions of sizes min_side..max_side."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def broadcastable_shapes(shape: Sequence[int], min_dims: int = 0, max_dims: int | None = None,
                         min_side: int = 1, max_side: int = 5) -> st.SearchStrategy:
    """Shapes that broadcast with `shape` under NumPy's rules (as hypothesis.extra.numpy's do).

    With the default max_dims (len(shape)) and no size-1 entries in `shape`, every result broadcasts
    *to* `shape`; otherwise the broadcast result may be larger than `shape`.
    """
    shape = tuple(int(s) for s in shape)
    if max_dims is None:
        max_dims = max(len(shape), min_dims)
    return hnp.broadcastable_shapes(shape, min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                                    max_side=max_side)


def mutually_broadcastable_shapes(num_shapes: int = 2, min_dims: int = 0, max_dims: int = 3,
                                  min_side: int = 1, max_side: int = 5) -> st.SearchStrategy:
    """Tuples of `num_shapes` shapes that broadcast together (their result may be larger than each)."""
    return hnp.mutually_broadcastable_shapes(num_shapes=num_shapes, min_dims=min_dims, max_dims=max_dims,
                                             min_side=min_side, max_side=max_side).map(
        lambda b: tuple(tuple(s) for s in b.input_shapes))


def broadcastable_shape_pairs(min_dims: int = 0, max_dims: int = 3, min_side: int = 1,
                              max_side: int = 5) -> st.SearchStrategy:
    """Pairs (shape_a, shape_b) of mutually broadcastable shapes."""
    return mutually_broadcastable_shapes(2, min_dims, max_dims, min_side, max_side)


def float_dtypes(sizes: Sequence[int] = (16, 32, 64), bfloat16: bool = False) -> st.SearchStrategy:
    """Floating dtypes (np.dtype) of the given bit sizes, plus bfloat16 if asked and installed."""
    choices = [np.dtype(f"float{s}") for s in sizes]
    if bfloat16 and _dt.bfloat16 is not None:
        choices.append(_dt.bfloat16)
    if not choices:
        raise ValueError("float_dtypes: no dtypes to choose from")
    return st.sampled_from(choices)


def dtypes(kinds: str = "bifc") -> st.SearchStrategy:
    """Supported dtypes of the given kinds: 'b' bool, 'i' signed/unsigned integer, 'f' float, 'c' complex."""
    choices = []
    if "b" in kinds:
        choices.append(_dt.bool_)
    if "i" in kinds:
        choices += [_dt.int8, _dt.int16, _dt.int32, _dt.int64, _dt.uint8, _dt.uint16, _dt.uint32, _dt.uint64]
    if "f" in kinds:
        choices += [_dt.float16, _dt.float32, _dt.float64]
    if "c" in kinds:
        choices += [_dt.complex64, _dt.complex128]
    if not choices:
        raise ValueError(f"dtypes: no dtypes of kinds {kinds!r}")
    return st.sampled_from(choices)


__all__ = ["arrays", "shapes", "broadcastable_shapes", "mutually_broadcastable_shapes",
           "broadcastable_shape_pairs", "float_dtypes", "dtypes"]
