"""lax's elementwise functions: the elementwise and special-function cards under their lax names, with
lax's operand rules (operands of one shape and dtype, Python scalars weakly typed; unary functions
restricted to the dtype kinds JAX accepts), and the few composed of cards (square, reciprocal, clz,
mulhi, select_n, reduce_precision, bitcast_convert_type across widths)."""
from __future__ import annotations

import builtins as _builtins
import operator

import numpy as np

from .._src.core import dtypes
from .._src.core.array import ArrayBase, canonical_array, to_array
from .._src.core.aval import ShapedArray
from .._src.prims import elementwise as _ew
from .._src.prims import shape as _sh
from .._src.prims.callbacks import pure_callback_p
from .._src.prims.elementwise import (abs, add, cos, div, eq, exp, expm1, ge, gt,  # noqa: A004
                                      integer_pow, le, log, log1p, logistic, lt, max, min, mul, ne, neg, pow,
                                      rsqrt, select, sin, sqrt, stop_gradient, sub, tanh)
from .._src.prims.elementwise import (acos, acosh, asin, asinh, atan, atanh,  # noqa: A004
                                      bitwise_and, bitwise_not, bitwise_or, bitwise_xor,
                                      cbrt, ceil, clamp, complex, conj, cosh, exp2, floor, imag, is_finite,
                                      nextafter, population_count, real, rem, round, shift_left,
                                      shift_right_arithmetic, shift_right_logical, sinh, tan)
from .._src.prims import special as _sp
from .._src.prims.special import erf, erf_inv, erfc, lgamma, polygamma
from .._src.prims.bessel import bessel_i0e, bessel_i1e
from .._src.prims.incomplete import betainc, igamma, igamma_grad_a, igammac
from .._src.prims.prng import random_gamma_grad

__all__ = ["abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bessel_i0e", "bessel_i1e",
           "betainc", "bitcast_convert_type", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "cbrt",
           "ceil", "clamp", "clz", "complex", "conj", "convert_element_type", "cos", "cosh", "digamma", "div",
           "eq", "erf", "erf_inv", "erfc", "exp", "exp2", "expm1", "floor", "ge", "gt", "igamma",
           "igamma_grad_a", "igammac", "imag", "integer_pow", "is_finite", "le", "lgamma", "log", "log1p",
           "logistic", "lt", "max", "min", "mul", "mulhi", "ne", "neg", "nextafter", "polygamma",
           "population_count", "pow", "random_gamma_grad", "real", "reciprocal", "reduce_precision", "rem",
           "round", "rsqrt", "select", "select_n", "shift_left", "shift_right_arithmetic",
           "shift_right_logical", "sign", "sin", "sinh", "sqrt", "square", "stop_gradient", "sub", "tan",
           "tanh", "zeros_like_array", "zeta"]

_builtin_complex = _builtins.complex


def _arr(x):
    return x if isinstance(x, ArrayBase) else canonical_array(x)


def _is_python_scalar(x) -> bool:
    return isinstance(x, (bool, int, float, _builtin_complex)) and not isinstance(x, np.generic)


def _scalar_to(x, like):
    s = to_array(x, dtype=like.dtype)
    return _sh.broadcast_in_dim(_ew.convert_element_type(s, like.dtype, like.weak_type), like.shape, ())


