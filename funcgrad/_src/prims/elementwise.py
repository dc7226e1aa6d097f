"""Elementwise primitives: math, arithmetic, rounding, bit operations, comparisons, select, complex
parts and dtype conversion.

Operands of an n-ary primitive share one shape and dtype (funcgrad.numpy does promotion and
broadcasting). Derivatives follow JAX's conventions, including at kinks (max/min split ties evenly)
and for complex numbers: a jvp rule is the (real-)linear map t -> J t, and a vjp rule its transpose
under the bilinear pairing <u, v> = Re(sum(u * v)), without conjugation. So a holomorphic function's
jvp and vjp share one formula, t * f'(x) and g * f'(x); real(x) has vjp complex(g, 0), conj(x) has
vjp conj(g), and |x| has jvp real(t * conj(x) / |x|) and vjp g * conj(x) / |x|.
Rounding, bit operations and predicates have zero derivative (their rules are None).

Conventions per face: where JAX and PyTorch differ at a kink, the card keeps one formula and takes the
convention as a parameter `kink` that the binding face chooses ("jax", the default and left out of the
params so jaxprs print as JAX's, or "torch"): abs (JAX selects x >= 0, torch uses sign(x) and 0 at a
complex 0), hypot and atan2 at the origin, pow's derivatives at y == 0 and x == 0, elu's branch at 0, the ties
of max / min / clamp (JAX splits a max tie evenly and gives a clamp tie to no operand; torch's clamp with
Tensor bounds and fmax have forward formulas that give a tie to another operand than their backward
formulas do, and the torch rules reproduce both), nextafter (JAX defines no derivative and raises; torch's
is [x != y] in x, 0 in y); scipy_special's entr below 0. A param is part of the equation, so jit's cache,
vmap's batch rule and the Tensor engine's recorded nodes carry it.
Smooth functions whose naive formula has an internal kink (logaddexp, logaddexp2, hypot; softplus and
log_sigmoid are logaddexp with 0) are cards whose rules are smooth to every order: d logaddexp/dx =
exp(x - ans), d hypot/dx = x / ans, written with these ops, so grad of grad is right at 0 too.
"""
from __future__ import annotations

import enum
import math

import numpy as np

from ..core import dtypes
from ..core.array import Array, ArrayBase, to_array
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from ..core.trace import Tracer
from ._util import check_dtype, check_same, type_error
from .shape import elementwise_batch
from .shape import full, broadcast_in_dim

_LN2, _LN10 = math.log(2.0), math.log(10.0)


# --- card builders --------------------------------------------------------------------------------

def _unary_rule(op: str, kinds: str):
    def rule(x: ShapedArray, **params) -> ShapedArray:
        check_dtype(op, x, kinds)
        return x
    return rule


def _binary_rule(op: str, kinds: str):
    def rule(x: ShapedArray, y: ShapedArray, **params) -> ShapedArray:
        check_same(op, x, y)
        check_dtype(op, x, kinds)
        return ShapedArray(x.shape, x.dtype, x.weak_type and y.weak_type)
    return rule


def _times(t, d):
    """t * d for a tangent or cotangent t and a derivative factor d. Usually d is an Array or tracer of
    t's shape and dtype and this is one mul bind (the derivative walks' hot path); anything else (a Python
    scalar factor, mixed weak types) goes through the operator's promotion."""
    c = d.__class__
    if c is t.__class__:
        if c is Array:
            a, b = d._buf, t._buf
            if a.shape == b.shape and a.dtype == b.dtype and d.weak_type == t.weak_type:
                return mul_p.bind(t, d)
        elif c is Tracer:
            a, b = d.aval, t.aval
            if a is b or (a.shape == b.shape and a.dtype == b.dtype and a.weak_type == b.weak_type):
                return mul_p.bind(t, d)
    return t * d


def _card(name, impl, rule, jvp, vjp, **kw) -> Primitive:
    p = Primitive(name, impl=impl, abstract_eval=rule, jvp=jvp, vjp=vjp, **kw)
    p.batch = elementwise_batch(p)
    return p


def unary(name: str, impl, deriv, kinds: str = "fc", codegen: str | None = None,
          onnx: str | None = None) -> Primitive:
    """A unary elementwise card from its derivative f'(x) written as deriv(ans, x).

    The Jacobian is diagonal, so the jvp (t * f'(x)) and the vjp (g * f'(x)) share the formula
    (for complex x too, when f is holomorphic: JAX's vjps do not conjugate).
    """
    return _card(name, impl, _unary_rule(name, kinds),
                 [lambda t, ans, x, **p: _times(t, deriv(ans, x))],
                 [lambda g, ans, x, **p: _times(g, deriv(ans, x))],
                 codegen=codegen, onnx=onnx)


def binary(name: str, impl, jvp, vjp, kinds: str = "ifc", codegen: str | None = None,
           onnx: str | None = None) -> Primitive:
    return _card(name, impl, _binary_rule(name, kinds), jvp, vjp, codegen=codegen, onnx=onnx)


def _diagonal(dx, dy) -> tuple[list, list]:
    """The jvp and vjp rules of a binary elementwise card from its partial derivatives dx(ans, x, y, **params) and
    dy(ans, x, y, **params): the Jacobian is diagonal, so both are the (co)tangent times the partial."""
    rules = [lambda c, ans, x, y, **p: _times(c, dx(ans, x, y, **p)),
             lambda c, ans, x, y, **p: _times(c, dy(ans, x, y, **p))]
    return rules, list(rules)


def binary_partials(name: str, impl, dx, dy, kinds: str = "f") -> Primitive:
    """A binary card from its partial derivatives dx(ans, x, y) and dy(ans, x, y)."""
    return binary(name, impl, *_diagonal(dx, dy), kinds)


def _kinked_rule(name: str, kinds: str):
    """The abstract rule of a binary card with a `kink` parameter ("jax", the default, or "torch"): the
    convention its derivative rules follow where JAX's and torch's differ."""
    shape = _binary_rule(name, kinds)

    def rule(x: ShapedArray, y: ShapedArray, *, kink: str = "jax") -> ShapedArray:
        _check_kink(name, kink)
        return shape(x, y)
    return rule


def _kinked_binary(name: str, kinds: str, impl, jvp, vjp) -> Primitive:
    """A binary card with a `kink` parameter (_kinked_rule) whose value, impl(xp)'s, does not depend on it."""
    def kinked_impl(xp):
        f = impl(xp)
        return lambda x, y, kink="jax": f(x, y)
    return _card(name, kinked_impl, _kinked_rule(name, kinds), jvp, vjp)


def nondiff(name: str, impl, nargs: int, kinds: str, out_dtype=None, codegen: str | None = None,
            rule=None, onnx: str | None = None) -> Primitive:
    """A card whose derivative is identically zero: rounding, bit operations, predicates.

    out_dtype: the result dtype when it is not the operands' (e.g. bool for predicates)."""
    if rule is None:
        base = _unary_rule(name, kinds) if nargs == 1 else _binary_rule(name, kinds)

        def rule(*avals, **params):
            out = base(*avals, **params)
            return out if out_dtype is None else ShapedArray(out.shape, out_dtype, False)
    kw = {}
    if out_dtype is not None:
        kw = {"differentiable": False, "weak_type": lambda w, p: False}
    return _card(name, impl, rule, [None] * nargs, [None] * nargs, codegen=codegen, onnx=onnx, **kw)


# --- unary math -----------------------------------------------------------------------------------

