"""Elementwise functions of one tensor: exp/log/trig/hyperbolic and the special functions (float-valued,
integers computed in the default float dtype), abs/neg/sign/rounding (dtype-preserving, with torch's
NotImplementedError for kernels without a bool or integer version), square, positive, round, logical_not,
bitwise_not, the predicates (isnan, isinf, signbit, ...) and nan_to_num."""
from __future__ import annotations

import numpy as np

from .. import _jnp as jnp, _dtype as D
from ..._src.core.array import Array
from ..._src.prims import elementwise as ew, special as _sp
from .._dispatch import _apply1, _apply_nograd, _apply_prim1
from ._common import _legacy_name, _not_impl, _NPB, _out, _scalar_arr


def _float_unary(name, prim, card=None):
    """A float-valued elementwise function (integer inputs computed in the default float dtype); card: the
    primitive prim binds, for the direct path on float tensors."""
    def fn_for(dt):
        if D.kind(dt) in "fc":
            return prim
        fdt = D.default_float()
        return lambda a: prim(ew.convert_element_type(a, fdt))

    def op(input, *, out=None):
        if card is not None:
            v = input._v
            if v is not None and (v.dtype.kind in "fc" or D.kind(v.dtype) == "f"):  # (inline: bfloat16 is 'V')
                r = _apply_prim1(name, card, prim, input)
                return r if out is None else _out(r, out)
        r = _apply1(name, fn_for(input._np_dtype()), input)
        return _out(r, out)
    op.__name__ = op.__qualname__ = name.lower()
    return op


def _sigmoid(a):
    return ew.logistic(a)


def _rsqrt(a):
    return ew.rsqrt(a)


def _log_sigmoid(a):
    return -jnp.logaddexp(ew.neg(a), _scalar_arr(0, a.dtype))


exp = _float_unary("Exp", ew.exp, ew.exp_p)
exp2 = _float_unary("Exp2", ew.exp2)
expm1 = _float_unary("Expm1", ew.expm1, ew.expm1_p)
log = _float_unary("Log", ew.log, ew.log_p)
log2 = _float_unary("Log2", ew.log2)
log10 = _float_unary("Log10", ew.log10)
log1p = _float_unary("Log1p", ew.log1p, ew.log1p_p)
sqrt = _float_unary("Sqrt", ew.sqrt, ew.sqrt_p)
rsqrt = _float_unary("Rsqrt", _rsqrt, ew.rsqrt_p)
sin = _float_unary("Sin", ew.sin, ew.sin_p)
cos = _float_unary("Cos", ew.cos, ew.cos_p)
tan = _float_unary("Tan", ew.tan)
asin = arcsin = _float_unary("Asin", ew.asin)
acos = arccos = _float_unary("Acos", ew.acos)
atan = arctan = _float_unary("Atan", ew.atan)
sinh = _float_unary("Sinh", ew.sinh)
cosh = _float_unary("Cosh", ew.cosh)
tanh = _float_unary("Tanh", ew.tanh, ew.tanh_p)
asinh = arcsinh = _float_unary("Asinh", ew.asinh)
acosh = arccosh = _float_unary("Acosh", ew.acosh)
atanh = arctanh = _float_unary("Atanh", ew.atanh)
sigmoid = _float_unary("Sigmoid", _sigmoid, ew.logistic_p)
erf = _float_unary("Erf", _sp.erf)
erfc = _float_unary("Erfc", _sp.erfc)
erfinv = _float_unary("Erfinv", _sp.erf_inv)
lgamma = _float_unary("Lgamma", _sp.lgamma)
digamma = _float_unary("Digamma", _sp.digamma)
reciprocal = _float_unary("Reciprocal", lambda a: ew.div(_scalar_arr(1, a.dtype), a))


def _same_unary(name, afn, bool_ok=True, complex_to_real=False):
    """An elementwise function computed in its input's dtype; `out=` must have that dtype (torch's unary kernels),
    except, with complex_to_real (abs), a complex input's real result, which casts into out."""
    def op(input, *, out=None):
        if not bool_ok and input._np_dtype() == _NPB:
            raise RuntimeError(f"{name.lower()}: bool input is not supported")
        return _out(_apply1(name, afn, input), out, not (complex_to_real and D.kind(input._np_dtype()) == "c"))
    op.__name__ = op.__qualname__ = name.lower()
    return op


