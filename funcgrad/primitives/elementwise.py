"""Elementwise primitives: unary math, binary arithmetic, comparisons, select, dtype conversion.

Operands of a binary primitive share one shape and dtype (funcgrad.numpy does promotion and
broadcasting). Derivatives follow JAX's conventions, including at kinks (max/min split ties evenly).
"""
from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from ._util import check_dtype, check_same, elementwise_batch, type_error


# --- unary ----------------------------------------------------------------------------------------

def _unary_rule(op: str, kinds: str):
    def rule(x: ShapedArray, **params) -> ShapedArray:
        check_dtype(op, x, kinds)
        return x
    return rule


def unary(name: str, impl, deriv, kinds: str = "fc", codegen: str | None = None) -> Primitive:
    """A unary elementwise card from its derivative f'(x) written as deriv(ans, x).

    The Jacobian is diagonal, so the jvp (t * f'(x)) and the vjp (g * f'(x)) share the formula.
    """
    p = Primitive(name, impl=impl, abstract_eval=_unary_rule(name, kinds),
                  jvp=[lambda t, ans, x: t * deriv(ans, x)],
                  vjp=[lambda g, ans, x: g * deriv(ans, x)],
                  codegen=codegen)
    p.batch = elementwise_batch(p)
    return p


def _logistic_impl(xp):
    def f(x):
        return (xp.tanh(x * 0.5) + 1) * 0.5  # stable for large |x|, unlike 1 / (1 + exp(-x))
    return f


def _rsqrt_impl(xp):
    return lambda x: 1 / xp.sqrt(x)


neg_p = unary("neg", lambda xp: xp.negative, lambda ans, x: -1, "ifc", codegen="(-{0})")
exp_p = unary("exp", lambda xp: xp.exp, lambda ans, x: ans)
log_p = unary("log", lambda xp: xp.log, lambda ans, x: 1 / x)
log1p_p = unary("log1p", lambda xp: xp.log1p, lambda ans, x: 1 / (x + 1))
expm1_p = unary("expm1", lambda xp: xp.expm1, lambda ans, x: ans + 1)
tanh_p = unary("tanh", lambda xp: xp.tanh, lambda ans, x: 1 - ans * ans)
logistic_p = unary("logistic", _logistic_impl, lambda ans, x: ans * (1 - ans))
sin_p = unary("sin", lambda xp: xp.sin, lambda ans, x: cos(x))
cos_p = unary("cos", lambda xp: xp.cos, lambda ans, x: -sin(x))
sqrt_p = unary("sqrt", lambda xp: xp.sqrt, lambda ans, x: 0.5 / ans)
rsqrt_p = unary("rsqrt", _rsqrt_impl, lambda ans, x: -0.5 * ans / x)


def _abs_rule(x: ShapedArray) -> ShapedArray:
    check_dtype("abs", x, "ifc")
    if dtypes.is_complex(x.dtype):
        return x.update(dtype=dtypes.float32 if x.dtype == dtypes.complex64 else dtypes.float64)
    return x


def _abs_deriv(ans, x):
    if dtypes.is_complex(x.dtype):
        raise TypeError("abs: derivatives of abs on complex input are not supported yet; "
                        "write it as sqrt(real**2 + imag**2)")
    return sign(x)


abs_p = Primitive("abs", impl=lambda xp: xp.abs, abstract_eval=_abs_rule,
                  jvp=[lambda t, ans, x: t * _abs_deriv(ans, x)],
                  vjp=[lambda g, ans, x: g * _abs_deriv(ans, x)])
abs_p.batch = elementwise_batch(abs_p)

sign_p = Primitive("sign", impl=lambda xp: xp.sign, abstract_eval=_unary_rule("sign", "ifc"),
                   jvp=[None], vjp=[None])
sign_p.batch = elementwise_batch(sign_p)

stop_gradient_p = Primitive("stop_gradient", impl=lambda xp: (lambda x: x),
                            abstract_eval=lambda x: x, jvp=[None], vjp=[None])
stop_gradient_p.batch = elementwise_batch(stop_gradient_p)


# --- binary ---------------------------------------------------------------------------------------

def _binary_rule(op: str, kinds: str):
    def rule(x: ShapedArray, y: ShapedArray, **params) -> ShapedArray:
        check_same(op, x, y)
        check_dtype(op, x, kinds)
        return ShapedArray(x.shape, x.dtype, x.weak_type and y.weak_type)
    return rule


def binary(name: str, impl, jvp, vjp, kinds: str = "ifc", codegen: str | None = None) -> Primitive:
    p = Primitive(name, impl=impl, abstract_eval=_binary_rule(name, kinds), jvp=jvp, vjp=vjp,
                  codegen=codegen)
    p.batch = elementwise_batch(p)
    return p


