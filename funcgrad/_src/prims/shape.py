"""Shape and data-movement primitives: broadcast_in_dim, reshape, transpose, squeeze, expand_dims,
concatenate, slice, pad, rev; the array creators iota and full; and reduce_sum, broadcast_in_dim's transpose."""
from __future__ import annotations

import math

import numpy as np

from ..core import dtypes
from ..core.array import ArrayBase
from ..core.aval import ShapedArray
from ..core.errors import IncompatibleShapesError
from ..core.primitive import Primitive, shape_error
from ._util import batch_size, check_dtype, type_error, value_error


# --- batching helpers (a transpose and a broadcast: they bind this module's cards) ---------------

def move_axis(x, src: int, dst: int):
    """Move one axis of x (a transpose; the identity when src == dst)."""
    if src == dst:
        return x
    perm = [i for i in range(x.ndim) if i != src]
    perm.insert(dst, src)
    return transpose(x, tuple(perm))


def to_front(x, d, size: int):
    """x with its batch dimension at 0, broadcasting an unbatched x (d is None) to `size` there."""
    if d is None:
        return broadcast_in_dim(x, (size,) + tuple(x.shape), tuple(range(1, x.ndim + 1)))
    return move_axis(x, d, 0)


def elementwise_batch(prim):
    """vmap rule for an elementwise primitive whose operands share one shape."""
    def rule(args, dims, **params):
        first = next(d for d in dims if d is not None)
        if all(d == first for d in dims):
            out, d = prim.bind(*args, **params), first
        else:
            size = batch_size(args, dims)
            out, d = prim.bind(*[to_front(a, d, size) for a, d in zip(args, dims)], **params), 0
        return (out, [d] * len(out)) if prim.multiple_results else (out, d)
    return rule


def _front(args, dims):
    """The single operand of a structural op with its batch dimension moved to the front."""
    return move_axis(args[0], dims[0], 0)


# --- broadcast_in_dim -----------------------------------------------------------------------------

def _bid_rule(x: ShapedArray, *, shape, broadcast_dimensions) -> ShapedArray:
    op = "broadcast_in_dim"
    if len(broadcast_dimensions) != x.ndim:
        type_error(op, f"operand {x.str_short()} needs {x.ndim} broadcast_dimensions, got {broadcast_dimensions}")
    if any(b >= len(shape) or b < 0 for b in broadcast_dimensions) or \
            list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        type_error(op, f"broadcast_dimensions {broadcast_dimensions} must be strictly increasing and "
                       f"within the {len(shape)} dimensions of the target shape {shape}")
    for i, b in enumerate(broadcast_dimensions):
        if x.shape[i] != 1 and x.shape[i] != shape[b]:
            type_error(op, f"cannot broadcast operand {x.str_short()} to shape {shape}: dimension {i} "
                           f"has size {x.shape[i]} but target dimension {b} has size {shape[b]}")
    return ShapedArray(shape, x.dtype, x.weak_type)


def _bid_impl(xp):
    def f(x, *, shape, broadcast_dimensions):
        if xp is np and (not x.ndim or x.flags.c_contiguous) and x.dtype.kind in "biufc":
            # A view with zero strides on the new and stretched dimensions, made directly (numpy's
            # broadcast_to costs ~10x more on small arrays). Like every Array buffer it is never
            # written: writers (the Tensor face, jit's buffer donation) copy or skip views (.base).
            strides = [0] * len(shape)
            for i, b in enumerate(broadcast_dimensions):
                if x.shape[i] == shape[b]:
                    strides[b] = x.strides[i]
                elif x.shape[i] != 1:
                    raise ValueError("bad operands")  # the caller reports it with the shape rule's message
            if len(broadcast_dimensions) != x.ndim:
                raise ValueError("bad operands")
            return np.ndarray(shape, x.dtype, x, 0, strides)
        expanded = [1] * len(shape)
        for i, b in enumerate(broadcast_dimensions):
            expanded[b] = x.shape[i]
        return xp.broadcast_to(x.reshape(expanded), shape)
    return f


