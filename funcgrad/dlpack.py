"""funcgrad.dlpack: exchange arrays with other libraries through DLPack (as jax.dlpack)."""
from __future__ import annotations

import numpy as np

__all__ = ["from_dlpack", "to_dlpack", "is_supported_dtype"]

_SUPPORTED = {np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                    np.uint32, np.uint64, np.float16, np.float32, np.float64, np.complex64,
                                    np.complex128)}


def from_dlpack(external_array, device=None, copy=None):
    """An Array holding the data of any object with __dlpack__ (a NumPy / CuPy / torch array, ...)."""
    from .numpy import asarray
    if not hasattr(external_array, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(external_array).__name__} does not implement __dlpack__ (a "
                        "legacy DLPack capsule cannot be read; pass the array itself)")
    try:
        host = np.from_dlpack(external_array)
    except (BufferError, RuntimeError, TypeError):
        import cupy  # a GPU array: NumPy cannot read device memory
        host = cupy.from_dlpack(external_array)
    return asarray(host, device=device) if device is not None else asarray(host)


def to_dlpack(x):
    """A DLPack capsule for Array x (JAX's older API; prefer passing x itself, which has __dlpack__)."""
    return x.__dlpack__()


def is_supported_dtype(dtype) -> bool:
    """Whether arrays of `dtype` can pass through DLPack."""
    try:
        return np.dtype(dtype) in _SUPPORTED
    except TypeError:
        return False
