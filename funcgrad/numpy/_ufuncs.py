"""Elementwise NumPy functions over the primitives, with NumPy's promotion and broadcasting.

dtype rules are NumPy 2's (NEP 50: Python scalars are weak) with funcgrad's one documented difference:
where NumPy would produce float64 from integer/bool data or from a Python float (true division, exp,
mean of integers, int array + 0.5), funcgrad produces the default float dtype (float32, or float64 after
`funcgrad.config.update("enable_x64", True)`); Python complex likewise gives the default complex dtype.
"""
from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..primitives import elementwise as ew
from ._promote import (asarray_any, broadcast_shapes, broadcast_to, is_python_scalar,
                       promote_and_broadcast, promote_args, result_dtype, scalar_array)


def _to_inexact(x):
    """Integers and bools become the default float dtype (NumPy: float64 or smaller)."""
    if dtypes.is_inexact(x.dtype):
        return x
    return ew.convert_element_type(x, dtypes.defaults.float_, x.weak_type)


def _float_unary(name, lax_fn):
    def f(x, /):
        return lax_fn(_to_inexact(asarray_any(x)))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise {name}, as numpy.{name}; integer input is computed in the default float dtype."
    return f


exp = _float_unary("exp", ew.exp)
log = _float_unary("log", ew.log)
log1p = _float_unary("log1p", ew.log1p)
expm1 = _float_unary("expm1", ew.expm1)
tanh = _float_unary("tanh", ew.tanh)
sin = _float_unary("sin", ew.sin)
cos = _float_unary("cos", ew.cos)
sqrt = _float_unary("sqrt", ew.sqrt)


def _bool_error(name, op):
    raise TypeError(f"{name}: the numpy boolean {name}{op} is not supported; convert the operand with "
                    ".astype(int) first")


def _binary(name, lax_fn, bool_fn=None, bool_ok=True):
    def f(x1, x2, /):
        a, b = promote_and_broadcast(name, x1, x2)
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
add = _binary("add", ew.add, bool_fn=ew.max)
subtract = _binary("subtract", ew.sub, bool_ok=False)
multiply = _binary("multiply", ew.mul, bool_fn=ew.min)
maximum = _binary("maximum", ew.max)
minimum = _binary("minimum", ew.min)


def _out_of_range_compare(name, x1, x2):
    """NumPy 2 compares an integer array with a Python int outside its dtype's range exactly (the
    answer is the same for every element) instead of raising OverflowError; so do we."""
    for scalar, other, flipped in ((x2, x1, False), (x1, x2, True)):
        if isinstance(scalar, int) and not isinstance(scalar, bool) and not is_python_scalar(other):
            other = asarray_any(other)
            dt, _ = result_dtype(other, scalar)
            if not dtypes.is_integer(dt) or not dtypes.is_integer(other.dtype):
                return None  # (a bool array promotes the int to int64 and may overflow, as in NumPy)
            info = np.iinfo(dt)
            if info.min <= scalar <= info.max:
                return None
            above = scalar > info.max  # the scalar exceeds every element
            op = {"less": "greater", "greater": "less", "less_equal": "greater_equal",
                  "greater_equal": "less_equal"}.get(name, name) if flipped else name
            # op(element, scalar) for every element:
            value = {"equal": False, "not_equal": True, "less": above, "less_equal": above,
                     "greater": not above, "greater_equal": not above}[op]
            from ..primitives.shape import full
            return full(other.shape, value, dtypes.bool_)
    return None


def _compare(name, lax_fn):
    def f(x1, x2, /):
        r = _out_of_range_compare(name, x1, x2)
        if r is not None:
            return r
        a, b = promote_and_broadcast(name, x1, x2)
        return lax_fn(a, b)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise {name} (a bool array) with NumPy broadcasting and promotion, as numpy.{name}."
    return f


