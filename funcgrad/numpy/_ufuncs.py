"""Elementwise NumPy functions over the primitives, with NumPy's promotion and broadcasting.

dtype rules are NumPy 2's (NEP 50: Python scalars are weak) with funcgrad's one documented difference:
where NumPy would produce float64 from integer/bool data or from a Python float (true division, exp,
mean of integers, int array + 0.5), funcgrad produces the default float dtype (float32, or float64 after
`funcgrad.config.update("enable_x64", True)`); Python complex likewise gives the default complex dtype.
(NumPy's float16 results for int8/uint8/bool input, e.g. numpy.sin(int8), are the default float too.)
Where NumPy has no loop for a dtype (complex arctan2, float bitwise_and, ...) the TypeError is NumPy's.
`float_power` is jax.numpy's: the operands promoted as for true division (NumPy computes in float64).

Derivatives come from the primitives (JAX's conventions, including for complex numbers); rounding,
floor_divide, comparisons and predicates have zero derivative.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .._src.core import dtypes
from .._src.core.array import Array
from .._src.core.trace import Tracer
from .._src.prims import elementwise as ew
from .._src.prims import special as sp
from .._src.prims.shape import full
from . import _promote
from ..lax._elementwise import _atan2 as _lax_atan2, _digamma as _lax_digamma, sign as _lax_sign, \
    pow as _lax_pow
from ._promote import (_weak_scalar, weak_filled, asarray_any, broadcast_all, broadcast_shapes, broadcast_to, is_python_scalar,
                       promote_and_broadcast, promote_args, python_scalar_operand, result_dtype)


def _to_inexact(x):
    """Integers and bools become a float dtype as in JAX: float32 for bool and integers of up to 32
    bits, the default float for 64-bit (and weakly typed) integers."""
    if dtypes.is_inexact(x.dtype):
        return x
    return ew.convert_element_type(x, dtypes.to_inexact(x.dtype, x.weak_type), x.weak_type)


class _NegativeIntegerPower(ValueError, TypeError):
    """An integer to a negative integer power: NumPy raises ValueError, jax.numpy TypeError."""


class _ComplexUndefinedError(TypeError, ValueError):
    """A function not defined for complex input: NumPy raises TypeError, jax.numpy ValueError."""


def _strong(x):
    """x with its weak type dropped (jax.numpy results computed with a strongly typed constant)."""
    return ew.convert_element_type(x, x.dtype, False) if x.weak_type else x


def _weak_like(r, x):
    """r weakly typed when x is (a jax.numpy predicate of a Python scalar is a weak bool)."""
    return ew.convert_element_type(r, r.dtype, True) if x.weak_type and not r.weak_type else r


def _no_loop(name, dt):
    if dtypes.is_complex(dt):  # (jax.numpy raises ValueError for some complex input: hypot, signbit, ...)
        raise _ComplexUndefinedError(f"{name}: ufunc {name!r} not supported for the input types ({dt}), as in NumPy")
    raise TypeError(f"{name}: ufunc {name!r} not supported for the input types ({dt}), as in NumPy")


def _float_unary(name, lax_fn, complex_ok=True):
    def f(x, /):
        c = x.__class__
        if c is Array or c is Tracer:  # the hot path: a float (or complex) array
            k = x.dtype.kind
            if k == "f" or (k == "c" and complex_ok):
                return lax_fn(x)
        x = asarray_any(x)
        if not complex_ok and dtypes.is_complex(x.dtype):
            _no_loop(name, x.dtype)
        return lax_fn(_to_inexact(x))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise {name}, as numpy.{name}; integer input is computed in the default float dtype."
    return f


exp = _float_unary("exp", ew.exp)
exp2 = _float_unary("exp2", ew.exp2)
log = _float_unary("log", ew.log)
log2 = _float_unary("log2", lambda x: _strong(ew.log2(x)))  # (JAX: log(x) / log(2), a strong constant)
log10 = _float_unary("log10", lambda x: _strong(ew.log10(x)))
log1p = _float_unary("log1p", ew.log1p)
def _expm1(x):
    """expm1; for complex x with the Array API standard's special values where NumPy's formula
    expm1(a) cos(b) - 2 sin(b/2)**2 + i exp(a) sin(b) gives NaN or -0: an imaginary part b when b is 0
    (also at a = inf), +0 + 0j at +-0 + 0j, -1 + 0j at a = -inf, and a real part inf at a = inf with b
    infinite or NaN."""
    out = ew.expm1(x)
    if not dtypes.is_complex(x.dtype):
        return out
    a, b = ew.real(x), ew.imag(x)
    re, im = ew.real(out), ew.imag(out)
    zero = ew.zeros_like(a)
    inf = full(a.shape, np.inf, a.dtype)
    b_finite = ew.is_finite(b)
    a_ninf = ew.eq(a, ew.neg(inf))
    b_zero = ew.eq(b, zero)
    im = ew.select(b_zero, b, im)
    re = ew.select(ew.bitwise_and(b_zero, ew.eq(a, zero)), zero, re)  # 0 + 0j at +-0 + 0j
    re = ew.select(a_ninf, full(a.shape, -1, a.dtype), re)
    im = ew.select(ew.bitwise_and(a_ninf, ew.bitwise_not(b_finite)), zero, im)
    re = ew.select(ew.bitwise_and(ew.eq(a, inf), ew.bitwise_not(b_finite)), inf, re)
    return _weak_like(ew.complex(re, im), x)


expm1 = _float_unary("expm1", _expm1)
sin = _float_unary("sin", ew.sin)
cos = _float_unary("cos", ew.cos)
tan = _float_unary("tan", ew.tan)
arcsin = _float_unary("arcsin", ew.asin)
arccos = _float_unary("arccos", ew.acos)
arctan = _float_unary("arctan", ew.atan)
sinh = _float_unary("sinh", ew.sinh)
cosh = _float_unary("cosh", ew.cosh)
tanh = _float_unary("tanh", ew.tanh)
arcsinh = _float_unary("arcsinh", ew.asinh)
arccosh = _float_unary("arccosh", ew.acosh)
arctanh = _float_unary("arctanh", ew.atanh)
sqrt = _float_unary("sqrt", ew.sqrt)
cbrt = _float_unary("cbrt", ew.cbrt, complex_ok=False)
deg2rad = _float_unary("deg2rad", lambda x: x * (math.pi / 180))  # (complex input scales, as in jax.numpy)
rad2deg = _float_unary("rad2deg", lambda x: x * (180 / math.pi))
radians = _float_unary("radians", lambda x: x * (math.pi / 180))
degrees = _float_unary("degrees", lambda x: x * (180 / math.pi))


def _bool_error(name, op):
    raise TypeError(f"{name}: the numpy boolean {name}{op} is not supported; convert the operand with "
                    ".astype(int) first")


def _agreeing(x1, x2, kinds: str):
    """(x1, x2) ready for an elementwise primitive when no promotion or broadcasting is needed: two
    arrays of one shape, dtype (of a kind in `kinds`) and weak type; or a concrete float/complex Array
    and a Python int/float, as a cached weak 0-d constant (the backend broadcasts it); or a traced
    float/complex array and a Python int/float, as a cached weak constant of its shape. Else None.
    These are the hot paths of the NumPy functions; everything else takes the general path."""
    c1, c2 = x1.__class__, x2.__class__
    if c1 is Array and c2 is Array:
        b1, b2 = x1._buf, x2._buf
        if b1.dtype == b2.dtype and b1.shape == b2.shape and x1.weak_type == x2.weak_type \
                and b1.dtype.kind in kinds:
            return x1, x2
    elif (c1 is Tracer or c1 is Array) and (c2 is Tracer or c2 is Array):
        a1, a2 = x1.aval, x2.aval
        if (a1 is a2 or (a1.dtype == a2.dtype and a1.shape == a2.shape and a1.weak_type == a2.weak_type)) \
                and a1.dtype.kind in kinds:
            return x1, x2
    elif c1 is Array and (c2 is float or c2 is int):
        dt = x1._buf.dtype
        if dt.kind in "fc" and dt.kind in kinds:
            return x1, _weak_scalar(x2, dt)
    elif c2 is Array and (c1 is float or c1 is int):
        dt = x2._buf.dtype
        if dt.kind in "fc" and dt.kind in kinds:
            return _weak_scalar(x1, dt), x2
    elif c1 is Tracer and (c2 is float or c2 is int):  # a traced float array and a Python scalar
        a1 = x1.aval
        dt = a1.dtype
        if dt.kind in "fc" and dt.kind in kinds:
            return x1, weak_filled(x2, dt, a1.shape)
    elif c2 is Tracer and (c1 is float or c1 is int):
        a2 = x2.aval
        dt = a2.dtype
        if dt.kind in "fc" and dt.kind in kinds:
            return weak_filled(x1, dt, a2.shape), x2
    return None


def _binary(name, prim, bool_fn=None, bool_ok=True):
    lax_fn = prim.bind

    def f(x1, x2, /):
        ops = _agreeing(x1, x2, "iufcV")  # (not bool: NumPy's add/multiply of bools are or/and)
        if ops is not None:
            return lax_fn(*ops)
        a, b = promote_and_broadcast(name, x1, x2, lazy=True)  # one primitive: eager operands may broadcast
        if a.dtype == dtypes.bool_:
            if not bool_ok:
                _bool_error(name, ", the `-` operator," if name == "subtract" else "")
            if bool_fn is not None:
                return bool_fn(a, b)
        return lax_fn(a, b)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise {name} with NumPy broadcasting and type promotion, as numpy.{name}."
    return f


# On bools NumPy's add is logical or and multiply is logical and: max and min of bools.
add = _binary("add", ew.add_p, bool_fn=ew.max)
subtract = _binary("subtract", ew.sub_p, bool_ok=False)
_multiply = _binary("multiply", ew.mul_p, bool_fn=ew.min)


def _bool_array(x) -> bool:
    return not isinstance(x, (bool, int, float, complex)) and getattr(x, "dtype", None) == dtypes.bool_


def multiply(x1, x2, /):
    """x1 * x2 with NumPy broadcasting and type promotion, as numpy.multiply (on bools: logical and).
    A bool array of the result's shape times a float16/32/64 or complex array selects, as XLA rewrites
    mul(convert(mask), x) in jax.numpy's multiply: False * inf and False * nan are 0 there, not nan (a
    broadcast mask, or a bfloat16 product, is multiplied)."""
    if (x1.__class__ is Array or x2.__class__ is Array or x1.__class__ is Tracer or x2.__class__ is Tracer) and \
            (_bool_array(x1) != _bool_array(x2)):
        mask, v = (x1, x2) if _bool_array(x1) else (x2, x1)
        if mask.shape == broadcast_shapes(mask.shape, np.shape(v)):
            a, b = promote_and_broadcast("multiply", x1, x2)
            if dtypes.is_inexact(a.dtype) and a.dtype != dtypes.bfloat16:
                m, w = (a, b) if mask is x1 else (b, a)
                return ew.select(ew.ne(m, ew.zeros_like(m)), w, ew.zeros_like(w))
    return _multiply(x1, x2)
maximum = _binary("maximum", ew.max_p)
minimum = _binary("minimum", ew.min_p)


def _compare(name, lax_fn):
    def f(x1, x2, /):
        ops = _agreeing(x1, x2, "biufcV")  # (a Python scalar only beside floats: it cannot overflow)
        if ops is not None:
            return lax_fn(*ops)
        a, b = promote_and_broadcast(name, x1, x2)
        r = lax_fn(a, b)
        # weakly typed where the promoted operands are (an int array with a Python float), as in JAX
        return ew.convert_element_type(r, r.dtype, True) if a.weak_type and b.weak_type and not r.weak_type else r
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise {name} (a bool array) with NumPy broadcasting and promotion, as numpy.{name}."
    return f


equal = _compare("equal", ew.eq)
not_equal = _compare("not_equal", ew.ne)
less = _compare("less", ew.lt)
less_equal = _compare("less_equal", ew.le)
greater = _compare("greater", ew.gt)
greater_equal = _compare("greater_equal", ew.ge)


def _inexact_args(name, x1, x2, complex_ok=True):
    """Operands promoted (NEP 50) and broadcast; integers and bools go to the default float dtype."""
    args = [a if is_python_scalar(a) else asarray_any(a) for a in (x1, x2)]
    dt, weak = result_dtype(*args)
    if not dtypes.is_inexact(dt):
        # NumPy computes integers in a float loop, so a Python int need not fit the integer dtype.
        dt = dtypes.to_inexact(dt, weak)
        # weakly typed where the promotion is (bool data with a Python int, as in JAX; Python bools are strong)
        args = [python_scalar_operand(a, dt, weak) if is_python_scalar(a) else ew.convert_element_type(a, dt, weak)
                for a in args]
    elif not complex_ok and dtypes.is_complex(dt):
        _no_loop(name, dt)
    return promote_and_broadcast(name, *args)


def true_divide(x1, x2, /):
    """x1 / x2 with NumPy semantics: integer and bool operands divide in the default float dtype."""
    ops = _agreeing(x1, x2, "fc")
    if ops is not None:
        return ew.div_p.bind(*ops)
    return ew.div(*_inexact_args("true_divide", x1, x2))


divide = true_divide


def power(x1, x2, /):
    """x1 ** x2. A Python int exponent lowers to integer_pow (exact, and cheap to differentiate)."""
    if x2.__class__ is int and (x1.__class__ is Array or x1.__class__ is Tracer) and x1.dtype.kind in "fc":
        return ew.integer_pow_p.bind(x1, y=x2)  # the hot path: a float array to a Python int power
    if isinstance(x2, int) and not isinstance(x2, bool) and not is_python_scalar(x1):
        x = asarray_any(x1)
        if x.dtype == dtypes.bool_:  # jax.numpy computes bools in int32, whatever the exponent
            x = ew.convert_element_type(x, dtypes.int32)
        dt, _ = result_dtype(x, x2)
        if dt == x.dtype and dt != dtypes.bool_:
            # (as jax.numpy: any size of exponent, the integer power wrapping around)
            if dtypes.is_integer(dt) and x2 < 0:
                raise _NegativeIntegerPower("power: Integers to negative integer powers are not allowed.")
            return ew.integer_pow(x, x2)
    if not is_python_scalar(x2) and dtypes.is_integer(getattr(x2, "dtype", dtypes.bool_)):
        x = asarray_any(x1)
        if dtypes.is_inexact(x.dtype):
            # as jax.numpy: an inexact base to an integer array's power is lax.pow, unpromoted (a Python
            # scalar base leaves the result strongly typed; zero derivative in the base where the exponent is 0)
            return _lax_pow(*broadcast_all("power", [x, asarray_any(x2)]))
    a, b = promote_and_broadcast("power", x1, x2)
    if a.dtype == dtypes.bool_:  # as jax.numpy: bools compute in int32 (NumPy: int8)
        a, b = ew.convert_element_type(a, dtypes.int32), ew.convert_element_type(b, dtypes.int32)
    r = ew.pow(a, b)
    if r.weak_type and dtypes.is_integer(r.dtype) and not isinstance(x2, int):
        # as jax.numpy: an integer power of an array exponent (its binary exponentiation from strongly typed
        # constants) is strongly typed, also for a Python int base: power(2, bool_array) is int32
        r = ew.convert_element_type(r, r.dtype, False)
    return r


def negative(x, /):
    """-x, as numpy.negative (unsigned integers wrap around; bool raises TypeError as in NumPy)."""
    x = asarray_any(x)
    if x.dtype == dtypes.bool_:
        _bool_error("negative", ", the `-` operator,")
    return ew.neg(x)


def positive(x, /):
    """+x, as jax.numpy.positive (bool input is returned, where NumPy raises TypeError)."""
    return asarray_any(x)


def absolute(x, /):
    """|x|, as numpy.absolute (complex input gives the real dtype of the same precision)."""
    x = asarray_any(x)
    if x.dtype == dtypes.bool_:
        return x
    return ew.abs(x)


abs = absolute  # noqa: A001 - NumPy name


def sign(x, /):
    """-1, 0 or 1 (x/|x| for complex), as numpy.sign; bool raises TypeError as in NumPy."""
    x = asarray_any(x)
    if x.dtype == dtypes.bool_:
        raise TypeError("sign: numpy.sign does not accept bool input; convert it with .astype(int) first")
    return _lax_sign(x)


def logistic(x, /):
    """The logistic sigmoid 1 / (1 + exp(-x)) (lax.logistic with NumPy's promotion: integers become the
    default float; jax.numpy has no such name, see funcgrad.nn.sigmoid)."""
    return ew.logistic(_to_inexact(asarray_any(x)))


def reciprocal(x, /):
    """1/x, as jax.numpy.reciprocal: integer and bool input is promoted to float first (JAX's
    to_inexact rule), where NumPy would truncate in the integer dtype."""
    x = _to_inexact(asarray_any(x))
    return ew.div(ew.ones_like(x), x)


def square(x, /):
    """x * x, as jax.numpy.square (bool gives int32, as JAX's; NumPy: int8)."""
    x = asarray_any(x)
    if x.dtype == dtypes.bool_:
        x = ew.convert_element_type(x, dtypes.int32)
    return ew.square(x)


def rsqrt(x, /):
    return ew.rsqrt(_to_inexact(asarray_any(x)))


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """Elements of x where condition holds, else of y; all three broadcast together. With condition alone,
    `nonzero(condition, size=, fill_value=)` (JAX's static `size` makes it usable under jit and vmap).

    Examples:
        >>> import funcgrad.numpy as jnp
        >>> x = jnp.array([-2., 0., 3.])
        >>> jnp.where(x > 0, x, 0.)
        Array([0., 0., 3.], dtype=float32)

        With condition alone and a static size (padded with fill_value), as jit needs:

        >>> jnp.where(jnp.array([0, 5, 0, 7]), size=3, fill_value=-1)
        (Array([ 1,  3, -1], dtype=int32),)
    """
    if x is None or y is None:
        if x is None and y is None:
            from ._sorting import nonzero  # (cycle: _sorting imports this module)
            return nonzero(condition, size=size, fill_value=fill_value)
        raise ValueError("where: either both or neither of x and y should be given")
    if size is not None or fill_value is not None:
        raise ValueError("where: size and fill_value can only be given with the one-argument form "
                         "where(condition)")
    cc = condition.__class__
    if (cc is Array or cc is Tracer) and condition.dtype == dtypes.bool_:  # the hot path: no broadcasting
        ops = _agreeing(x, y, "biufcV")
        if ops is not None:
            a, b = ops
            shape = condition.shape
            if a.shape == shape and b.shape == shape:
                return ew.select_p.bind(condition, a, b)
            if cc is Array and (a.shape == shape or b.shape == shape):  # a scalar beside a concrete array
                return ew.select_p.bind(condition, a, b)
    c = asarray_any(condition)
    if c.dtype != dtypes.bool_:
        c = ew.ne(c, ew.zeros_like(c))
    a, b = promote_args("where", x, y)
    if _promote.rank_promotion != "allow":
        _promote._rank_promotion("where", [c.shape, a.shape, b.shape])
    shape = broadcast_shapes(c.shape, a.shape, b.shape, op="where")
    return ew.select(broadcast_to(c, shape), broadcast_to(a, shape), broadcast_to(b, shape))



# --- binary float functions -----------------------------------------------------------------------

def scalar_weak(r):
    """r, strongly typed unless 0-d: jax.numpy's functions whose jitted bodies mix in constants made like
    their result (logaddexp2, complex logaddexp, gcd, lcm) keep a weak type only for a 0-d result."""
    return ew.convert_element_type(r, r.dtype, False) if r.weak_type and r.ndim else r


def _float_binary(name, fn, complex_ok=False, strong=False, keep_weak=None):
    """`keep_weak(x1, x2, result)`: whether a weak result stays weak (jax.numpy's constants made like an
    operand are weak only where that operand is 0-d: scalar_weak)."""
    def f(x1, x2, /):
        a, b = _inexact_args(name, x1, x2, complex_ok)
        r = fn(a, b)
        # weak only when the promoted operands are (copysign: x1's); hypot only for two Python scalars (JAX)
        weak = bool(a.weak_type and b.weak_type) and (not strong or (is_python_scalar(x1) and is_python_scalar(x2)))
        if weak and keep_weak is not None:
            weak = keep_weak(x1, x2, r)
        return r if bool(r.weak_type) == weak else ew.convert_element_type(r, r.dtype, weak)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"Elementwise {name} with NumPy broadcasting and promotion, as numpy.{name}; integer "
                 "operands are computed in the default float dtype.")
    return f


