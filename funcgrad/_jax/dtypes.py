"""funcgrad.dtypes: JAX's `jax.dtypes` names (canonicalize_dtype, issubdtype, result_type, float0,
bfloat16, finfo, iinfo, ...).

As in JAX, `canonicalize_dtype` gives the dtype a value takes in the x64 mode: with x64 off (the default)
float64/int64/uint64/complex128 narrow to float32/int32/uint32/complex64; Python types give the defaults.
"""
from __future__ import annotations

import numpy as np

from .._src.core import dtypes as _dt
from .._src.core.array import ArrayBase as _ArrayBase, get_aval as _get_aval

from .._src.core.dtypes import float0  # (the dtype of tangents/cotangents of integer and bool inputs)

try:
    from ml_dtypes import bfloat16  # noqa: F401  (the scalar type, as jax.dtypes.bfloat16)
except ImportError:  # pragma: no cover - depends on the environment
    bfloat16 = None


class extended(np.generic):
    """JAX's abstract base of extended dtypes (typed PRNG keys and the like). funcgrad has none: its keys
    are raw uint32 arrays, so `issubdtype(x.dtype, extended)` is False for every funcgrad array, and
    programs that test for typed keys take their raw-key path."""


class prng_key(extended):
    """JAX's abstract dtype of typed PRNG keys (see `extended`)."""


def canonicalize_dtype(dtype, allow_extended_dtype: bool = False) -> np.dtype:
    """The np.dtype a value of `dtype` takes in the JAX face's x64 mode (jax.dtypes.canonicalize_dtype)."""
    return _dt.canonicalize_dtype(dtype)


def issubdtype(a, b) -> bool:
    """np.issubdtype, extended to bfloat16 (a floating type) and float0."""
    if a is None:
        return False
    if bfloat16 is not None and np.dtype(a) == np.dtype(bfloat16):
        if b in (np.floating, np.inexact, np.number, np.generic):
            return True
        return isinstance(b, (type, np.dtype, str)) and np.dtype(b) == np.dtype(bfloat16)
    return bool(np.issubdtype(a, b))


def result_type(*args, return_weak_type_flag: bool = False):
    """The dtype JAX/funcgrad promotion gives `args` (arrays, dtypes or Python scalars)."""
    ops = []
    for a in args:
        if isinstance(a, (_ArrayBase, bool, int, float, complex, np.ndarray, np.generic)):
            av = _get_aval(a)
            dt = av.dtype if isinstance(a, _ArrayBase) else _dt.canonicalize_dtype(av.dtype)
            ops.append((dt, av.weak_type))
        else:
            ops.append((_dt.canonicalize_dtype(a), False))
    if not ops:
        raise ValueError("at least one array or dtype is required")
    dt, weak = _dt.result_type(*ops)
    return (dt, weak) if return_weak_type_flag else dt


def is_weakly_typed(x) -> bool:
    return _get_aval(x).weak_type


def scalar_type_of(x) -> type:
    """The Python scalar type (bool, int, float or complex) of an array's dtype."""
    dt = _get_aval(x).dtype if not isinstance(x, np.dtype) else x
    if dt == np.bool_:
        return bool
    if _dt.is_integer(dt):
        return int
    if _dt.is_float(dt):
        return float
    if _dt.is_complex(dt):
        return complex
    raise TypeError(f"scalar_type_of: invalid scalar dtype {dt}")


def finfo(dtype):
    """Machine limits of a floating dtype (np.finfo; ml_dtypes.finfo for bfloat16)."""
    if bfloat16 is not None and np.dtype(dtype) == np.dtype(bfloat16):
        import ml_dtypes
        return ml_dtypes.finfo(dtype)
    return np.finfo(dtype)


def iinfo(dtype):
    """Machine limits of an integer dtype (np.iinfo)."""
    return np.iinfo(dtype)


__all__ = ["float0", "bfloat16", "canonicalize_dtype", "issubdtype", "result_type",
           "is_weakly_typed", "scalar_type_of", "finfo", "iinfo", "extended", "prng_key"]
