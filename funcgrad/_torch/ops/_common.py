"""Helpers the op families share: operand conversion and torch's index and integer-value checks."""
from __future__ import annotations

import builtins

import numpy as np

from .. import _ops as O
from .._tensor import Tensor, _legacy


_float = builtins.float


def _t(x, dtype=None) -> Tensor:
    return O._as_tensor(x, dtype)


def _host_int(t, name: str) -> np.ndarray:
    v = t._host()
    if v.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected a Long tensor for the indices, but got {_legacy(v.dtype)}")
    return v.astype(np.int64)


def _check_int_value(name, value, *ts):
    if isinstance(value, _float) and all(t._np_dtype().kind in "biu" for t in ts if isinstance(t, Tensor)):
        raise RuntimeError(f"{name}: For integral input tensors, argument value must not be a floating point "
                           "number.")
