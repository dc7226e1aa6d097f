"""funcgrad.numpy: a NumPy-compatible namespace over funcgrad's primitives.

`import funcgrad.numpy as jnp` gives NumPy's functions with NumPy's semantics (broadcasting, NEP 50
promotion with weak Python scalars), usable under grad, vmap and jit. Arrays are immutable: use
`x.at[idx].set(v)` where NumPy code would assign in place.
"""
from ..core import dtypes as _dt
from ..core.array import Array as ndarray  # noqa: F401
from . import _indexing, _methods  # noqa: F401  (installs operators, methods and indexing)
from . import _at, fft, linalg  # noqa: F401
from ._creation import (arange, array, asarray, empty, empty_like, eye, full, full_like, identity,  # noqa: F401
                        linspace, ones, ones_like, zeros, zeros_like)
from ._manipulation import (atleast_1d, atleast_2d, broadcast_arrays, clip, concatenate, dot, expand_dims,  # noqa: F401
                            matmul, moveaxis, nonzero, outer, permute_dims, ravel, reshape, squeeze, stack,
                            swapaxes, transpose, vdot)
from ._promote import broadcast_shapes, broadcast_to  # noqa: F401
from ._reductions import amax, amin, argmax, argmin, max, mean, min, prod, sum  # noqa: F401
from ._ufuncs import (abs, absolute, add, cos, divide, equal, exp, expm1, greater, greater_equal, less,  # noqa: F401
                      less_equal, log, log1p, logistic, maximum, minimum, multiply, negative, not_equal,
                      positive, power, reciprocal, sign, sin, sqrt, square, subtract, tanh, true_divide, where)

bool_ = _dt.bool_
int8, int16, int32, int64 = _dt.int8, _dt.int16, _dt.int32, _dt.int64
uint8, uint16, uint32, uint64 = _dt.uint8, _dt.uint16, _dt.uint32, _dt.uint64
float16, float32, float64 = _dt.float16, _dt.float32, _dt.float64
complex64, complex128 = _dt.complex64, _dt.complex128
if _dt.bfloat16 is not None:
    bfloat16 = _dt.bfloat16

import numpy as _np  # noqa: E402

pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None


def __getattr__(name):
    if hasattr(_np, name):
        raise AttributeError(f"funcgrad.numpy has no function {name!r} yet (numpy.{name} exists); "
                             "it is not implemented in funcgrad")
    raise AttributeError(f"module 'funcgrad.numpy' has no attribute {name!r}")
