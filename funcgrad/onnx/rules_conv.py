"""ONNX rules for convolution (conv_general_dilated -> Conv: any dimension, groups, dilation, padding,
transposed) and windowed reductions (reduce_window_max/min/sum -> MaxPool / AveragePool)."""
from __future__ import annotations

import numpy as np

from ._graph import INT64_MAX, Dim, rule


def _inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


def _dilate(ctx, x: str, axis: int, s: int, shape: list, dtype) -> str:
    """x with s - 1 zeros between consecutive elements along `axis`: each element gets a new axis padded
    to length s, the two axes merge, and the trailing zeros go. shape: x's (logical) shape, updated."""
    n = shape[axis]
    if not isinstance(n, int) or any(isinstance(d, Dim) for d in shape[axis + 1:]):
        raise ctx.unsupported("a transposed convolution along a dynamic spatial axis")
    nd = len(shape)
    x = ctx.op("Unsqueeze", [x, ctx.i64([axis + 1])])
    pads = [0] * (2 * (nd + 1))
    pads[nd + 1 + axis + 1] = s - 1
    x = ctx.op("Pad", [x, ctx.i64(pads), ctx.const(np.zeros((), dtype))], mode="constant")
    x = ctx.op("Reshape", [x, ctx.i64([0] * axis + [-1] + [int(d) for d in shape[axis + 1:]])])
    shape[axis] = (n - 1) * s + 1
    return ctx.op("Slice", [x, ctx.i64([0]), ctx.i64([shape[axis]]), ctx.i64([axis])])


@rule("conv_general_dilated")
def _conv(ctx, eqn, ins):
    """A transposed convolution (lhs_dilation > 1, how funcgrad writes one) becomes a Conv over the input with
    zeros inserted between its elements; negative padding crops the input first."""
    p = eqn.params
    if p.get("batch_group_count", 1) != 1:
        raise ctx.unsupported("batch_group_count > 1 has no ONNX Conv equivalent")
    pads = [tuple(map(int, q)) for q in p["padding"]]
    x, w = ins
    dn = p["dimension_numbers"]
    lhs_spec, rhs_spec, out_spec = (list(map(int, s)) for s in dn)
    ident = list(range(len(lhs_spec)))
    if lhs_spec != ident:  # to N, C, spatial...
        x = ctx.op("Transpose", [x], perm=lhs_spec)
    if rhs_spec != ident:  # to O, I, spatial...
        w = ctx.op("Transpose", [w], perm=rhs_spec)
    nsp = len(lhs_spec) - 2
    in_shape = [ctx.shape(eqn.invars[0])[d] for d in lhs_spec]
    for i, s in enumerate(int(d) for d in (p.get("lhs_dilation") or [1] * nsp)):
        if s != 1:
            x = _dilate(ctx, x, 2 + i, s, in_shape, eqn.invars[0].aval.dtype)
    crop = [(i, max(0, -lo), hi if hi < 0 else INT64_MAX) for i, (lo, hi) in enumerate(pads) if lo < 0 or hi < 0]
    if crop:
        x = ctx.op("Slice", [x, ctx.i64([c[1] for c in crop]), ctx.i64([c[2] for c in crop]),
                             ctx.i64([2 + c[0] for c in crop])])
        pads = [(max(lo, 0), max(hi, 0)) for lo, hi in pads]
    out = ctx.op("Conv", [x, w], strides=[int(s) for s in p["window_strides"]],
                 pads=[a for a, _ in pads] + [b for _, b in pads],
                 dilations=[int(d) for d in (p.get("rhs_dilation") or [1] * nsp)],
                 group=int(p.get("feature_group_count", 1)))
    if out_spec != ident:  # logical (N, C, spatial) -> the output's layout
        out = ctx.op("Transpose", [out], perm=_inverse(out_spec))
    return out


@rule("reduce_window_max", "reduce_window_min", "reduce_window_sum")
def _reduce_window(ctx, eqn, ins):
    """Pooling: the window must cover trailing dims only (the leading ones pass through, as a pooling
    layer's batch and channels); up to two leading dims are added or merged for ONNX's N, C."""
    p = eqn.params
    win = [int(w) for w in p["window_dimensions"]]
    n = len(win)
    strides = [int(s) for s in p.get("window_strides") or [1] * n]
    pads = [tuple(map(int, q)) for q in (p.get("padding") or [(0, 0)] * n)]
    wdil = [int(d) for d in (p.get("window_dilation") or [1] * n)]
    if any(int(d) != 1 for d in (p.get("base_dilation") or [])):
        raise ctx.unsupported("base dilation has no ONNX pooling equivalent")
    active = [i for i in range(n) if (win[i], strides[i], pads[i], wdil[i]) != (1, 1, (0, 0), 1)]
    first = active[0] if active else n
    if active and active != list(range(first, n)):
        raise ctx.unsupported("a window over non-trailing dimensions is not supported")
    if first == n:
        return ctx.op("Identity", ins)
    if first > 2:
        raise ctx.unsupported("a window after more than two passive leading dimensions is not supported")
    x = ins[0]
    lead = 2 - first
    if lead:
        x = ctx.op("Unsqueeze", [x, ctx.i64(list(range(lead)))])
    sp = slice(first, n)
    attrs = dict(kernel_shape=win[sp], strides=strides[sp],
                 pads=[a for a, _ in pads[sp]] + [b for _, b in pads[sp]])
    name = eqn.prim.name
    if name == "reduce_window_sum":
        if any(d != 1 for d in wdil[sp]):
            if ctx.opset < 19:
                raise ctx.unsupported("a dilated sum window needs opset 19 (AveragePool's dilations)")
            attrs["dilations"] = wdil[sp]
        out = ctx.op("AveragePool", [x], count_include_pad=1, **attrs)
        out = ctx.op("Mul", [out, ctx.const(np.asarray(np.prod(win), eqn.invars[0].aval.dtype))])
    else:
        attrs["dilations"] = wdil[sp]
        if name == "reduce_window_min":
            x = ctx.op("Neg", [x])
        out = ctx.op("MaxPool", [x], **attrs)
        if name == "reduce_window_min":
            out = ctx.op("Neg", [out])
    if lead:
        out = ctx.op("Squeeze", [out, ctx.i64(list(range(lead)))])
    return out