def _isinf_float(x):
    return ew.eq(ew.abs(x), full(x.shape, np.inf, x.dtype))


def _copysign(a, b):
    mag = ew.abs(a)
    return ew.select(_signbit_float(b), ew.neg(mag), mag)


def _heaviside(a, b):
    zero, one = ew.zeros_like(a), ew.ones_like(a)
    out = ew.select(ew.lt(a, zero), zero, ew.select(ew.gt(a, zero), one, b))
    return ew.select(ew.ne(a, a), a, out)


def _wrap_between(x, a):
    """x wrapped into [-a, a] (the imaginary part of a complex logaddexp, as jax.numpy)."""
    two_a = full(x.shape, 2 * a, x.dtype)
    r = ew.rem(x + full(x.shape, a, x.dtype), two_a)
    r = ew.select(ew.lt(r, ew.zeros_like(r)), r + two_a, r)
    return r - full(x.shape, a, x.dtype)


def _logaddexp_complex(x1, x2, base2):
    """jax.numpy's complex logaddexp(2): amax + log1p(exp(x1 + x2 - 2 amax)) with amax the larger in
    the lexicographic order, its imaginary part wrapped into [-pi, pi] (pi / log 2 for base 2)."""
    amax = ew.max(x1, x2)
    delta = (x1 + x2) - amax * 2
    if base2:
        out = amax + ew.log1p(ew.exp2(delta)) * (1 / math.log(2))
    else:
        out = amax + ew.log1p(ew.exp(delta))
    return ew.complex(ew.real(out), _wrap_between(ew.imag(out), math.pi / math.log(2) if base2 else math.pi))