# --- docstrings -----------------------------------------------------------------------------------
# One line per name built by _typed_unary and _binary (which take it from here) and per card function lax
# re-exports as it is (attached at the end of this module). The unary ones accept no `accuracy=` (JAX's accuracy
# hints for exp, log, sin, ...): NumPy's functions have one accuracy.
_ACC = " (JAX's accuracy= hint is not accepted)"
_DOC = {
    "sin": "Elementwise sine (radians); float or complex x" + _ACC + ".",
    "cos": "Elementwise cosine (radians); float or complex x" + _ACC + ".",
    "tan": "Elementwise tangent (radians); float or complex x" + _ACC + ".",
    "asin": "Elementwise inverse sine, in radians; float or complex x.",
    "acos": "Elementwise inverse cosine, in radians; float or complex x.",
    "atan": "Elementwise inverse tangent, in radians; float or complex x.",
    "sinh": "Elementwise hyperbolic sine; float or complex x.",
    "cosh": "Elementwise hyperbolic cosine; float or complex x.",
    "tanh": "Elementwise hyperbolic tangent; float or complex x" + _ACC + ".",
    "asinh": "Elementwise inverse hyperbolic sine; float or complex x.",
    "acosh": "Elementwise inverse hyperbolic cosine; float or complex x.",
    "atanh": "Elementwise inverse hyperbolic tangent; float or complex x.",
    "exp": "Elementwise e**x; float or complex x" + _ACC + ".",
    "exp2": "Elementwise 2**x; float or complex x" + _ACC + ".",
    "expm1": "Elementwise exp(x) - 1, accurate near 0; float or complex x" + _ACC + ".",
    "log": "Elementwise natural logarithm; float or complex x" + _ACC + ".",
    "log1p": "Elementwise log(1 + x), accurate near 0; float or complex x" + _ACC + ".",
    "sqrt": "Elementwise square root; float or complex x" + _ACC + ".",
    "rsqrt": "Elementwise 1 / sqrt(x); float or complex x" + _ACC + ".",
    "cbrt": "Elementwise real cube root (negative for negative x); float x" + _ACC + ".",
    "logistic": "Elementwise logistic sigmoid 1 / (1 + exp(-x)); float x" + _ACC + ".",
    "floor": "Elementwise floor (largest integral value <= x), keeping the float dtype.",
    "ceil": "Elementwise ceiling (smallest integral value >= x), keeping the float dtype.",
    "is_finite": "Elementwise True where x is neither infinite nor NaN; float x.",
    "erf": "Elementwise error function 2/sqrt(pi) * integral of exp(-t**2) from 0 to x; float x.",
    "erfc": "Elementwise complementary error function 1 - erf(x), accurate for large x; float x.",
    "erf_inv": "Elementwise inverse of erf on (-1, 1) (+-inf at +-1); float x.",
    "lgamma": "Elementwise log |Gamma(x)|; float x.",
    "digamma": "Elementwise digamma function, the derivative of lgamma; float x.",
    "real": "The real part of a complex x (a float array); real x is a TypeError, as in JAX.",
    "imag": "The imaginary part of a complex x (a float array); real x is a TypeError, as in JAX.",
    "integer_pow": "x ** y elementwise for a static Python int y (repeated multiplication; negative y gives "
                   "1 / x ** -y).",
    "population_count": "Elementwise number of set bits of an integer array.",
    "neg": "Elementwise -x.",
    "bitwise_not": "Elementwise bitwise NOT of integers, logical NOT of bools.",
    "select": "on_true where pred else on_false, elementwise: pred is bool with the operands' shape (or a "
              "scalar), on_true and on_false share one shape and dtype.",
    "add": "x + y elementwise.", "sub": "x - y elementwise.", "mul": "x * y elementwise.",
    "div": "x / y elementwise; integer division rounds toward zero (C's, not Python's //).",
    "rem": "The remainder of x / y elementwise, with the sign of x (C's fmod, not Python's %).",
    "pow": "x ** y elementwise for float or complex x and y of x's dtype or any integer dtype (y == 0 "
           "gives 1 with zero derivative).",
    "max": "Elementwise maximum of x and y (NaN if either is NaN).",
    "min": "Elementwise minimum of x and y (NaN if either is NaN).",
    "eq": "Elementwise x == y, a bool array.", "ne": "Elementwise x != y, a bool array.",
    "lt": "Elementwise x < y, a bool array.", "le": "Elementwise x <= y, a bool array.",
    "gt": "Elementwise x > y, a bool array.", "ge": "Elementwise x >= y, a bool array.",
    "atan2": "Elementwise arctan(x / y) with the quadrant taken from the signs of both, in [-pi, pi] (as "
             "numpy.arctan2(x, y)).",
    "nextafter": "Elementwise next float after x in the direction of y (float x, y).",
    "complex": "x + 1j * y elementwise, from float x and y of one dtype (complex64 from float32).",
    "bitwise_and": "Elementwise bitwise AND of integers, logical AND of bools.",
    "bitwise_or": "Elementwise bitwise OR of integers, logical OR of bools.",
    "bitwise_xor": "Elementwise bitwise XOR of integers, logical XOR of bools.",
    "shift_left": "Elementwise x << y for integers (0 when y is at least the bit width).",
    "shift_right_arithmetic": "Elementwise x >> y for integers, filling with the sign bit.",
    "shift_right_logical": "Elementwise x >> y for integers, filling with zeros (as if unsigned).",
}
_BINARY_NOTE = " Operands share one shape and dtype; a Python scalar takes the other's dtype (lax does not " \
               "promote or broadcast: funcgrad.numpy does)."


