"""funcgrad.numpy: a NumPy-compatible namespace over funcgrad's primitives.

`import funcgrad.numpy as jnp` gives NumPy's functions with NumPy's semantics (broadcasting, NEP 50
promotion with weak Python scalars), usable under grad, vmap and jit. Arrays are immutable: use
`x.at[idx].set(v)` where NumPy code would assign in place.
"""
from .._src.core import dtypes as _dt
from .._src.core.array import Array as ndarray  # noqa: F401
from . import _indexing, _methods  # noqa: F401  (installs operators, methods and indexing)
from . import _at, fft, linalg  # noqa: F401
from ._array_api import (__array_api_version__, __array_namespace_info__, acos, acosh, asin, asinh, astype,  # noqa: F401
                         atan, atan2, atanh, from_dlpack, pow)
from ._creation import (arange, array, asarray, empty, empty_like, eye, full, full_like, identity,  # noqa: F401
                        linspace, ones, ones_like, zeros, zeros_like)
from ._manipulation import (atleast_1d, atleast_2d, broadcast_arrays, clip, concatenate, expand_dims,  # noqa: F401
                            moveaxis, permute_dims, ravel, reshape, squeeze, stack, swapaxes, transpose)
from ._products import dot, matmul, outer, vdot  # noqa: F401
from ._promote import broadcast_shapes, broadcast_to  # noqa: F401
from ._creation import (copy, diag, diagflat, frombuffer, fromfunction, fromiter, geomspace, indices,  # noqa: F401
                        logspace, meshgrid, tri, tril, triu)
from ._manipulation import (append, array_split, atleast_3d, block, column_stack, concat, delete,  # noqa: F401
                            dsplit, dstack, flip, fliplr, flipud, hsplit, hstack, insert,
                            matrix_transpose, repeat, resize, roll, rollaxis, rot90, row_stack, split,
                            tile, trim_zeros, unstack, vsplit, vstack)
from ._products import cross, diagonal, inner, kron, tensordot, trace, vecdot  # noqa: F401
from ._pad import pad  # noqa: F401
from ._einsum import einsum, einsum_path  # noqa: F401
from ._logic import allclose, array_equal, array_equiv, isclose, isscalar, ndim, shape, size  # noqa: F401
from ._signal import convolve, correlate, interp  # noqa: F401
from ._dtype_helpers import (can_cast, complexfloating, dtype, finfo, floating, generic, iinfo, inexact,  # noqa: F401
                             integer, isdtype, issubdtype, number, promote_types, result_type,
                             signedinteger, unsignedinteger)
from ._reductions import amax, amin, argmax, argmin, max, mean, min, prod, sum  # noqa: F401
from ._ufuncs import (abs, absolute, add, cos, divide, equal, exp, expm1, greater, greater_equal, less,  # noqa: F401
                      less_equal, log, log1p, logistic, maximum, minimum, multiply, negative, not_equal,
                      positive, power, reciprocal, sign, sin, sqrt, square, subtract, tanh, true_divide, where)
from ._ufuncs import (angle, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, around,  # noqa: F401
                      bitwise_and, bitwise_count, bitwise_invert, bitwise_left_shift, bitwise_not, bitwise_or,
                      bitwise_right_shift, bitwise_xor, cbrt, ceil, conj, conjugate, copysign, cosh, deg2rad,
                      degrees, divmod, exp2, fix, float_power, floor, floor_divide, fmax, fmin, fmod, heaviside,
                      hypot, imag, invert, iscomplex, iscomplexobj, isfinite, isinf, isnan, isneginf, isposinf,
                      isreal, isrealobj, left_shift, log10, log2, logaddexp, logaddexp2, logical_and,
                      logical_not, logical_or, logical_xor, mod, nan_to_num, nextafter, rad2deg, radians, real,
                      remainder, right_shift, rint, round, signbit, sinc, sinh, tan, trunc)
from ._sorting import (argpartition, argsort, argwhere, compress, count_nonzero, cumprod, cumsum,  # noqa: F401
                       cumulative_prod, cumulative_sum, diff, ediff1d, extract, flatnonzero, isin, lexsort,
                       nancumprod, nancumsum, nonzero, partition, piecewise, put_along_axis, searchsorted,
                       select, sort, take, take_along_axis, unique, unique_all, unique_counts, unique_inverse,
                       unique_values)
from ._statistics import (all, any, average, bincount, corrcoef, cov, digitize, histogram,  # noqa: F401,A004
                          histogram_bin_edges, median, nanargmax, nanargmin, nanmax, nanmean, nanmedian, nanmin,
                          nanpercentile, nanprod, nanquantile, nanstd, nansum, nanvar, percentile, ptp, quantile,
                          std, var)