def _logaddexp(x1, x2):
    return _logaddexp_complex(x1, x2, False) if dtypes.is_complex(x1.dtype) else ew.logaddexp(x1, x2)


def _logaddexp2(x1, x2):
    return _logaddexp_complex(x1, x2, True) if dtypes.is_complex(x1.dtype) else ew.logaddexp2(x1, x2)


arctan2 = _float_binary("arctan2", _lax_atan2, complex_ok=True)  # (complex too, as jax.numpy)
logaddexp = _float_binary("logaddexp", _logaddexp, complex_ok=True,  # (cards with rules smooth to every order)
                          keep_weak=lambda x1, x2, r: not dtypes.is_complex(r.dtype) or r.ndim == 0)
logaddexp2 = _float_binary("logaddexp2", _logaddexp2, complex_ok=True, keep_weak=lambda x1, x2, r: r.ndim == 0)
hypot = _float_binary("hypot", ew.hypot, strong=True)
copysign = _float_binary("copysign", _copysign)
heaviside = _float_binary("heaviside", _heaviside, keep_weak=lambda x1, x2, r: np.ndim(x1) == 0)  # (0, 1 like x1)
nextafter = _float_binary("nextafter", ew.nextafter)


def float_power(x1, x2, /):
    """x1 ** x2 in floating point, as jax.numpy.float_power: the operands promoted as for true division
    (integers and bools to a float dtype, float32 for those of up to 32 bits), not NumPy's float64."""
    return ew.pow(*_inexact_args("float_power", x1, x2))