def _zero_for(a):
    """0 of a's dtype: a 0-d Array where NumPy broadcasts it (concrete a, or a recorded over concrete
    values, see _bc), a full array under abstract tracing."""
    if a.__class__ is Array or getattr(a, "val", None).__class__ is Array:
        return Array(np.zeros((), a.dtype))
    return jnp.zeros_like(a)


def _zeros_like_arr(a):
    return jnp.zeros_like(a)


def _abs_fn(a):
    if a.dtype == _NPB:
        return a
    return ew.abs_p.bind(a, kink="torch")  # torch's derivative at 0: sign(x), and 0 at a complex 0


def _tabs(a):
    return ew.abs_p.bind(a, kink="torch")


def _neg_fn(a):
    if a.dtype == _NPB:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")
    return ew.neg(a)


def _sign_fn(a):
    if a.dtype == _NPB:
        return a
    if D.kind(a.dtype) == "f":  # torch's sign(nan) is 0
        return ew.select(ew.ne(a, a), _zero_for(a) + jnp.zeros_like(a), ew.sign(a))
    if D.kind(a.dtype) == "c":
        return _complex_sgn(a)
    return ew.sign(a)


def _complex_sgn(a):
    """torch's sgn: z / |z| (differentiable, as torch's), 0 at 0, and NaN + NaN j where a part is infinite or
    NaN (its complex division by (|z|, 0) scales by 1 / max(|c|, |d|) = 0 there)."""
    m = _tabs(a)
    zero = ew.eq(m, jnp.zeros_like(m))
    fin = jnp.isfinite(a)
    ok = ew.bitwise_and(fin, ew.bitwise_not(zero))
    r = ew.div(a, ew.convert_element_type(ew.select(ok, m, jnp.ones_like(m)), a.dtype))
    r = ew.select(zero, jnp.zeros_like(a), r)
    return ew.select(fin, r, jnp.full_like(a, complex(np.nan, np.nan)))


def _int_id(f):
    return lambda a: a if a.dtype.kind in "biu" else f(a)


def _checked_unary(op, check):
    def f(input, *args, **kwargs):
        check(input._np_dtype())
        return op(input, *args, **kwargs)
    f.__name__ = f.__qualname__ = op.__name__
    f.__doc__ = op.__doc__
    return f


abs = absolute = _checked_unary(_same_unary("Abs", _abs_fn, complex_to_real=True), _not_impl("abs_cpu"))  # noqa: A001
neg = negative = _same_unary("Neg", _neg_fn)
sign = _same_unary("Sign", _sign_fn)
sgn = sign
floor = _checked_unary(_same_unary("Floor", _int_id(ew.floor)), _not_impl("floor_vml_cpu"))
ceil = _checked_unary(_same_unary("Ceil", _int_id(ew.ceil)), _not_impl("ceil_vml_cpu"))
trunc = fix = _checked_unary(_same_unary("Trunc", _int_id(lambda a: jnp.trunc(a))), _not_impl("trunc_vml_cpu"))
frac = _checked_unary(_same_unary("Frac", lambda a: ew.sub(a, jnp.trunc(a))), _not_impl("frac_cpu", "biu"))
_square = _same_unary("Pow", lambda a: ew.integer_pow(a, 2))


def square(input, *, out=None):
    """input ** 2 (a bool tensor squares as int64, as torch's pow(x, 2) promotes it)."""
    if input._np_dtype() == _NPB:
        input = input.to(D.from_np(np.dtype(np.int64)))
    return _out(_square(input), out)  # (pow's same_kind cast into out, not the unary kernels' same dtype)


_positive = _same_unary("Positive", lambda a: a)


def positive(input):
    if input._np_dtype() == _NPB:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return _positive(input)


