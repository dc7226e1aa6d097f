"""Searching and index arithmetic: isin, nonzero_static and unravel_index."""
from __future__ import annotations

import builtins

import numpy as np

from ..._src.core.array import Array
from . import indexing
from .._tensor import Tensor, _wrap
from ._common import _t

_int = builtins.int


def unravel_index(indices, shape):
    """The coordinate tensors of flat indices into shape (int64)."""
    if not isinstance(indices, Tensor):
        indices = _t(indices)
    if indices._np_dtype().kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, _int):
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(tuple(shape)))
    v = indices._host().astype(np.int64)
    n = int(np.prod(shape))
    if np.any((v < -n) | (v >= n)):
        raise ValueError("'indices' must be in range [-" + str(n) + ", " + str(n - 1) + "]")
    v = np.where(v < 0, v + n, v)
    return tuple(_wrap(Array(np.asarray(c, np.int64))) for c in np.unravel_index(v, shape)) if shape else ()


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of `elements` is in `test_elements` (either may be a scalar)."""
    a = elements._host() if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements._host() if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return _wrap(Array(np.asarray(np.isin(a, b, invert=invert))))


def nonzero_static(input, *, size, fill_value=-1):
    """nonzero with a fixed number of rows: truncated, or padded with fill_value."""
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got {size} instead.")
    nz = indexing.nonzero(input)._host()
    out = np.full((size, input.ndim), fill_value, np.int64)
    k = min(size, nz.shape[0])
    out[:k] = nz[:k]
    return _wrap(Array(out))



# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods_ops
METHODS = ("nonzero_static",)
INPLACE = ()

__all__ = ["unravel_index", "isin", "nonzero_static"]