def _bid_vjp(g, ans, x, *, shape, broadcast_dimensions):
    """Sum g over the new and the stretched dimensions, then restore x's size-1 dimensions."""
    xs = tuple(x.shape)
    axes = [d for d in range(len(shape)) if d not in broadcast_dimensions]
    for i, b in enumerate(broadcast_dimensions):
        if xs[i] == 1 and shape[b] != 1:
            axes.append(b)
    s = reduce_sum_p.bind(g, axes=tuple(sorted(axes))) if axes else g
    return s if tuple(s.shape) == xs else reshape_p.bind(s, new_sizes=xs)


def _bid_batch(args, dims, *, shape, broadcast_dimensions):
    x = _front(args, dims)
    return broadcast_in_dim(x, (x.shape[0],) + tuple(shape),
                            (0,) + tuple(b + 1 for b in broadcast_dimensions)), 0


broadcast_in_dim_p = Primitive(
    "broadcast_in_dim", impl=_bid_impl, abstract_eval=_bid_rule,
    jvp=[lambda t, ans, x, **p: broadcast_in_dim(t, **p)], vjp=[_bid_vjp], batch=_bid_batch)


def broadcast_in_dim(x, shape, broadcast_dimensions):
    """x broadcast to `shape`, dimension i of x becoming dimension broadcast_dimensions[i] of the result (x's sizes
    must be 1 or equal there), as jax.lax.broadcast_in_dim."""
    shape = tuple(map(int, shape))
    broadcast_dimensions = tuple(map(int, broadcast_dimensions))
    if tuple(x.shape) == shape and broadcast_dimensions == tuple(range(len(shape))):
        return x
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=broadcast_dimensions)


# --- reshape --------------------------------------------------------------------------------------

def _reshape_rule(x: ShapedArray, *, new_sizes) -> ShapedArray:
    if any(d < 0 for d in new_sizes) or math.prod(new_sizes) != math.prod(x.shape):
        value_error("reshape", f"cannot reshape array of shape {x.shape} (size {math.prod(x.shape)}) "
                               f"into shape {new_sizes}")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


reshape_p = Primitive(
    "reshape", impl=lambda xp: (lambda x, *, new_sizes: x.reshape(new_sizes)), abstract_eval=_reshape_rule,
    jvp=[lambda t, ans, x, *, new_sizes: reshape(t, new_sizes)],
    vjp=[lambda g, ans, x, *, new_sizes: reshape(g, x.shape)],
    batch=lambda args, dims, *, new_sizes: (
        reshape(_front(args, dims), (args[0].shape[dims[0]],) + tuple(new_sizes)), 0))


def reshape(x, new_sizes):
    new_sizes = tuple(map(int, new_sizes))
    if tuple(x.shape) == new_sizes:
        return x
    return reshape_p.bind(x, new_sizes=new_sizes)


# --- transpose ------------------------------------------------------------------------------------

def _transpose_rule(x: ShapedArray, *, permutation) -> ShapedArray:
    if sorted(permutation) != list(range(x.ndim)):
        value_error("transpose", f"permutation {permutation} is not a permutation of the "
                                 f"{x.ndim} axes of {x.str_short()}")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


def _inverse(perm):
    return tuple(int(i) for i in np.argsort(perm))


transpose_p = Primitive(
    "transpose", impl=lambda xp: (lambda x, *, permutation: xp.transpose(x, permutation)),
    abstract_eval=_transpose_rule,
    jvp=[lambda t, ans, x, *, permutation: transpose(t, permutation)],
    vjp=[lambda g, ans, x, *, permutation: transpose(g, _inverse(permutation))],
    batch=lambda args, dims, *, permutation: (
        transpose(_front(args, dims), (0,) + tuple(p + 1 for p in permutation)), 0))


def transpose(x, permutation):
    """x with its dimensions permuted: result dimension i is x's dimension permutation[i], as jax.lax.transpose."""
    permutation = tuple(map(int, permutation))
    if permutation == tuple(range(x.ndim)):
        return x
    return transpose_p.bind(x, permutation=permutation)