def _nan_aware(name, lax_fn, wins):
    def f(x1, x2, /):
        a, b = promote_and_broadcast(name, x1, x2)
        if not dtypes.is_inexact(a.dtype):
            return lax_fn(a, b)
        if dtypes.is_complex(a.dtype):
            return ew.select(isnan(b), a, ew.select(isnan(a), b, lax_fn(a, b)))
        # jax.numpy's select: x1 where it wins strictly or x2 is NaN, else x2 (so a tie's derivative goes
        # wholly to x2)
        return ew.select(ew.bitwise_or(wins(a, b), isnan(b)), a, b)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise {name[1:]}imum ignoring NaNs (NaN only where both are NaN), as numpy.{name}."
    return f


fmax = _nan_aware("fmax", ew.max, ew.gt)
fmin = _nan_aware("fmin", ew.min, ew.lt)


def sinc(x, /):
    """sin(pi x) / (pi x), 1 at 0, as numpy.sinc (a Taylor polynomial near 0 keeps every derivative)."""
    x = _to_inexact(asarray_any(x))
    y = x * math.pi
    mag = ew.abs(y)
    small = ew.lt(mag, full(x.shape, 1e-2, mag.dtype))
    ys = ew.select(small, ew.ones_like(y), y)
    u = y * y
    taylor = 1 + u * (-1 / 6 + u * (1 / 120 - u * (1 / 5040)))
    return ew.select(small, taylor, ew.sin(ys) / ys)


