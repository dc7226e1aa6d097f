"""funcgrad.lax: the primitives by their own names, with JAX's lax signatures.

Unlike funcgrad.numpy, lax functions do not promote dtypes or broadcast arrays: operands of binary
operations must share one shape and dtype. Python scalars are accepted and take the other operand's
dtype (they are weakly typed).
"""
from __future__ import annotations

import builtins as _builtins

import numpy as np

from ..core.array import ArrayBase, to_array, canonical_array
from ..primitives import elementwise as _ew
from ..primitives.elementwise import (abs, add, convert_element_type, cos, div, eq, exp, expm1, ge, gt,  # noqa: F401
                                      integer_pow, le, log, log1p, logistic, lt, max, min, mul, ne, neg, pow,
                                      rsqrt, select, sign, sin, sqrt, stop_gradient, sub, tanh)
from ..primitives.elementwise import (RoundingMethod, acos, acosh, asin, asinh, atan, atan2, atanh,  # noqa: F401
                                      bitcast_convert_type, bitwise_and, bitwise_not, bitwise_or, bitwise_xor,
                                      cbrt, ceil, clamp, complex, conj, cosh, exp2, floor, imag, is_finite,
                                      nextafter, population_count, real, rem, round, shift_left,
                                      shift_right_arithmetic, shift_right_logical, sinh, tan)
from ..primitives.special import digamma, erf, erf_inv, erfc, lgamma, polygamma  # noqa: F401
from ..primitives.control_flow import (associative_scan, cond, fori_loop, map, scan, switch,  # noqa: F401,A004
                                        while_loop)
from ..primitives.conv import (ConvDimensionNumbers, conv, conv_dimension_numbers,  # noqa: F401
                               conv_general_dilated, conv_with_general_padding, padtype_to_pads)
from ..primitives.fft import fft  # noqa: F401
from ..primitives.cumulative import (cumlogsumexp, cummax, cummin, cumprod, cumsum, reduce_and,  # noqa: F401
                                     reduce_or)
from ..primitives.dynamic_slicing import (dynamic_index_in_dim, dynamic_slice, dynamic_slice_in_dim,  # noqa: F401
                                          dynamic_update_slice, dynamic_update_slice_in_dim)
from ..primitives.sorting import sort, sort_key_val, top_k  # noqa: F401
from ..primitives.indexing import gather, scatter, scatter_add, scatter_max, scatter_min, scatter_mul  # noqa: F401
from ..primitives.linalg import dot_general  # noqa: F401
from ..primitives.reduction import argmax, argmin, reduce_max, reduce_min, reduce_prod, reduce_sum  # noqa: F401
from ..primitives.windowed import reduce_window  # noqa: F401
from ..primitives.shape import (broadcast_in_dim, broadcasted_iota, concatenate, expand_dims, iota,  # noqa: F401
                                pad, reshape as _reshape, rev, slice, squeeze, transpose)
from ..primitives.shape import full as _full


_builtin_complex = _builtins.complex


def _is_python_scalar(x) -> bool:
    return isinstance(x, (bool, int, float, _builtin_complex)) and not isinstance(x, np.generic)


def _scalar_to(x, like):
    s = to_array(x, dtype=like.dtype)
    return broadcast_in_dim(_ew.convert_element_type(s, like.dtype, like.weak_type), like.shape, ())


def _binary(fn):
    name = fn.__name__

    def f(x, y):
        if _is_python_scalar(x) and not _is_python_scalar(y):
            y = y if isinstance(y, ArrayBase) else canonical_array(y)
            x = _scalar_to(x, y)
        elif _is_python_scalar(y) and not _is_python_scalar(x):
            x = x if isinstance(x, ArrayBase) else canonical_array(x)
            y = _scalar_to(y, x)
        else:
            x = x if isinstance(x, ArrayBase) else canonical_array(x)
            y = y if isinstance(y, ArrayBase) else canonical_array(y)
            if x.dtype != y.dtype:  # a weakly typed operand takes the other's dtype, as in JAX
                if x.weak_type and not y.weak_type:
                    x = _ew.convert_element_type(x, y.dtype)
                elif y.weak_type and not x.weak_type:
                    y = _ew.convert_element_type(y, x.dtype)
                else:
                    raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got {x.dtype}, "
                                    f"{y.dtype}. (funcgrad.numpy's functions promote dtypes.)")
        return fn(x, y)
    f.__name__ = name
    f.__doc__ = f"lax.{name}: elementwise, operands of one shape and dtype (scalars allowed)."
    return f


def _typed_unary(fn, kinds: str, what: str):
    """fn restricted to operands whose dtype kind is in `kinds` (TypeError otherwise, as JAX's lax)."""
    name = fn.__name__

    def f(x, *args, **kwargs):
        x = x if isinstance(x, ArrayBase) else canonical_array(x)
        if np.dtype(x.dtype).kind not in kinds:
            raise TypeError(f"{name} does not accept dtype {x.dtype}. Accepted dtypes are subtypes of {what}.")
        return fn(x, *args, **kwargs)
    f.__name__ = name
    f.__doc__ = fn.__doc__
    return f


