"""ONNX rules for the shape and indexing cards: broadcast_in_dim, reshape, transpose, squeeze, expand_dims,
concatenate, slice, pad, rev, iota, full, gather, scatter, dynamic_slice, dynamic_update_slice. Shapes that
follow a dynamic axis are built at run time (`ctx.shape_tensor`)."""
from __future__ import annotations

import numpy as np

from ._graph import INT64_MAX, INT64_MIN, Dim, is_static, rule


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


def _inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


@rule("scatter")
def _scatter(ctx, eqn, ins):
    """scatter(x, idx, upd, axes, mode) -> ScatterND: x's indexed axes to the front, each of them padded by
    one slot where the rows that funcgrad drops (any index out of range) are sent, then sliced off again.
    Duplicate rows: mode "set" keeps the last one, as funcgrad's card does."""
    x, idx, upd = ins
    xs = ctx.shape(eqn.invars[0])
    axes = [int(a) for a in eqn.params["axes"]]
    mode = eqn.params["mode"]
    if not axes:
        raise ctx.unsupported("a scatter with no indexed axis (every row addresses the whole operand)")
    if mode in ("max", "min") and ctx.opset < 18:
        raise ctx.unsupported(f"scatter with mode {mode!r} needs opset 18 (ScatterND's reduction={mode})")
    sizes = [xs[a] for a in axes]
    if not is_static(sizes):
        raise ctx.unsupported("a scatter along a dynamic axis")
    k, nd = len(axes), len(xs)
    perm = axes + [d for d in range(nd) if d not in axes]
    if perm != list(range(nd)):
        x = ctx.op("Transpose", [x], perm=perm)
    zero = ctx.const(np.zeros((), eqn.invars[0].aval.dtype))
    x = ctx.op("Pad", [x, ctx.i64([0] * nd + [1] * k + [0] * (nd - k)), zero], mode="constant")
    if eqn.invars[1].aval.dtype != np.int64:
        idx = ctx.op("Cast", [idx], to=ctx.dtype(np.int64))
    bounds = ctx.i64(sizes)
    bad = ctx.op("Or", [ctx.op("Less", [idx, ctx.const(np.int64(0))]), ctx.op("GreaterOrEqual", [idx, bounds])])
    bad_row = ctx.op("Cast", [_reduce_last(ctx, "ReduceMax", ctx.op("Cast", [bad], to=ctx.dtype(np.int64)))],
                     to=ctx.dtype(np.bool_))
    idx = ctx.op("Where", [bad_row, bounds, idx])
    reduction = {"set": None, "add": "add", "mul": "mul", "max": "max", "min": "min"}[mode]
    out = ctx.op("ScatterND", [x, idx, upd], reduction=reduction)
    out = ctx.op("Slice", [out, ctx.i64([0] * k), bounds, ctx.i64(list(range(k)))])
    if perm != list(range(nd)):
        out = ctx.op("Transpose", [out], perm=_inverse(perm))
    return out


def _reduce_last(ctx, op, x):
    """Reduce<op> over the last axis, keeping it (axes as an input from opset 18)."""
    if ctx.opset >= 18:
        return ctx.op(op, [x, ctx.i64([-1])], keepdims=1)
    return ctx.op(op, [x], axes=[-1], keepdims=1)


def _clamped_starts(ctx, starts, shape, window) -> str:
    """The run-time start indices as one int64 vector, each clamped to [0, size - window] (as lax does)."""
    parts = []
    for s, d, w in zip(starts, shape, window):
        s = ctx.op("Unsqueeze", [ctx.op("Cast", [s], to=ctx.dtype(np.int64)), ctx.i64([0])])
        hi = ctx.i64([d - w]) if not isinstance(d, Dim) else ctx.op("Sub", [ctx.dim(d), ctx.i64([w])])
        parts.append(ctx.op("Max", [ctx.op("Min", [s, hi]), ctx.i64([0])]))
    return parts[0] if len(parts) == 1 else ctx.op("Concat", parts, axis=0)


@rule("dynamic_slice")
def _dynamic_slice(ctx, eqn, ins):
    x, starts = ins[0], ins[1:]
    sizes = [int(s) for s in eqn.params["slice_sizes"]]
    nd = len(sizes)
    if nd == 0:
        return ctx.op("Identity", [x])
    st = _clamped_starts(ctx, starts, ctx.shape(eqn.invars[0]), sizes)
    return ctx.op("Slice", [x, st, ctx.op("Add", [st, ctx.i64(sizes)]), ctx.i64(list(range(nd)))])


@rule("dynamic_update_slice")
def _dynamic_update_slice(ctx, eqn, ins):
    """ScatterND of the update at every index of a grid offset by the (clamped) run-time starts."""
    x, upd, starts = ins[0], ins[1], ins[2:]
    us = ctx.shape(eqn.invars[1])
    if not is_static(us):
        raise ctx.unsupported("a dynamic_update_slice whose update has a dynamic axis")
    nd = len(us)
    if nd == 0:
        return ctx.op("Identity", [upd])
    st = _clamped_starts(ctx, starts, ctx.shape(eqn.invars[0]), us)
    grid = np.stack(np.indices(tuple(us), dtype=np.int64), axis=-1)
    return ctx.op("ScatterND", [x, ctx.op("Add", [ctx.const(grid), st]), upd])
