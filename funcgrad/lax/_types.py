"""jax.lax's parameter types: gather/scatter/dot/conv dimension numbers, the out-of-bounds index mode,
and matmul precision hints."""
from __future__ import annotations

import enum
from typing import NamedTuple, Sequence, Union

from .._src.prims.conv import ConvDimensionNumbers
from .._src.prims.elementwise import RoundingMethod

__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode", "DotDimensionNumbers",
           "ConvDimensionNumbers", "ConvGeneralDilatedDimensionNumbers", "Precision", "RoundingMethod"]


class GatherDimensionNumbers(NamedTuple):
    """XLA's gather dimension numbers (the fields of jax.lax.GatherDimensionNumbers)."""
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    """XLA's scatter dimension numbers (the fields of jax.lax.ScatterDimensionNumbers)."""
    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


class GatherScatterMode(enum.Enum):
    """Out-of-bounds index handling; usable as `mode=` of x.at[...] and funcgrad.ops."""
    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3
    ONE_HOT = 4

    @staticmethod
    def from_any(s) -> "GatherScatterMode":
        if isinstance(s, GatherScatterMode):
            return s
        if s is None:
            return GatherScatterMode.FILL_OR_DROP
        names = {"clip": "CLIP", "fill": "FILL_OR_DROP", "drop": "FILL_OR_DROP",
                 "promise_in_bounds": "PROMISE_IN_BOUNDS", "one_hot": "ONE_HOT"}
        if isinstance(s, str) and s in names:  # (JAX's spellings exactly: lower case)
            return GatherScatterMode[names[s]]
        raise ValueError(f'Unknown gather mode "{s}"')


DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]]
ConvGeneralDilatedDimensionNumbers = Union[tuple[str, str, str], ConvDimensionNumbers, None]


class Precision(enum.Enum):
    """Matmul precision hints (accepted by the precision= arguments; NumPy computes at full precision
    whatever the hint)."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    def __str__(self) -> str:
        return self.name
