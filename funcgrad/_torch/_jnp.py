"""funcgrad.numpy as the torch face uses it to build its operations: the same functions, with torch's dtypes
where the JAX face's differ.

The JAX face follows JAX's x64 modes (with x64 off: int32 indices, int32 sums of small integers, Python
ints and NumPy data narrowed to 32 bits). Torch's rules are fixed instead: indices are int64 (argmax,
argsort, nonzero, unique's inverse and counts, ...), bools and integers sum and accumulate in int64,
integer `arange` is int64, and NumPy data keeps its dtype. Torch-face modules import this module as
`jnp`; everything not overridden here is funcgrad.numpy's own function object (no extra call).
"""
from __future__ import annotations

import builtins as _b
import functools

import numpy as np

from .. import numpy as _jnp
from .._src.core import dtypes as _dt
from .._src.core.array import ArrayBase as _ArrayBase, to_array as _to_array
from ..numpy._promote import _holds_array as _holds
from .._src.prims import elementwise as _ew

globals().update({k: v for k, v in vars(_jnp).items() if not k.startswith("_")})  # (shadows all, sum, ...: use _b.)
linalg, fft = _jnp.linalg, _jnp.fft

_I64 = _dt.int64


def _i64(x):
    """An integer (index) result as int64, torch's index dtype."""
    if isinstance(x, (tuple, list)):
        return type(x)(_i64(v) for v in x) if not hasattr(x, "_fields") else type(x)(*(_i64(v) for v in x))
    if isinstance(x, _ArrayBase) and x.dtype.kind in "iu" and x.dtype != _I64:
        return _ew.convert_element_type(x, _I64, x.weak_type)
    return x


def _index_fn(f):
    @functools.wraps(f)
    def g(*args, **kwargs):
        return _i64(f(*args, **kwargs))
    return g


(argmax, argmin, argsort, nonzero, argwhere, flatnonzero, searchsorted, count_nonzero, lexsort,  # noqa: F811
 argpartition, tril_indices, triu_indices, diag_indices, nanargmax, nanargmin, digitize, unravel_index,
 ravel_multi_index) = (_index_fn(getattr(_jnp, n)) for n in (
    "argmax", "argmin", "argsort", "nonzero", "argwhere", "flatnonzero", "searchsorted", "count_nonzero",
    "lexsort", "argpartition", "tril_indices", "triu_indices", "diag_indices", "nanargmax", "nanargmin",
    "digitize", "unravel_index", "ravel_multi_index"))


def bincount(x, weights=None, minlength=0, *, length=None):
    r = _jnp.bincount(x, weights, minlength, length=length)
    return _i64(r) if weights is None else r


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, **kw):
    r = _jnp.unique(ar, return_index, return_inverse, return_counts, axis, **kw)
    if isinstance(r, tuple):
        return (r[0],) + tuple(_i64(v) for v in r[1:])
    return r


def where(condition, x=None, y=None, **kw):
    r = _jnp.where(condition, x, y, **kw) if x is not None or y is not None else _jnp.where(condition, **kw)
    return _i64(r) if x is None and y is None else r


def _wide_int(x, dtype):
    """torch's (and NumPy's) accumulation dtype: bools and integers narrower than 64 bits in int64."""
    if dtype is not None:
        return dtype
    dt = getattr(x, "dtype", None)
    if dt is None:
        return None
    if dt == _dt.bool_ or (dt.kind == "i" and dt.itemsize < 8):
        return _I64
    if dt.kind == "u" and dt.itemsize < 8:
        return _dt.uint64
    return None


def _accumulating(f):
    @functools.wraps(f)
    def g(a, axis=None, dtype=None, *args, **kwargs):
        a = _jnp.asarray(a) if not isinstance(a, _ArrayBase) else a
        return f(a, axis, _wide_int(a, dtype), *args, **kwargs)
    return g


sum, prod, nansum, nanprod, cumsum, cumprod, nancumsum, nancumprod = (  # noqa: A001
    _accumulating(getattr(_jnp, n)) for n in ("sum", "prod", "nansum", "nanprod", "cumsum", "cumprod",
                                              "nancumsum", "nancumprod"))


def arange(start, stop=None, step=None, dtype=None, *, device=None):
    """Integer bounds give int64, as torch.arange."""
    if dtype is None and _b.all(isinstance(v, (int, np.integer)) and not isinstance(v, _b.bool)
                             for v in (start, stop, step) if v is not None):
        dtype = _I64
    return _jnp.arange(start, stop, step, dtype, device=device)


def _holds_array(a) -> bool:
    return isinstance(a, (list, tuple)) and _holds(a)


def _foreign(a):
    """Python or NumPy data as a strongly typed Array of torch's dtype (NumPy data keeps its dtype)."""
    x = _to_array(a, _torch_dtype(a), copy=False)
    return _ew.convert_element_type(x, x.dtype, False) if x.weak_type else x


def asarray(a, dtype=None, copy=None, *, device=None):
    """NumPy data keeps its dtype (no narrowing); Python ints are int64, as in torch."""
    if dtype is None and not isinstance(a, _ArrayBase) and not _holds_array(a):
        a = _foreign(a)
    return _jnp.asarray(a, dtype, copy, device=device)


def array(a, dtype=None, copy=True, ndmin: int = 0):
    if dtype is None and not isinstance(a, _ArrayBase) and not _holds_array(a):
        a = _foreign(a)
    return _jnp.array(a, dtype, copy, ndmin)


def _torch_dtype(a):
    """The dtype torch gives Python data: ints int64 (NumPy data and floats: as the core converts them)."""
    if isinstance(a, _b.bool):
        return None
    if isinstance(a, int):
        return _I64
    if isinstance(a, (list, tuple)):
        dt = _to_array(a, copy=False).dtype if a else None
        if dt is not None and dt.kind == "i":
            return _I64
    return None


def full(shape, fill_value, dtype=None, *, device=None):
    if dtype is None and isinstance(fill_value, int) and not isinstance(fill_value, _b.bool):
        dtype = _I64
    return _jnp.full(shape, fill_value, dtype, device=device)