def _int_div_impl(xp):
    def div(x, y):
        if x.dtype.kind in "iu":  # C semantics: round toward zero
            q = xp.floor_divide(x, y)
            return q + ((q < 0) & (q * y != x)).astype(x.dtype)
        return xp.true_divide(x, y)
    return div


def _replace_zero(x):
    return select(x == 0, ones_like(x), x)


def _balanced_eq(x, z, y):
    """1 where x alone attains z, 1/2 where x and y tie, 0 elsewhere (JAX's rule for max/min)."""
    eq_x = (x == z).astype(z.dtype)
    eq_y = (y == z).astype(z.dtype)
    return eq_x / (1 + eq_y)


add_p = binary("add", lambda xp: xp.add, [lambda t, ans, x, y: t, lambda t, ans, x, y: t],
               [lambda g, ans, x, y: g, lambda g, ans, x, y: g], codegen="({0} + {1})")
sub_p = binary("sub", lambda xp: xp.subtract, [lambda t, ans, x, y: t, lambda t, ans, x, y: -t],
               [lambda g, ans, x, y: g, lambda g, ans, x, y: -g], codegen="({0} - {1})")
mul_p = binary("mul", lambda xp: xp.multiply, [lambda t, ans, x, y: t * y, lambda t, ans, x, y: x * t],
               [lambda g, ans, x, y: g * y, lambda g, ans, x, y: x * g], codegen="({0} * {1})")
div_p = binary("div", _int_div_impl,
               [lambda t, ans, x, y: t / y, lambda t, ans, x, y: -t * ans / y],
               [lambda g, ans, x, y: g / y, lambda g, ans, x, y: -g * ans / y])
pow_p = binary("pow", lambda xp: xp.power,
               [lambda t, ans, x, y: t * _pow_dx(x, y), lambda t, ans, x, y: t * log(_replace_zero(x)) * ans],
               [lambda g, ans, x, y: g * _pow_dx(x, y), lambda g, ans, x, y: g * log(_replace_zero(x)) * ans])
max_p = binary("max", lambda xp: xp.maximum,
               [lambda t, ans, x, y: t * _balanced_eq(x, ans, y), lambda t, ans, x, y: t * _balanced_eq(y, ans, x)],
               [lambda g, ans, x, y: g * _balanced_eq(x, ans, y), lambda g, ans, x, y: g * _balanced_eq(y, ans, x)],
               kinds="bifc")
min_p = binary("min", lambda xp: xp.minimum,
               [lambda t, ans, x, y: t * _balanced_eq(x, ans, y), lambda t, ans, x, y: t * _balanced_eq(y, ans, x)],
               [lambda g, ans, x, y: g * _balanced_eq(x, ans, y), lambda g, ans, x, y: g * _balanced_eq(y, ans, x)],
               kinds="bifc")


def _pow_dx(x, y):
    # y * x**(y-1), defined as 0 where y == 0 (so d/dx x**0 = 0 even at x = 0).
    return select(y == 0, zeros_like(x), y * pow(x, y - 1))


def _integer_pow_rule(x: ShapedArray, *, y: int) -> ShapedArray:
    check_dtype("integer_pow", x, "ifc")
    if not isinstance(y, (int, np.integer)):
        type_error("integer_pow", f"exponent must be a Python int, got {type(y).__name__}")
    if y < 0 and dtypes.is_integer(x.dtype):
        type_error("integer_pow", f"negative exponent {y} for integer dtype {x.dtype}")
    return x


def _integer_pow_d(x, y):
    return zeros_like(x) if y == 0 else y * integer_pow(x, y - 1)


def _integer_pow_impl(xp):
    def f(x, *, y):
        if y == 2:
            return x * x
        return xp.power(x, y)
    return f


integer_pow_p = Primitive("integer_pow", impl=_integer_pow_impl, abstract_eval=_integer_pow_rule,
                          jvp=[lambda t, ans, x, *, y: t * _integer_pow_d(x, y)],
                          vjp=[lambda g, ans, x, *, y: g * _integer_pow_d(x, y)])
integer_pow_p.batch = elementwise_batch(integer_pow_p)


# --- comparisons and select -----------------------------------------------------------------------

def _compare_rule(op: str):
    def rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
        check_same(op, x, y)
        check_dtype(op, x, "bifc")  # complex compares lexicographically, as in NumPy
        return ShapedArray(x.shape, dtypes.bool_, False)
    return rule


def compare(name: str, impl, codegen: str) -> Primitive:
    p = Primitive(name, impl=impl, abstract_eval=_compare_rule(name), jvp=[None, None],
                  vjp=[None, None], differentiable=False, weak_type=lambda w, p: False,
                  codegen=codegen)
    p.batch = elementwise_batch(p)
    return p


