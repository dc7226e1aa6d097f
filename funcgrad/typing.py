"""funcgrad.typing: JAX's annotation types. ArrayLike: what funcgrad.numpy accepts as an array (an Array,
a NumPy array or scalar, a Python bool/int/float/complex); DTypeLike: what names a dtype."""
from __future__ import annotations

from typing import Any, Union

import numpy as np

from ._src.core.array import ArrayBase

ArrayLike = Union[ArrayBase, np.ndarray, np.bool_, np.number, bool, int, float, complex]
DTypeLike = Union[str, type, np.dtype, Any]

__all__ = ["ArrayLike", "DTypeLike"]