# The operand dtypes jax.lax's binary functions accept (kinds; bfloat16 counts as "f"), where the card's own
# rule (shared with funcgrad.numpy, which computes bools and integers through them) is wider.
_BINARY_KINDS = {"add": ("iufc", "integer, floating, complexfloating"),
                 "sub": ("iufc", "integer, floating, complexfloating"),
                 "mul": ("iufc", "integer, floating, complexfloating"),
                 "div": ("iufc", "integer, floating, complexfloating"), "rem": ("iuf", "integer, floating"),
                 "pow": ("fc", "floating, complexfloating"), "atan2": ("fc", "floating, complexfloating"),
                 "shift_left": ("iu", "integer"), "shift_right_arithmetic": ("iu", "integer"),
                 "shift_right_logical": ("iu", "integer"), "lt": ("biuf", "bool, integer, floating"),
                 "le": ("biuf", "bool, integer, floating"), "gt": ("biuf", "bool, integer, floating"),
                 "ge": ("biuf", "bool, integer, floating")}


def _kind(dt) -> str:
    k = np.dtype(dt).kind
    return "f" if k == "V" and dt == dtypes.bfloat16 else k  # bfloat16: ml_dtypes' kind is 'V'


def _check_binary_dtype(name, x):
    kinds = _BINARY_KINDS.get(name)
    if kinds is not None and _kind(x.dtype) not in kinds[0]:
        raise TypeError(f"{name} does not accept dtype {x.dtype}. Accepted dtypes are subtypes of {kinds[1]}.")
    if name == "complex" and x.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"complex does not accept dtype {x.dtype}. Accepted dtypes are float32, float64.")


def _atan2(x, y):
    """atan2 of real operands (the card); of complex ones XLA's -i log((y + i x) / sqrt(y^2 + x^2)), a
    composition of cards (jax.numpy.arctan2 calls this too)."""
    if not dtypes.is_complex(x.dtype):
        return _ew.atan2(x, y)
    i = _sh.full(x.shape, 1j, x.dtype)
    r = _ew.log(_ew.div(_ew.add(y, _ew.mul(i, x)), _ew.sqrt(_ew.add(_ew.mul(y, y), _ew.mul(x, x)))))
    return _ew.mul(_ew.neg(i), r)


_atan2.__name__ = "atan2"


def _same_dtypes(name, a, b):
    """As jax.lax (0.10): the operands' dtypes must agree, a Python scalar counting as its default dtype
    (int32/int64, float32/float64, complex, bool) and a weakly typed array as its own: lax.add(uint8, 1) and,
    with x64 on, lax.add(float32, 2.0) are TypeErrors (jax.numpy's functions promote)."""
    if np.dtype(a) != np.dtype(b):
        raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got {np.dtype(a)}, {np.dtype(b)}. "
                        "(funcgrad.numpy's functions promote dtypes.)")


def _binary(fn):
    """fn on operands of one shape and dtype (a Python scalar of the other's dtype is broadcast), as
    jax.lax; other dtype mismatches are a TypeError."""
    name = fn.__name__

    def f(x, y):
        if name == "pow" and _is_integer_exponent(y):
            return _pow_integer_exponent(x, y)
        if _is_python_scalar(x) and not _is_python_scalar(y):
            y = _arr(y)
            _same_dtypes(name, dtypes.python_scalar_dtype(x), y.dtype)
            x = _scalar_to(x, y)
        elif _is_python_scalar(y) and not _is_python_scalar(x):
            x = _arr(x)
            _same_dtypes(name, x.dtype, dtypes.python_scalar_dtype(y))
            y = _scalar_to(y, x)
        else:
            x, y = _arr(x), _arr(y)
            _same_dtypes(name, x.dtype, y.dtype)
        _check_binary_dtype(name, x)
        return fn(x, y)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = _DOC[name] + _BINARY_NOTE
    return f


def _is_integer_exponent(y) -> bool:
    if _is_python_scalar(y):
        return isinstance(y, int) and not isinstance(y, bool)
    return _kind(y.dtype if hasattr(y, "dtype") else np.asarray(y).dtype) in "iu"


