"""ONNX rules for reductions (sum/max/min/prod/and/or, argmax/argmin), softmax/log_softmax, cumulative sums, products, extrema and
logsumexps, and dot_general (MatMul/Gemm where they fit, Einsum otherwise)."""
from __future__ import annotations

import string

import numpy as np

from ._graph import Dim, rule


def reduce(ctx, op: str, x: str, axes, keepdims: int = 0) -> str:
    """ONNX Reduce<op> over `axes` (axes an input from opset 18, ReduceSum's from 13)."""
    axes = [int(a) for a in axes]
    if not axes:
        return ctx.op("Identity", [x])
    if op == "ReduceSum" or ctx.opset >= 18:
        return ctx.op(op, [x, ctx.i64(axes)], keepdims=keepdims)
    return ctx.op(op, [x], axes=axes, keepdims=keepdims)


def _any_nan(ctx, x: str, axes, keepdims: int = 0) -> str:
    """A bool tensor: does x hold a NaN along `axes`? (ORT's ReduceMax/ReduceMin/ArgMax skip NaN, where
    funcgrad's max/min/argmax propagate it, as NumPy's and JAX's do.)"""
    nan = ctx.op("Cast", [ctx.op("IsNaN", [x])], to=ctx.dtype(np.int32))
    return ctx.op("Cast", [reduce(ctx, "ReduceMax", nan, axes, keepdims)], to=ctx.dtype(np.bool_))


@rule("reduce_sum", "reduce_max", "reduce_min", "reduce_prod")
def _reduce(ctx, eqn, ins):
    op = {"reduce_sum": "ReduceSum", "reduce_max": "ReduceMax", "reduce_min": "ReduceMin",
          "reduce_prod": "ReduceProd"}[eqn.prim.name]
    dt = eqn.invars[0].aval.dtype
    if dt.kind == "b":  # max/min of bools: any/all
        return _bool_reduce(ctx, eqn, ins, "ReduceMax" if op == "ReduceMax" else "ReduceMin")
    out = reduce(ctx, op, ins[0], eqn.params["axes"])
    if op in ("ReduceMax", "ReduceMin") and dt.kind == "f" and list(eqn.params["axes"]):
        out = ctx.op("Where", [_any_nan(ctx, ins[0], eqn.params["axes"]), ctx.const(np.asarray(np.nan, dt)), out])
    return out


def _bool_reduce(ctx, eqn, ins, op):
    x = ctx.op("Cast", ins, to=ctx.dtype(np.int32))
    return ctx.op("Cast", [reduce(ctx, op, x, eqn.params["axes"])], to=ctx.dtype(np.bool_))


@rule("softmax", "log_softmax")
def _softmax(ctx, eqn, ins):
    """The cards' formula: x - max shifted, exp, over its sum (log_softmax: the shift minus the sum's log). A NaN
    the ReduceMax skips still makes its slice's sum, so the whole slice, NaN, as in NumPy."""
    axes = eqn.params["axes"]
    s = ctx.op("Sub", [ins[0], reduce(ctx, "ReduceMax", ins[0], axes, keepdims=1)])
    e = ctx.op("Exp", [s])
    total = reduce(ctx, "ReduceSum", e, axes, keepdims=1)
    if eqn.prim.name == "softmax":
        return ctx.op("Div", [e, total])
    return ctx.op("Sub", [s, ctx.op("Log", [total])])


@rule("reduce_and", "reduce_or")
def _reduce_bool(ctx, eqn, ins):
    return _bool_reduce(ctx, eqn, ins, "ReduceMin" if eqn.prim.name == "reduce_and" else "ReduceMax")


@rule("argmax", "argmin")
def _arg(ctx, eqn, ins):
    axis = int(eqn.params["axis"])
    out = ctx.op("ArgMax" if eqn.prim.name == "argmax" else "ArgMin", ins, axis=axis, keepdims=0)
    if eqn.invars[0].aval.dtype.kind == "f":  # the first NaN's index, as NumPy and JAX (ORT skips NaN)
        nan = ctx.op("Cast", [ctx.op("IsNaN", ins)], to=ctx.dtype(np.int32))
        out = ctx.op("Where", [_any_nan(ctx, ins[0], [axis]), ctx.op("ArgMax", [nan], axis=axis, keepdims=0), out])
    dt = eqn.outvars[0].aval.dtype
    return out if dt == np.int64 else ctx.op("Cast", [out], to=ctx.dtype(dt))


@rule("cumsum")
def _cumsum(ctx, eqn, ins):
    return ctx.op("CumSum", [ins[0], ctx.const(np.int64(eqn.params["axis"]))],
                  reverse=int(bool(eqn.params.get("reverse", False))))