# --- rounding -------------------------------------------------------------------------------------

def _real_only(name, x):
    x = asarray_any(x)
    if dtypes.is_complex(x.dtype):
        _no_loop(name, x.dtype)
    return x


def _trunc(x):
    return ew.select(ew.lt(x, ew.zeros_like(x)), ew.ceil(x), ew.floor(x))


def _integral(name, lax_fn):
    def f(x, /):
        x = _real_only(name, x)
        if not dtypes.is_inexact(x.dtype):
            return x  # NumPy 2 keeps integer and bool dtypes
        return lax_fn(x)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise {name}, as numpy.{name} (integer and bool input is returned unchanged)."
    return f


floor = _integral("floor", ew.floor)
ceil = _integral("ceil", ew.ceil)
trunc = _integral("trunc", _trunc)
fix = _integral("fix", _trunc)


def _rint(x):
    if dtypes.is_complex(x.dtype):
        return ew.complex(_rint(ew.real(x)), _rint(ew.imag(x)))
    return ew.round(x, ew.RoundingMethod.TO_NEAREST_EVEN)


def _default_inexact(x):
    """Integers and bools in the default float dtype, strongly typed (jax.numpy's rint and angle)."""
    if dtypes.is_inexact(x.dtype):
        return x
    return ew.convert_element_type(x, dtypes.defaults.float_, False)


def rint(x, /):
    """Round to the nearest integral value, ties to even, as jax.numpy.rint (integers and bools give
    the default float dtype)."""
    return _rint(_default_inexact(asarray_any(x)))


def _round_int(x, decimals):
    if decimals >= 0:
        return x
    raise NotImplementedError("integer np.round not implemented for decimals < 0")  # (as jax.numpy)


def _round_float(x, decimals):
    if dtypes.is_complex(x.dtype):
        return ew.complex(_round_float(ew.real(x), decimals), _round_float(ew.imag(x), decimals))
    if decimals == 0:
        return _rint(x)
    if decimals > 0:  # NumPy's algorithm: scale, round half to even, unscale
        f = 10.0 ** decimals
        return _rint(x * f) / f
    f = 10.0 ** -decimals
    return _rint(x / f) * f


