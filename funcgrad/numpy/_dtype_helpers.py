"""dtype helpers with NumPy's names: result_type, promote_types, can_cast, finfo, iinfo, issubdtype,
isdtype, and NumPy's scalar-type hierarchy (generic, number, integer, floating, ...) for issubdtype.

Promotion is funcgrad's (NumPy 2 / NEP 50: Python scalars are weak), with the documented difference
that a Python float (or float64 produced from integers) is the default float dtype (float32 unless
x64 is enabled). finfo's limits are Python floats (as the Array API requires; NumPy's other fields are
there too); iinfo is NumPy's. can_cast follows the Array API's promotion lattice unless NumPy's
`casting=` rule is named.
"""
from __future__ import annotations

import numpy as np

from .._src.core import dtypes
from .._src.core.array import ArrayBase, to_array
from ._promote import is_python_scalar
from ._scalar_types import ScalarType

generic, number, integer, signedinteger, unsignedinteger = (
    np.generic, np.number, np.integer, np.signedinteger, np.unsignedinteger)
inexact, floating, complexfloating = np.inexact, np.floating, np.complexfloating
dtype = np.dtype


def _key(x):
    """(dtype, weak) for one argument of result_type."""
    if isinstance(x, ArrayBase):
        return x.dtype, bool(x.weak_type)
    if is_python_scalar(x):
        return dtypes.python_scalar_dtype(x), True
    if isinstance(x, (np.ndarray, np.generic)):
        return dtypes.canonicalize_dtype(x.dtype), False
    if isinstance(x, (list, tuple)):
        return dtypes.canonicalize_dtype(to_array(x).dtype), False
    return dtypes.canonicalize_dtype(x), False


def result_type(*arrays_and_dtypes):
    """The dtype the arguments promote to (arrays, dtypes and Python scalars), as numpy.result_type."""
    if not arrays_and_dtypes:
        raise ValueError("at least one array or dtype is required")
    dt, _ = dtypes.result_type(*[_key(x) for x in arrays_and_dtypes])
    return np.dtype(dt)


def promote_types(type1, type2):
    """The smallest dtype both can be safely cast to, as numpy.promote_types."""
    return np.dtype(dtypes.promote_types(type1, type2))


def _as_dtype(x):
    if isinstance(x, ArrayBase):
        return x.dtype
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype
    return dtypes.canonicalize(x)


def _family(dt) -> str:
    return "b" if dt.kind == "b" else "i" if dt.kind in "iu" else "c" if dt.kind == "c" else "f"


def can_cast(from_, to, casting=None):
    """Whether `from_` (a dtype or array) can be cast to `to`.

    By default the Array API's rule: the cast must follow its type promotion lattice, so only within
    a kind (bool, integers, real floats, complex) or from a real float to a complex one, and without
    losing range (int8 -> uint8 and int32 -> float32 are False; NumPy says True for bool -> int8).
    With `casting=` ('no', 'equiv', 'safe', 'same_kind', 'unsafe') it is numpy.can_cast. Python
    scalars are rejected, as in NumPy 2."""
    if is_python_scalar(from_):
        raise TypeError("can_cast() does not support Python ints, floats, and complex because the result "
                        "used to depend on the value.\nThis change was part of adopting NEP 50, we may "
                        "explicitly allow them again in the future.")
    src, dst = np.dtype(_as_dtype(from_)), np.dtype(_as_dtype(to))
    if casting is None:
        fs, fd = _family(src), _family(dst)
        if fs != fd and not (fs == "f" and fd == "c"):
            return False
        return bool(np.can_cast(src, dst, casting="safe"))
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError("casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe'")
    return bool(np.can_cast(src, dst, casting=casting))


def _info_dtype(x):
    if is_python_scalar(x):
        return dtypes.python_scalar_dtype(x)
    return _as_dtype(x)


class finfo:  # noqa: N801 - NumPy's and the Array API's name
    """Machine limits for a floating dtype (complex gives its real part's), as numpy.finfo; `eps`,
    `max`, `min`, `smallest_normal`, `tiny` and `resolution` are Python floats, as the Array API requires
    (numpy.finfo gives NumPy scalars); every other field is numpy.finfo's (ml_dtypes' for bfloat16)."""
    _FLOATS = ("eps", "epsneg", "max", "min", "smallest_normal", "smallest_subnormal", "tiny", "resolution")

    def __init__(self, type, /):  # noqa: A002 - the standard's parameter name
        dt = _info_dtype(type)
        if dtypes.bfloat16 is not None and dt == dtypes.bfloat16:
            import ml_dtypes
            self._np = ml_dtypes.finfo(dt)
        else:
            try:
                self._np = np.finfo(dt)
            except ValueError:
                raise ValueError(f"finfo: data type {np.dtype(dt)} is not inexact (use iinfo for integers)") from None
        for name in self._FLOATS:
            setattr(self, name, float(getattr(self._np, name)))
        self.bits, self.dtype = int(self._np.bits), self._np.dtype

    def __getattr__(self, name):
        if name == "_np":
            raise AttributeError(name)
        return getattr(self._np, name)

    def __repr__(self) -> str:
        return repr(self._np)

    def __eq__(self, other) -> bool:
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash(("finfo", self.dtype))

    def __reduce__(self):
        return (finfo, (self.dtype,))


def iinfo(int_type):
    """Machine limits for an integer dtype, as numpy.iinfo."""
    return np.iinfo(_info_dtype(int_type))


_BF16_PARENTS = (np.floating, np.inexact, np.number, np.generic)


def issubdtype(arg1, arg2):
    """Whether arg1 is lower than or equal to arg2 in NumPy's type hierarchy, as numpy.issubdtype
    (bfloat16 counts as a floating type)."""
    if dtypes.bfloat16 is not None:
        a1 = _maybe_dtype(arg1)
        if a1 == dtypes.bfloat16:
            a2 = arg2 if isinstance(arg2, type) and issubclass(arg2, np.generic) and arg2 in _BF16_PARENTS \
                else _maybe_dtype(arg2)
            return a2 in _BF16_PARENTS or a2 == dtypes.bfloat16
    return bool(np.issubdtype(arg1, arg2))


def _maybe_dtype(x):
    try:
        return np.dtype(x)
    except TypeError:
        return None


_KINDS = {
    "bool": lambda d: d == dtypes.bool_,
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: dtypes.is_float(d),
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d != dtypes.bool_,
}


def isdtype(dtype, kind):  # noqa: F811 - Array API parameter name
    """Whether dtype is of `kind` (a dtype, a kind name such as 'real floating' or 'integral', or a
    tuple of them), as numpy.isdtype (bfloat16 is 'real floating')."""
    if not isinstance(dtype, np.dtype):
        if not isinstance(dtype, ScalarType):
            raise TypeError(f"isdtype: the dtype argument must be a dtype, but it is a {type(dtype).__name__}.")
        dtype = dtype.dtype  # funcgrad.numpy's dtype names (float32, ...)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"kind argument is a string, but {k!r} is not a known kind name.")
            if _KINDS[k](dtype):
                return True
        else:
            if np.dtype(k) == dtype:
                return True
    return False


__all__ = ["result_type", "promote_types", "can_cast", "finfo", "iinfo", "issubdtype", "isdtype",
           "generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact", "floating",
           "complexfloating", "dtype"]