@rule("dot_general")
def _dot_general(ctx, eqn, ins):
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lc, rc, lb, rb = map(list, (lc, rc, lb, rb))
    x, y = ins
    nl, nr = eqn.invars[0].aval.ndim, eqn.invars[1].aval.ndim
    for v in eqn.invars:
        if v.aval.dtype.kind == "c":
            raise ctx.unsupported("complex numbers have no ONNX type")
    nb = len(lb)
    out = None
    plain_batch = lb == list(range(nb)) and rb == list(range(nb))
    # MatMul's broadcasting matches dot_general when the left operand's free dims sit before its last,
    # contracted, dim and the right operand is a (batch of) matrix: [..., k] @ [k, n], [B, m, k] @ [B, k, n]
    if plain_batch and lc == [nl - 1] and nr == nb + 2 and rc in ([nb], [nb + 1]) and (nb == 0 or nl == nb + 2):
        if rc == [nb]:
            out = ctx.op("MatMul", [x, y])
        elif nb == 0 and nl == 2:
            out = ctx.op("Gemm", [x, y], transB=1)
        else:
            out = ctx.op("MatMul", [x, ctx.op("Transpose", [y], perm=list(range(nb)) + [nb + 1, nb])])
    if out is None:
        letters = iter(string.ascii_letters)
        ls = [next(letters) for _ in range(nl)]
        rs = [None] * nr
        for a, b in zip(lb, rb):
            rs[b] = ls[a]
        for a, b in zip(lc, rc):
            rs[b] = ls[a]
        rs = [r or next(letters) for r in rs]
        free_l = [ls[i] for i in range(nl) if i not in lb and i not in lc]
        free_r = [rs[i] for i in range(nr) if i not in rb and i not in rc]
        eq = f"{''.join(ls)},{''.join(rs)}->{''.join([ls[i] for i in lb] + free_l + free_r)}"
        out = ctx.op("Einsum", [x, y], equation=eq)
    dt = eqn.outvars[0].aval.dtype
    if dt != eqn.invars[0].aval.dtype:
        out = ctx.op("Cast", [out], to=ctx.dtype(dt))
    return out


_CUMULATIVE = {"cumprod": ("ReduceProd", 1), "cummax": ("ReduceMax", "lowest"), "cummin": ("ReduceMin", "highest"),
               "cumlogsumexp": ("ReduceLogSumExp", -np.inf)}


@rule(*_CUMULATIVE)
def _cumulative(ctx, eqn, ins):
    """ONNX has CumSum only: out[..., i, ...] reduces x[..., j, ...] over j <= i (j >= i in reverse), as one
    Reduce over a triangular mask: x gets a new axis i in front of its axis j, the positions outside the
    triangle hold the reduction's identity. Exact (no log/exp round trip); n x n times the operand's memory."""
    op, fill = _CUMULATIVE[eqn.prim.name]
    axis = int(eqn.params["axis"])
    dt = eqn.invars[0].aval.dtype
    if dt.kind == "b":
        raise ctx.unsupported(f"{eqn.prim.name} of booleans")
    if isinstance(fill, str):
        info = np.finfo(dt) if dt.kind == "f" else np.iinfo(dt)
        fill = -np.inf if fill == "lowest" and dt.kind == "f" else np.inf if dt.kind == "f" else \
            (info.min if fill == "lowest" else info.max)
    shape = ctx.shape(eqn.invars[0])
    n, trailing = shape[axis], [1] * (len(shape) - axis - 1)
    reverse = bool(eqn.params.get("reverse", False))
    if not isinstance(n, Dim):
        i, j = np.indices((n, n))
        mask = ctx.const(((j >= i) if reverse else (j <= i)).reshape([n, n] + trailing))
    else:
        r = ctx.op("Range", [ctx.const(np.int64(0)), ctx.scalar_dim(n), ctx.const(np.int64(1))])
        rows, cols = ctx.op("Unsqueeze", [r, ctx.i64([1])]), ctx.op("Unsqueeze", [r, ctx.i64([0])])
        mask = ctx.op("GreaterOrEqual" if reverse else "LessOrEqual", [cols, rows])
        if trailing:
            mask = ctx.op("Unsqueeze", [mask, ctx.i64(list(range(2, 2 + len(trailing))))])
    x = ctx.op("Unsqueeze", [ins[0], ctx.i64([axis])])
    x = ctx.op("Where", [mask, x, ctx.const(np.asarray(fill, dt))])
    out = reduce(ctx, op, x, [axis + 1])
    if op in ("ReduceMax", "ReduceMin") and dt.kind == "f":  # NaN from the first NaN on, as funcgrad's scan
        out = ctx.op("Where", [_any_nan(ctx, x, [axis + 1]), ctx.const(np.asarray(np.nan, dt)), out])
    return out