def _logistic_impl(xp):
    def f(x):
        if x.dtype.kind == "c":
            return 1 / (1 + xp.exp(-x))
        if x.dtype.itemsize == 2:  # float16, bfloat16: in float32, rounded once (torch's CPU kernel, XLA's)
            return f(x.astype(xp.float32)).astype(x.dtype)
        # 1 / (1 + exp(-x)) in one buffer: within 2 ulp of the true value wherever it is a normal number
        # (for x < 0, 1 + exp(-x) >= 2 loses nothing); where exp(-x) overflows the result is its limit 0,
        # so results below the smallest normal number (x < -87 in float32) flush to 0, as on XLA's CPU.
        r = xp.negative(x, out=xp.empty_like(x))
        xp.exp(r, out=r)
        xp.add(r, 1, out=r)
        return xp.reciprocal(r, out=r)
    return f


def _relu_impl(xp):
    """relu as one maximum with a cached 0-d zero (x.dtype.type(0) costs 0.2 us, half a 16-element maximum;
    NumPy takes a 0-d operand 0.15 us faster than a scalar). Which operand maximum gives on a tie of -0.0
    and 0.0 differs by dtype (NumPy's float16 loop keeps the first, its float32/64 loops the second), so the
    order giving each convention's zero (torch's: -0.0 stays -0.0; JAX's: 0.0) is found once per dtype."""
    orders: dict = {}  # dtype -> (zero, zero first for torch's kink, zero first for JAX's)

    def order(dt):
        z = xp.zeros((), dt)
        if hasattr(z, "flags") and hasattr(z.flags, "writeable"):
            try:
                z.flags.writeable = False  # (shared by every call: never written)
            except (AttributeError, ValueError):
                pass
        first = True
        if xp.dtype(dt).kind not in "biu":  # (floats, bfloat16: does z first keep -0.0?)
            try:
                first = bool(xp.signbit(xp.maximum(z, xp.asarray(-0.0, dt)).astype(xp.float32)))
            except TypeError:
                pass
        o = orders[dt] = (z, first, not first)
        return o

    def torch_kink(x):
        o = orders.get(x.dtype)
        if o is None:
            o = order(x.dtype)
        return xp.maximum(o[0], x) if o[1] else xp.maximum(x, o[0])

    def f(x, kink="jax"):
        if kink != "jax":
            return torch_kink(x)
        o = orders.get(x.dtype)
        if o is None:
            o = order(x.dtype)
        return xp.maximum(o[0], x) if o[2] else xp.maximum(x, o[0])
    f.torch_kink = torch_kink  # (the torch face's unrecorded fast path calls it without the keyword dispatch)
    return f


def _relu_rule(x: ShapedArray, *, kink: str = "jax") -> ShapedArray:
    check_dtype("relu", x, "iuf")
    _check_kink("relu", kink)
    return x


def _relu_d(g, ans, x, kink):
    """g where x > 0, else 0 (jax.nn.relu's rule: 0 at 0 and at NaN); with kink="torch" g where the result
    is not <= 0 (torch's threshold_backward: 0 at 0, g at NaN). A select, so an infinite or NaN g at a
    negative x still gives 0."""
    zero = zeros_like(g)
    return select(gt(x, zeros_like(x)), g, zero) if kink == "jax" else select(le(ans, zeros_like(ans)), zero, g)


def _rsqrt_impl(xp):
    return lambda x: 1 / xp.sqrt(x)


def _ufunc(name):
    return lambda xp: getattr(xp, name)


neg_p = unary("neg", _ufunc("negative"), lambda ans, x: -1, "ifc", codegen="(-{0})", onnx="Neg")
exp_p = unary("exp", _ufunc("exp"), lambda ans, x: ans, onnx="Exp")
exp2_p = unary("exp2", _ufunc("exp2"), lambda ans, x: ans * _LN2)
log_p = unary("log", _ufunc("log"), lambda ans, x: 1 / x, onnx="Log")
log2_p = unary("log2", _ufunc("log2"), lambda ans, x: (1 / _LN2) / x)
log10_p = unary("log10", _ufunc("log10"), lambda ans, x: (1 / _LN10) / x)
log1p_p = unary("log1p", _ufunc("log1p"), lambda ans, x: 1 / (x + 1))
expm1_p = unary("expm1", _ufunc("expm1"), lambda ans, x: ans + 1)
logistic_p = unary("logistic", _logistic_impl, lambda ans, x: ans * (1 - ans), onnx="Sigmoid")
# relu as one primitive, both faces' (jax.nn.relu, torch.relu, F.relu, nn.ReLU): max(x, 0) with NaN kept.
# `kink` picks the convention: "jax" gives 0.0 at -0.0 and derivative 0 at 0 and at NaN; "torch" gives -0.0
# at -0.0 and derivative 0 at 0, 1 at NaN.
relu_p = _card("relu", _relu_impl, _relu_rule,
               [lambda t, ans, x, kink="jax": _relu_d(t, ans, x, kink)],
               [lambda g, ans, x, kink="jax": _relu_d(g, ans, x, kink)], onnx="Relu")


# torch's clamp with number bounds as one primitive (bounds in params, numbers of x's dtype, or None):
# elements below lo become lo and above hi become hi (hi wins where lo > hi), an element equal to a bound
# keeps its own signed zero, NaN stays NaN and a NaN bound gives NaN everywhere; derivative 1 where
# lo <= x <= hi (bounds included, as torch's clamp backward) and 0 elsewhere, NaN included.
def _clamp_bounds_impl(xp):
    def f(x, *, lo, hi):
        r = x
        for bound, outside in ((lo, xp.less), (hi, xp.greater)):
            if bound is None:
                continue
            b = xp.asarray(bound, x.dtype)
            r = xp.where(outside(r, b), b, r) if bound == bound else xp.full_like(x, b)
        return r if r is not x else x.copy()
    return f


def _clamp_bounds_mask(x, lo, hi):
    inside = None
    for bound, rule in ((lo, ge), (hi, le)):
        if bound is not None:
            m = rule(x, full(x.shape, bound, x.dtype))
            inside = m if inside is None else bitwise_and(inside, m)
    return convert_element_type(inside, x.dtype)


clamp_bounds_p = _card("clamp_bounds", _clamp_bounds_impl, _unary_rule("clamp_bounds", "iuf"),
                       [lambda t, ans, x, *, lo, hi: _times(t, _clamp_bounds_mask(x, lo, hi))],
                       [lambda g, ans, x, *, lo, hi: _times(g, _clamp_bounds_mask(x, lo, hi))])


def clamp_bounds(x, lo=None, hi=None):
    """torch.clamp(x, lo, hi) for number bounds (see clamp_bounds_p)."""
    return clamp_bounds_p.bind(x, lo=lo, hi=hi)


sin_p = unary("sin", _ufunc("sin"), lambda ans, x: cos(x), onnx="Sin")
cos_p = unary("cos", _ufunc("cos"), lambda ans, x: -sin(x), onnx="Cos")
tan_p = unary("tan", _ufunc("tan"), lambda ans, x: 1 + ans * ans, onnx="Tan")
asin_p = unary("asin", _ufunc("arcsin"), lambda ans, x: rsqrt(1 - x * x), onnx="Asin")
acos_p = unary("acos", _ufunc("arccos"), lambda ans, x: -rsqrt(1 - x * x), onnx="Acos")
atan_p = unary("atan", _ufunc("arctan"), lambda ans, x: 1 / (1 + x * x), onnx="Atan")
sinh_p = unary("sinh", _ufunc("sinh"), lambda ans, x: cosh(x), onnx="Sinh")
cosh_p = unary("cosh", _ufunc("cosh"), lambda ans, x: sinh(x), onnx="Cosh")
tanh_p = unary("tanh", _ufunc("tanh"), lambda ans, x: 1 - ans * ans, onnx="Tanh")
asinh_p = unary("asinh", _ufunc("arcsinh"), lambda ans, x: rsqrt(x * x + 1), onnx="Asinh")