from ._floating import fabs, frexp, ldexp, modf, spacing  # noqa: F401
from ._integer import gcd, lcm, packbits, unpackbits  # noqa: F401
from ._numerical import i0  # noqa: F401
from ._sorting import sort_complex  # noqa: F401
from ._index_tricks import (choose, diag_indices, diag_indices_from, fill_diagonal, iterable, ix_, place, put,  # noqa: F401
                            ravel_multi_index, tril_indices, tril_indices_from, triu_indices, triu_indices_from,
                            unravel_index)
from ._histogramdd import histogram2d, histogramdd  # noqa: F401
from ._grids import c_, index_exp, mgrid, ndindex, ogrid, r_, s_  # noqa: F401
from ._io import (array2string, array_repr, array_str, base_repr, binary_repr, common_type,  # noqa: F401
                  errstate, geterr, get_printoptions, load, loadtxt, min_scalar_type, printoptions, save,
                  savetxt, savez, savez_compressed, seterr, set_printoptions)
from ._polynomial import (polyadd, polyder, polydiv, polyfit, polyint, polymul, polysub, roots,  # noqa: F401
                          unwrap)
from ._setops import intersect1d, setdiff1d, setxor1d, union1d  # noqa: F401
from ._numerical import (apply_along_axis, apply_over_axes, asanyarray, asarray_chkfinite,  # noqa: F401
                         ascontiguousarray, asfortranarray, bartlett, blackman, gradient, hamming, hanning, kaiser,
                         mask_indices, matvec, poly, polyval, real_if_close, trapezoid, vander, vecmat, vectorize)

from ._creation import fromfile, fromstring  # noqa: F401,E402
from ._ufunc_class import frompyfunc, ufunc  # noqa: F401,E402
from ._scalar_types import ScalarType as _ST  # noqa: E402

bool_ = _ST(_dt.bool_)
bool = bool_  # noqa: A001 - the Array API standard's name
int8, int16, int32, int64 = (_ST(d) for d in (_dt.int8, _dt.int16, _dt.int32, _dt.int64))
uint8, uint16, uint32, uint64 = (_ST(d) for d in (_dt.uint8, _dt.uint16, _dt.uint32, _dt.uint64))
float16, float32, float64 = (_ST(d) for d in (_dt.float16, _dt.float32, _dt.float64))
complex64, complex128 = _ST(_dt.complex64), _ST(_dt.complex128)
if _dt.bfloat16 is not None:
    bfloat16 = _ST(_dt.bfloat16)

import numpy as _np  # noqa: E402

pi, e, inf, nan, newaxis, euler_gamma = _np.pi, _np.e, _np.inf, _np.nan, None, _np.euler_gamma

# NumPy's C-style aliases, mapped as NumPy maps them on this platform (long: int64, double: float64, ...).
(intc, uintc, short, ushort, byte, ubyte, long, ulong, longlong, ulonglong, half,  # noqa: A001
 single, double, csingle, cdouble) = (_ST(_np.dtype(getattr(_np, _n))) for _n in (
    "intc", "uintc", "short", "ushort", "byte", "ubyte", "long", "ulong",
    "longlong", "ulonglong", "half", "single", "double", "csingle", "cdouble"))
# The default-dtype aliases follow the x64 mode (module __getattr__ below): JAX's int_/float_/... name the
# 64-bit types but make 32-bit arrays with x64 off; funcgrad honours an explicitly requested dtype, so they
# name the mode's default dtype instead, and jnp.int_(1), zeros(3, jnp.int_) come out as in JAX.
_MODE_ALIASES = {"int_": "int_", "intp": "int_", "uint": "uint_", "uintp": "uint_", "float_": "float_",
                 "complex_": "complex_"}
character, flexible, object_ = _np.character, _np.flexible, _np.object_  # (NumPy's abstract / object types)  # (JAX keeps the names NumPy 2 removed: float64 and complex128)


def __getattr__(name):
    mode = _MODE_ALIASES.get(name)
    if mode is not None:  # the module's own scalar type of that dtype (with x64 on, float_ is float64)
        return globals()[_np.dtype(getattr(_dt.defaults, mode)).name]
    if hasattr(_np, name):
        raise AttributeError(f"funcgrad.numpy has no function {name!r} yet (numpy.{name} exists); "
                             "it is not implemented in funcgrad")
    raise AttributeError(f"module 'funcgrad.numpy' has no attribute {name!r}")


import sys as _sys  # noqa: E402

from . import _ufunc_methods  # noqa: E402

_ufunc_methods.attach(_sys.modules[__name__])  # add.reduce, maximum.accumulate, multiply.outer, ...