eq_p = compare("eq", lambda xp: xp.equal, "({0} == {1})")
ne_p = compare("ne", lambda xp: xp.not_equal, "({0} != {1})")
lt_p = compare("lt", lambda xp: xp.less, "({0} < {1})")
le_p = compare("le", lambda xp: xp.less_equal, "({0} <= {1})")
gt_p = compare("gt", lambda xp: xp.greater, "({0} > {1})")
ge_p = compare("ge", lambda xp: xp.greater_equal, "({0} >= {1})")


def _select_rule(pred: ShapedArray, on_true: ShapedArray, on_false: ShapedArray) -> ShapedArray:
    if pred.dtype != dtypes.bool_:
        type_error("select", f"predicate must be bool, got {pred.dtype}")
    check_same("select", pred, on_true, on_false, dtype=False)
    check_same("select", on_true, on_false)
    return ShapedArray(on_true.shape, on_true.dtype, on_true.weak_type and on_false.weak_type)


select_p = Primitive(
    "select", impl=lambda xp: xp.where, abstract_eval=_select_rule,
    jvp=[None, lambda t, ans, p, a, b: select(p, t, zeros_like(t)),
         lambda t, ans, p, a, b: select(p, zeros_like(t), t)],
    vjp=[None, lambda g, ans, p, a, b: select(p, g, zeros_like(g)),
         lambda g, ans, p, a, b: select(p, zeros_like(g), g)],
    weak_type=lambda w, params: w[1] and w[2])
select_p.batch = elementwise_batch(select_p)


# --- dtype conversion -----------------------------------------------------------------------------

def _convert_rule(x: ShapedArray, *, new_dtype, weak_type: bool = False) -> ShapedArray:
    return ShapedArray(x.shape, new_dtype, weak_type)


def _convert_impl(xp):
    def f(x, *, new_dtype, weak_type=False):
        if x.dtype.kind == "c" and new_dtype.kind != "c":
            x = x.real
        return x.astype(new_dtype)
    return f


def _convert_t(t, ans, x, *, new_dtype, weak_type=False):
    if not dtypes.is_inexact(new_dtype):
        return None
    return convert_element_type(t, new_dtype, weak_type)


def _convert_g(g, ans, x, *, new_dtype, weak_type=False):
    if not dtypes.is_inexact(x.dtype):
        return None
    return convert_element_type(g, x.dtype, x.weak_type)


convert_element_type_p = Primitive(
    "convert_element_type", impl=_convert_impl, abstract_eval=_convert_rule,
    jvp=[_convert_t], vjp=[_convert_g], weak_type=lambda w, params: params.get("weak_type", False))
convert_element_type_p.batch = elementwise_batch(convert_element_type_p)


# --- lax-style functions (strict: no promotion, no broadcasting) ----------------------------------

def neg(x): return neg_p.bind(x)
def exp(x): return exp_p.bind(x)
def log(x): return log_p.bind(x)
def log1p(x): return log1p_p.bind(x)
def expm1(x): return expm1_p.bind(x)
def tanh(x): return tanh_p.bind(x)
def logistic(x): return logistic_p.bind(x)
def sin(x): return sin_p.bind(x)
def cos(x): return cos_p.bind(x)
def sqrt(x): return sqrt_p.bind(x)
def rsqrt(x): return rsqrt_p.bind(x)
def abs(x): return abs_p.bind(x)  # noqa: A001 - lax name
def sign(x): return sign_p.bind(x)
def stop_gradient(x): return stop_gradient_p.bind(x)
def add(x, y): return add_p.bind(x, y)
def sub(x, y): return sub_p.bind(x, y)
def mul(x, y): return mul_p.bind(x, y)
def div(x, y): return div_p.bind(x, y)
def pow(x, y): return pow_p.bind(x, y)  # noqa: A001 - lax name
def max(x, y): return max_p.bind(x, y)  # noqa: A001 - lax name
def min(x, y): return min_p.bind(x, y)  # noqa: A001 - lax name
def integer_pow(x, y: int): return integer_pow_p.bind(x, y=int(y))
def eq(x, y): return eq_p.bind(x, y)
def ne(x, y): return ne_p.bind(x, y)
def lt(x, y): return lt_p.bind(x, y)
def le(x, y): return le_p.bind(x, y)
def gt(x, y): return gt_p.bind(x, y)
def ge(x, y): return ge_p.bind(x, y)
def select(pred, on_true, on_false): return select_p.bind(pred, on_true, on_false)


def convert_element_type(x, new_dtype, weak_type: bool = False):
    new_dtype = dtypes.canonicalize(new_dtype)
    if x.dtype == new_dtype and bool(x.weak_type) == bool(weak_type):
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=bool(weak_type))


def zeros_like(x):
    from .shape import full
    return full(x.shape, 0, x.dtype, weak_type=x.weak_type)


def ones_like(x):
    from .shape import full
    return full(x.shape, 1, x.dtype, weak_type=x.weak_type)