def _acosh_d(ans, x):
    """acosh'(x) = 1 / sqrt(x^2 - 1); for real x as the product rsqrt(|x| - 1) rsqrt(|x| + 1): accurate near
    1 (x * x - 1 loses up to 8 digits there), no overflow for large x, and its own derivative at x = +-1 is
    the limit -+inf (rsqrt'(0) rsqrt(2) + rsqrt(0) rsqrt'(2); the derivative of (x - 1)(x + 1) under rsqrt
    has 0 * inf = NaN there), the values JAX and torch give (also at x <= -1, outside the domain);
    complex x keeps 1 / sqrt((x - 1)(x + 1)), the branch of JAX's 1 / sqrt(x^2 - 1)."""
    if dtypes.is_complex(x.dtype):
        return rsqrt((x - 1) * (x + 1))
    a = abs(x)
    return rsqrt(a - 1) * rsqrt(a + 1)


acosh_p = unary("acosh", _ufunc("arccosh"), _acosh_d, onnx="Acosh")
atanh_p = unary("atanh", _ufunc("arctanh"), lambda ans, x: 1 / ((1 - x) * (1 + x)), onnx="Atanh")
sqrt_p = unary("sqrt", _ufunc("sqrt"), lambda ans, x: 0.5 / ans, onnx="Sqrt")
rsqrt_p = unary("rsqrt", _rsqrt_impl, lambda ans, x: -0.5 * ans / x)
cbrt_p = unary("cbrt", _ufunc("cbrt"), lambda ans, x: integer_pow(ans, -2) * (1 / 3), "f")
square_p = unary("square", _ufunc("square"), lambda ans, x: 2 * x, "ifc")


def _abs_rule(x: ShapedArray, *, kink: str = "jax") -> ShapedArray:
    check_dtype("abs", x, "ifc")
    _check_kink("abs", kink)
    if dtypes.is_complex(x.dtype):
        return x.update(dtype=_real_of(x.dtype))
    return x


# Conventions beyond the two faces' a card accepts: pow's "jax_int" is JAX's rule for an integer exponent
# (jax.lax.pow(x, int array), whose exponent the JAX face converts to x's dtype before binding); its
# "torch_scalar" is torch's for a number exponent (pow(Tensor, Scalar): sqrt at 0.5 and rsqrt at -0.5,
# in the value and in the derivative's x ** (y - 1)).
_MORE_KINKS = {"pow": ("jax_int", "torch_scalar")}


def _check_kink(op: str, kink) -> None:
    more = _MORE_KINKS.get(op, ())
    if kink not in ("jax", "torch") + more:
        type_error(op, f"kink must be {', '.join(repr(k) for k in ('jax',) + more)} or 'torch', got {kink!r}")


def _bind_kinked(p: Primitive, kink: str, *args):
    """p.bind(*args), with the kink parameter only when it is not the default "jax" (checked)."""
    if kink == "jax":
        return p.bind(*args)
    _check_kink(p.name, kink)
    return p.bind(*args, kink=kink)


def _unit_conj(ans, x, kink):
    """conj(x) / |x|: the derivative of |x| for complex x, as a complex array. At x == 0 JAX's rule
    divides by 1 (so it is conj(x), whose own derivative is not 0), torch's sgn is 0 there."""
    u = conj(x) / convert_element_type(_replace_zero(ans), x.dtype)
    return u if kink == "jax" else select(eq(ans, zeros_like(ans)), zeros_like(u), u)


def _abs_d(x, kink):
    """d|x|/dx for real x: JAX's select(x >= 0, 1, -1) (1 at 0, so |x|**2 has second derivative 2 there),
    torch's sign(x) (0 at 0)."""
    if kink == "torch":
        return sign(x)
    one = ones_like(x)
    return select(ge(x, zeros_like(x)), one, neg(one))


def _abs_jvp(t, ans, x, *, kink="jax"):
    if dtypes.is_complex(x.dtype):
        return real(t * _unit_conj(ans, x, kink))  # d|x| = Re(conj(x) dx) / |x|
    return _times(t, _abs_d(x, kink))


def _abs_vjp(g, ans, x, *, kink="jax"):
    if dtypes.is_complex(x.dtype):
        return convert_element_type(g, x.dtype) * _unit_conj(ans, x, kink)
    return _times(g, _abs_d(x, kink))


def _abs_impl(xp):
    f = xp.abs
    return lambda x, kink="jax": f(x)


abs_p = _card("abs", _abs_impl, _abs_rule, [_abs_jvp], [_abs_vjp])
sign_p = nondiff("sign", _ufunc("sign"), 1, "ifc", onnx="Sign")
stop_gradient_p = _card("stop_gradient", lambda xp: (lambda x: x), lambda x: x, [None], [None], onnx="Identity")


# --- rounding and predicates (zero derivative) ----------------------------------------------------