def _pow_integer_exponent(x, y):
    """lax.pow(x, y) for an integer y, as JAX 0.10: x floating or complex, y converted to x's dtype, and
    derivatives in x as JAX's rule for integer exponents (0 where y == 0; reverse-over-reverse there is 0 times
    the derivative of x ** -1, so NaN at x == 0, as JAX's)."""
    x = _arr(x)
    if _kind(x.dtype) not in "fc":
        raise TypeError(f"the first argument to pow must have an inexact dtype (float or complex), and the second "
                        f"argument must have an inexact or integer dtype, but got {x.dtype} and "
                        f"{dtypes.python_scalar_dtype(y) if _is_python_scalar(y) else y.dtype}.")
    y = _sh.full(x.shape, y, dtypes.python_scalar_dtype(y), weak_type=True) if _is_python_scalar(y) else _arr(y)
    if tuple(y.shape) != tuple(x.shape):
        raise TypeError(f"lax.pow requires arguments to have the same shape, got {tuple(x.shape)} and "
                        f"{tuple(y.shape)} (funcgrad.numpy.power broadcasts).")
    # the card's kink "jax_int" is JAX's derivative rule for integer exponents (0 in x where y == 0)
    return _ew.pow(x, _ew.convert_element_type(y, x.dtype, y.weak_type), kink="jax_int")


def _bound(v: float, dtype) -> float:
    """v rounded into the float `dtype` (inf past its largest finite value)."""
    with np.errstate(over="ignore"):
        return float(np.asarray(v, np.float64).astype(dtype))


def convert_element_type(operand, new_dtype, weak_type: bool = False):
    """operand converted to new_dtype with XLA's semantics on CPU (as jax.lax.convert_element_type): a
    float (or complex's real part) to an integer truncates toward zero, NaN gives 0 and values out of the
    integer's range saturate to its min/max (the card casts as NumPy, which wraps, for the torch face);
    weak_type=True marks the result weakly typed (funcgrad's extra argument)."""
    x = _arr(operand)
    dt = dtypes.canonicalize(new_dtype)
    if _kind(dt) not in "iu" or _kind(x.dtype) not in "fc":
        return _ew.convert_element_type(x, dt, weak_type)
    if _kind(x.dtype) == "c":
        x = _ew.real(x)
    info = np.iinfo(dt)
    lo, hi = _bound(info.min, x.dtype), _bound(2.0 ** (info.bits - (info.min < 0)), x.dtype)  # (exact: 0, +-2**k)
    lo_a, hi_a = _sh.full(x.shape, lo, x.dtype), _sh.full(x.shape, hi, x.dtype)
    below, above = _ew.lt(x, lo_a), _ew.ge(x, hi_a)
    inside = _ew.bitwise_and(_ew.ge(x, lo_a), _ew.lt(x, hi_a))  # (False at NaN)
    r = _ew.convert_element_type(_ew.select(inside, x, _ew.zeros_like(x)), dt, weak_type)
    r = _ew.select(above, _sh.full(x.shape, int(info.max), dt, weak_type), r)
    return _ew.select(below, _sh.full(x.shape, int(info.min), dt, weak_type), r)


def sign(x):
    """Elementwise sign: -1, 0 or 1 (NaN stays NaN), in x's dtype; for complex x, x / |x| divided part by
    part as XLA does, so an infinite part gives NaN (inf / inf) where the card gives the limit."""
    x = _arr(x)
    out = _ew.sign(x)
    if not dtypes.is_complex(x.dtype):
        return out
    re, im = _ew.real(x), _ew.imag(x)
    mag = _ew.abs(x)
    finite = _ew.bitwise_and(_ew.is_finite(re), _ew.is_finite(im))
    return _ew.select(finite, out, _ew.complex(_ew.div(re, mag), _ew.div(im, mag)))


def _typed_unary(fn, kinds: str, what: str):
    """fn restricted to operands whose dtype kind is in `kinds` (TypeError otherwise, as JAX's lax)."""
    name = fn.__name__

    def f(x, *args, **kwargs):
        x = _arr(x)
        dt = np.dtype(x.dtype)
        if _kind(dt) not in kinds:
            raise TypeError(f"{name} does not accept dtype {x.dtype}. Accepted dtypes are subtypes of {what}.")
        return fn(x, *args, **kwargs)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = _DOC.get(name, fn.__doc__)
    return f


def _digamma(x):
    """digamma with XLA's NaN at its poles (0, -0 and the negative integers; the card gives scipy's +-inf
    at +-0, which the torch face keeps); added, so that the derivative elsewhere is the card's."""
    pole = _ew.bitwise_and(_ew.le(x, _ew.zeros_like(x)), _ew.eq(x, _ew.floor(x)))
    return _ew.add(_sp.digamma(x), _ew.select(pole, _sh.full(x.shape, np.nan, x.dtype), _ew.zeros_like(x)))


