"""dtypes, default dtypes, canonicalisation and type promotion (JAX's lattice, weakly typed Python scalars).

One place for every dtype rule of the JAX face: what a Python value becomes, what a foreign value (a NumPy
array) becomes on entering it (`canonicalize_dtype`: with x64 off, as in JAX, 64-bit dtypes narrow to 32
bits), and what two operands promote to (`result_type`, JAX's type-promotion lattice). The torch face keeps
its own rules (funcgrad/_torch/_dtype.py).
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

# the dtype of the tangent / cotangent of an integer or boolean value (grad(..., allow_int=True)), as in JAX
float0 = np.dtype([("float0", np.void, 0)])


def float0_zeros(shape) -> np.ndarray:
    """Zeros of dtype float0: the derivative with respect to an integer or boolean value."""
    return np.zeros(shape, dtype=float0)

_SUPPORTED = {bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
              float16, float32, float64, complex64, complex128}
if bfloat16 is not None:
    _SUPPORTED.add(bfloat16)


class _Defaults:
    """The JAX face's x64 mode and its default dtypes (Python ints/floats/complexes, creation functions,
    indices); switched by `funcgrad.config.update("jax_enable_x64", True)`."""
    x64 = False
    float_ = float32
    int_ = int32
    uint_ = uint32
    complex_ = complex64


defaults = _Defaults()

# what a 64-bit dtype becomes with x64 off (jax.dtypes.canonicalize_dtype)
_NARROW = {float64: float32, int64: int32, uint64: uint32, complex128: complex64}
_narrow = _NARROW  # the table canonicalize_dtype reads: _NARROW with x64 off, empty with x64 on


def set_x64(enabled: bool) -> None:
    """Switch the JAX face between JAX's two modes: 64-bit defaults and no narrowing (on), or 32-bit
    defaults with every foreign 64-bit value narrowed on entry (off, the default)."""
    global _narrow
    enabled = bool(enabled)
    defaults.x64 = enabled
    defaults.float_ = float64 if enabled else float32
    defaults.int_ = int64 if enabled else int32
    defaults.uint_ = uint64 if enabled else uint32
    defaults.complex_ = complex128 if enabled else complex64
    _narrow = {} if enabled else _NARROW
    _lub_cache.clear()


def canonicalize_dtype(dtype) -> np.dtype:
    """The dtype a value of `dtype` takes in the JAX face (jax.dtypes.canonicalize_dtype): Python types
    give the defaults; with x64 off float64/int64/uint64/complex128 narrow to their 32-bit kin."""
    dt = canonicalize(dtype)
    return _narrow.get(dt, dt)


def is_canonical(dtype) -> bool:
    """Whether a value of `dtype` can arise in the JAX face's current mode without an explicit request."""
    return dtype not in _narrow


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


# --- JAX's type-promotion lattice -----------------------------------------------------------------------
# Nodes are dtypes plus the three weak kinds of Python scalars ("i*", "f*", "c*"); an edge a -> b says b is
# above a. Two types promote to their least upper bound (jax._src.dtypes._type_promotion_lattice, "standard").
_I, _F, _C = "i*", "f*", "c*"
_LATTICE = {
    bool_: [_I], _I: [uint8, int8], uint8: [uint16, int16], uint16: [uint32, int32], uint32: [uint64, int64],
    uint64: [_F], int8: [int16], int16: [int32], int32: [int64], int64: [_F],
    _F: [float16, _C] + ([bfloat16] if bfloat16 is not None else []), float16: [float32], float32: [float64, complex64],
    float64: [complex128], _C: [complex64], complex64: [complex128], complex128: [],
}
if bfloat16 is not None:
    _LATTICE[bfloat16] = [float32]


def _upper_sets() -> dict:
    ups = {}

    def up(n):
        if n not in ups:
            out = {n}
            for m in _LATTICE[n]:
                out |= up(m)
            ups[n] = frozenset(out)
        return ups[n]

    for n in _LATTICE:
        up(n)
    return ups


_UP = _upper_sets()
_lub_cache: dict = {}


def _lub(nodes) -> object:
    """The least upper bound of lattice nodes (the one common upper bound below all the others)."""
    common = None
    for n in nodes:
        common = _UP[n] if common is None else common & _UP[n]
    for c in common:
        if common <= _UP[c]:
            return c
    raise TypeError(f"no common dtype for {sorted(map(str, nodes))}")  # pragma: no cover - a lattice has one


_WEAK_DEFAULT = {_I: "int_", _F: "float_", _C: "complex_"}


def _weak_node(dt: np.dtype):
    """The lattice node of a weakly typed value of dtype dt (its kind's Python scalar; bool stays bool)."""
    if dt == bool_:
        return bool_
    k = dt.kind
    return _I if k in "iu" else _C if k == "c" else _F


def result_type(*operands) -> tuple[np.dtype, bool]:
    """Promote operands given as (dtype, weak_type) pairs by JAX's lattice; returns (dtype, weak_type).

    As in JAX the result is canonical for the x64 mode (int32 + uint32 is int64 with x64 on and int32 with
    it off), except where an operand already holds a non-canonical 64-bit dtype (an Array made by the torch
    face, or at an explicit request): funcgrad never narrows such a value, so neither is the result."""
    key = operands
    hit = _lub_cache.get(key)
    if hit is not None:
        return hit
    dts = {dt for dt, _ in operands}
    if len(dts) == 1 and not all(w for _, w in operands):
        res = (operands[0][0], False)
    elif all(w for _, w in operands):  # all weak: the bound of their dtypes, still weak
        res = _finish(_lub(dts), True, dts)
    else:
        nodes = {(_weak_node(dt) if w else dt) for dt, w in operands}
        top = _lub(nodes)
        res = _finish(top, isinstance(top, str), dts)
    if len(_lub_cache) > 4096:
        _lub_cache.clear()
    _lub_cache[key] = res
    return res


_KIND_DEFAULT = {"b": None, "i": "int_", "u": "uint_", "f": "float_", "c": "complex_"}


def _finish(top, weak: bool, dts) -> tuple[np.dtype, bool]:
    if isinstance(top, str):
        dt = getattr(defaults, _WEAK_DEFAULT[top])
    elif weak and top != bool_:  # an all-weak result takes its kind's default dtype, as in JAX
        dt = getattr(defaults, _KIND_DEFAULT.get(top.kind, "float_"))
    else:
        dt = top
    if dt in _narrow and not any(d in _narrow for d in dts):
        dt = _narrow[dt]
    return dt, weak and dt != bool_


_WEAK_WIDE = {_I: int64, _F: float64, _C: complex128}


def promote_types(a, b) -> np.dtype:
    """The dtype two strongly typed dtypes promote to (jnp.promote_types): their lattice bound, canonical
    for the mode; where the bound is a weak kind (int64 with uint64) it is that kind's 64-bit dtype, as JAX."""
    a, b = canonicalize(a), canonicalize(b)
    top = _lub({a, b})
    if isinstance(top, str):
        return _WEAK_WIDE[top]
    if top in _narrow and a not in _narrow and b not in _narrow:
        return _narrow[top]
    return top


def short_name(dtype) -> str:
    """The jaxpr printer's dtype abbreviation: f32, i64, bool, c64, bf16."""
    dt = np.dtype(dtype)
    if dt == bool_:
        return "bool"
    if bfloat16 is not None and dt == bfloat16:
        return "bf16"
    return {"f": "f", "i": "i", "u": "u", "c": "c"}[dt.kind] + str(dt.itemsize * 8)