# --- squeeze / expand_dims ------------------------------------------------------------------------

def _squeeze_rule(x: ShapedArray, *, dimensions) -> ShapedArray:
    for d in dimensions:
        if not 0 <= d < x.ndim or x.shape[d] != 1:
            value_error("squeeze", f"cannot squeeze dimension {d} of {x.str_short()}: "
                                   "it must exist and have size 1")
    return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in dimensions), x.dtype, x.weak_type)


squeeze_p = Primitive(
    "squeeze", impl=lambda xp: (lambda x, *, dimensions: x.reshape(
        tuple(s for i, s in enumerate(x.shape) if i not in dimensions))),
    abstract_eval=_squeeze_rule,
    jvp=[lambda t, ans, x, *, dimensions: squeeze(t, dimensions)],
    vjp=[lambda g, ans, x, *, dimensions: reshape(g, x.shape)],
    batch=lambda args, dims, *, dimensions: (
        squeeze(_front(args, dims), tuple(d + 1 for d in dimensions)), 0))


def squeeze(x, dimensions):
    """x without the dimensions `dimensions`, each of size 1, as jax.lax.squeeze."""
    dimensions = tuple(sorted(int(d) % x.ndim if x.ndim else int(d) for d in dimensions))
    if not dimensions:
        return x
    return squeeze_p.bind(x, dimensions=dimensions)


def _expand_rule(x: ShapedArray, *, dimensions) -> ShapedArray:
    n = x.ndim + len(dimensions)
    if any(not 0 <= d < n for d in dimensions) or len(set(dimensions)) != len(dimensions):
        value_error("expand_dims", f"dimensions {dimensions} invalid for result rank {n}")
    it = iter(x.shape)
    return ShapedArray(tuple(1 if i in dimensions else next(it) for i in range(n)), x.dtype, x.weak_type)


def _expand_impl(xp):
    def f(x, *, dimensions):
        n = x.ndim + len(dimensions)
        it = iter(x.shape)
        return x.reshape(tuple(1 if i in dimensions else next(it) for i in range(n)))
    return f


expand_dims_p = Primitive(
    "expand_dims", impl=_expand_impl, abstract_eval=_expand_rule,
    jvp=[lambda t, ans, x, *, dimensions: expand_dims(t, dimensions)],
    vjp=[lambda g, ans, x, *, dimensions: reshape(g, x.shape)],
    batch=lambda args, dims, *, dimensions: (
        expand_dims(_front(args, dims), tuple(d + 1 for d in dimensions)), 0))


def expand_dims(x, dimensions):
    """x with size-1 dimensions inserted at the positions `dimensions` of the result, as jax.lax.expand_dims."""
    n = x.ndim + len(dimensions)
    dimensions = tuple(sorted(int(d) % n for d in dimensions))
    if not dimensions:
        return x
    return expand_dims_p.bind(x, dimensions=dimensions)


# --- concatenate ----------------------------------------------------------------------------------

def _concat_rule(*xs: ShapedArray, dimension) -> ShapedArray:
    if not xs:
        value_error("concatenate", "needs at least one operand")
    x0 = xs[0]
    if not 0 <= dimension < max(x0.ndim, 1) or x0.ndim == 0:
        value_error("concatenate", f"dimension {dimension} out of range for operands {x0.str_short()}")
    for x in xs[1:]:
        if x.dtype != x0.dtype:
            type_error("concatenate", "operands must share one dtype, got "
                       + ", ".join(a.str_short() for a in xs))
        if x.ndim != x0.ndim or any(a != b for i, (a, b) in enumerate(zip(x.shape, x0.shape)) if i != dimension):
            type_error("concatenate", f"operand shapes must agree except in dimension {dimension}, got "
                       + ", ".join(a.str_short() for a in xs))
    shape = list(x0.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, x0.dtype, all(x.weak_type for x in xs))