_digamma.__name__ = "digamma"
_FLOAT_ONLY = (floor, ceil, round, is_finite, erf, erfc, erf_inv, lgamma, _digamma, nextafter, cbrt)
_INEXACT = (sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, asinh, acosh, atanh, exp, exp2, expm1, log,
            log1p, sqrt, rsqrt, logistic)
floor, ceil, round, is_finite, erf, erfc, erf_inv, lgamma, digamma, nextafter, cbrt = (  # noqa: A001
    _typed_unary(g, "f", "floating") for g in _FLOAT_ONLY)
(sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, asinh, acosh, atanh, exp, exp2, expm1, log, log1p, sqrt, rsqrt,
 logistic) = (_typed_unary(g, "fc", "floating, complexfloating") for g in _INEXACT)
real, imag = (_typed_unary(g, "c", "complexfloating") for g in (real, imag))
_conj = conj


def conj(x):
    """The complex conjugate, as jax.lax.conj: float32/float64 input gives a complex result, other real
    dtypes a TypeError."""
    x = _arr(x)
    if not dtypes.is_complex(x.dtype) and x.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"conj does not accept dtype {x.dtype}. Accepted dtypes are subtypes of float32, "
                        "float64, complexfloating.")
    return _conj(x)
abs = _typed_unary(abs, "fci", "floating, complexfloating, signedinteger")  # noqa: A001
integer_pow = _typed_unary(integer_pow, "iufc", "integer, floating, complexfloating")
population_count = _typed_unary(population_count, "iu", "integer")
add, sub, mul, div, pow, max, min = (_binary(f) for f in (add, sub, mul, div, pow, max, min))  # noqa: A001
eq, ne, lt, le, gt, ge = (_binary(f) for f in (eq, ne, lt, le, gt, ge))
atan2, rem, nextafter, complex = (_binary(f) for f in (_atan2, rem, nextafter, complex))  # noqa: A001
bitwise_and, bitwise_or, bitwise_xor = (_binary(f) for f in (bitwise_and, bitwise_or, bitwise_xor))
shift_left, shift_right_arithmetic, shift_right_logical = (
    _binary(f) for f in (shift_left, shift_right_arithmetic, shift_right_logical))


def square(x):
    """x * x elementwise (integer, float or complex x), as jax.lax.square."""
    x = _arr(x)
    if _kind(x.dtype) not in "iufc":
        raise TypeError(f"square does not accept dtype {x.dtype}. Accepted dtypes are subtypes of integer, "
                        "floating, complexfloating.")
    return integer_pow(x, 2)


def reciprocal(x):
    """1 / x elementwise, as jax.lax.reciprocal (integer x divides as lax.div does)."""
    return div(_ew.ones_like(x), x)


def zeros_like_array(x):
    """An array of zeros with x's shape and dtype, as jax.lax.zeros_like_array."""
    return _ew.zeros_like(x)


def zeta(x, q):
    """The Hurwitz zeta function sum_k (k + q)^-x (see funcgrad.scipy.special.zeta)."""
    # (lazy: the formula lives in the scipy layer, above lax, until zeta has a card of its own)
    from ..scipy.special import zeta as _zeta  # (listed arrow: scipy sits above lax)
    return _zeta(x, q)


def clz(x):
    """Count of leading zero bits of each integer of x (its bit width for 0)."""
    x = _arr(x)
    if not dtypes.is_integer(x.dtype):
        raise TypeError(f"clz does not accept dtype {x.dtype}. Accepted dtypes are subtypes of integer.")
    dt = np.dtype(x.dtype)
    bits = dt.itemsize * 8
    udt = np.dtype(f"uint{bits}")
    u = _ew.bitcast_convert_type(x, udt) if dt.kind == "i" else x
    count = _sh.full(x.shape, 0, dt)

    def shift(v, op, n):
        return op(v, _sh.full(v.shape, n, udt))
    s = bits // 2
    while s >= 1:  # binary search for the highest set bit
        top_zero = _ew.eq(shift(u, _ew.shift_right_logical, bits - s), _sh.full(x.shape, 0, udt))
        count = _ew.select(top_zero, _ew.add(count, _sh.full(x.shape, s, dt)), count)
        u = _ew.select(top_zero, shift(u, _ew.shift_left, s), u)
        s //= 2
    top_zero = _ew.eq(shift(u, _ew.shift_right_logical, bits - 1), _sh.full(x.shape, 0, udt))
    return _ew.select(top_zero, _ew.add(count, _sh.full(x.shape, 1, dt)), count)