_FLOAT_ONLY = (floor, ceil, round, is_finite, erf, erfc, erf_inv, lgamma, digamma, nextafter, logistic, cbrt)
_INEXACT = (sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, asinh, acosh, atanh, exp, exp2, expm1, log,
            log1p, sqrt, rsqrt)
floor, ceil, round, is_finite, erf, erfc, erf_inv, lgamma, digamma, nextafter, logistic, cbrt = (  # noqa: A001
    _typed_unary(g, "f", "floating") for g in _FLOAT_ONLY)
sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, asinh, acosh, atanh, exp, exp2, expm1, log, log1p, sqrt, rsqrt = (
    _typed_unary(g, "fc", "floating, complexfloating") for g in _INEXACT)


real, imag = (_typed_unary(g, "c", "complexfloating") for g in (real, imag))
abs = _typed_unary(abs, "fci", "floating, complexfloating, signedinteger")  # noqa: A001
integer_pow = _typed_unary(integer_pow, "iufc", "integer, floating, complexfloating")
population_count = _typed_unary(population_count, "iu", "integer")
add, sub, mul, div, pow, max, min = (_binary(f) for f in (add, sub, mul, div, pow, max, min))  # noqa: A001
eq, ne, lt, le, gt, ge = (_binary(f) for f in (eq, ne, lt, le, gt, ge))
atan2, rem, nextafter, complex = (_binary(f) for f in (atan2, rem, nextafter, complex))  # noqa: A001
bitwise_and, bitwise_or, bitwise_xor = (_binary(f) for f in (bitwise_and, bitwise_or, bitwise_xor))
shift_left, shift_right_arithmetic, shift_right_logical = (
    _binary(f) for f in (shift_left, shift_right_arithmetic, shift_right_logical))


def reshape(operand, new_sizes, dimensions=None):
    """lax.reshape; `dimensions` (a transpose applied first) as in JAX."""
    if dimensions is not None:
        operand = transpose(operand, dimensions)
    return _reshape(operand, new_sizes)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Vector/matrix products: contract the last axis of lhs with the first of rhs (ranks 1-2)."""
    return dot_general(lhs, rhs, (((lhs.ndim - 1,), (0,)), ((), ())), preferred_element_type)


def square(x):
    x = x if isinstance(x, ArrayBase) else canonical_array(x)
    if np.dtype(x.dtype).kind not in "iufc":
        raise TypeError(f"square does not accept dtype {x.dtype}. Accepted dtypes are subtypes of integer, "
                        "floating, complexfloating.")
    return integer_pow(x, 2)


def reciprocal(x):
    return div(_ew.ones_like(x), x)


def zeros_like_array(x):
    return _ew.zeros_like(x)


def full(shape, fill_value, dtype=None, *, sharding=None):
    """lax.full: an array of `shape` filled with `fill_value` (a scalar; without `dtype`, its dtype: a Python
    scalar's weak default one, a NumPy scalar's canonical one for the x64 mode)."""
    if dtype is None:
        v = canonical_array(fill_value)
        if v.ndim:
            raise TypeError(f"lax.full: fill_value must be a scalar, got shape {tuple(v.shape)}")
        return broadcast_in_dim(v, tuple(shape), ())
    return _full(shape, fill_value, dtype)


def full_like(x, fill_value, dtype=None, shape=None):
    return full(x.shape if shape is None else shape, fill_value, x.dtype if dtype is None else dtype)


from ..primitives.collectives import (all_gather, all_to_all, axis_index, axis_size, pmax,  # noqa: E402,F401
                                      pmean, pmin,
                                      ppermute, pshuffle, psum, psum_scatter, pswapaxes)
from . import linalg  # noqa: E402,F401
from ._implicit import custom_linear_solve, custom_root  # noqa: E402,F401
from ._conv_transpose import conv_transpose  # noqa: E402,F401
from ._extras import (batch_matmul, broadcast, collapse, index_in_dim, optimization_barrier,  # noqa: E402,F401
                      reduce, reduce_precision, slice_in_dim, with_sharding_constraint)
from ._extras import (Precision, approx_max_k, approx_min_k, dynamic_update_index_in_dim,  # noqa: E402,F401
                      reduce_xor, select_n, split)
from ..primitives.special_functions2 import (bessel_i0e, bessel_i1e, betainc, igamma, igamma_grad_a,  # noqa: E402,F401
                                             igammac)
from ..primitives.prng import random_gamma_grad  # noqa: E402,F401
from ._more import *  # noqa: E402,F401,F403  (patches, shape tuples, clz, ..., and the *_p primitives)


def zeta(x, q):
    """The Hurwitz zeta function sum_k (k + q)^-x (see funcgrad.scipy.special.zeta)."""
    from ..scipy.special import zeta as _zeta
    return _zeta(x, q)