def _concat_vjp(i):
    def rule(g, ans, *xs, dimension):
        start = sum(x.shape[dimension] for x in xs[:i])
        lo = [0] * g.ndim
        hi = list(g.shape)
        lo[dimension] = start
        hi[dimension] = start + xs[i].shape[dimension]
        return slice(g, lo, hi)
    return rule


class _PerArg:
    """A per-argument rule list for variadic primitives: rule i is built on demand."""

    def __init__(self, make):
        self.make = make

    def __getitem__(self, i):
        return self.make(i)


def _concat_jvp(i):
    def rule(t, ans, *xs, dimension):
        parts = [t if j == i else zeros_like_aval(x) for j, x in enumerate(xs)]
        return concatenate(parts, dimension)
    return rule


def zeros_like_aval(x):
    return full(x.shape, 0, x.dtype)


def _concat_batch(args, dims, *, dimension):
    size = batch_size(args, dims)
    return concatenate([to_front(a, d, size) for a, d in zip(args, dims)], dimension + 1), 0


concatenate_p = Primitive(
    "concatenate", impl=lambda xp: (lambda *xs, dimension: xp.concatenate(xs, axis=dimension)),
    abstract_eval=_concat_rule, jvp=_PerArg(_concat_jvp), vjp=_PerArg(_concat_vjp), batch=_concat_batch)


def concatenate(operands, dimension: int):
    """The arrays `operands` (of one dtype, equal sizes elsewhere) joined along `dimension`, as jax.lax.concatenate."""
    operands = list(operands)
    if len(operands) == 1:
        return operands[0]
    return concatenate_p.bind(*operands, dimension=int(dimension))


# --- slice, pad, rev ------------------------------------------------------------------------------