def mulhi(x, y, /):
    """The upper N bits of the 2N-bit product of N-bit integers x and y (jax.lax.mulhi)."""
    x, y = _arr(x), _arr(y)
    if x.dtype != y.dtype or not dtypes.is_integer(x.dtype):
        raise TypeError(f"mulhi: operands must be integers of one dtype, got {x.dtype} and {y.dtype}")
    dt = np.dtype(x.dtype)
    bits = dt.itemsize * 8
    if bits <= 32:
        wide = np.int64 if dt.kind == "i" else np.uint64
        prod = x.astype(wide) * y.astype(wide)
        return (prod >> bits).astype(dt)
    u = np.uint64
    a, b = x.astype(u), y.astype(u)  # (bit patterns)
    low = u(0xFFFFFFFF)
    a_lo, a_hi, b_lo, b_hi = a & low, a >> u(32), b & low, b >> u(32)
    hi_lo, lo_hi = a_hi * b_lo, a_lo * b_hi
    cross = ((a_lo * b_lo) >> u(32)) + (hi_lo & low) + lo_hi
    hi = a_hi * b_hi + (hi_lo >> u(32)) + (cross >> u(32))
    if dt.kind == "i":  # signed: subtract the other operand where one is negative (mod 2**64)
        zero = _ew.zeros_like(a)
        hi = hi - _ew.select(x < 0, b, zero) - _ew.select(y < 0, a, zero)
    return hi.astype(dt)


def select_n(which, *cases):
    """cases[which] elementwise: `which` is bool (two cases) or an integer array of indices."""
    if not cases:
        raise ValueError("select_n: at least one case is required")
    which = _arr(which)
    cases = [_arr(c) for c in cases]
    for c in cases[1:]:
        if c.shape != cases[0].shape or c.dtype != cases[0].dtype:
            raise TypeError(f"select_n: cases must have one shape and dtype, got "
                            f"{[(c.shape, str(c.dtype)) for c in cases]}")
    if which.shape not in ((), cases[0].shape):
        raise TypeError(f"select_n: which has shape {which.shape}; expected () or {cases[0].shape}")
    if which.dtype == np.bool_:
        if len(cases) > 2:
            raise TypeError("select_n: a boolean `which` selects between at most two cases")
        which = _ew.convert_element_type(which, np.int32, False)
    which = _sh.broadcast_in_dim(which, cases[0].shape, ()) if which.shape == () and cases[0].shape else which
    out = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        out = _ew.select(_ew.eq(which, _sh.full(which.shape, i, which.dtype)), cases[i], out)
    return out


def _round_bits(x, exponent_bits: int, mantissa_bits: int):
    """x rounded to a float with the given exponent and mantissa widths, on the bits of x's dtype, as
    XLA's ReducePrecision computes it: the mantissa rounded to nearest, ties to even (a carry may raise
    the exponent); then an exponent above the narrow format's range gives a signed infinity and one at
    or below its smallest normal exponent a signed zero (the narrow format has no subnormals); NaN stays
    NaN."""
    a = np.asarray(x)
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    nbits = a.dtype.itemsize * 8
    m_src = 7 if a.dtype == dtypes.bfloat16 else np.finfo(a.dtype).nmant
    e_src = nbits - 1 - m_src
    u = a.view(bits).copy()
    one = bits(1)
    if mantissa_bits < m_src:
        shift = bits(m_src - mantissa_bits)
        last = one << shift
        bias = (last >> one) - one
        u = u + (((u & last) >> shift) + bias)
        u = u & ~(last - one)
    if exponent_bits < e_src:
        sign = one << bits(nbits - 1)
        exp_mask = ((one << bits(e_src)) - one) << bits(m_src)
        src_bias = (1 << (e_src - 1)) - 1
        red_bias = (1 << (exponent_bits - 1)) - 1
        e = u & exp_mask
        over = e > bits((src_bias + red_bias) << m_src)
        under = e <= bits((src_bias - red_bias) << m_src)
        zero = u & sign
        u = np.where(over, zero | exp_mask, np.where(under, zero, u)).astype(bits)
    out = u.view(a.dtype)
    return np.where(np.isnan(a), a, out).astype(a.dtype)


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
    """Round a float array to a narrower floating-point format (e.g. (8, 7): bfloat16, (5, 10): float16),
    keeping its dtype. Differentiates as the identity (JAX rounds the tangent as well; the two differ
    only by that rounding)."""
    x = _arr(operand)
    if not dtypes.is_float(x.dtype):
        raise TypeError(f"reduce_precision: expected a floating array, got {x.dtype}")
    eb, mb = operator.index(exponent_bits), operator.index(mantissa_bits)
    if eb < 1 or mb < 0:
        raise ValueError(f"reduce_precision: exponent_bits must be >= 1 and mantissa_bits >= 0, got {eb}, {mb}")
    held = _ew.stop_gradient(x)
    rounded = _rp_host(held, eb, mb)
    # rounded - (held - x): the value is rounded's bits (a flushed -0 keeps its sign: -0 - +0 is -0), the
    # derivative the identity's; an infinite or NaN x (where held - x is NaN) is its own rounding
    return _ew.select(_ew.is_finite(x), _ew.sub(rounded, _ew.sub(held, x)), x)


