"""torch.nn.LinearCrossEntropyOptions: the chunking options of linear_cross_entropy. funcgrad validates and
keeps them (so code and pickles that pass them work) and computes the loss by the reference path: the same
value; the chunked path is a memory strategy of torch's kernels."""
from __future__ import annotations

import dataclasses
from typing import Literal, Optional

from ..._torch import _dtype as D

__all__ = ["LinearCrossEntropyOptions"]


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """allow_retain_graph, batch_chunk_size, chunking_method ("auto", "aspect_ratio", "aspect_ratio:N" or
    None), acc_policy ("auto", "accurate", "balanced", "compact") and acc_dtype, validated as torch's."""
    allow_retain_graph: bool = False
    batch_chunk_size: Optional[int] = None
    chunking_method: Optional[str] = "auto"
    acc_policy: Literal["accurate", "balanced", "compact", "auto"] = "auto"
    acc_dtype: Optional[object] = None

    def __post_init__(self) -> None:
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None
                or (isinstance(self.batch_chunk_size, int) and self.batch_chunk_size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {self.batch_chunk_size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in {D.float16, D.bfloat16, D.float32, D.float64}:
            raise ValueError(f"acc_dtype must be one of {{None, torch.float16, torch.bfloat16, torch.float32, "
                             f"torch.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op pick "
                             "automatically.")
