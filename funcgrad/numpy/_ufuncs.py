"""Elementwise NumPy functions over the primitives, with NumPy's promotion and broadcasting."""
from __future__ import annotations

from ..core import dtypes
from ..primitives import elementwise as ew
from ._promote import asarray_any, broadcast_shapes, broadcast_to, promote_and_broadcast


def _to_inexact(x):
    """Integers and bools become the default float dtype, as NumPy's float ufuncs do."""
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


def _binary(name, lax_fn):
    def f(x1, x2, /):
        a, b = promote_and_broadcast(name, x1, x2)
        return lax_fn(a, b)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise {name} with NumPy broadcasting and type promotion, as numpy.{name}."
    return f


add = _binary("add", ew.add)
subtract = _binary("subtract", ew.sub)
multiply = _binary("multiply", ew.mul)
maximum = _binary("maximum", ew.max)
minimum = _binary("minimum", ew.min)
equal = _binary("equal", ew.eq)
not_equal = _binary("not_equal", ew.ne)
less = _binary("less", ew.lt)
less_equal = _binary("less_equal", ew.le)
greater = _binary("greater", ew.gt)
greater_equal = _binary("greater_equal", ew.ge)


def true_divide(x1, x2, /):
    """x1 / x2 with NumPy semantics: integer operands divide in the default float dtype."""
    a, b = promote_and_broadcast("true_divide", x1, x2)
    return ew.div(_to_inexact(a), _to_inexact(b))


divide = true_divide


def power(x1, x2, /):
    """x1 ** x2. A Python int exponent lowers to integer_pow (exact, and cheap to differentiate)."""
    if isinstance(x2, int) and not isinstance(x2, bool):
        x = asarray_any(x1)
        if x2 >= 0 or dtypes.is_inexact(x.dtype):
            return ew.integer_pow(x, x2)
    a, b = promote_and_broadcast("power", x1, x2)
    return ew.pow(a, b)


def negative(x, /):
    x = asarray_any(x)
    return ew.neg(x)


def positive(x, /):
    return asarray_any(x)


def absolute(x, /):
    return ew.abs(asarray_any(x))


abs = absolute  # noqa: A001 - NumPy name


def sign(x, /):
    return ew.sign(asarray_any(x))


def logistic(x, /):
    return ew.logistic(_to_inexact(asarray_any(x)))


def reciprocal(x, /):
    x = asarray_any(x)
    return true_divide(1, x) if not dtypes.is_integer(x.dtype) else ew.div(ew.ones_like(x), x)


def square(x, /):
    return ew.integer_pow(asarray_any(x), 2)


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
    a, b = promote_and_broadcast("where", x, y)
    shape = broadcast_shapes(c.shape, a.shape, op="where")
    return ew.select(broadcast_to(c, shape), broadcast_to(a, shape), broadcast_to(b, shape))