def round(a, decimals=0, out=None):  # noqa: A001 - NumPy name
    """Round to `decimals` decimal places, ties to even, as jax.numpy.round (integers stay integers; an integer
    array with decimals < 0 raises NotImplementedError there, where NumPy rounds to tens)."""
    if out is not None:
        raise TypeError("round: out= is not supported; funcgrad arrays are immutable")
    decimals = operator.index(decimals)
    x = asarray_any(a)
    if x.dtype == dtypes.bool_:
        raise ValueError("round: bool input is not supported (as in jax.numpy; convert it with .astype first)")
    if dtypes.is_integer(x.dtype):
        return _round_int(x, decimals)
    return _round_float(_to_inexact(x), decimals)


around = round


# --- floor division and remainders ----------------------------------------------------------------

def _int_or_float_args(name, x1, x2):
    a, b = promote_and_broadcast(name, x1, x2)
    if a.dtype == dtypes.bool_:  # as jax.numpy: bools compute in int32 (NumPy: int8)
        a, b = ew.convert_element_type(a, dtypes.int32), ew.convert_element_type(b, dtypes.int32)
    elif dtypes.is_complex(a.dtype):
        _no_loop(name, a.dtype)
    return a, b


def _int_floor_divide(a, b):
    """jax.numpy's integer floor division: lax.div (toward zero; XLA's x / 0 is -1, all bits set),
    one less where the signs differ and the division is inexact (unsigned: lax.div alone)."""
    q = ew.div(a, b)
    if np.dtype(a.dtype).kind == "u":
        return q
    zero = ew.zeros_like(a)
    fix = ew.bitwise_and(ew.ne(ew.sign(a), ew.sign(b)), ew.ne(ew.rem(a, b), zero))
    return ew.select(fix, q - ew.ones_like(q), q)


def _float_divmod(a, b):
    """jax.numpy's float divmod (CPython's float_divmod over lax): (round(q), m) with m = rem(a, b),
    moved into b's sign (m + b) where nonzero with another sign, and q = (a - rem(a, b)) / b (a / b at
    b == 0), one less there. Its zeros and special values are XLA's: -0.0 // 1 is 0, 1 // -inf is -1,
    inf // 2 is NaN."""
    zero = ew.zeros_like(a)
    mod = ew.rem(a, b)
    div = ew.div(ew.select(ew.eq(b, zero), a, a - mod), b)
    ind = ew.bitwise_and(ew.ne(mod, zero), ew.ne(ew.sign(b), ew.sign(mod)))
    mod = ew.select(ind, mod + b, mod)
    div = ew.select(ind, div - ew.ones_like(div), div)
    return ew.round(div), mod


def _remainder(a, b):
    """jax.numpy's remainder: rem(a, b) (the sign of a), plus b where nonzero with a sign unlike b's
    (integers: b == 0 counts as 1, so x % 0 is 0). d/da = 1, d/db = -trunc(a / b) (+1 where moved)."""
    if not dtypes.is_inexact(a.dtype):
        b = ew.select(ew.eq(b, ew.zeros_like(b)), ew.ones_like(b), b)
    zero = ew.zeros_like(a)
    m = ew.rem(a, b)
    plus = ew.bitwise_and(ew.ne(ew.lt(m, zero), ew.lt(b, zero)), ew.ne(m, zero))
    return ew.select(plus, m + b, m)


def floor_divide(x1, x2, /):
    """x1 // x2, as jax.numpy.floor_divide: Python's semantics for finite operands; XLA's signed zeros
    and special values otherwise (-0.0 // 1 is 0, 1 // -inf is -1, inf // 2 is NaN; integer x // 0 is
    -2 or -1, unsigned all bits set). Its derivative is zero."""
    a, b = _int_or_float_args("floor_divide", x1, x2)
    if not dtypes.is_inexact(a.dtype):
        return _int_floor_divide(a, b)
    return _float_divmod(ew.stop_gradient(a), ew.stop_gradient(b))[0]


def remainder(x1, x2, /):
    """x1 % x2 with the sign of x2, as jax.numpy.remainder; d/dx1 = 1, d/dx2 = -trunc(x1 / x2) (+1
    where the remainder was moved into x2's sign)."""
    return _remainder(*_int_or_float_args("remainder", x1, x2))


mod = remainder


def divmod(x1, x2, /):  # noqa: A001 - NumPy name
    """(x1 // x2, x1 % x2), as jax.numpy.divmod."""
    a, b = _int_or_float_args("divmod", x1, x2)
    if not dtypes.is_inexact(a.dtype):
        return _int_floor_divide(a, b), _remainder(a, b)
    q = _float_divmod(ew.stop_gradient(a), ew.stop_gradient(b))[0]
    return q, _float_divmod(a, b)[1]


def fmod(x1, x2, /):
    """The C remainder x1 - trunc(x1 / x2) * x2 (the sign of x1), as jax.numpy.fmod (integers: x % 0
    is 0)."""
    a, b = _int_or_float_args("fmod", x1, x2)
    if dtypes.is_integer(a.dtype) and not _bool_operands(x1, x2):
        b = ew.select(ew.eq(b, ew.zeros_like(b)), ew.ones_like(b), b)
    return ew.rem(a, b)


def _bool_operands(x1, x2) -> bool:
    """Both operands bool (jax.numpy.fmod then computes rem(int32) as it is: XLA's x % 0 is x)."""
    return all(getattr(x, "dtype", None) == dtypes.bool_ or isinstance(x, bool) for x in (x1, x2))


