"""ONNX rules for the shape and indexing cards: broadcast_in_dim, reshape, transpose, squeeze, expand_dims,
concatenate, slice, pad, rev, iota, full, gather. Shapes that follow a dynamic axis are built at run time
(`ctx.shape_tensor`)."""
from __future__ import annotations

import numpy as np

from ._graph import INT64_MAX, INT64_MIN, Dim, rule


@rule("broadcast_in_dim")
def _broadcast_in_dim(ctx, eqn, ins):
    x = ins[0]
    xs = ctx.shape(eqn.invars[0])
    out = ctx.shape(eqn.outvars[0])
    bdims = tuple(eqn.params["broadcast_dimensions"])
    new = [i for i in range(len(out)) if i not in bdims]
    if new:
        x = ctx.op("Unsqueeze", [x, ctx.i64(new)])
    aligned = [1] * len(out)
    for j, b in enumerate(bdims):
        aligned[b] = xs[j]
    if aligned == list(out):
        return x if new else ctx.op("Identity", [x])
    # Expand broadcasts: a 1 in the target keeps the operand's own size there (dynamic or not)
    target = [1 if aligned[i] == out[i] else out[i] for i in range(len(out))]
    return ctx.op("Expand", [x, ctx.shape_tensor(target)])


def reshape_to(ctx, x: str, shape) -> str:
    shape = list(shape)
    dyn = [i for i, d in enumerate(shape) if isinstance(d, Dim)]
    if len(dyn) == 1:  # the one dynamic dimension is whatever is left
        shape[dyn[0]] = -1
        return ctx.op("Reshape", [x, ctx.i64(shape)])
    if not dyn and 0 in shape:
        return ctx.op("Reshape", [x, ctx.i64(shape)], allowzero=1)
    return ctx.op("Reshape", [x, ctx.shape_tensor(shape)])


@rule("reshape")
def _reshape(ctx, eqn, ins):
    if eqn.params.get("dimensions") is not None:
        raise ctx.unsupported("reshape with `dimensions` (a transpose first) is not supported")
    return reshape_to(ctx, ins[0], ctx.shape(eqn.outvars[0]))


@rule("transpose")
def _transpose(ctx, eqn, ins):
    return ctx.op("Transpose", ins, perm=[int(p) for p in eqn.params["permutation"]])


@rule("squeeze")
def _squeeze(ctx, eqn, ins):
    dims = list(eqn.params["dimensions"])
    return ctx.op("Squeeze", [ins[0], ctx.i64(dims)]) if dims else ctx.op("Identity", ins)


@rule("expand_dims")
def _expand_dims(ctx, eqn, ins):
    dims = list(eqn.params["dimensions"])
    return ctx.op("Unsqueeze", [ins[0], ctx.i64(dims)]) if dims else ctx.op("Identity", ins)


@rule("concatenate")
def _concatenate(ctx, eqn, ins):
    return ctx.op("Concat", ins, axis=int(eqn.params["dimension"]))


def _index(ctx, value, dim, *, end: bool):
    """A start/limit index along a dimension of size `dim` as an int64 piece (int or runtime tensor)."""
    if isinstance(value, Dim) or isinstance(dim, Dim):
        if end and value == dim:
            return INT64_MAX
        if isinstance(value, Dim):
            return value
    return int(value)


@rule("slice")
def _slice(ctx, eqn, ins):
    p = eqn.params
    xs = ctx.shape(eqn.invars[0])
    starts, limits = list(p["start_indices"]), list(p["limit_indices"])
    strides = list(p.get("strides") or [1] * len(xs))
    ts, tl = ctx.twin_param("start_indices"), ctx.twin_param("limit_indices")
    if ts is not None:  # indices that moved with the dynamic axes
        starts = [a if a == b else Dim(a, b) for a, b in zip(starts, ts)]
        limits = [a if a == b else Dim(a, b) for a, b in zip(limits, tl)]
    axes = [i for i in range(len(xs)) if not (starts[i] == 0 and limits[i] == xs[i] and strides[i] == 1)]
    if not axes:
        return ctx.op("Identity", ins)
    st = [_index(ctx, starts[i], xs[i], end=False) for i in axes]
    en = [_index(ctx, limits[i], xs[i], end=True) for i in axes]
    return ctx.op("Slice", [ins[0], ctx.shape_tensor(st), ctx.shape_tensor(en), ctx.i64(axes),
                            ctx.i64([strides[i] for i in axes])])


@rule("pad")
def _pad(ctx, eqn, ins):
    cfg = [tuple(int(v) for v in c) for c in eqn.params["padding_config"]]
    if any(c[2] for c in cfg):
        raise ctx.unsupported("interior padding has no ONNX operator")
    x, pv = ins
    lo, hi = [c[0] for c in cfg], [c[1] for c in cfg]
    return ctx.op("Pad", [x, ctx.i64(lo + hi), pv], mode="constant")


@rule("rev")
def _rev(ctx, eqn, ins):
    dims = list(eqn.params["dimensions"])
    n = len(dims)
    return ctx.op("Slice", [ins[0], ctx.i64([-1] * n), ctx.i64([INT64_MIN] * n), ctx.i64(dims),
                            ctx.i64([-1] * n)])


@rule("iota")
def _iota(ctx, eqn, ins):
    out = ctx.shape(eqn.outvars[0])
    dim = int(eqn.params["dimension"])
    dt = eqn.outvars[0].aval.dtype
    rdt = dt if dt in (np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.float32), np.dtype(np.float64)) \
        else np.dtype(np.int64)
    n = ctx.scalar_dim(out[dim])
    if not isinstance(out[dim], Dim):
        r = ctx.const(np.arange(out[dim], dtype=rdt))
    else:
        r = ctx.op("Range", [ctx.const(np.asarray(0, rdt)), ctx.op("Cast", [n], to=ctx.dtype(rdt)),
                             ctx.const(np.asarray(1, rdt))])
    if rdt != dt:
        r = ctx.op("Cast", [r], to=ctx.dtype(dt))
    if len(out) == 1:
        return r
    others = [i for i in range(len(out)) if i != dim]
    r = ctx.op("Unsqueeze", [r, ctx.i64(others)])
    return ctx.op("Expand", [r, ctx.shape_tensor([1 if i == dim else d for i, d in enumerate(out)])])


@rule("full")
def _full(ctx, eqn, ins):
    out = ctx.shape(eqn.outvars[0])
    value = ctx.const(np.asarray(eqn.params["fill_value"], eqn.outvars[0].aval.dtype))
    return ctx.op("Expand", [value, ctx.shape_tensor(out)])


@rule("gather")
def _gather(ctx, eqn, ins):
    """gather(x, idx, axes): x's indexed axes to the front, the index rows clamped into range (funcgrad's
    gather clamps, as JAX's default), then GatherND."""
    x, idx = ins
    xs = ctx.shape(eqn.invars[0])
    axes = [int(a) for a in eqn.params["axes"]]
    rest = [d for d in range(len(xs)) if d not in axes]
    perm = axes + rest
    if perm != list(range(len(xs))):
        x = ctx.op("Transpose", [x], perm=perm)
    if eqn.invars[1].aval.dtype != np.int64:
        idx = ctx.op("Cast", [idx], to=ctx.dtype(np.int64))
    hi = ctx.op("Sub", [ctx.shape_tensor([xs[a] for a in axes]), ctx.i64([1])])
    idx = ctx.op("Min", [ctx.op("Max", [idx, ctx.const(np.int64(0))]), hi])
    return ctx.op("GatherND", [x, idx])
