"""safetensors files as dicts of NumPy arrays, through the safetensors library (the `safetensors` extra).

Both faces' helpers (funcgrad.safetensors.torch for Tensors, .flax for Arrays) convert at their edge and call
these. Files are written by the library's NumPy serializer and read by its `safe_open` (lazy, by name and by
slice); bfloat16 and the float8 types come from ml_dtypes, which funcgrad loads when it is installed.
"""
from __future__ import annotations

import os

import numpy as np

_EXTRA = ("safetensors files need the safetensors library: pip install 'funcgrad[safetensors]' "
          "(safetensors, and ml_dtypes for bfloat16)")

try:
    import safetensors as _lib
    import safetensors.numpy as _np_lib
except ImportError:  # the helpers raise _EXTRA when called
    _lib = _np_lib = None

__all__ = ["save_arrays", "save_arrays_file", "load_arrays", "load_arrays_file", "safe_open"]


def _library():
    if _lib is None:
        raise ImportError(_EXTRA)
    return _lib


def _check(tensors: dict, op: str) -> dict:
    if not isinstance(tensors, dict):
        raise TypeError(f"{op}: expected a dict of name -> tensor, got {type(tensors).__name__}")
    for k in tensors:
        if not isinstance(k, str):
            raise TypeError(f"{op}: tensor names must be str, got {k!r}")
    return {k: np.ascontiguousarray(v) for k, v in tensors.items()}


def _metadata(metadata, op: str):
    if metadata is None:
        return None
    if not isinstance(metadata, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                 for k, v in metadata.items()):
        raise TypeError(f"{op}: metadata must be a dict of str -> str (safetensors stores text only)")
    return metadata


def save_arrays(tensors: dict, metadata: dict | None = None) -> bytes:
    _library()
    return _np_lib.save(_check(tensors, "save"), metadata=_metadata(metadata, "save"))


def save_arrays_file(tensors: dict, filename, metadata: dict | None = None) -> None:
    _library()
    _np_lib.save_file(_check(tensors, "save_file"), os.fspath(filename), metadata=_metadata(metadata, "save_file"))


def load_arrays_file(filename) -> dict:
    with safe_open(filename, framework="numpy") as f:
        return {k: f.get_tensor(k) for k in f.keys()}


def load_arrays(data: bytes) -> dict:
    """Reads safetensors bytes (the library parses the header; the data is copied out of `data`)."""
    lib = _library()
    out = {}
    for name, entry in lib.deserialize(bytes(data)):
        dtype = _DTYPES.get(entry["dtype"])
        if dtype is None:
            raise TypeError(f"load: tensor {name!r} has dtype {entry['dtype']}, which NumPy cannot hold here "
                            f"(bfloat16/float8 need ml_dtypes: pip install ml_dtypes)")
        out[name] = np.frombuffer(entry["data"], dtype=dtype).reshape(entry["shape"]).copy()
    return out


def safe_open(filename, framework: str = "numpy", device: str = "cpu"):
    """The library's lazy reader (keys(), metadata(), get_tensor(name), get_slice(name)[...]) over NumPy."""
    lib = _library()
    if not os.path.exists(os.fspath(filename)):
        raise FileNotFoundError(f"safe_open: no such file: {os.fspath(filename)!r}")
    return lib.safe_open(os.fspath(filename), framework="numpy", device=device)


def _dtype_table() -> dict:
    table = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32,
             "I16": np.int16, "I8": np.int8, "U64": np.uint64, "U32": np.uint32, "U16": np.uint16, "U8": np.uint8,
             "BOOL": np.bool_, "C64": np.complex64, "C128": np.complex128}
    try:
        import ml_dtypes
        table.update(BF16=ml_dtypes.bfloat16, F8_E4M3=ml_dtypes.float8_e4m3fn, F8_E5M2=ml_dtypes.float8_e5m2)
    except ImportError:
        pass
    return {k: np.dtype(v) for k, v in table.items()}


_DTYPES = _dtype_table()