def _rp_host(x, eb, mb):
    """The rounding, staged as a host callback (it runs at call time under jit)."""
    return pure_callback_p.bind(x, callback=lambda v: [_round_bits(v, eb, mb)],
                                result_avals=(ShapedArray(x.shape, x.dtype),), vmap_method="expand_dims")[0]


for _f in (neg, select, bitwise_not):  # (the cards' functions, re-exported as they are)
    _f.__doc__ = _DOC[_f.__name__]


# --- bitcast across widths ------------------------------------------------------------------------

def bitcast_convert_type(operand, new_dtype):
    """The bits of `operand` reinterpreted as `new_dtype`, as jax.lax.bitcast_convert_type. Equal widths
    keep the shape; a narrower type adds a trailing dimension of old_bits // new_bits (the least
    significant part first, as XLA's little-endian layout); a wider one consumes a trailing dimension of
    exactly new_bits // old_bits. bool and complex only to their own type."""
    x = _arr(operand)
    new = np.dtype(dtypes.canonicalize_dtype(new_dtype))
    old = np.dtype(x.dtype)
    ob, nb = old.itemsize * 8, new.itemsize * 8
    if ob < nb:
        size = x.shape[-1] if x.shape else 1
        if size * ob != nb:
            raise ValueError(f"Attempting to convert array of shape {tuple(x.shape)} from {old} of size {ob} bits "
                             f"to {new} of size {nb}, bits but {size} * {ob} != {nb}")
    if (old.kind in "bc" or new.kind in "bc") and old != new:
        raise TypeError(f"lax.bitcast_convert_type does not support bool or complex values unless the operand "
                        f"and destination types match. Got operand dtype={old}, new_dtype={new!r}. Consider "
                        f"using the arr.view() method instead.")
    if ob == nb:
        return _ew.bitcast_convert_type(x, new)
    ou, nu = np.dtype(f"uint{ob}"), np.dtype(f"uint{nb}")
    u = _ew.bitcast_convert_type(x, ou) if old != ou else x
    if ob > nb:  # split: part i holds bits [i * nb, (i + 1) * nb)
        parts = []
        for i in range(ob // nb):
            shifted = _ew.shift_right_logical(u, _sh.full(u.shape, i * nb, ou)) if i else u
            part = _ew.convert_element_type(_ew.bitwise_and(shifted, _sh.full(u.shape, (1 << nb) - 1, ou)), nu)
            parts.append(_sh.reshape(part, tuple(u.shape) + (1,)))
        out = _sh.concatenate(parts, u.ndim)
    else:  # join the trailing dimension's parts, the first the least significant
        shape = tuple(u.shape[:-1])
        out = None
        for i in range(nb // ob):
            part = _ew.convert_element_type(_sh.reshape(_sh.slice(u, (0,) * (u.ndim - 1) + (i,), tuple(u.shape[:-1]) + (i + 1,)), shape), nu) \
                if u.ndim else _ew.convert_element_type(u, nu)
            if i:
                part = _ew.shift_left(part, _sh.full(shape, i * ob, nu))
            out = part if out is None else _ew.bitwise_or(out, part)
    return _ew.bitcast_convert_type(out, new) if new != out.dtype else out
