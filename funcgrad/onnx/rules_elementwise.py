"""ONNX rules for the elementwise cards that no single ONNX operator computes (the rest name theirs on
the card: `Primitive.onnx`)."""
from __future__ import annotations

import math

import numpy as np

from ._graph import rule


def _c(ctx, eqn, value, i: int = 0) -> str:
    """A 0-d constant of the dtype of operand i (ONNX broadcasts it)."""
    return ctx.const(np.asarray(value, eqn.invars[i].aval.dtype))


def _unsupported_complex(ctx, eqn):
    for v in list(eqn.invars) + list(eqn.outvars):
        if v.aval.dtype.kind == "c":
            raise ctx.unsupported("complex numbers have no ONNX type")


@rule("rsqrt")
def _rsqrt(ctx, eqn, ins):
    return ctx.op("Reciprocal", [ctx.op("Sqrt", ins)])


@rule("square")
def _square(ctx, eqn, ins):
    return ctx.op("Mul", [ins[0], ins[0]])


@rule("cbrt")
def _cbrt(ctx, eqn, ins):
    x = ins[0]
    r = ctx.op("Pow", [ctx.op("Abs", [x]), _c(ctx, eqn, 1 / 3)])
    return ctx.op("Mul", [ctx.op("Sign", [x]), r])


@rule("exp2")
def _exp2(ctx, eqn, ins):
    return ctx.op("Pow", [_c(ctx, eqn, 2.0), ins[0]])


@rule("log2", "log10")
def _logb(ctx, eqn, ins):
    base = 2.0 if eqn.prim.name == "log2" else 10.0
    return ctx.op("Div", [ctx.op("Log", ins), _c(ctx, eqn, math.log(base))])


@rule("log1p")
def _log1p(ctx, eqn, ins):
    return ctx.op("Log", [ctx.op("Add", [ins[0], _c(ctx, eqn, 1.0)])])


@rule("expm1")
def _expm1(ctx, eqn, ins):
    return ctx.op("Sub", [ctx.op("Exp", ins), _c(ctx, eqn, 1.0)])


@rule("logit")
def _logit(ctx, eqn, ins):
    x = ins[0]
    return ctx.op("Log", [ctx.op("Div", [x, ctx.op("Sub", [_c(ctx, eqn, 1.0), x])])])


@rule("integer_pow")
def _integer_pow(ctx, eqn, ins):
    y = int(eqn.params["y"])
    x = ins[0]
    if y == 2:
        return ctx.op("Mul", [x, x])
    if y == 1:
        return ctx.op("Identity", [x])
    if y < 0:
        return ctx.op("Reciprocal", [ctx.op("Pow", [x, ctx.const(np.asarray(-y, x_dtype(eqn)))])])
    return ctx.op("Pow", [x, ctx.const(np.asarray(y, x_dtype(eqn)))])


def x_dtype(eqn):
    dt = eqn.invars[0].aval.dtype
    return dt if dt.kind == "f" else np.int64


@rule("abs", "pow", "div")
def _real_only(ctx, eqn, ins):
    """One ONNX operator, for real operands only."""
    _unsupported_complex(ctx, eqn)
    return ctx.op({"abs": "Abs", "pow": "Pow", "div": "Div"}[eqn.prim.name], ins)


@rule("rem")
def _rem(ctx, eqn, ins):
    return ctx.op("Mod", ins, fmod=1)  # C's fmod: the sign of the dividend, as lax.rem


@rule("max", "min")
def _extremum(ctx, eqn, ins):
    return ctx.op("Max" if eqn.prim.name == "max" else "Min", ins)


@rule("ne")
def _ne(ctx, eqn, ins):
    return ctx.op("Not", [ctx.op("Equal", ins)])


@rule("not", "and", "or", "xor")
def _bitwise(ctx, eqn, ins):
    logical = eqn.invars[0].aval.dtype.kind == "b"
    names = {"not": ("Not", "BitwiseNot"), "and": ("And", "BitwiseAnd"), "or": ("Or", "BitwiseOr"),
             "xor": ("Xor", "BitwiseXor")}[eqn.prim.name]
    return ctx.op(names[0] if logical else names[1], ins)


@rule("round")
def _round(ctx, eqn, ins):
    if int(eqn.params.get("rounding_method", 0)) == 1:
        return ctx.op("Round", ins)  # ONNX's Round breaks ties to even
    x = ins[0]  # away from zero: sign(x) * floor(|x| + 1/2)
    return ctx.op("Mul", [ctx.op("Sign", [x]), ctx.op("Floor", [ctx.op("Add", [ctx.op("Abs", [x]),
                                                                               _c(ctx, eqn, 0.5)])])])


