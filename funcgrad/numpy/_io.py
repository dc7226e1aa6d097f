"""Printing, saving and small dtype queries with NumPy's names.

Arrays print through NumPy, so NumPy's print options are funcgrad's (as in JAX); files are NumPy's
.npy/.npz formats, loaded back as funcgrad Arrays."""
from __future__ import annotations

import numpy as np

from .._src.core import dtypes
from .._src.core.array import ArrayBase, to_array

get_printoptions, set_printoptions, printoptions = np.get_printoptions, np.set_printoptions, np.printoptions
base_repr, binary_repr = np.base_repr, np.binary_repr


def _host(a):
    return np.asarray(a) if isinstance(a, ArrayBase) else a


def array2string(a, max_line_width=None, precision=None, suppress_small=None, separator=" ", prefix="", *,
                 formatter=None, threshold=None, edgeitems=None, sign=None, floatmode=None, suffix="",
                 legacy=None) -> str:
    """The array's text, as numpy.array2string (same options)."""
    return np.array2string(_host(a), max_line_width, precision, suppress_small, separator, prefix,
                           formatter=formatter, threshold=threshold, edgeitems=edgeitems, sign=sign,
                           floatmode=floatmode, suffix=suffix, legacy=legacy)


def array_str(a, max_line_width=None, precision=None, suppress_small=None) -> str:
    """str() of the array's values, as numpy.array_str."""
    return np.array_str(_host(a), max_line_width, precision, suppress_small)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None) -> str:
    """repr() of the array, as Array(...)."""
    body = np.array2string(_host(arr), max_line_width, precision, suppress_small, separator=", ", prefix="Array(")
    return f"Array({body}, dtype={arr.dtype})" if isinstance(arr, ArrayBase) else \
        np.array_repr(arr, max_line_width, precision, suppress_small)


def save(file, arr, allow_pickle=True) -> None:
    """Write one array to a .npy file, as numpy.save."""
    np.save(file, _host(arr), allow_pickle=allow_pickle)


def savez(file, *args, **kwds) -> None:
    """Write several arrays to an uncompressed .npz file, as numpy.savez."""
    np.savez(file, *[_host(a) for a in args], **{k: _host(v) for k, v in kwds.items()})


def savez_compressed(file, *args, **kwds) -> None:
    """Write several arrays to a compressed .npz file, as numpy.savez_compressed."""
    np.savez_compressed(file, *[_host(a) for a in args], **{k: _host(v) for k, v in kwds.items()})


def load(file, mmap_mode=None, allow_pickle=False, fix_imports=True, encoding="ASCII", *,
         max_header_size=10000):
    """Read a .npy file as an Array (a .npz file as NumPy's lazy dict of arrays), as numpy.load."""
    out = np.load(file, mmap_mode, allow_pickle, fix_imports, encoding, max_header_size=max_header_size)
    return to_array(out) if isinstance(out, np.ndarray) and out.dtype.kind in "biufc" else out


def min_scalar_type(a):
    """The smallest dtype that holds the value a, as numpy.min_scalar_type."""
    return np.min_scalar_type(_host(a))


def common_type(*arrays):
    """The inexact dtype all arrays can be cast to (integers count as float64), as numpy.common_type."""
    if not arrays:
        raise TypeError("common_type: at least one array is required")
    kinds = [np.asarray(a).dtype if not isinstance(a, ArrayBase) else a.dtype for a in arrays]
    for dt in kinds:
        if not (dtypes.is_inexact(dt) or dtypes.is_integer(dt)):
            raise TypeError(f"common_type: can't get common type for non-numeric array of dtype {dt}")
    return np.common_type(*[np.empty(0, dtype=dt) for dt in kinds])


errstate, geterr, seterr = np.errstate, np.geterr, np.seterr  # they govern the NumPy backend's warnings


def loadtxt(fname, dtype=float, comments="#", delimiter=None, converters=None, skiprows=0, usecols=None,
            unpack=False, ndmin=0, encoding=None, max_rows=None, *, quotechar=None, like=None):
    """Read a text file of numbers into an Array (Python `float` means the default float dtype)."""
    out = np.loadtxt(fname, np.float64 if dtype is float else dtype, comments, delimiter, converters, skiprows,
                     usecols, unpack, ndmin, encoding, max_rows, quotechar=quotechar)
    return to_array(out, dtypes.canonicalize(dtype))


def savetxt(fname, X, fmt="%.18e", delimiter=" ", newline="\n", header="", footer="", comments="# ",  # noqa: N803
            encoding=None) -> None:
    """Write a 1-d or 2-d array to a text file, as numpy.savetxt."""
    np.savetxt(fname, _host(X), fmt, delimiter, newline, header, footer, comments, encoding)
