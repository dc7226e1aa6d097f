"""ONNX rules for complex values, which travel through the graph as (real, imaginary) pairs.

ONNX Runtime has no complex tensors, but ONNX's DFT works on real tensors with a trailing axis of 2 (real,
imaginary), the layout torch's exporter uses for its FFTs. funcgrad does the same: every complex value
of the traced program is, in the exported graph, a real tensor of its shape plus a trailing axis of 2.
FFTs, the elementwise arithmetic and parts (real, imag, abs, conj, complex, casts), sums and the shape
operations have rules here (`Exporter.translate_eqn` sends every equation that touches a complex value
to this table); any other primitive on complex values raises UnsupportedError. The graph's inputs and
outputs must be real (take `.real`, `.imag` or `abs` before returning).
"""
from __future__ import annotations

import numpy as np

from ._graph import Dim, complex_rule
from .rules_reduction import reduce
from .rules_shape import reshape_to


def _real_dtype(var):
    return np.dtype(var.aval.dtype).type(0).real.dtype


def _parts(ctx, x: str):
    """The real and imaginary parts of a pair tensor."""
    re, im = ctx.op("Split", [x, ctx.i64([1, 1])], n_out=2, axis=-1)
    return ctx.op("Squeeze", [re, ctx.i64([-1])]), ctx.op("Squeeze", [im, ctx.i64([-1])])


def _pair(ctx, re: str, im: str) -> str:
    return ctx.op("Concat", [ctx.op("Unsqueeze", [re, ctx.i64([-1])]), ctx.op("Unsqueeze", [im, ctx.i64([-1])])],
                  axis=-1)


def _as_pair(ctx, var, name: str) -> str:
    """Operand `name` as a pair tensor (a real operand gets a zero imaginary part)."""
    if var.aval.dtype.kind == "c":
        return name
    return _pair(ctx, name, ctx.op("Mul", [name, ctx.const(np.asarray(0, var.aval.dtype))]))


# --- parts and casts ---------------------------------------------------------------------------------
@complex_rule("real", "imag")
def _part(ctx, eqn, ins):
    re, im = _parts(ctx, ins[0])
    return re if eqn.prim.name == "real" else im


@complex_rule("abs")
def _abs(ctx, eqn, ins):
    return reduce(ctx, "ReduceL2", ins[0], [len(eqn.invars[0].aval.shape)])


@complex_rule("conj")
def _conj(ctx, eqn, ins):
    return ctx.op("Mul", [ins[0], ctx.const(np.asarray([1, -1], _real_dtype(eqn.outvars[0])))])


@complex_rule("complex")
def _complex(ctx, eqn, ins):
    return _pair(ctx, *ins)


@complex_rule("convert_element_type")
def _convert(ctx, eqn, ins):
    src, dst = eqn.invars[0].aval.dtype, eqn.outvars[0].aval.dtype
    if dst.kind != "c":
        raise ctx.unsupported(f"a cast from {src} to {dst} (take .real or abs explicitly)")
    rdt = _real_dtype(eqn.outvars[0])
    x = _as_pair(ctx, eqn.invars[0], ctx.op("Cast", ins, to=ctx.dtype(rdt)) if src.kind != "c" else ins[0])
    return x if src.kind != "c" and src == rdt or src == dst else ctx.op("Cast", [x], to=ctx.dtype(rdt))


# --- arithmetic --------------------------------------------------------------------------------------
@complex_rule("add", "sub")
def _add_sub(ctx, eqn, ins):
    a, b = (_as_pair(ctx, v, n) for v, n in zip(eqn.invars, ins))
    return ctx.op("Add" if eqn.prim.name == "add" else "Sub", [a, b])


@complex_rule("neg")
def _neg(ctx, eqn, ins):
    return ctx.op("Neg", ins)


@complex_rule("mul", "div")
def _mul_div(ctx, eqn, ins):
    (a, b), (c, d) = (_parts(ctx, _as_pair(ctx, v, n)) for v, n in zip(eqn.invars, ins))
    if eqn.prim.name == "mul":  # (a + bi)(c + di) = (ac - bd) + (ad + bc)i
        return _pair(ctx, ctx.op("Sub", [ctx.op("Mul", [a, c]), ctx.op("Mul", [b, d])]),
                     ctx.op("Add", [ctx.op("Mul", [a, d]), ctx.op("Mul", [b, c])]))
    den = ctx.op("Add", [ctx.op("Mul", [c, c]), ctx.op("Mul", [d, d])])
    re = ctx.op("Add", [ctx.op("Mul", [a, c]), ctx.op("Mul", [b, d])])
    im = ctx.op("Sub", [ctx.op("Mul", [b, c]), ctx.op("Mul", [a, d])])
    return _pair(ctx, ctx.op("Div", [re, den]), ctx.op("Div", [im, den]))


@complex_rule("exp")
def _exp(ctx, eqn, ins):  # e^(a + bi) = e^a (cos b + i sin b)
    a, b = _parts(ctx, ins[0])
    r = ctx.op("Exp", [a])
    return _pair(ctx, ctx.op("Mul", [r, ctx.op("Cos", [b])]), ctx.op("Mul", [r, ctx.op("Sin", [b])]))