# --- predicates -----------------------------------------------------------------------------------

def _const_bool(x, value):
    return full(x.shape, value, dtypes.bool_)


def isfinite(x, /):
    """True where x is neither infinite nor NaN, as numpy.isfinite."""
    x = asarray_any(x)
    if dtypes.is_complex(x.dtype):
        return _weak_like(ew.bitwise_and(ew.is_finite(ew.real(x)), ew.is_finite(ew.imag(x))), x)
    if dtypes.is_float(x.dtype):
        return _weak_like(ew.is_finite(x), x)
    return _const_bool(x, True)


def isnan(x, /):
    """True where x is NaN (either part, for complex), as numpy.isnan."""
    x = asarray_any(x)
    if dtypes.is_complex(x.dtype):
        return _weak_like(ew.bitwise_or(isnan(ew.real(x)), isnan(ew.imag(x))), x)
    if dtypes.is_float(x.dtype):
        return _weak_like(ew.ne(x, x), x)
    return _weak_like(_const_bool(x, False), x)


def isinf(x, /):
    """True where x is +inf or -inf (either part, for complex), as numpy.isinf."""
    x = asarray_any(x)
    if dtypes.is_complex(x.dtype):
        return ew.bitwise_or(isinf(ew.real(x)), isinf(ew.imag(x)))
    if dtypes.is_float(x.dtype):
        return _isinf_float(x)
    return _const_bool(x, False)


def _signed_inf(name, value):
    def f(x, /):
        x = asarray_any(x)
        if dtypes.is_complex(x.dtype):
            raise _ComplexUndefinedError(f"{name}: This operation is not supported for complex values "
                                         f"because it would be ambiguous (as numpy.{name}).")
        if dtypes.is_float(x.dtype):
            return ew.eq(x, full(x.shape, value, x.dtype))
        return _const_bool(x, False)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"True where x is {value}, as numpy.{name}."
    return f


isposinf = _signed_inf("isposinf", np.inf)
isneginf = _signed_inf("isneginf", -np.inf)


def _signbit_float(x):
    bits = ew.bitcast_convert_type(x, np.dtype(f"i{x.dtype.itemsize}"))
    return ew.lt(bits, ew.zeros_like(bits))


def signbit(x, /):
    """True where the sign bit is set (also for -0.0 and negative NaNs), as numpy.signbit."""
    x = asarray_any(x)
    if dtypes.is_complex(x.dtype):
        raise _ComplexUndefinedError(f"signbit: ufunc 'signbit' not supported for the input types ({x.dtype}), "
                                     "as in NumPy (jax.numpy: ValueError)")
    if dtypes.is_float(x.dtype):
        return _signbit_float(x)
    if dtypes.is_integer(x.dtype) and np.dtype(x.dtype).kind == "i":
        return ew.lt(x, ew.zeros_like(x))
    return _const_bool(x, False)


# --- logical and bitwise operations ---------------------------------------------------------------

def _truth(x):
    x = asarray_any(x)
    return x if x.dtype == dtypes.bool_ else ew.ne(x, ew.zeros_like(x))


def _logical(name, lax_fn):
    def f(x1, x2, /):
        r = lax_fn(*broadcast_all(name, [_truth(x1), _truth(x2)]))
        # two Python numbers (not both bools) give a weak bool, as in jax.numpy
        if is_python_scalar(x1) and is_python_scalar(x2) and not (isinstance(x1, bool) and isinstance(x2, bool)):
            r = ew.convert_element_type(r, r.dtype, True)
        return r
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise {name} of the truth values (nonzero is True), as numpy.{name}."
    return f


logical_and = _logical("logical_and", ew.bitwise_and)
logical_or = _logical("logical_or", ew.bitwise_or)
logical_xor = _logical("logical_xor", ew.bitwise_xor)


def logical_not(x, /):
    """Elementwise not of the truth values (nonzero is True), as numpy.logical_not (weakly typed for
    a Python number, as in jax.numpy)."""
    x = asarray_any(x)
    return _weak_like(ew.bitwise_not(_truth(x)), x)


def _bits_only(name, *xs):
    for x in xs:
        if x.dtype != dtypes.bool_ and not dtypes.is_integer(x.dtype):
            _no_loop(name, x.dtype)


def _bitwise(name, lax_fn):
    def f(x1, x2, /):
        a, b = promote_and_broadcast(name, x1, x2)
        _bits_only(name, a)
        return lax_fn(a, b)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise {name} of bool or integer operands, as numpy.{name}."
    return f