def _slice_rule(x: ShapedArray, *, start_indices, limit_indices, strides) -> ShapedArray:
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        type_error("slice", f"start/limit/strides must each have {x.ndim} entries for {x.str_short()}")
    shape = []
    for s, l, k, n in zip(start_indices, limit_indices, strides, x.shape):
        if not 0 <= s <= l <= n or k < 1:  # (JAX: TypeError; NumPy-style callers expect a ValueError)
            shape_error("slice", f"invalid slice start={start_indices} limit={limit_indices} strides={strides} for "
                                 f"{x.str_short()}: need 0 <= start <= limit <= size and strides >= 1",
                        IncompatibleShapesError)
        shape.append(max(0, -(-(l - s) // k)))
    return ShapedArray(shape, x.dtype, x.weak_type)


def _slice_impl(xp):
    def f(x, *, start_indices, limit_indices, strides):
        return x[tuple(np.s_[s:l:k] for s, l, k in zip(start_indices, limit_indices, strides))]
    return f


def _slice_vjp(g, ans, x, *, start_indices, limit_indices, strides):
    cfg = []
    for s, k, n, m in zip(start_indices, strides, x.shape, g.shape):
        if m == 0:
            cfg.append((s, n - s, 0))
        else:
            cfg.append((s, n - (s + (m - 1) * k + 1), k - 1))
    return pad(g, full((), 0, g.dtype), cfg)


def _slice_batch(args, dims, *, start_indices, limit_indices, strides):
    x = _front(args, dims)
    return slice(x, (0,) + tuple(start_indices), (x.shape[0],) + tuple(limit_indices),
                 (1,) + tuple(strides)), 0


slice_p = Primitive(
    "slice", impl=_slice_impl, abstract_eval=_slice_rule,
    jvp=[lambda t, ans, x, **p: slice_p.bind(t, **p)], vjp=[_slice_vjp], batch=_slice_batch)


def slice(x, start_indices, limit_indices, strides=None):  # noqa: A001 - lax name
    start_indices = tuple(int(i) for i in start_indices)
    limit_indices = tuple(int(i) for i in limit_indices)
    strides = (1,) * x.ndim if strides is None else tuple(int(s) for s in strides)
    if start_indices == (0,) * x.ndim and limit_indices == tuple(x.shape) and strides == (1,) * x.ndim:
        return x
    return slice_p.bind(x, start_indices=start_indices, limit_indices=limit_indices, strides=strides)


def _pad_rule(x: ShapedArray, pv: ShapedArray, *, padding_config) -> ShapedArray:
    if pv.shape != () or pv.dtype != x.dtype:
        type_error("pad", f"padding value must be a scalar of the operand's dtype {x.dtype}, got {pv.str_short()}")
    if len(padding_config) != x.ndim:
        type_error("pad", f"padding_config needs {x.ndim} (low, high, interior) triples, got {padding_config}")
    shape = []
    for (lo, hi, interior), n in zip(padding_config, x.shape):
        if interior < 0:
            value_error("pad", f"interior padding must be >= 0, got {padding_config}")
        size = lo + hi + n + max(n - 1, 0) * interior
        if size < 0:
            value_error("pad", f"padding {padding_config} leaves a negative size for {x.str_short()}")
        shape.append(size)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _pad_impl(xp):
    def f(x, pv, *, padding_config):
        # Interior and positive edges first, into a filled buffer; negative edges then crop.
        grown = []
        for (lo, hi, interior), n in zip(padding_config, x.shape):
            grown.append(max(lo, 0) + max(hi, 0) + n + max(n - 1, 0) * interior)
        out = xp.full(grown, pv, dtype=x.dtype)
        dst = []
        for (lo, hi, interior), n in zip(padding_config, x.shape):
            start = max(lo, 0)
            stop = start + (n - 1) * (interior + 1) + 1 if n else start
            dst.append(np.s_[start:stop:interior + 1])
        dst = tuple(dst)
        out[dst] = x
        crop = tuple(np.s_[max(-lo, 0): g - max(-hi, 0)] for (lo, hi, _), g in zip(padding_config, grown))
        return out[crop]
    return f


def _pad_vjp_x(g, ans, x, pv, *, padding_config):
    unpadded = pad(g, full((), 0, g.dtype), [(-lo, -hi, 0) for lo, hi, _ in padding_config])
    return slice(unpadded, (0,) * g.ndim, unpadded.shape, [i + 1 for _, _, i in padding_config])


def _pad_vjp_pv(g, ans, x, pv, *, padding_config):
    axes = tuple(range(g.ndim))
    return reduce_sum(g, axes) - reduce_sum(_pad_vjp_x(g, ans, x, pv, padding_config=padding_config), axes)


def _pad_batch(args, dims, *, padding_config):
    x, pv = args
    xd, pd = dims
    size = batch_size(args, dims)
    x = to_front(x, xd, size)
    cfg = [(0, 0, 0)] + list(padding_config)
    if pd is None:
        return pad(x, pv, cfg), 0
    from .elementwise import select  # (cycle: elementwise imports this module for full and broadcast_in_dim)
    pv = move_axis(pv, pd, 0)
    padded = pad(x, full((), 0, x.dtype), cfg)
    mask = pad(full(x.shape, True, dtypes.bool_), full((), False, dtypes.bool_), cfg)
    return select(mask, padded, broadcast_in_dim(pv, padded.shape, (0,))), 0


pad_p = Primitive(
    "pad", impl=_pad_impl, abstract_eval=_pad_rule,
    jvp=[lambda t, ans, x, pv, **p: pad(t, full((), 0, t.dtype), p["padding_config"]),
         lambda t, ans, x, pv, **p: pad(full(x.shape, 0, t.dtype), t, p["padding_config"])],
    vjp=[_pad_vjp_x, _pad_vjp_pv], batch=_pad_batch)


def pad(x, padding_value, padding_config):
    """x padded with the scalar padding_value: padding_config holds one (low, high, interior) triple per dimension;
    negative low/high crop, interior inserts values between elements, as jax.lax.pad."""
    padding_config = tuple(tuple(int(v) for v in c) for c in padding_config)
    if all(c == (0, 0, 0) for c in padding_config):
        return x
    return pad_p.bind(x, padding_value, padding_config=padding_config)


def _rev_rule(x: ShapedArray, *, dimensions) -> ShapedArray:
    if any(not 0 <= d < x.ndim for d in dimensions):
        value_error("rev", f"dimensions {dimensions} out of range for {x.str_short()}")
    return x


rev_p = Primitive(
    "rev", impl=lambda xp: (lambda x, *, dimensions: xp.flip(x, dimensions)), abstract_eval=_rev_rule,
    jvp=[lambda t, ans, x, *, dimensions: rev(t, dimensions)],
    vjp=[lambda g, ans, x, *, dimensions: rev(g, dimensions)],
    batch=lambda args, dims, *, dimensions: (rev(_front(args, dims), tuple(d + 1 for d in dimensions)), 0))


def rev(x, dimensions):
    """x reversed along each of the dimensions `dimensions`, as jax.lax.rev."""
    dimensions = tuple(sorted(int(d) % x.ndim for d in dimensions))
    if not dimensions:
        return x
    return rev_p.bind(x, dimensions=dimensions)


# --- creation -------------------------------------------------------------------------------------

def _no_batch(args, dims, **params):
    raise AssertionError("a primitive with no operands is never batched")


def _iota_rule(*, dtype, shape, dimension) -> ShapedArray:
    if not 0 <= dimension < len(shape):
        value_error("iota", f"dimension {dimension} out of range for shape {shape}")
    return ShapedArray(shape, dtype, False)


def _iota_impl(xp):
    def f(*, dtype, shape, dimension):
        r = xp.arange(shape[dimension], dtype=dtype)
        expanded = [1] * len(shape)
        expanded[dimension] = shape[dimension]
        return xp.broadcast_to(r.reshape(expanded), shape)
    return f


iota_p = Primitive("iota", impl=_iota_impl, abstract_eval=_iota_rule, jvp=[], vjp=[], batch=_no_batch,
                   differentiable=False, weak_type=lambda w, p: False)


def iota(dtype, size: int):
    """The vector [0, 1, ..., size - 1] of dtype `dtype`, as jax.lax.iota."""
    return iota_p.bind(dtype=dtypes.canonicalize(dtype), shape=(int(size),), dimension=0)


def broadcasted_iota(dtype, shape, dimension: int):
    """An array of `shape` whose values count 0, 1, ... along `dimension` (constant along the others), as
    jax.lax.broadcasted_iota."""
    return iota_p.bind(dtype=dtypes.canonicalize(dtype), shape=tuple(int(s) for s in shape),
                       dimension=int(dimension))


def _full_rule(*, shape, fill_value, dtype, weak_type=False) -> ShapedArray:
    if any(d < 0 for d in shape):
        value_error("full", f"negative dimensions are not allowed: {shape}")
    return ShapedArray(shape, dtype, weak_type)


full_p = Primitive(
    "full", impl=lambda xp: (lambda *, shape, fill_value, dtype, weak_type=False: xp.full(shape, fill_value, dtype)),
    abstract_eval=_full_rule, jvp=[], vjp=[], batch=_no_batch, differentiable=False,
    weak_type=lambda w, p: p.get("weak_type", False))


def full(shape, fill_value, dtype, weak_type: bool = False):
    """An array of `shape` filled with the Python scalar `fill_value`. A 0-d array (a tracer under a
    transform) is broadcast instead, so that a derivative through the fill value is kept, never dropped."""
    if isinstance(fill_value, ArrayBase) and fill_value.shape == ():
        from .elementwise import convert_element_type  # (cycle: elementwise imports this module)
        v = convert_element_type(fill_value, dtype, weak_type)
        return broadcast_in_dim(v, tuple(int(s) for s in shape), ())
    return full_p.bind(shape=tuple(int(s) for s in shape), fill_value=fill_value,
                       dtype=dtypes.canonicalize(dtype), weak_type=bool(weak_type))


# --- reduce_sum: broadcast_in_dim's transpose (each one's vjp is the other), so the pair lives in one module;
# the other reductions (reduction.py) share its helpers -------------------------------------------------

_KEPT: dict = {}


def _kept(ndim, axes):
    """The dimensions of an ndim-array that a reduction over `axes` keeps (cached: rules call it often)."""
    key = (ndim, axes)
    kept = _KEPT.get(key)
    if kept is None:
        kept = tuple(i for i in range(ndim) if i not in axes)
        if len(_KEPT) < 1024:
            _KEPT[key] = kept
    return kept


def _reduce_rule(op: str, kinds: str):
    def rule(x: ShapedArray, *, axes) -> ShapedArray:
        check_dtype(op, x, kinds)
        if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
            value_error(op, f"axes {axes} out of range or repeated for operand {x.str_short()}")
        if op in ("reduce_max", "reduce_min") and any(x.shape[a] == 0 for a in axes):
            value_error(op, f"zero-size reduction over axes {axes} of {x.str_short()} has no identity")
        return ShapedArray(tuple(x.shape[i] for i in _kept(x.ndim, axes)), x.dtype, x.weak_type)
    return rule


def _expand(g, x, axes):
    """Broadcast a reduced result back to the operand's shape."""
    shape = tuple(x.shape)
    if not axes:
        return g
    return broadcast_in_dim_p.bind(g, shape=shape, broadcast_dimensions=_kept(len(shape), axes))


def _reduce_batch(prim):
    def rule(args, dims, *, axes):
        x = move_axis(args[0], dims[0], 0)
        return prim.bind(x, axes=tuple(a + 1 for a in axes)), 0
    return rule


# bfloat16's scalar type, compared by identity: `dtype == bfloat16` costs 0.25 us a call (a quarter of a
# 16-element sum), dtype.name 1.6 us
_BF16_TYPE = dtypes.bfloat16.type if dtypes.bfloat16 is not None else None


try:  # NumPy >= 2.3: a reduction given out=... returns a 0-d array rather than a scalar (nothing to wrap after it)
    np.add.reduce(np.zeros(1), 0, out=...)
    REDUCE_TO_ARRAY = True
except TypeError:
    REDUCE_TO_ARRAY = False


def _sum_impl(xp):
    def impl(x, *, axes):
        if x.dtype.type is _BF16_TYPE:  # accumulated in float32 and rounded once, as XLA's and torch's CPU sums
            return x.astype(xp.float32).sum(axis=axes).astype(x.dtype)
        if add_reduce is not None and x.dtype.kind in "fc":  # (the ufunc's reduce without the method's wrapper)
            return add_reduce(x, axes, out=...) if REDUCE_TO_ARRAY else add_reduce(x, axes)
        return x.sum(axis=axes, dtype=x.dtype)  # (the method: numpy.sum's wrapper costs; float16 sums in float32)
    add_reduce = xp.add.reduce if xp is np else None
    impl.floating = add_reduce  # (float16/32/64 and complex operands, as impl(x, axes=axes) computes them: the
    return impl                 # torch face's direct path calls it positionally, add_reduce(x, axes[, out=...]))


reduce_sum_p = Primitive(
    "reduce_sum", impl=_sum_impl, abstract_eval=_reduce_rule("reduce_sum", "ifc"),
    jvp=[lambda t, ans, x, *, axes: reduce_sum(t, axes)],
    vjp=[lambda g, ans, x, *, axes: _expand(g, x, axes)])
reduce_sum_p.batch = _reduce_batch(reduce_sum_p)


def _axes(x, axes):
    """Axes as sorted non-negative ints; negative ones count from the end, out-of-range ones raise."""
    out = []
    for a in axes:
        a = int(a)
        if not -x.ndim <= a < x.ndim:
            value_error("reduce", f"axis {a} is out of range for an operand of rank {x.ndim}")
        out.append(a % x.ndim)
    return tuple(sorted(out))


def reduce_sum(x, axes):
    """The sum of x over the dimensions `axes` (which are removed), as jax.lax.reduce_sum."""
    axes = _axes(x, axes)
    return reduce_sum_p.bind(x, axes=axes) if axes else x
