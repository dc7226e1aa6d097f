"""The Array API standard (2024.12) names that NumPy spells differently, and the inspection namespace.

`x.__array_namespace__()` returns funcgrad.numpy itself (as JAX does with jax.numpy): it is a superset
of the standard. Deviation, by design: arrays are immutable, so `x[i] = v` raises TypeError (use
`x.at[i].set(v)`); augmented assignment `x += y` rebinds the name to a new array, as in JAX, which
keeps x's shape and dtype as the standard requires (a same-kind result is cast back, as NumPy does;
another kind or shape raises). Elementwise special cases (NaN, signed zeros, infinities) follow the
standard where NumPy differs (`x ** 0.5` is +0 at -0 and +inf at -inf; NumPy's scalar-exponent shortcut
computes sqrt), except float floor division and remainder, which are jax.numpy's (XLA's divmod) as the JAX
face requires: `-0.0 // 1` is +0, `inf // 2` is NaN, `1 // -inf` is -1 (the standard: -0, inf, -0) and a
zero remainder keeps x1's sign. Other deviations from the standard that follow jax.numpy: searchsorted
returns int32 indices and cumulative_prod keeps a small integer dtype. tests/test_array_api_special_cases.py
checks every stated case; docs/array-api.md lists what the published array-api-tests suite reports.
"""
from __future__ import annotations

import numpy as np

from .._src.core import dtypes
from .._src.core.array import ArrayBase, to_array, wrap
from .._src.core.backend import CPU, cupy, devices as _devices
from ..lax._elementwise import convert_element_type as _xla_convert
from . import _ufuncs as u
from ._device import put

__array_api_version__ = "2024.12"

acos, acosh, asin, asinh = u.arccos, u.arccosh, u.arcsin, u.arcsinh
atan, atan2, atanh = u.arctan, u.arctan2, u.arctanh
pow = u.power  # noqa: A001 - the standard's name


def astype(x, dtype, /, *, copy: bool = True, device=None):
    """x converted to dtype (and moved to `device`). funcgrad arrays are immutable, so a copy is never
    observable: with copy=False or True alike, x itself is returned when nothing changes."""
    if not isinstance(x, ArrayBase):
        raise TypeError(f"astype: expected an array, got {type(x).__name__}")
    dt = dtypes.canonicalize(dtype)
    out = _xla_convert(x, dt)
    return out if device is None else put(out, device, "astype")


def from_dlpack(x, /, *, device=None, copy=None):
    """An Array from any object supporting DLPack (NumPy, CuPy, torch, ...). The Array owns a copy
    unless the producer's buffer is read-only or copy=False (then the buffer is shared, and the
    producer must not write into it); device= moves the result."""
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} does not implement __dlpack__")
    try:
        buf = np.from_dlpack(x) if copy is None else np.from_dlpack(x, copy=copy)
    except (TypeError, RuntimeError, BufferError):
        cp = cupy()
        if cp is None:
            raise
        buf = cp.from_dlpack(x)
    if copy is False and isinstance(buf, np.ndarray):
        buf = buf.view()
        buf.flags.writeable = False
        return put(wrap(buf), device, "from_dlpack")
    return put(to_array(buf), device, "from_dlpack")


_KINDS = {
    "bool": [dtypes.bool_],
    "signed integer": [dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64],
    "unsigned integer": [dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64],
    "real floating": [dtypes.float32, dtypes.float64],
    "complex floating": [dtypes.complex64, dtypes.complex128],
}
_KINDS["integral"] = _KINDS["signed integer"] + _KINDS["unsigned integer"]
_KINDS["numeric"] = _KINDS["integral"] + _KINDS["real floating"] + _KINDS["complex floating"]


class _Info:
    """The standard's inspection namespace (`__array_namespace_info__()`)."""

    def capabilities(self) -> dict:
        # Boolean-mask indexing and nonzero need concrete sizes (they work outside jit only).
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        return CPU

    def default_dtypes(self, *, device=None) -> dict:
        return {"real floating": dtypes.defaults.float_, "complex floating": dtypes.defaults.complex_,
                "integral": dtypes.defaults.int_, "indexing": dtypes.defaults.int_}

    def devices(self) -> list:
        return _devices()

    def dtypes(self, *, device=None, kind=None) -> dict:
        # (as JAX: with x64 off the 64-bit dtypes are not among them)
        if kind is None:
            names = ["bool"] + [str(d) for d in _KINDS["numeric"] if dtypes.is_canonical(d)]
            return {n: np.dtype(n) for n in names}
        kinds = (kind,) if isinstance(kind, str) else tuple(kind)
        out = {}
        for k in kinds:
            if k not in _KINDS:
                raise ValueError(f"dtypes: unknown kind {k!r}; expected one of {sorted(_KINDS)}")
            out.update({str(d): d for d in _KINDS[k] if dtypes.is_canonical(d)})
        return out


def __array_namespace_info__() -> _Info:
    return _Info()