@complex_rule("reduce_sum")
def _sum(ctx, eqn, ins):
    return reduce(ctx, "ReduceSum", ins[0], eqn.params["axes"])


# --- shapes: the pair axis stays last ----------------------------------------------------------------
@complex_rule("reshape")
def _reshape(ctx, eqn, ins):
    if eqn.params.get("dimensions") is not None:
        raise ctx.unsupported("reshape with `dimensions` (a transpose first) is not supported")
    return reshape_to(ctx, ins[0], list(ctx.shape(eqn.outvars[0])) + [2])


@complex_rule("transpose")
def _transpose(ctx, eqn, ins):
    perm = [int(p) for p in eqn.params["permutation"]]
    return ctx.op("Transpose", ins, perm=perm + [len(perm)])


@complex_rule("broadcast_in_dim")
def _broadcast_in_dim(ctx, eqn, ins):
    out = list(ctx.shape(eqn.outvars[0]))
    bdims = list(eqn.params["broadcast_dimensions"])
    new = [i for i in range(len(out)) if i not in bdims]
    x = ctx.op("Unsqueeze", [ins[0], ctx.i64(new)]) if new else ins[0]
    return ctx.op("Expand", [x, ctx.shape_tensor(out + [2])])


@complex_rule("squeeze", "expand_dims")
def _squeeze(ctx, eqn, ins):
    dims = [int(d) for d in eqn.params["dimensions"]]
    if not dims:
        return ctx.op("Identity", ins)
    return ctx.op("Squeeze" if eqn.prim.name == "squeeze" else "Unsqueeze", [ins[0], ctx.i64(dims)])


@complex_rule("concatenate")
def _concatenate(ctx, eqn, ins):
    return ctx.op("Concat", ins, axis=int(eqn.params["dimension"]))


@complex_rule("slice")
def _slice(ctx, eqn, ins):
    p = eqn.params
    xs = ctx.shape(eqn.invars[0])
    if any(isinstance(d, Dim) for d in xs):
        raise ctx.unsupported("a slice of a complex value along a dynamic axis")
    starts, limits = [int(s) for s in p["start_indices"]], [int(s) for s in p["limit_indices"]]
    strides = [int(s) for s in (p.get("strides") or [1] * len(xs))]
    return ctx.op("Slice", [ins[0], ctx.i64(starts), ctx.i64(limits), ctx.i64(list(range(len(xs)))),
                            ctx.i64(strides)])


# --- FFTs: ONNX DFT (opset 17+) over one axis at a time ------------------------------------------------
def _dft(ctx, x: str, axis: int, inverse: bool = False, onesided: bool = False, length=None) -> str:
    if ctx.opset < 17:
        raise ctx.unsupported("ONNX's DFT needs opset_version 17 or later")
    ins = [x] if length is None else [x, ctx.const(np.int64(length))]
    if ctx.opset >= 20:
        if length is None:
            ins.append("")
        ins.append(ctx.const(np.int64(axis)))
        return ctx.op("DFT", ins, inverse=int(inverse), onesided=int(onesided))
    return ctx.op("DFT", ins, axis=axis, inverse=int(inverse), onesided=int(onesided))


def _hermitian_full(ctx, x: str, n: int, axis: int) -> str:
    """The full length-n spectrum along `axis` of a one-sided one (n // 2 + 1 bins): bins n//2+1 .. n-1
    are the conjugates of bins n - k, in reverse order."""
    m = n - n // 2 - 1  # the missing bins
    if m == 0:
        return x
    # bins m .. 1, reversed: Slice with a negative step from m down to 1
    tail = ctx.op("Slice", [x, ctx.i64([m]), ctx.i64([0]), ctx.i64([axis]), ctx.i64([-1])])
    sign = np.asarray([1, -1], np.float32)
    tail = ctx.op("Mul", [tail, ctx.op("CastLike", [ctx.const(sign), tail])])
    return ctx.op("Concat", [x, tail], axis=axis)


@complex_rule("fft")
def _fft(ctx, eqn, ins):
    kind, lengths = eqn.params["fft_type"], [int(n) for n in eqn.params["fft_lengths"]]
    nd = len(eqn.invars[0].aval.shape)
    axes = list(range(nd - len(lengths), nd))
    if any(isinstance(d, Dim) for d in (ctx.shape(eqn.invars[0])[a] for a in axes)):
        raise ctx.unsupported("an FFT along a dynamic axis")
    x = ins[0]
    if kind == "RFFT":  # real in: a pair axis of 1, one-sided along the last axis, then full along the rest
        x = _dft(ctx, ctx.op("Unsqueeze", [x, ctx.i64([-1])]), axes[-1], onesided=True)
        for a in axes[:-1]:
            x = _dft(ctx, x, a)
        return x
    if kind == "IRFFT":  # the others inverse, then the last axis's Hermitian spectrum, inverse, real part
        for a in axes[:-1]:
            x = _dft(ctx, x, a, inverse=True)
        x = _dft(ctx, _hermitian_full(ctx, x, lengths[-1], axes[-1]), axes[-1], inverse=True)
        return _parts(ctx, x)[0]
    for a in axes:
        x = _dft(ctx, x, a, inverse=kind == "IFFT")
    return x