def round(input, *, decimals=None, out=None):  # noqa: A001
    """Round half to even (to `decimals` places). torch's round.decimals overload (any decimals given, 0 too)
    has no integer kernels, where plain round of an integer tensor is the identity."""
    _not_impl("round_vml_cpu" if not decimals else "round_cpu", "b" if decimals is None else "biu")(
        input._np_dtype())
    decimals = decimals or 0
    if not decimals:
        return _out(_apply1("Round", _int_id(jnp.round), input), out, True)
    return _out(_apply1("Round", lambda a: _round_decimals(a, decimals), input), out, True)


def _round_decimals(a, decimals):
    """torch's round_decimals kernel: in float32 for float16/bfloat16 (its opmath), nearbyint(a * 10^d) / 10^d,
    and for negative d nearbyint(a / 10^-d) * 10^-d (so 1000.7 in float16 stays finite)."""
    dt = a.dtype
    op = np.dtype(np.float32) if dt.itemsize == 2 else dt
    x = ew.convert_element_type(a, op) if op != dt else a
    p = _scalar_arr(10.0 ** (-decimals if decimals < 0 else decimals), op)
    r = ew.mul(jnp.round(ew.div(x, p)), p) if decimals < 0 else ew.div(jnp.round(ew.mul(x, p)), p)
    return ew.convert_element_type(r, dt) if op != dt else r


def logical_not(input, *, out=None):
    return _out(_apply_nograd(lambda a: ew.eq(a, _scalar_arr(0, a.dtype)) if a.dtype != _NPB
                              else jnp.logical_not(a), (input,)), out)


def bitwise_not(input, *, out=None):
    if D.kind(input._np_dtype()) in "fc":
        raise NotImplementedError(f"\"bitwise_not_cpu\" not implemented for '{_legacy_name(input._np_dtype())}'")
    return _out(_apply_nograd(lambda a: jnp.logical_not(a) if a.dtype == _NPB else ew.bitwise_not(a),
                              (input,)), out)


def _predicate(test):
    """The torch predicate of the same name (isnan, signbit, ...): ``test`` elementwise, a bool Tensor that
    carries no gradient."""
    def predicate(input):
        return _apply_nograd(test, (input,))
    predicate.__name__ = predicate.__qualname__ = test.__name__
    return predicate


isnan, isinf, isfinite, isposinf, isneginf, signbit, isreal = (
    _predicate(test) for test in (jnp.isnan, jnp.isinf, jnp.isfinite, jnp.isposinf, jnp.isneginf, jnp.signbit,
                                  jnp.isreal))


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    return _out(_apply1("NanToNum", lambda a: jnp.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf)
                        if D.kind(a.dtype) in "fc" else a, input), out, True)


# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods
METHODS = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "asin",
           "arcsin", "acos", "arccos", "atan", "arctan", "sinh", "cosh", "tanh", "asinh", "arcsinh", "acosh",
           "arccosh", "atanh", "arctanh", "sigmoid", "erf", "erfc", "erfinv", "lgamma", "digamma", "reciprocal",
           "abs", "absolute", "neg", "negative", "sign", "sgn", "floor", "ceil", "trunc", "fix", "frac", "square",
           "positive", "round", "logical_not", "bitwise_not", "isnan", "isinf", "isfinite", "isposinf", "isneginf",
           "signbit", "isreal", "nan_to_num")
INPLACE = ("abs", "neg", "negative", "sign", "floor", "ceil", "trunc", "frac", "round", "square", "exp", "exp2",
           "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan",
           "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "erf", "erfc", "erfinv", "lgamma", "digamma",
           "reciprocal", "nan_to_num", "logical_not", "bitwise_not", "fix")

__all__ = ["abs", "absolute", "acos", "acosh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "asin",
           "asinh", "atan", "atanh", "bitwise_not", "ceil", "cos", "cosh", "digamma", "erf", "erfc", "erfinv", "exp",
           "exp2", "expm1", "fix", "floor", "frac", "isfinite", "isinf", "isnan", "isneginf", "isposinf", "isreal",
           "lgamma", "log", "log10", "log1p", "log2", "logical_not", "nan_to_num", "neg", "negative", "positive",
           "reciprocal", "round", "rsqrt", "sgn", "sigmoid", "sign", "signbit", "sin", "sinh", "sqrt", "square",
           "tan", "tanh", "trunc"]