bitwise_and = _bitwise("bitwise_and", ew.bitwise_and)
bitwise_or = _bitwise("bitwise_or", ew.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", ew.bitwise_xor)


def bitwise_not(x, /):
    """~x: bitwise not of integers, logical not of bools, as numpy.invert."""
    x = asarray_any(x)
    _bits_only("bitwise_not", x)
    return ew.bitwise_not(x)


invert = bitwise_invert = bitwise_not


def _shift_args(name, x1, x2):
    a, b = promote_and_broadcast(name, x1, x2)
    _bits_only(name, a)
    if a.dtype == dtypes.bool_:  # jax.numpy shifts bools in int32 (NumPy: int8)
        a, b = ew.convert_element_type(a, dtypes.int32), ew.convert_element_type(b, dtypes.int32)
    return a, b


def left_shift(x1, x2, /):
    """x1 << x2, as numpy.left_shift (shifting by the bit width or more gives 0)."""
    return ew.shift_left(*_shift_args("left_shift", x1, x2))


def right_shift(x1, x2, /):
    """x1 >> x2, as numpy.right_shift: arithmetic for signed integers, logical for unsigned ones."""
    a, b = _shift_args("right_shift", x1, x2)
    if np.dtype(a.dtype).kind == "u":
        return ew.shift_right_logical(a, b)
    return ew.shift_right_arithmetic(a, b)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


def bitwise_count(x, /):
    """The number of 1 bits in |x| (uint8), as numpy.bitwise_count."""
    x = asarray_any(x)
    _bits_only("bitwise_count", x)
    if x.dtype == dtypes.bool_:
        return ew.convert_element_type(x, dtypes.uint8)
    if np.dtype(x.dtype).kind == "i":
        x = ew.convert_element_type(ew.abs(x), np.dtype(f"u{x.dtype.itemsize}"))  # |INT_MIN| wraps right
    return ew.convert_element_type(ew.population_count(x), dtypes.uint8)


# --- complex numbers ------------------------------------------------------------------------------

def real(val, /):
    """The real part (x itself for real input), as numpy.real."""
    x = asarray_any(val)
    return ew.real(x) if dtypes.is_complex(x.dtype) else x


def imag(val, /):
    """The imaginary part (zeros of x's dtype for real input), as numpy.imag."""
    x = asarray_any(val)
    return ew.imag(x) if dtypes.is_complex(x.dtype) else ew.zeros_like(x)


def conjugate(x, /):
    """The complex conjugate (x itself for real input, bool included, as in jax.numpy)."""
    x = asarray_any(x)
    return ew.conj(x) if dtypes.is_complex(x.dtype) else x


conj = conjugate


def angle(z, deg=False):
    """The argument of complex z (0 or pi for real z), in radians or degrees, as numpy.angle."""
    z = asarray_any(z)
    if dtypes.is_complex(z.dtype):
        out = ew.atan2(ew.imag(z), ew.real(z))
    else:  # as jax.numpy: integers, bools and 0-d floats in the default float dtype, strongly typed
        x = _default_inexact(z)
        if z.ndim == 0:
            x = ew.convert_element_type(x, dtypes.defaults.float_, False)
        out = ew.atan2(ew.zeros_like(x), x)
    return out * (180 / math.pi) if deg else out


def iscomplexobj(x) -> bool:
    """Whether x has a complex dtype (whatever its values), as numpy.iscomplexobj."""
    dt = getattr(x, "dtype", None)
    if dt is None:
        dt = asarray_any(x).dtype
    return dtypes.is_complex(dt)


def isrealobj(x) -> bool:
    """Whether x does not have a complex dtype, as numpy.isrealobj."""
    return not iscomplexobj(x)


def iscomplex(x, /):
    """True where the imaginary part is nonzero, as numpy.iscomplex."""
    x = asarray_any(x)
    if not dtypes.is_complex(x.dtype):
        return _weak_like(_const_bool(x, False), x)
    im = ew.imag(x)
    return _weak_like(ew.ne(im, ew.zeros_like(im)), x)


def isreal(x, /):
    """True where the imaginary part is zero, as numpy.isreal."""
    return logical_not(iscomplex(x))


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN -> `nan`, +inf -> `posinf` (default: the largest finite value), -inf -> `neginf` (default:
    the most negative one); for complex input, in each part. As numpy.nan_to_num."""
    x = asarray_any(x)
    if dtypes.is_complex(x.dtype):
        parts = [nan_to_num(p, nan=nan, posinf=posinf, neginf=neginf) for p in (ew.real(x), ew.imag(x))]
        return ew.complex(*parts)
    if not dtypes.is_float(x.dtype):
        return x
    info = _finfo(x.dtype)
    pos = float(info.max) if posinf is None else posinf
    neg = float(info.min) if neginf is None else neginf

    def const(v):
        return full(x.shape, v, x.dtype)
    out = ew.select(isnan(x), const(nan), x)
    out = ew.select(ew.eq(x, const(np.inf)), const(pos), out)
    return ew.select(ew.eq(x, const(-np.inf)), const(neg), out)


def _finfo(dt):
    try:
        return np.finfo(dt)
    except (TypeError, ValueError):  # bfloat16 lives in ml_dtypes
        import ml_dtypes
        return ml_dtypes.finfo(dt)


# --- special functions (funcgrad.scipy.special builds on these) -----------------------------------

def _special(name, lax_fn, doc: str):
    def f(x, /):
        x = asarray_any(x)
        if dtypes.is_complex(x.dtype):
            raise TypeError(f"{name}: complex input is not supported")
        return lax_fn(_to_inexact(x))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc + " Integer input is computed in the default float dtype; complex input is a TypeError."
    return f


erf = _special("erf", sp.erf, "The error function 2/sqrt(pi) * integral of exp(-t**2) from 0 to x, as "
               "scipy.special.erf.")
erfc = _special("erfc", sp.erfc, "The complementary error function 1 - erf(x), accurate where erf(x) is near 1, "
                "as scipy.special.erfc.")
erfinv = _special("erfinv", sp.erf_inv, "The inverse error function on [-1, 1] (+-inf at +-1, NaN outside), as "
                  "scipy.special.erfinv.")
gammaln = _special("gammaln", sp.lgamma, "log |Gamma(x)| (inf at 0 and the negative integers), as "
                   "scipy.special.gammaln.")
digamma = _special("digamma", _lax_digamma, "The digamma function psi(x) = d/dx log Gamma(x), as "
                   "jax.scipy.special.digamma (also named psi): NaN at 0 and the negative integers.")
