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


_PRECISION_NAMES = ("highest", "float32", "high", "bfloat16_3x", "tensorfloat32", "default", "bfloat16",
                    "fastest", None)
_DOT_ALGORITHM_PRESETS = (  # jax.lax.DotAlgorithmPreset's names, accepted as strings
    "DEFAULT", "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
    "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16", "BF16_BF16_F32",
    "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9", "TF32_TF32_F32", "TF32_TF32_F32_X3",
    "F32_F32_F32", "F64_F64_F64")


def _one_precision(p) -> bool:
    return p is None or isinstance(p, Precision) or (isinstance(p, str) and p in _PRECISION_NAMES)


def canonicalize_precision(precision):
    """Checks a products' precision= argument as JAX does (None, a Precision, one of its names, a pair of
    them, or a dot-algorithm preset's name) and returns it; NumPy computes at full precision whatever it
    asks, so it changes nothing else. ValueError with JAX's message otherwise."""
    if _one_precision(precision) or (isinstance(precision, str) and precision in _DOT_ALGORITHM_PRESETS):
        return precision
    if isinstance(precision, (tuple, list)) and len(precision) == 2 and all(
            p is not None and _one_precision(p) for p in precision):
        return precision
    raise ValueError(
        "Precision argument must be one of:\n- None,\n- a string in " + str(list(_PRECISION_NAMES)) +
        ",\n- a lax.Precision value,\n- a tuple of two lax.Precision values or strings,\n"
        "- a lax.DotAlgorithmPreset or the name of one of these presets, or\n- a lax.DotAlgorithm value;\n"
        f"but got {precision}.")