@rule("is_finite")
def _is_finite(ctx, eqn, ins):
    return ctx.op("Not", [ctx.op("Or", [ctx.op("IsInf", ins), ctx.op("IsNaN", ins)])])


@rule("clamp")
def _clamp(ctx, eqn, ins):
    lo, x, hi = ins
    return ctx.op("Min", [ctx.op("Max", [x, lo]), hi])


@rule("clamp_bounds")
def _clamp_bounds(ctx, eqn, ins):
    x = ins[0]
    for bound, op in ((eqn.params.get("lo"), "Max"), (eqn.params.get("hi"), "Min")):
        if bound is not None:
            x = ctx.op(op, [x, _c(ctx, eqn, bound)])
    return x if x is not ins[0] else ctx.op("Identity", [x])


@rule("elu")
def _elu(ctx, eqn, ins):
    p = eqn.params
    alpha, scale, s_in = p["alpha"], p.get("scale", 1.0), p.get("input_scale", 1.0)
    x = ins[0]
    zero = _c(ctx, eqn, 0.0)
    xn = ctx.op("Min", [x, zero])
    if s_in != 1.0:
        xn = ctx.op("Mul", [xn, _c(ctx, eqn, s_in)])
    neg = ctx.op("Mul", [ctx.op("Sub", [ctx.op("Exp", [xn]), _c(ctx, eqn, 1.0)]), _c(ctx, eqn, alpha)])
    out = ctx.op("Where", [ctx.op("Greater", [x, zero]), x, neg])
    return ctx.op("Mul", [out, _c(ctx, eqn, scale)]) if scale != 1.0 else out


@rule("logaddexp")
def _logaddexp(ctx, eqn, ins):
    x, y = ins  # max(x, y) + log1p(exp(-|x - y|)), as the card
    e = ctx.op("Exp", [ctx.op("Neg", [ctx.op("Abs", [ctx.op("Sub", [x, y])])])])
    return ctx.op("Add", [ctx.op("Max", [x, y]), ctx.op("Log", [ctx.op("Add", [e, _c(ctx, eqn, 1.0)])])])


@rule("erfc")
def _erfc(ctx, eqn, ins):
    return ctx.op("Sub", [_c(ctx, eqn, 1.0), ctx.op("Erf", ins)])


@rule("convert_element_type")
def _convert(ctx, eqn, ins):
    _unsupported_complex(ctx, eqn)
    src, dst = eqn.invars[0].aval.dtype, eqn.outvars[0].aval.dtype
    if src == dst:
        return ctx.op("Identity", ins)
    return ctx.op("Cast", ins, to=ctx.dtype(dst))


@rule("atan2")
def _atan2(ctx, eqn, ins):
    """atan(y / x), moved to x's half-plane by +-pi after the sign bit of y, as C's atan2 on every special
    point: a sign bit is read as v < 0 or 1 / v < 0 (-0; ONNX has no signbit), (+-0, +-0) starts from y itself
    (so atan2(-0, 0) = -0, atan2(0, -0) = pi) and two infinities from atan(sign(y) / sign(x)) (+-pi/4)."""
    y, x = ins
    zero, one, inf = _c(ctx, eqn, 0.0), _c(ctx, eqn, 1.0), _c(ctx, eqn, math.inf)
    both_inf = ctx.op("And", [ctx.op("Equal", [ctx.op("Abs", [y]), inf]), ctx.op("Equal", [ctx.op("Abs", [x]), inf])])
    ratio = ctx.op("Where", [both_inf, ctx.op("Div", [ctx.op("Sign", [y]), ctx.op("Sign", [x])]),
                             ctx.op("Div", [y, x])])
    both_zero = ctx.op("And", [ctx.op("Equal", [y, zero]), ctx.op("Equal", [x, zero])])
    q = ctx.op("Where", [both_zero, y, ctx.op("Atan", [ratio])])
    pi = _c(ctx, eqn, math.pi)
    y_neg, x_neg = (ctx.op("Or", [ctx.op("Less", [v, zero]), ctx.op("Less", [ctx.op("Div", [one, v]), zero])])
                    for v in (y, x))
    turn = ctx.op("Where", [y_neg, ctx.op("Neg", [pi]), pi])
    return ctx.op("Where", [x_neg, ctx.op("Add", [q, turn]), q])