class RoundingMethod(enum.IntEnum):
    """How lax.round breaks ties: AWAY_FROM_ZERO (C's round) or TO_NEAREST_EVEN (numpy.round)."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1

    def __repr__(self) -> str:  # (as the jaxpr printer shows the parameter)
        return self.name

    __str__ = __repr__


def _round_impl(xp):
    def f(x, *, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
        if rounding_method == RoundingMethod.TO_NEAREST_EVEN:
            return xp.rint(x)
        r = xp.trunc(x)  # x - r is exact, so the tie test is too
        return xp.where(xp.abs(x - r) >= 0.5, r + xp.sign(x), r).astype(x.dtype)
    return f


def _round_rule(x: ShapedArray, *, rounding_method) -> ShapedArray:
    check_dtype("round", x, "f")
    if rounding_method not in (0, 1):
        type_error("round", f"rounding_method must be a RoundingMethod, got {rounding_method!r}")
    return x


def _nextafter_d(which: int):
    """nextafter(x, y) is x moved one ulp toward y. JAX defines no derivative (differentiating raises
    NotImplementedError, as jax.lax.nextafter's); torch's (kink="torch") is 1 in x where x != y (0 at
    x == y, where the result is y itself) and 0 in y."""
    def rule(t, ans, x, y, kink="jax"):
        if kink == "jax":
            raise NotImplementedError("Differentiation rule for 'nextafter' not implemented (JAX defines none; "
                                      "apply stop_gradient to its operands to treat the result as a constant)")
        return _times(t, convert_element_type(ne(x, y), t.dtype)) if which == 0 else zeros_like(t)
    return rule


floor_p = nondiff("floor", _ufunc("floor"), 1, "f", onnx="Floor")
ceil_p = nondiff("ceil", _ufunc("ceil"), 1, "f", onnx="Ceil")
round_p = nondiff("round", _round_impl, 1, "f", rule=_round_rule)
nextafter_p = _kinked_binary("nextafter", "f", lambda xp: xp.nextafter, [_nextafter_d(0), _nextafter_d(1)],
                             [_nextafter_d(0), _nextafter_d(1)])
is_finite_p = nondiff("is_finite", _ufunc("isfinite"), 1, "f", out_dtype=dtypes.bool_)


# --- bit operations (bool and integer operands; zero derivative) ----------------------------------

def _unsigned_of(dt) -> np.dtype:
    return np.dtype(f"u{np.dtype(dt).itemsize}")


def _signed_of(dt) -> np.dtype:
    return np.dtype(f"i{np.dtype(dt).itemsize}")


def _shift_impl(kind: str):
    """XLA's shifts: an amount outside [0, bits) shifts every bit out (sign bits for arithmetic)."""
    def factory(xp):
        def f(x, y):
            x, y = xp.asarray(x), xp.asarray(y)
            bits = x.dtype.itemsize * 8
            ok = (y >= 0) & (y < bits)
            s = xp.where(ok, y, 0).astype(x.dtype)
            if kind == "left":
                out, fill = xp.left_shift(x, s), 0
            elif kind == "arithmetic":
                xs, ss = x.view(_signed_of(x.dtype)), s.view(_signed_of(x.dtype))
                out = xp.right_shift(xs, ss).view(x.dtype)
                fill = xp.where(xs < 0, -1, 0).astype(xs.dtype).view(x.dtype)
            else:
                xu, su = x.view(_unsigned_of(x.dtype)), s.view(_unsigned_of(x.dtype))
                out, fill = xp.right_shift(xu, su).view(x.dtype), 0
            return xp.where(ok, out, fill).astype(x.dtype)
        return f
    return factory


def _popcount_impl(xp):
    def f(x):
        x = xp.asarray(x)
        u = x.view(_unsigned_of(x.dtype))
        if hasattr(xp, "bitwise_count"):
            return xp.bitwise_count(u).astype(x.dtype)
        count = xp.zeros(u.shape, dtype=u.dtype)
        for i in range(8 * u.dtype.itemsize):
            count = count + ((u >> i) & 1).astype(u.dtype)
        return count.astype(x.dtype)
    return f


not_p = nondiff("not", _ufunc("invert"), 1, "bi", codegen="(~{0})")
and_p = nondiff("and", _ufunc("bitwise_and"), 2, "bi", codegen="({0} & {1})")
or_p = nondiff("or", _ufunc("bitwise_or"), 2, "bi", codegen="({0} | {1})")
xor_p = nondiff("xor", _ufunc("bitwise_xor"), 2, "bi", codegen="({0} ^ {1})")
shift_left_p = nondiff("shift_left", _shift_impl("left"), 2, "i")
shift_right_arithmetic_p = nondiff("shift_right_arithmetic", _shift_impl("arithmetic"), 2, "i")
shift_right_logical_p = nondiff("shift_right_logical", _shift_impl("logical"), 2, "i")
population_count_p = nondiff("population_count", _popcount_impl, 1, "i")


def _bitcast_rule(x: ShapedArray, *, new_dtype) -> ShapedArray:
    new_dtype = np.dtype(new_dtype)
    if new_dtype.itemsize != x.dtype.itemsize:
        type_error("bitcast_convert_type", f"{x.dtype} ({x.dtype.itemsize * 8} bits) and {new_dtype} "
                   f"({new_dtype.itemsize * 8} bits) differ in width; only equal widths are supported")
    return ShapedArray(x.shape, new_dtype, False)


def _bitcast_impl(xp):
    def f(x, *, new_dtype):
        x = xp.asarray(x)
        if x.dtype.itemsize != np.dtype(new_dtype).itemsize:
            raise ValueError("bit widths differ")  # (the eager path then reports the shape rule's error)
        return x.view(new_dtype)
    return f


bitcast_convert_type_p = Primitive(
    "bitcast_convert_type", impl=_bitcast_impl,
    abstract_eval=_bitcast_rule, jvp=[None], vjp=[None], differentiable=False,
    weak_type=lambda w, p: False)
bitcast_convert_type_p.batch = elementwise_batch(bitcast_convert_type_p)


# --- binary arithmetic ----------------------------------------------------------------------------

def _int_div_impl(xp):
    def div(x, y):
        if x.dtype.kind in "iu":  # C semantics: round toward zero; XLA's x / 0 is -1 (all bits set)
            zero = y == 0
            if zero.any():
                return xp.where(zero, xp.asarray(-1).astype(x.dtype), div(x, xp.where(zero, 1, y).astype(y.dtype)))
            q = xp.floor_divide(x, y)
            return q + ((q < 0) & (q * y != x)).astype(x.dtype)
        return xp.true_divide(x, y)
    return div


def _rem_impl(xp):
    fmod = xp.fmod

    def rem(x, y):
        if x.dtype.kind in "iu":  # XLA's x % 0 is x (C's fmod is undefined there, NumPy's 0)
            zero = y == 0
            if zero.any():
                return xp.where(zero, x, fmod(x, xp.where(zero, 1, y).astype(y.dtype)))
        return fmod(x, y)
    return rem


def _replace_zero(x):
    return select(x == 0, ones_like(x), x)


def _balanced_eq(x, z, y):
    """1 where x alone attains z, 1/2 where x and y tie, 0 elsewhere (JAX's rule for max/min).

    Arithmetic on 0/1 masks rather than select: NumPy's where is ~100x slower than a ufunc pass on
    unpredictable masks (relu's), so two selects cost more than the seven ufunc passes here."""
    eq_x = (x == z).astype(z.dtype)
    eq_y = (y == z).astype(z.dtype)
    return eq_x / (1 + eq_y)


def _pow_tx(t, x, y, kink="jax"):
    """t * d/dx x**y = t * y * x**(y-1). JAX's rule is that formula alone (NaN at x == 0, y == 0, and x**1
    has a NaN second derivative at 0; "jax_int", its rule for integer exponents, is 0 where y == 0).
    torch's (pow_backward_self) is where(y == 0, 0, t * y * x**(y-1)):
    the mask takes the tangent or cotangent too, so a NaN one (d/dy's log of a negative x) gives 0 there.
    At x == 0 the unused branch's y - 1 is kept away from -1 so that its derivatives are finite (x**0 has
    second derivative 0 at 0, where torch's is 0 * inf); elsewhere it is torch's (NaN in y at x < 0)."""
    if kink == "jax":
        return t * (y * pow(x, y - 1))
    y0 = eq(y, zeros_like(y))
    if kink == "jax_int":  # JAX's rule for an integer y: its Jacobian masked where y == 0 (not the tangent), so
        # reverse-over-reverse there is 0 * d(x**-1) (NaN at x == 0) and forward-over-reverse is 0
        return t * select(y0, zeros_like(y), select(y0, ones_like(y), y) * pow(x, y - 1))
    safe = bitwise_and(y0, eq(x, zeros_like(x)))
    d = t * (y * pow_p.bind(x, select(safe, ones_like(y), y) - 1, kink=kink))
    return select(y0, zeros_like(d), d)


def _pow_ty(t, ans, x, y, kink="jax"):
    """t * d/dy x**y = t * log(x) x**y. JAX's rule takes log(1) at x == 0 (where x**y is 0 or 1 for
    y >= 0). torch's (pow_backward_exponent) is where(x == 0 and y >= 0, 0, t * x**y * log(x)): so -inf at
    x == 0, y < 0, and the mask takes the tangent or cotangent too (x is 1 in the unused branch, so that
    its derivatives are finite)."""
    if kink not in ("torch", "torch_scalar"):  # ("jax_int": the exponent was an integer array, no cotangent)
        return t * (log(_replace_zero(x)) * ans)
    zero = zeros_like(x)
    z = bitwise_and(eq(x, zero), ge(y, zeros_like(y)))
    d = t * (ans * log(select(z, ones_like(x), x)))
    return select(z, zeros_like(d), d)


def _trunc_quotient(x, y):
    """x / y rounded toward zero: the multiple of y that rem subtracts."""
    q = div(x, y)
    return sign(q) * floor(abs(q))


add_p = binary("add", _ufunc("add"), [lambda t, ans, x, y: t, lambda t, ans, x, y: t],
               [lambda g, ans, x, y: g, lambda g, ans, x, y: g], codegen="({0} + {1})", onnx="Add")
sub_p = binary("sub", _ufunc("subtract"), [lambda t, ans, x, y: t, lambda t, ans, x, y: -t],
               [lambda g, ans, x, y: g, lambda g, ans, x, y: -g], codegen="({0} - {1})", onnx="Sub")
mul_p = binary("mul", _ufunc("multiply"), [lambda t, ans, x, y: _times(t, y), lambda t, ans, x, y: _times(t, x)],
               [lambda g, ans, x, y: _times(g, y), lambda g, ans, x, y: _times(g, x)], codegen="({0} * {1})",
               onnx="Mul")
div_p = binary("div", _int_div_impl,
               [lambda t, ans, x, y: t / y, lambda t, ans, x, y: -t * ans / y],
               [lambda g, ans, x, y: g / y, lambda g, ans, x, y: -g * ans / y])
rem_p = binary("rem", _rem_impl,  # C fmod: the sign of x
               [lambda t, ans, x, y: t, lambda t, ans, x, y: -t * _trunc_quotient(x, y)],
               [lambda g, ans, x, y: g, lambda g, ans, x, y: -g * _trunc_quotient(x, y)], kinds="if")
_TORCH_CPOW_PRODUCTS = frozenset({-2, -1, 0, 1, 2, 3})


def _pow_impl(xp):
    power = xp.power

    def pow_(x, y, kink="jax"):
        if kink == "torch_scalar":
            if x.dtype.kind in "fc" and x.dtype != np.float16 and y.size and y.flat[0] in (0.5, -0.5) and (
                    y.ndim == 0 or not any(y.strides) or bool(np.all(y == y.flat[0]))):
                # torch's pow(Tensor, Scalar) kernel computes these as sqrt / rsqrt (NaN at -inf, -0 at -0); the
                # derivative's exponent y - 1 comes full-shaped (a select over it), so uniform by value
                with np.errstate(divide="ignore", invalid="ignore"):
                    r = xp.sqrt(x)
                    return r if y.flat[0] > 0 else 1 / r
            kink = "torch"
        if kink == "torch" and x.dtype.kind == "c" and not (
                y.size and y.flat[0] in _TORCH_CPOW_PRODUCTS and (y.ndim == 0 or not any(y.strides) or
                                                                   bool(np.all(y == y.flat[0])))):
            # torch's complex pow is C's cpow, exp(y * log(x)) (std::pow), where NumPy multiplies out an
            # integer y; only a uniform y in -2..3 is torch's products (NumPy's round nearest torch's): a
            # number exponent, or one broadcast out by a derivative rule (torch's x.pow(y - 1) of a number)
            with np.errstate(all="ignore"):
                return xp.exp(y * xp.log(x))
        out = power(x, y)
        if xp is not np:
            return out
        if kink == "torch" and out.dtype.kind == "f" and out.size and np.isnan(out).any():
            # C's pow, torch's: (-inf) ** y is +inf for a non-integer y > 0 and +0 for y < 0 (NumPy can give NaN);
            # here, not a select over the result, so that torch's derivative y * x ** (y - 1) is one there too
            xa, ya = np.broadcast_arrays(np.asarray(x), np.asarray(y))
            fix = (xa == -np.inf) & (ya != np.floor(ya)) & (ya == ya)
            if fix.any():
                out = np.where(fix, np.where(ya > 0, np.inf, 0.0).astype(out.dtype), out)
                return out if out.ndim or isinstance(out, np.ndarray) else out[()]
        # NumPy's power loop computes a uniform exponent of 0.5 as sqrt(x), which gives -0 at -0 and NaN
        # at -inf where pow's special cases (C99's and the Array API standard's) give +0 and +inf.
        if out.dtype.kind == "f" and out.size and (y.ndim == 0 or not any(y.strides)) and y.flat[0] == 0.5:
            fixed = np.where(np.asarray(x) == -np.inf, np.inf, out + 0.0)  # (-0 + 0 is +0)
            return fixed if isinstance(out, np.ndarray) else fixed[()]
        return out
    return pow_


# the value of x ** y follows the face's kink only for complex x (torch's cpow against NumPy's products)
pow_p = _card("pow", _pow_impl, _kinked_rule("pow", "ifc"),
              [lambda t, ans, x, y, kink="jax": _pow_tx(t, x, y, kink),
               lambda t, ans, x, y, kink="jax": _pow_ty(t, ans, x, y, kink)],
              [lambda g, ans, x, y, kink="jax": _pow_tx(g, x, y, kink),
               lambda g, ans, x, y, kink="jax": _pow_ty(g, ans, x, y, kink)])
def _torch_tie_d(t, x, y, beats, holds, first, jvp):
    """torch's derivative of clamp(x, min=y) (beats=gt, holds=ge) and clamp(x, max=y) (lt, le): its forward
    formula where(x beats y, x_t, y_t) gives a tie and a NaN to y; its backward ones give x the cotangent
    where x holds against y (ties included) and y where y beats x (at a NaN neither)."""
    if jvp:
        pred = beats(x, y)
        return _where(pred if first else bitwise_not(pred), t)
    return _where(holds(x, y) if first else beats(y, x), t)


def _extremum(name, beats, holds):
    """max / min: JAX's rule splits a tie evenly (as torch.maximum's); kink="torch" is torch's rule for
    clamp with one Tensor bound and fmax (_torch_tie_d), whose forward and backward formulas differ at ties."""
    def d(first, jvp):
        def rule(t, ans, x, y, kink="jax"):
            if kink == "jax":
                return t * (_balanced_eq(x, ans, y) if first else _balanced_eq(y, ans, x))
            return _torch_tie_d(t, x, y, beats, holds, first, jvp)
        return rule
    def impl(xp):
        f = getattr(xp, "maximum" if name == "max" else "minimum")

        def extremum(x, y, kink="jax"):
            # NaN propagates; at a tie NumPy's ufunc returns y, torch's kernels x (fmax(-0.0, 0.0) is -0.0)
            r = f(x, y)
            return r if kink == "jax" else xp.where(x == y, x, r)
        extremum.ufunc = f  # what jit's code generator emits for the default params
        return extremum
    return _card(name, impl, _kinked_rule(name, "bifc"), [d(True, True), d(False, True)],
                 [d(True, False), d(False, False)])


max_p = _extremum("max", lambda x, y: gt(x, y), lambda x, y: ge(x, y))
min_p = _extremum("min", lambda x, y: lt(x, y), lambda x, y: le(x, y))


def _atan2_partial(num, x, y, kink):
    """num / (x^2 + y^2), atan2's partials (num = y for x, -x for y): JAX's are NaN at the origin
    (0 / 0), torch's are 0 there."""
    den = x * x + y * y
    if kink == "jax":
        return num / den
    zero = eq(den, zeros_like(den))
    return select(zero, zeros_like(den), num / select(zero, ones_like(den), den))


# atan2(x, y) = atan(x / y), as lax.atan2
atan2_p = _kinked_binary("atan2", "f", lambda xp: xp.arctan2,
                         *_diagonal(lambda ans, x, y, kink="jax": _atan2_partial(y, x, y, kink),
                                    lambda ans, x, y, kink="jax": _atan2_partial(-x, x, y, kink)))


# --- smooth functions with kinked naive formulas, and elu -------------------------------------------

def _full_like(x, v):
    return full(x.shape, v, x.dtype, weak_type=x.weak_type)


def _replace_posinf(x):
    """x with +inf replaced by 0 (JAX's _replace_inf): exp(x - ans) is then 1, not NaN, at x = ans = inf."""
    return select(eq(x, _full_like(x, np.inf)), zeros_like(x), x)


def _logaddexp_impl(base2: bool):
    def factory(xp):
        def f(x, y):
            # JAX's formula: amax + log1p(exp(-|x - y|)); x + y where x - y is NaN (a NaN, or infinities of
            # one sign, whose sum is then the answer)
            d = x - y
            e = xp.exp2(-xp.abs(d)) if base2 else xp.exp(-xp.abs(d))
            out = xp.maximum(x, y) + (xp.log1p(e) * (1 / math.log(2)) if base2 else xp.log1p(e))
            return xp.where(d != d, x + y, out)
        return f
    return factory


def _logaddexp_d(x, ans):
    """d logaddexp(x, y)/dx = exp(x - ans) = sigmoid(x - y): smooth everywhere, 1 at x = ans = +inf."""
    return exp(_replace_posinf(x) - _replace_posinf(ans))


def _logaddexp2_d(x, ans):
    return exp2(_replace_posinf(x) - _replace_posinf(ans))


logaddexp_p = binary_partials("logaddexp", _logaddexp_impl(False), lambda ans, x, y: _logaddexp_d(x, ans),
                              lambda ans, x, y: _logaddexp_d(y, ans))
logaddexp2_p = binary_partials("logaddexp2", _logaddexp_impl(True), lambda ans, x, y: _logaddexp2_d(x, ans),
                               lambda ans, x, y: _logaddexp2_d(y, ans))


def _hypot_d(x, ans, kink):
    """d hypot(x, y)/dx = x / hypot(x, y), smooth wherever hypot > 0. At the origin JAX's composite gives
    1/2 to each operand (a tie of max(|x|, |y|)) and 0 where the result is infinite; torch's x / ans is
    NaN at the origin."""
    if kink == "torch":
        return x / ans
    zero, inf = eq(ans, zeros_like(ans)), eq(ans, _full_like(ans, np.inf))
    d = x / select(bitwise_or(zero, inf), ones_like(ans), ans)
    return select(zero, _full_like(ans, 0.5), select(inf, zeros_like(ans), d))


hypot_p = _kinked_binary("hypot", "f", lambda xp: xp.hypot,
                         *_diagonal(lambda ans, x, y, kink="jax": _hypot_d(x, ans, kink),
                                    lambda ans, x, y, kink="jax": _hypot_d(y, ans, kink)))


def _logit_impl(xp):
    return lambda x: xp.log(x / (1 - x))


# logit = log(x / (1 - x)) with JAX's custom derivative 1 / (x (1 - x)) (infinite at 0 and 1, where the
# quotient's own rule gives NaN), written as 1/x + 1/(1 - x): the same value, and its own derivative
# -1/x^2 + 1/(1 - x)^2 overflows to -inf near 0 instead of meeting inf * 0 (NaN) through x (1 - x)
logit_p = unary("logit", _logit_impl, lambda ans, x: 1 / x + 1 / (1 - x), "f")


def _elu_impl(xp):
    def f(x, *, alpha, scale=1.0, input_scale=1.0, kink="jax"):
        if kink == "ties":  # max(x, 0) + alpha expm1(min(x, 0) s): NaN kept, -0.0 gives 0.0
            pos = xp.logical_not(x <= 0)
            xn = xp.where(x < 0, x, 0)
        else:
            pos = x > 0
            xn = xp.where(pos, 0, x)  # (no overflow in the unused branch)
        neg = xp.expm1(xn * input_scale if input_scale != 1.0 else xn) * alpha
        out = xp.where(pos, x, neg)
        return out * scale if scale != 1.0 else out
    return f


def _elu_rule(x: ShapedArray, *, alpha, scale=1.0, input_scale=1.0, kink="jax") -> ShapedArray:
    check_dtype("elu", x, "f")
    if kink != "ties":
        _check_kink("elu", kink)
    return x


def _elu_d(x, alpha, scale, input_scale, kink):
    """scale where x > 0, else alpha * scale * input_scale * exp(x * input_scale). Both faces take the
    exponential branch at 0 (derivative alpha * scale * input_scale); its own derivative there is JAX's
    (the exponential's) or torch's (0: x is held at 0 from x >= 0 on). NaN takes the exponential branch
    in JAX (NaN) and the identity in torch (scale). kink="ties" is jax.nn.celu's max(x, 0) + alpha expm1(min(x,
    0) s): at 0 max and min split the tie evenly, so the derivative is (scale + alpha scale s) / 2 and its own
    derivative alpha scale s^2 / 4 (x enters min at half weight there)."""
    zero = zeros_like(x)
    if kink == "ties":
        half = _full_like(x, 0.5)
        at0 = eq(x, zero)
        wp = select(gt(x, zero), _full_like(x, 1.0), select(at0, half, zero))
        wn = select(lt(x, zero), _full_like(x, 1.0), select(at0, half, select(ne(x, x), x, zero)))  # (NaN: NaN)
        xn = select(lt(x, zero), x, select(at0, x * half, zero))
        e = exp(xn * input_scale if input_scale != 1.0 else xn)
        c = alpha * scale * input_scale
        return wp * scale + (e * c if c != 1.0 else e) * wn
    if kink == "jax":
        pos = gt(x, zero)
        xn = select(pos, zero, x)
    else:
        pos = bitwise_not(le(x, zero))
        xn = select(lt(x, zero), x, zero)
    e = exp(xn * input_scale if input_scale != 1.0 else xn)
    c = alpha * scale * input_scale
    return select(pos, _full_like(x, scale), e * c if c != 1.0 else e)


elu_p = _card("elu", _elu_impl, _elu_rule,
              [lambda t, ans, x, **p: _times(t, _elu_d(x, *_elu_params(**p)))],
              [lambda g, ans, x, **p: _times(g, _elu_d(x, *_elu_params(**p)))])


def _elu_params(alpha, scale=1.0, input_scale=1.0, kink="jax"):
    return alpha, scale, input_scale, kink


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
        if x.dtype.kind in "iu" and np.iinfo(x.dtype).min <= y <= np.iinfo(x.dtype).max:
            return xp.power(x, y)  # (exact: the same product modulo 2**bits)
        if y == 0:
            return xp.ones_like(x)
        # JAX's lowering: square-and-multiply, rounding after each product (not pow's one rounding, so x ** 3 is
        # (x * x) * x as in JAX), then 1 / x**-y for a negative exponent; integers wrap
        n, acc = -y if y < 0 else y, None
        while n:
            if n & 1:
                acc = x if acc is None else acc * x
            n >>= 1
            if n:
                x = x * x
        return xp.true_divide(xp.ones_like(acc), acc) if y < 0 else acc
    return f


integer_pow_p = _card("integer_pow", _integer_pow_impl, _integer_pow_rule,
                      [lambda t, ans, x, *, y: t * _integer_pow_d(x, y)],
                      [lambda g, ans, x, *, y: g * _integer_pow_d(x, y)])


def _clamp_rule(lo: ShapedArray, x: ShapedArray, hi: ShapedArray, *, kink: str = "jax") -> ShapedArray:
    _check_kink("clamp", kink)
    check_same("clamp", lo, x, hi)
    check_dtype("clamp", x, "if")
    return ShapedArray(x.shape, x.dtype, lo.weak_type and x.weak_type and hi.weak_type)


def _where(pred, t):
    return select(pred, t, zeros_like(t))


def _clamp_d(i, jvp):
    """The derivative of clamp(lo, x, hi) in operand i (0 lo, 1 x, 2 hi). JAX's rule: the gradient goes to
    whichever operand the result equals (x inside the open interval, so none at a tie with a bound).
    kink="torch" is torch's clamp with two Tensor bounds, whose forward formula (clamp_jvp) and backward
    formulas (clamp_backward, clamp_backward_min_max) differ: forward, hi where lo > hi, else lo where x < lo,
    else hi where x > hi, else x; backward, x where lo <= x <= hi, lo where x < lo < hi, hi where x > hi or
    hi < lo (so nothing where x < lo == hi, nor at a NaN x)."""
    def rule(t, ans, lo, x, hi, kink="jax"):
        if kink == "jax":
            pred = (bitwise_and(gt(lo, x), lt(lo, hi)) if i == 0 else
                    bitwise_and(gt(x, lo), lt(x, hi)) if i == 1 else lt(hi, x))
        elif jvp:
            crossed, below = gt(lo, hi), lt(x, lo)
            if i == 0:
                pred = bitwise_and(bitwise_not(crossed), below)
            elif i == 1:
                pred = bitwise_not(bitwise_or(crossed, bitwise_or(below, gt(x, hi))))
            else:
                pred = bitwise_or(crossed, bitwise_and(bitwise_not(below), gt(x, hi)))
        else:
            pred = (bitwise_and(lt(x, lo), lt(lo, hi)) if i == 0 else
                    bitwise_and(ge(x, lo), le(x, hi)) if i == 1 else bitwise_or(gt(x, hi), lt(hi, lo)))
        return _where(pred, t)
    return rule


clamp_p = _card("clamp", lambda xp: (lambda lo, x, hi, kink="jax": xp.minimum(xp.maximum(x, lo), hi)),
                _clamp_rule, [_clamp_d(i, True) for i in range(3)], [_clamp_d(i, False) for i in range(3)])


# --- complex numbers ------------------------------------------------------------------------------

def _real_of(dt) -> np.dtype:
    return dtypes.float32 if np.dtype(dt) == dtypes.complex64 else dtypes.float64


def _complex_of(dt) -> np.dtype:
    return dtypes.complex64 if np.dtype(dt) == dtypes.float32 else dtypes.complex128


def _part_rule(op: str):
    def rule(x: ShapedArray) -> ShapedArray:
        check_dtype(op, x, "c")
        return x.update(dtype=_real_of(x.dtype))
    return rule


def _complex_rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    check_same("complex", x, y)
    if x.dtype not in (dtypes.float32, dtypes.float64):
        type_error("complex", f"operands must be float32 or float64, got {x.dtype}")
    return ShapedArray(x.shape, _complex_of(x.dtype), x.weak_type and y.weak_type)


def _complex_impl(xp):
    def f(x, y):
        x, y = xp.asarray(x), xp.asarray(y)
        out = xp.empty(x.shape, dtype=_complex_of(x.dtype))
        out.real, out.imag = x, y  # (x + 1j * y would turn an infinite y into a NaN real part)
        return out
    return f


real_p = _card("real", _ufunc("real"), _part_rule("real"),
               [lambda t, ans, x: real(t)], [lambda g, ans, x: complex(g, zeros_like(g))])
imag_p = _card("imag", _ufunc("imag"), _part_rule("imag"),
               [lambda t, ans, x: imag(t)], [lambda g, ans, x: complex(zeros_like(g), neg(g))])
conj_p = _card("conj", _ufunc("conj"), _unary_rule("conj", "c"),
               [lambda t, ans, x: conj(t)], [lambda g, ans, x: conj(g)])
complex_p = _card("complex", _complex_impl, _complex_rule,
                  [lambda t, ans, x, y: complex(t, zeros_like(t)), lambda t, ans, x, y: complex(zeros_like(t), t)],
                  [lambda g, ans, x, y: real(g), lambda g, ans, x, y: neg(imag(g))])


# --- comparisons and select -----------------------------------------------------------------------

def _compare_rule(op: str):
    def rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
        check_same(op, x, y)
        check_dtype(op, x, "bifc")  # complex compares lexicographically, as in NumPy
        return ShapedArray(x.shape, dtypes.bool_, False)
    return rule


def compare(name: str, impl, codegen: str, onnx: str | None = None) -> Primitive:
    return nondiff(name, impl, 2, "bifc", out_dtype=dtypes.bool_, codegen=codegen, rule=_compare_rule(name),
                   onnx=onnx)


eq_p = compare("eq", _ufunc("equal"), "({0} == {1})", onnx="Equal")
ne_p = compare("ne", _ufunc("not_equal"), "({0} != {1})")
lt_p = compare("lt", _ufunc("less"), "({0} < {1})", onnx="Less")
le_p = compare("le", _ufunc("less_equal"), "({0} <= {1})", onnx="LessOrEqual")
gt_p = compare("gt", _ufunc("greater"), "({0} > {1})", onnx="Greater")
ge_p = compare("ge", _ufunc("greater_equal"), "({0} >= {1})", onnx="GreaterOrEqual")


def _select_rule(pred: ShapedArray, on_true: ShapedArray, on_false: ShapedArray) -> ShapedArray:
    if pred.dtype != dtypes.bool_:
        type_error("select", f"predicate must be bool, got {pred.dtype}")
    check_same("select", pred, on_true, on_false, dtype=False)
    check_same("select", on_true, on_false)
    return ShapedArray(on_true.shape, on_true.dtype, on_true.weak_type and on_false.weak_type)


_SELECT_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SELECT_BITS_MIN = 4096  # below this np.where is as fast (and one call)


def select_bits_ok(dtype, size: int) -> bool:
    """Whether select_bits takes its bitwise path for operands of `dtype` and a result of `size` elements."""
    return size >= SELECT_BITS_MIN and dtype.kind in "biuf" and dtype.itemsize in _SELECT_BITS


def select_bits(pred, on_true, on_false, out=None):
    """np.where(pred, on_true, on_false) (into `out` if given), computed on the operands' bits where they
    are big real arrays of one dtype and pred has the result's shape: b ^ ((a ^ b) * pred), three
    branch-free integer passes. np.where branches per element, 4-7x slower on an unpredictable mask
    (relu's backward: 1.5 ms for 400K float32). The bits are np.where's exactly (NaN payloads, -0.0)."""
    dt = getattr(on_true, "dtype", None)
    shape = getattr(pred, "shape", ())
    if getattr(pred, "size", 0) < SELECT_BITS_MIN or dt is None or getattr(on_false, "dtype", None) != dt or \
            pred.dtype != np.bool_ or not select_bits_ok(dt, pred.size) or \
            np.shape(on_true) not in (shape, ()) or np.shape(on_false) not in (shape, ()):
        r = np.where(pred, on_true, on_false)
        if out is None:
            return r
        np.copyto(out, r)
        return out
    u = _SELECT_BITS[dt.itemsize]
    a, b = np.asarray(on_true).view(u), np.asarray(on_false).view(u)
    # a ^ b is written to out unless out overlaps what is read later (pred, and b at the end)
    early = out is not None and not np.may_share_memory(out, pred) and not np.may_share_memory(out, on_false)
    t = np.bitwise_xor(a, b, out=out.view(u) if early and np.ndim(on_true) + np.ndim(on_false) else None)
    t = np.multiply(t, pred, out=t if t.shape == shape else None, dtype=u)
    r = np.bitwise_xor(t, b, out=t if out is None else out.view(u))
    return r.view(dt) if out is None else out


select_p = _card(
    "select", lambda xp: select_bits if xp is np else xp.where, _select_rule,
    [None, lambda t, ans, p, a, b: select(p, t, zeros_like(t)),
     lambda t, ans, p, a, b: select(p, zeros_like(t), t)],
    [None, lambda g, ans, p, a, b: select(p, g, zeros_like(g)),
     lambda g, ans, p, a, b: select(p, zeros_like(g), g)],
    weak_type=lambda w, params: w[1] and w[2], onnx="Where")


# --- dtype conversion -----------------------------------------------------------------------------

def _convert_rule(x: ShapedArray, *, new_dtype, weak_type: bool = False) -> ShapedArray:
    return ShapedArray(x.shape, new_dtype, weak_type)


def _convert_impl(xp):
    def f(x, *, new_dtype, weak_type=False):
        if x.dtype.kind == "c" and new_dtype.kind != "c":
            if new_dtype.kind == "b":  # nonzero, as NumPy: 1j is True
                return x != 0
            x = x.real
        elif x.dtype.kind == "V" and new_dtype.kind in "iu":  # bfloat16: via float32, which wraps as NumPy and
            x = x.astype(np.float32)                         # torch do (ml_dtypes' own cast gives 0 out of range)
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


convert_element_type_p = _card(
    "convert_element_type", _convert_impl, _convert_rule, [_convert_t], [_convert_g],
    weak_type=lambda w, params: params.get("weak_type", False))


# --- lax-style functions (strict: no promotion, no broadcasting) ----------------------------------

def neg(x): return neg_p.bind(x)
def exp(x): return exp_p.bind(x)
def exp2(x): return exp2_p.bind(x)
def log(x): return log_p.bind(x)
def log2(x): return log2_p.bind(x)
def log10(x): return log10_p.bind(x)
def log1p(x): return log1p_p.bind(x)
def expm1(x): return expm1_p.bind(x)
def logistic(x): return logistic_p.bind(x)
def sin(x): return sin_p.bind(x)
def cos(x): return cos_p.bind(x)
def tan(x): return tan_p.bind(x)
def asin(x): return asin_p.bind(x)
def acos(x): return acos_p.bind(x)
def atan(x): return atan_p.bind(x)
def sinh(x): return sinh_p.bind(x)
def cosh(x): return cosh_p.bind(x)
def tanh(x): return tanh_p.bind(x)
def asinh(x): return asinh_p.bind(x)
def acosh(x): return acosh_p.bind(x)
def atanh(x): return atanh_p.bind(x)
def sqrt(x): return sqrt_p.bind(x)
def rsqrt(x): return rsqrt_p.bind(x)
def cbrt(x): return cbrt_p.bind(x)
def square(x): return square_p.bind(x)
def abs(x, kink: str = "jax"):  # noqa: A001 - lax name
    """|x|; `kink` picks the derivative's convention at 0 (see the module docstring)."""
    return _bind_kinked(abs_p, kink, x)
def relu(x, kink: str = "jax"):
    """max(x, 0); `kink` picks the convention at 0 and at NaN (see relu_p)."""
    return _bind_kinked(relu_p, kink, x)
def sign(x): return sign_p.bind(x)
def stop_gradient(x):
    """`x` itself, with a zero derivative: gradients do not flow through it (as jax.lax.stop_gradient).

    Examples:
        >>> import funcgrad as jax
        >>> jax.grad(lambda x: x * jax.stop_gradient(x))(3.0)
        Array(3., dtype=float32, weak_type=True)
    """
    return stop_gradient_p.bind(x)


def floor(x): return floor_p.bind(x)
def ceil(x): return ceil_p.bind(x)
def is_finite(x): return is_finite_p.bind(x)
def add(x, y): return add_p.bind(x, y)
def sub(x, y): return sub_p.bind(x, y)
def mul(x, y): return mul_p.bind(x, y)
def div(x, y): return div_p.bind(x, y)
def rem(x, y): return rem_p.bind(x, y)
def pow(x, y, kink: str = "jax"):  # noqa: A001 - lax name
    return _bind_kinked(pow_p, kink, x, y)
def max(x, y): return max_p.bind(x, y)  # noqa: A001 - lax name
def min(x, y): return min_p.bind(x, y)  # noqa: A001 - lax name
def logaddexp(x, y): return logaddexp_p.bind(x, y)
def logit(x): return logit_p.bind(x)
def logaddexp2(x, y): return logaddexp2_p.bind(x, y)


def hypot(x, y, kink: str = "jax"):
    return _bind_kinked(hypot_p, kink, x, y)


def elu(x, alpha=1.0, scale=1.0, input_scale=1.0, kink: str = "jax"):
    """scale * (x if x > 0 else alpha * expm1(x * input_scale)): elu, selu and celu in one card."""
    params = {"alpha": float(alpha)}
    if scale != 1.0:
        params["scale"] = float(scale)
    if input_scale != 1.0:
        params["input_scale"] = float(input_scale)
    if kink != "jax":
        if kink != "ties":
            _check_kink("elu", kink)
        params["kink"] = kink
    return elu_p.bind(x, **params)


def atan2(x, y, kink: str = "jax"):
    return _bind_kinked(atan2_p, kink, x, y)
def nextafter(x1, x2): return nextafter_p.bind(x1, x2)
def integer_pow(x, y: int): return integer_pow_p.bind(x, y=int(y))
def eq(x, y): return eq_p.bind(x, y)
def ne(x, y): return ne_p.bind(x, y)
def lt(x, y): return lt_p.bind(x, y)
def le(x, y): return le_p.bind(x, y)
def gt(x, y): return gt_p.bind(x, y)
def ge(x, y): return ge_p.bind(x, y)
def select(pred, on_true, on_false): return select_p.bind(pred, on_true, on_false)
def bitwise_not(x): return not_p.bind(x)
def bitwise_and(x, y): return and_p.bind(x, y)
def bitwise_or(x, y): return or_p.bind(x, y)
def bitwise_xor(x, y): return xor_p.bind(x, y)
def shift_left(x, y): return shift_left_p.bind(x, y)
def shift_right_arithmetic(x, y): return shift_right_arithmetic_p.bind(x, y)
def shift_right_logical(x, y): return shift_right_logical_p.bind(x, y)
def population_count(x): return population_count_p.bind(x)
def real(x): return real_p.bind(x)
def imag(x): return imag_p.bind(x)
def complex(x, y): return complex_p.bind(x, y)  # noqa: A001 - lax name


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001 - lax name
    """x rounded to an integral value; ties away from zero (default) or to even, as lax.round."""
    return round_p.bind(x, rounding_method=RoundingMethod(rounding_method))


def conj(x):
    """The complex conjugate, as lax.conj: real input gives a complex result."""
    if not dtypes.is_complex(x.dtype):
        x = convert_element_type(x, _complex_of(x.dtype))
    return conj_p.bind(x)


def clamp(min, x, max):  # noqa: A002 - lax names
    """min(max(x, min), max) elementwise, as lax.clamp; the bounds may be scalars (shape ())."""
    return clamp_p.bind(_bound_like(min, x), x, _bound_like(max, x))


def _bound_like(b, x):
    if not isinstance(b, ArrayBase):
        b = to_array(b, dtype=x.dtype)
    if tuple(b.shape) == () and tuple(x.shape) != ():
        b = broadcast_in_dim(b, tuple(x.shape), ())
    return b


def bitcast_convert_type(x, new_dtype):
    """The bits of x reinterpreted as `new_dtype` of the same width, as lax.bitcast_convert_type."""
    return bitcast_convert_type_p.bind(x, new_dtype=dtypes.canonicalize(new_dtype))


def convert_element_type(x, new_dtype, weak_type: bool = False):
    new_dtype = dtypes.canonicalize(new_dtype)
    if x.dtype == new_dtype and bool(x.weak_type) == bool(weak_type):
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=bool(weak_type))


def zeros_like(x):
    return full(x.shape, 0, x.dtype, weak_type=x.weak_type)


def ones_like(x):
    return full(x.shape, 1, x.dtype, weak_type=x.weak_type)
