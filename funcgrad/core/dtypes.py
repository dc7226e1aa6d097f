"""dtypes, default dtypes and type promotion (NumPy 2 / NEP 50 with weakly typed Python scalars).

One place for every dtype rule: what a Python value becomes, and what two operands promote to.
"""
from __future__ import annotations

import numpy as np

try:  # bfloat16 is optional: it lives in ml_dtypes.
    import ml_dtypes as _ml_dtypes

    bfloat16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - depends on the environment
    bfloat16 = None

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

_SUPPORTED = {bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
              float16, float32, float64, complex64, complex128}
if bfloat16 is not None:
    _SUPPORTED.add(bfloat16)


class _Defaults:
    """Default dtypes for Python floats/ints; switched by `funcgrad.config.update("enable_x64", True)`."""
    float_ = float32
    int_ = int64
    complex_ = complex64


defaults = _Defaults()


def set_x64(enabled: bool) -> None:
    defaults.float_ = float64 if enabled else float32
    defaults.complex_ = complex128 if enabled else complex64


def canonicalize(dtype) -> np.dtype:
    """Turn anything NumPy accepts as a dtype (or a Python type) into a supported np.dtype."""
    if dtype is float:
        return defaults.float_
    if dtype is int:
        return defaults.int_
    if dtype is complex:
        return defaults.complex_
    if dtype is bool:
        return bool_
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"{dtype!r} is not a valid dtype") from e
    if dt not in _SUPPORTED:
        raise TypeError(f"dtype {dt} is not supported by funcgrad; supported: "
                        + ", ".join(sorted(str(d) for d in _SUPPORTED)))
    return dt


def is_float(dtype) -> bool:
    return np.dtype(dtype).kind == "f" or (bfloat16 is not None and dtype == bfloat16)


def is_complex(dtype) -> bool:
    return np.dtype(dtype).kind == "c"


def is_inexact(dtype) -> bool:
    """Float or complex: the dtypes that carry derivatives."""
    return is_float(dtype) or is_complex(dtype)


def to_inexact(dtype, weak: bool = False) -> np.dtype:
    """The float dtype JAX computes an integer or bool operand in (jax.dtypes.to_inexact_dtype):
    bool and integers of up to 32 bits give float32, 64-bit integers (and weakly typed Python ints)
    the default float; float and complex dtypes are kept."""
    dtype = np.dtype(dtype)
    if is_inexact(dtype):
        return dtype
    if weak or dtype.itemsize == 8:
        return defaults.float_
    return float32


def is_integer(dtype) -> bool:
    return np.dtype(dtype).kind in "iu"


def kind_rank(dtype) -> int:
    """bool < integer < floating < complex: the order of NEP 50's kinds."""
    if dtype == bool_:
        return 0
    if is_integer(dtype):
        return 1
    if is_float(dtype):
        return 2
    return 3


def python_scalar_dtype(x) -> np.dtype:
    """The dtype a Python scalar takes when it stands alone (it is weakly typed)."""
    if isinstance(x, bool):
        return bool_
    if isinstance(x, int):
        return defaults.int_
    if isinstance(x, float):
        return defaults.float_
    if isinstance(x, complex):
        return defaults.complex_
    raise TypeError(f"{type(x).__name__} is not a Python scalar")


def _promote_strong(a: np.dtype, b: np.dtype) -> np.dtype:
    if a == b:
        return a
    if bfloat16 is not None and bfloat16 in (a, b):
        other = b if a == bfloat16 else a
        if kind_rank(other) <= 1 or other == bfloat16:
            return bfloat16
        if other == float16:
            return float32
        return other
    return np.promote_types(a, b)


def _weak_into(weak: np.dtype, strong: np.dtype) -> np.dtype:
    """NEP 50: a weak operand adopts the strong operand's dtype unless its kind is higher."""
    if kind_rank(weak) <= kind_rank(strong):
        return strong
    if is_complex(weak):  # complex scalar with a float array: complex of the same precision
        if strong == float64:
            return complex128
        return complex64 if is_float(strong) and strong != float64 else defaults.complex_
    return defaults.float_ if is_float(weak) else weak


def result_type(*operands) -> tuple[np.dtype, bool]:
    """Promote operands given as (dtype, weak_type) pairs; returns (dtype, weak_type)."""
    strongs = []
    weak = None
    for dt, is_weak in operands:
        if is_weak:
            weak = dt if weak is None or kind_rank(dt) > kind_rank(weak) else weak
        else:
            strongs.append(dt)
    strong = None
    if len(strongs) > 2 and (bfloat16 is None or bfloat16 not in strongs):
        strong = np.result_type(*strongs)  # NumPy's n-ary rule is not pairwise-associative
    else:
        for dt in strongs:
            strong = dt if strong is None else _promote_strong(strong, dt)
    if strong is None:
        return weak, True
    if weak is None:
        return strong, False
    # JAX's lattice: where the weak operand's kind decides the result (an int array with a Python
    # float, a bool array with a Python int), the result stays weakly typed; a float array with a
    # Python complex gives the strong complex of the float's width
    still_weak = kind_rank(weak) > kind_rank(strong) and not (is_complex(weak) and is_float(strong))
    return _weak_into(weak, strong), still_weak


def promote_types(a, b) -> np.dtype:
    """The dtype two strongly typed dtypes promote to."""
    return _promote_strong(canonicalize(a), canonicalize(b))


def short_name(dtype) -> str:
    """The jaxpr printer's dtype abbreviation: f32, i64, bool, c64, bf16."""
    dt = np.dtype(dtype)
    if dt == bool_:
        return "bool"
    if bfloat16 is not None and dt == bfloat16:
        return "bf16"
    return {"f": "f", "i": "i", "u": "u", "c": "c"}[dt.kind] + str(dt.itemsize * 8)
