"""torch.types: the type aliases torch annotates its API with (Number, Device, FileLike, ...), for code that
imports them from there."""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO, Union

from ._torch._dtype import Size, device as _device, dtype as _dtype  # noqa: F401  (torch.types._dtype)
from ._torch._storage import TypedStorage as Storage  # noqa: F401
from ._torch._tensor import Tensor

__all__ = ["Number", "Device", "FileLike", "Storage"]

_int, _float, _bool, _complex, _str, _bytes = int, float, bool, complex, str, bytes
Number = Union[int, float, bool]
_Number = (int, float, bool)
Device = Union[_device, str, int, None]
FileLike = Union[str, os.PathLike, IO[bytes]]
_size = Union[Size, list[int], tuple[int, ...]]
_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors = Union[Tensor, Sequence[Union[Tensor, None]]]
IntLikeType, FloatLikeType, BoolLikeType = int, float, bool