equal = _compare("equal", ew.eq)
not_equal = _compare("not_equal", ew.ne)
less = _compare("less", ew.lt)
less_equal = _compare("less_equal", ew.le)
greater = _compare("greater", ew.gt)
greater_equal = _compare("greater_equal", ew.ge)


def true_divide(x1, x2, /):
    """x1 / x2 with NumPy semantics: integer and bool operands divide in the default float dtype."""
    args = [a if is_python_scalar(a) else asarray_any(a) for a in (x1, x2)]
    dt, weak = result_dtype(*args)
    if not dtypes.is_inexact(dt):
        # NumPy divides integers in a float loop, so a Python int need not fit the integer dtype.
        dt = dtypes.defaults.float_
        args = [scalar_array(a, dt, True) if is_python_scalar(a) else _to_inexact(a) for a in args]
    a, b = promote_and_broadcast("true_divide", *args)
    return ew.div(a, b)


divide = true_divide


def power(x1, x2, /):
    """x1 ** x2. A Python int exponent lowers to integer_pow (exact, and cheap to differentiate)."""
    if isinstance(x2, int) and not isinstance(x2, bool) and not is_python_scalar(x1):
        x = asarray_any(x1)
        dt, _ = result_dtype(x, x2)
        if dt == x.dtype and dt != dtypes.bool_:
            if dtypes.is_integer(dt):
                info = np.iinfo(dt)
                if not info.min <= x2 <= info.max:
                    raise OverflowError(f"Python integer {x2} out of bounds for {dt}")
                if x2 < 0:
                    raise ValueError("power: Integers to negative integer powers are not allowed.")
            return ew.integer_pow(x, x2)
    a, b = promote_and_broadcast("power", x1, x2)
    if a.dtype == dtypes.bool_:  # NumPy has no bool loop for power: it computes in int8
        a, b = ew.convert_element_type(a, dtypes.int8), ew.convert_element_type(b, dtypes.int8)
    return ew.pow(a, b)


def negative(x, /):
    """-x, as numpy.negative (unsigned integers wrap around; bool raises TypeError as in NumPy)."""
    x = asarray_any(x)
    if x.dtype == dtypes.bool_:
        _bool_error("negative", ", the `-` operator,")
    return ew.neg(x)


def positive(x, /):
    """+x, as numpy.positive (bool raises TypeError as in NumPy)."""
    x = asarray_any(x)
    if x.dtype == dtypes.bool_:
        _bool_error("positive", ", the `+` operator,")
    return x


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
    return ew.sign(x)


def logistic(x, /):
    return ew.logistic(_to_inexact(asarray_any(x)))


def reciprocal(x, /):
    """1/x in x's dtype, as numpy.reciprocal (integers divide with truncation; bool gives int8)."""
    x = asarray_any(x)
    if x.dtype == dtypes.bool_:
        x = ew.convert_element_type(x, dtypes.int8)
    return ew.div(ew.ones_like(x), x)


def square(x, /):
    """x * x, as numpy.square (bool gives int8, as NumPy's int8 loop)."""
    x = asarray_any(x)
    if x.dtype == dtypes.bool_:
        x = ew.convert_element_type(x, dtypes.int8)
    return ew.integer_pow(x, 2)


def rsqrt(x, /):
    return ew.rsqrt(_to_inexact(asarray_any(x)))


def where(condition, x=None, y=None, /):
    """Elements of x where condition holds, else of y; all three broadcast together."""
    if x is None or y is None:
        if x is None and y is None:
            from ._manipulation import nonzero
            return nonzero(condition)
        raise ValueError("where: either both or neither of x and y should be given")
    c = asarray_any(condition)
    if c.dtype != dtypes.bool_:
        c = ew.ne(c, ew.zeros_like(c))
    a, b = promote_args("where", x, y)
    shape = broadcast_shapes(c.shape, a.shape, b.shape, op="where")
    return ew.select(broadcast_to(c, shape), broadcast_to(a, shape), broadcast_to(b, shape))

