"""Indexing primitives: gather (reads at integer index rows) and scatter (functional updates there).

Both address an operand through an integer array `indices` of shape B + (k,): row `indices[b]` gives
coordinates along the operand axes `axes` (k of them, in that order); the other operand axes, the
"rest" axes, are carried along whole, in their original order.

    gather(x, indices, axes)[b, r...]  = x[axes[j] = indices[b, j], rest = r...]
    scatter(x, indices, updates, axes, mode): for every in-bounds row b,
        out[axes[j] = indices[b, j], rest] <mode>= updates[b, rest]

gather clamps out-of-range coordinates into range (JAX's default gather mode); scatter drops index rows
with an out-of-range coordinate (JAX's semantics for `x.at[...]` updates). funcgrad.numpy builds NumPy
indexing (`x[idx]`) on gather and `x.at[idx]` on scatter.

Derivatives follow JAX. gather is linear in the operand (its vjp scatter-adds into zeros); scatter-add is
linear; scatter-set routes each updated position's derivative to the update row that won it (the last
one, which is what the implementation writes, so duplicate indices are handled exactly); scatter-min/max
split ties evenly between the operand and the updates that attain the result, as `max`/`min` do.
scatter-mul's derivative with respect to update row b is the operand times the product of the *other*
rows written to the same position (exact with repeated indices and with zeros: see `_mul_others`).
"""
from __future__ import annotations

import math

import numpy as np

from ..core import dtypes
from ..core.array import to_array
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from ..core.trace import concrete_value
from . import elementwise as ew
from ._util import batch_size, check_dtype, type_error, value_error
from .shape import move_axis, to_front
from .reduction import reduce_min
from .shape import broadcast_in_dim, broadcasted_iota, concatenate, full, iota, reshape

SCATTER_MODES = ("add", "set", "mul", "min", "max")


def _rest(ndim: int, axes) -> list:
    return [d for d in range(ndim) if d not in axes]


def _check_indexing(op: str, x: ShapedArray, idx: ShapedArray, axes) -> None:
    """Shared shape rule: `idx` is an integer array B + (len(axes),) addressing distinct axes of x."""
    if not dtypes.is_integer(idx.dtype):
        type_error(op, f"indices must be an integer array, got {idx.str_short()}")
    if idx.ndim < 1:
        type_error(op, f"indices must have at least one dimension (the last holds one coordinate per "
                       f"indexed axis), got {idx.str_short()}")
    if len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
        value_error(op, f"axes {axes} must be distinct axes of the operand {x.str_short()}")
    if idx.shape[-1] != len(axes):
        type_error(op, f"the last dimension of indices {idx.str_short()} must equal the number of "
                       f"indexed axes {axes} ({len(axes)})")


# --- gather ---------------------------------------------------------------------------------------

def _gather_rule(x: ShapedArray, idx: ShapedArray, *, axes) -> ShapedArray:
    _check_indexing("gather", x, idx, axes)
    shape = tuple(idx.shape[:-1]) + tuple(x.shape[d] for d in _rest(x.ndim, axes))
    return ShapedArray(shape, x.dtype, x.weak_type)


def _gather_impl(xp):
    def f(x, idx, *, axes):
        if idx.ndim < 1 or idx.shape[-1] != len(axes) or idx.dtype.kind not in "iu":
            raise ValueError("bad indices")  # the caller reports it with the shape rule's message
        k = len(axes)
        if xp is np and k and idx.ndim > 1 and axes == _LEADING[k] and 0 not in x.shape[:k] and \
                (idx.dtype.kind == "i" or idx.dtype.itemsize < 8) and x.flags.c_contiguous:
            r = _gather_leading(x, idx, k)
            if r is not None:
                return r
        rest = _rest(x.ndim, axes)
        batch = tuple(idx.shape[:-1])
        if not axes:
            return xp.broadcast_to(x, batch + tuple(x.shape))
        if any(x.shape[a] == 0 for a in axes):  # nothing to read: every coordinate is out of range
            return xp.zeros(batch + tuple(x.shape[d] for d in rest), x.dtype)
        xt = xp.transpose(x, list(axes) + rest)
        # (clamped by maximum/minimum: the same integers as clip, without numpy.clip's wrapper, ~3x its cost on
        # small index arrays)
        cols = tuple(xp.minimum(xp.maximum(idx[..., j], 0), x.shape[a] - 1) for j, a in enumerate(axes))
        return xt[cols]
    return f


_LEADING = [tuple(range(k)) for k in range(65)]  # k -> the k leading axes, (0, ..., k - 1)


def _gather_leading(x, idx, k: int):
    """gather's impl over the k leading axes of a C-ordered NumPy operand (x[idx], nll_loss's (row, class)
    pairs), for index rows of rank >= 1 whose integers convert to intp exactly: one flat index per row, each
    coordinate clamped into its axis by ravel_multi_index in C (a third of the cost of clamping column by
    column and indexing the transposed operand). None where NumPy refuses the indices (then the general path)."""
    try:
        cols = (idx[..., 0],) if k == 1 else (idx[..., 0], idx[..., 1]) if k == 2 else \
            tuple([idx[..., j] for j in range(k)])
        flat = np.ravel_multi_index(cols, x.shape[:k], mode="clip")
    except (TypeError, ValueError):
        return None
    return x.reshape((math.prod(x.shape[:k]),) + x.shape[k:])[flat]  # (not -1: a trailing axis may be empty)


def _bounds_like(idx, shape, axes, offset: int):
    """An array like idx holding (operand size along axes[j]) + offset in column j."""
    col = to_array(np.asarray([shape[a] + offset for a in axes], dtype=idx.dtype))
    return broadcast_in_dim(col, idx.shape, (idx.ndim - 1,))


def _clamped(idx, shape, axes):
    """idx with coordinates clamped into range, as gather's impl reads them (a no-op when concrete and
    already in range)."""
    c = concrete_value(idx)
    if c is not None:
        h = np.asarray(c)
        if h.size == 0 or all(h[..., j].min() >= 0 and h[..., j].max() < shape[a] for j, a in enumerate(axes)):
            return idx
    if not axes:
        return idx
    lo = full(idx.shape, 0, idx.dtype)
    return ew.min(ew.max(idx, lo), _bounds_like(idx, shape, axes, -1))


def _in_bounds(idx, shape, axes):
    """Bool array of shape B: whether index row b lies inside the operand (so scatter applies it)."""
    batch = tuple(idx.shape[:-1])
    c = concrete_value(idx)
    if c is not None:
        h = np.asarray(c)
        ok = np.ones(batch, bool)
        for j, a in enumerate(axes):
            ok &= (h[..., j] >= 0) & (h[..., j] < shape[a])
        return to_array(ok)
    if not axes:
        return full(batch, True, dtypes.bool_)
    ge0 = ew.ge(idx, full(idx.shape, 0, idx.dtype))
    lt_n = ew.lt(idx, _bounds_like(idx, shape, axes, 0))
    both = ew.select(ge0, lt_n, ge0)
    return reduce_min(both, (idx.ndim - 1,))


def _where_rows(mask, x):
    """x (shape B + rest) with the rows b where mask (shape B) is False set to zero."""
    m = broadcast_in_dim(mask, x.shape, tuple(range(mask.ndim)))
    return ew.select(m, x, full(x.shape, 0, x.dtype))


def _gather_vjp(g, ans, x, idx, *, axes):
    return scatter_p.bind(full(x.shape, 0, g.dtype), _clamped(idx, x.shape, axes), g,
                          axes=axes, mode="add")


def _gather_batch(args, dims, *, axes):
    x, idx = args
    xd, id_ = dims
    shifted = tuple(a + 1 for a in axes)
    if id_ is None:
        # The operand's batch axis becomes its first rest axis: it lands right after B in the result.
        return gather_p.bind(move_axis(x, xd, 0), idx, axes=shifted), idx.ndim - 1
    idx = move_axis(idx, id_, 0)
    if xd is None:
        return gather_p.bind(x, idx, axes=axes), 0
    # Both batched: example n reads from operand n, so index the batch axis too with an iota column.
    return gather_p.bind(move_axis(x, xd, 0), _with_batch_column(idx), axes=(0,) + shifted), 0


def _with_batch_column(idx):
    """Prepend to idx (batch axis first, shape (N,) + B + (k,)) a column holding each row's n."""
    col = broadcasted_iota(idx.dtype, tuple(idx.shape[:-1]) + (1,), 0)
    return concatenate([col, idx], idx.ndim - 1)


gather_p = Primitive(
    "gather", impl=_gather_impl, abstract_eval=_gather_rule,
    jvp=[lambda t, ans, x, idx, *, axes: gather_p.bind(t, idx, axes=axes), None],
    vjp=[_gather_vjp, None], batch=_gather_batch,
    weak_type=lambda w, params: w[0])


# --- scatter --------------------------------------------------------------------------------------

def _scatter_rule(x: ShapedArray, idx: ShapedArray, upd: ShapedArray, *, axes, mode) -> ShapedArray:
    op = f"scatter ({mode})"
    if mode not in SCATTER_MODES:
        value_error("scatter", f"mode must be one of {SCATTER_MODES}, got {mode!r}")
    _check_indexing(op, x, idx, axes)
    if mode in ("add", "mul"):
        check_dtype(op, x, "ifc")
    elif mode in ("min", "max"):
        check_dtype(op, x, "bif")
    want = tuple(idx.shape[:-1]) + tuple(x.shape[d] for d in _rest(x.ndim, axes))
    if tuple(upd.shape) != want:
        type_error(op, f"updates must have shape indices.shape[:-1] + (operand dims not in axes {axes}) "
                       f"= {want}, got {upd.str_short()} for operand {x.str_short()} and indices "
                       f"{idx.str_short()}")
    if upd.dtype != x.dtype:
        type_error(op, f"updates dtype {upd.dtype} must equal the operand dtype {x.dtype}")
    return x


def _scatter_impl(xp):
    ufuncs = {"add": xp.add, "mul": xp.multiply, "min": xp.minimum, "max": xp.maximum}

    def f(x, idx, upd, *, axes, mode):
        rest = _rest(x.ndim, axes)
        k = len(axes)
        if idx.ndim < 1 or idx.shape[-1] != k or idx.dtype.kind not in "iu" or upd.dtype != x.dtype or \
                tuple(upd.shape) != tuple(idx.shape[:-1]) + tuple(x.shape[d] for d in rest):
            raise ValueError("bad operands")  # the caller reports it with the shape rule's message
        if k and idx.size == k and mode != "set" and xp is np:  # one index row (a gather's vjp at one
            # position): its update applied once, as ufunc.at would, without the general path's set-up
            pos = idx.reshape(k).tolist()
            at = [slice(None)] * x.ndim
            for a, j in zip(axes, pos):
                if not 0 <= j < x.shape[a]:
                    return xp.array(x, copy=True)  # out of range: dropped
                at[a] = j
            at = tuple(at)
            out = xp.array(x, copy=True)
            out[at] = ufuncs[mode](out[at], upd.reshape(tuple(x.shape[d] for d in rest)))
            return out
        out = xp.array(x, copy=True)  # writable and C-contiguous, so the views below write into it
        upd0 = upd
        rows = idx.reshape((math.prod(idx.shape[:-1]), k))
        upd = upd.reshape((rows.shape[0],) + tuple(x.shape[d] for d in rest))
        view = xp.transpose(out, list(axes) + rest)
        sizes = tuple(x.shape[a] for a in axes)
        if k == 0:  # every row addresses the whole operand: index a dummy leading axis of size 1
            view = view[None]
            rows = xp.zeros((rows.shape[0], 1), dtype=xp.intp)
            cols, sizes = (rows[:, 0],), (1,)
        else:
            bounds = xp.asarray([x.shape[a] for a in axes])
            ok = ((rows >= 0) & (rows < bounds)).all(axis=1)
            if not bool(ok.all()):  # out-of-range rows are dropped
                rows, upd = rows[ok], upd[ok]
            if mode == "set" and rows.shape[0] > 1:
                # Keep only the last write to each position, so which row wins is well defined.
                flat = xp.ravel_multi_index(tuple(rows[:, j] for j in range(k)),
                                            tuple(x.shape[a] for a in axes))
                _, first_rev = xp.unique(flat[::-1], return_index=True)
                keep = xp.sort(rows.shape[0] - 1 - first_rev)
                rows, upd = rows[keep], upd[keep]
            cols = tuple(rows[:, j] for j in range(k))
        if mode == "set":
            if k == 0:
                if upd.shape[0]:
                    view[0] = upd[-1]
            else:
                view[cols] = upd
        elif xp is np and rows.shape[0] > 1 and math.prod(upd.shape[1:]) >= _AT_MIN_ROW:
            _ufunc_at_by_rank(ufuncs[mode], view, rows, upd, sizes)
        elif xp is np:
            ufuncs[mode].at(view, cols, upd)
        else:
            try:
                ufuncs[mode].at(view, cols, upd)
            except (AttributeError, NotImplementedError, TypeError):
                # CuPy provides `at` for some ufuncs only: compute the others on the host
                return xp.asarray(_scatter_impl(np)(xp.asnumpy(x), xp.asnumpy(idx), xp.asnumpy(upd0),
                                                    axes=axes, mode=mode))
        return out
    return f


# ufunc.at handles one index row at a time, which is slow when each row carries many values (the vjp
# of gather/take: embedding and interpolation backward); from this many values per row, use the grouping
# below instead. With fewer, ufunc.at's per-row cost is lower than sorting the rows.
_AT_MIN_ROW = 16


def _ufunc_at_by_rank(ufunc, view, rows, upd, sizes) -> None:
    """`ufunc.at(view, cols, upd)` for in-range index rows (R, k) into the leading axes of view,
    in m vectorised passes where m is the largest number of rows sharing one position.

    Rows are stably sorted by position; pass j applies, to every position, its j-th row (in the
    original order). Within a pass positions are distinct, so a buffered fancy-index update is exact,
    and every position sees its rows in the original order: the result is bit-for-bit ufunc.at's."""
    k = rows.shape[1]
    flat = np.ravel_multi_index(tuple(rows[:, j] for j in range(k)), sizes) if k > 1 else rows[:, 0]
    n = flat.shape[0]
    order = None
    if not (flat[1:] >= flat[:-1]).all():
        order = np.argsort(flat, kind="stable")
        flat = flat[order]
    new = np.empty(n, bool)
    new[0] = True
    np.not_equal(flat[1:], flat[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    if starts.shape[0] == n:  # distinct positions: one pass
        groups = [None]
    else:
        rank = np.arange(n) - starts[np.cumsum(new) - 1]  # index of each sorted row within its position
        by_rank = np.argsort(rank, kind="stable")
        groups = np.split(by_rank, np.cumsum(np.bincount(rank))[:-1])
    for sel in groups:
        f = flat if sel is None else flat[sel]
        src = sel if order is None else (order if sel is None else order[sel])
        pos = np.unravel_index(f, sizes) if k > 1 else (f,)
        view[pos] = ufunc(view[pos], upd if src is None else upd[src])


def _zeros(shape, dtype):
    return full(shape, 0, dtype)


def _set_winners(idx, shape, axes):
    """Bool array of shape B: whether row b's write survives in scatter-set (in range, and the last
    row to write its position). Found by scattering row ids and reading them back."""
    batch = tuple(idx.shape[:-1])
    ids = reshape(iota(dtypes.int64, math.prod(batch)), batch)
    canvas = full(tuple(shape[a] for a in axes), -1, dtypes.int64)
    won = scatter_p.bind(canvas, idx, ids, axes=tuple(range(len(axes))), mode="set")
    return ew.eq(gather_p.bind(won, idx, axes=tuple(range(len(axes)))), ids)


def _extremal_weights(ans, x, idx, upd, axes):
    """For scatter-min/max: (operand weight, update weight, count of attaining values per position).

    A value "attains" the result where it equals it; ties share the derivative evenly."""
    w_x = ew.convert_element_type(ew.eq(x, ans), ans.dtype)
    hit = ew.eq(upd, gather_p.bind(ans, idx, axes=axes))
    w_u = ew.convert_element_type(_where_rows(_in_bounds(idx, x.shape, axes), hit), ans.dtype)
    count = ew.add(w_x, scatter_p.bind(_zeros(x.shape, ans.dtype), idx, w_u, axes=axes, mode="add"))
    return w_x, w_u, count


def _mul_others(x, idx, upd, axes):
    """For scatter-mul: per update row b (shape of upd), x[p] times the product of the other rows
    written to b's position p, i.e. d out[p] / d upd[b]; 0 for an out-of-range row.

    No division by zero: the product over the nonzero updates is divided by upd[b] only where
    upd[b] != 0. The zero updates among the others enter as a factor that is 1 (none), the other zero
    update itself (exactly one: its value is 0 but the derivative with respect to it flows), or 0 (two
    or more), so this is exact and so is its own derivative (scatter-mul's second order)."""
    zeros = _zeros(upd.shape, upd.dtype)
    is_zero = ew.eq(upd, zeros)
    safe = ew.select(is_zero, full(upd.shape, 1, upd.dtype), upd)
    nz_prod = gather_p.bind(scatter_p.bind(x, idx, safe, axes=axes, mode="mul"), idx, axes=axes)
    zero_u = ew.select(is_zero, upd, zeros)  # value 0; carries the derivative along zero updates
    zero_sum = scatter_p.bind(_zeros(x.shape, upd.dtype), idx, zero_u, axes=axes, mode="add")
    lone = ew.sub(gather_p.bind(zero_sum, idx, axes=axes), zero_u)  # the other zero updates' sum
    zf = ew.convert_element_type(is_zero, dtypes.int32)
    n_zero = gather_p.bind(scatter_p.bind(_zeros(x.shape, dtypes.int32), idx, zf, axes=axes, mode="add"),
                           idx, axes=axes)
    n_other = ew.sub(n_zero, zf)
    zero_factor = ew.select(ew.eq(n_other, _zeros(zf.shape, zf.dtype)), full(upd.shape, 1, upd.dtype),
                            ew.select(ew.eq(n_other, full(zf.shape, 1, zf.dtype)), lone, zeros))
    ok = broadcast_in_dim(_in_bounds(idx, x.shape, axes), upd.shape, tuple(range(idx.ndim - 1)))
    return ew.select(ok, ew.mul(ew.div(nz_prod, safe), zero_factor), zeros)


# Per-argument jvp rules, rule(t, ans, operand, indices, updates, *, axes, mode).

def _scatter_jvp_x(t, ans, x, idx, upd, *, axes, mode):
    """The operand's tangent map: elementwise (the identity, zero where set, times the product of the
    updates multiplied in, or the extremum's share), so it is its own transpose and serves as the vjp too."""
    if mode == "add":
        return t
    if mode == "set":
        return scatter_p.bind(t, idx, _zeros(upd.shape, t.dtype), axes=axes, mode="set")
    if mode == "mul":
        return scatter_p.bind(t, idx, upd, axes=axes, mode="mul")
    w_x, _, count = _extremal_weights(ans, x, idx, upd, axes)
    return ew.div(ew.mul(t, w_x), count)


def _scatter_jvp_u(t, ans, x, idx, upd, *, axes, mode):
    zeros = _zeros(x.shape, t.dtype)
    if mode in ("add", "set"):
        return scatter_p.bind(zeros, idx, t, axes=axes, mode=mode)
    if mode == "mul":  # d out[p] = sum over rows b at p of (x[p] * prod of the other rows) * d upd[b]
        return scatter_p.bind(zeros, idx, ew.mul(_mul_others(x, idx, upd, axes), t), axes=axes, mode="add")
    _, w_u, count = _extremal_weights(ans, x, idx, upd, axes)
    return ew.div(scatter_p.bind(zeros, idx, ew.mul(t, w_u), axes=axes, mode="add"), count)


# Per-argument vjp rules, rule(g, ans, operand, indices, updates, *, axes, mode).

_scatter_vjp_x = _scatter_jvp_x  # (a diagonal map is its own transpose)


def _scatter_vjp_u(g, ans, x, idx, upd, *, axes, mode):
    if mode == "add":
        return _where_rows(_in_bounds(idx, x.shape, axes), gather_p.bind(g, idx, axes=axes))
    if mode == "set":
        return _where_rows(_set_winners(idx, x.shape, axes), gather_p.bind(g, idx, axes=axes))
    if mode == "mul":
        return ew.mul(gather_p.bind(g, idx, axes=axes), _mul_others(x, idx, upd, axes))
    _, w_u, count = _extremal_weights(ans, x, idx, upd, axes)
    return ew.mul(gather_p.bind(ew.div(g, count), idx, axes=axes), w_u)


def _scatter_batch(args, dims, *, axes, mode):
    x, idx, upd = args
    xd, id_, ud = dims
    n = batch_size(args, dims)
    x = to_front(x, xd, n)
    shifted = tuple(a + 1 for a in axes)
    if id_ is None:
        # The operand's batch axis is now its first rest axis, so updates need it right after B.
        nb = idx.ndim - 1
        if ud is None:
            shape = tuple(upd.shape[:nb]) + (n,) + tuple(upd.shape[nb:])
            upd = broadcast_in_dim(upd, shape, tuple(i for i in range(upd.ndim + 1) if i != nb))
        else:
            upd = move_axis(upd, ud, nb)
        return scatter_p.bind(x, idx, upd, axes=shifted, mode=mode), 0
    idx = _with_batch_column(move_axis(idx, id_, 0))
    return scatter_p.bind(x, idx, to_front(upd, ud, n), axes=(0,) + shifted, mode=mode), 0


scatter_p = Primitive(
    "scatter", impl=_scatter_impl, abstract_eval=_scatter_rule,
    jvp=[_scatter_jvp_x, None, _scatter_jvp_u], vjp=[_scatter_vjp_x, None, _scatter_vjp_u],
    batch=_scatter_batch, weak_type=lambda w, params: w[0])


# --- lax-style functions --------------------------------------------------------------------------

def _axes(x, axes) -> tuple:
    return tuple(int(a) % x.ndim if x.ndim else int(a) for a in axes)


def _index_array(indices):
    if hasattr(indices, "shape") and hasattr(indices, "dtype") and not isinstance(indices, np.ndarray):
        return indices
    return to_array(np.asarray(indices), copy=False)


def gather(operand, indices, axes):
    """operand read at the integer index rows `indices` (shape B + (len(axes),)) along `axes`.

    Out-of-range coordinates are clamped. Example: gather(x, [[0], [2]], axes=(0,)) is x[[0, 2]]."""
    return gather_p.bind(operand, _index_array(indices), axes=_axes(operand, axes))


def scatter(operand, indices, updates, axes, mode: str = "set"):
    """operand with `updates` written at the index rows `indices` along `axes` (see module docstring);
    rows with an out-of-range coordinate are dropped. mode: "set" (the last row wins on duplicates),
    "add", "mul", "min" or "max"."""
    return scatter_p.bind(operand, _index_array(indices), updates, axes=_axes(operand, axes), mode=mode)


def scatter_add(operand, indices, updates, axes):
    """operand with `updates` added at the index rows `indices` along `axes` (duplicates accumulate; out-of-range
    rows are dropped). The card's `axes` form; funcgrad.lax.scatter_add takes JAX's ScatterDimensionNumbers."""
    return scatter(operand, indices, updates, axes, "add")


def scatter_mul(operand, indices, updates, axes):
    """operand multiplied by `updates` at the index rows `indices` along `axes` (duplicates multiply; out-of-range
    rows are dropped). The card's `axes` form; funcgrad.lax.scatter_mul takes JAX's ScatterDimensionNumbers."""
    return scatter(operand, indices, updates, axes, "mul")


def scatter_min(operand, indices, updates, axes):
    """operand with each indexed entry replaced by its minimum with `updates` (at the index rows `indices` along
    `axes`). The card's `axes` form; funcgrad.lax.scatter_min takes JAX's ScatterDimensionNumbers."""
    return scatter(operand, indices, updates, axes, "min")


def scatter_max(operand, indices, updates, axes):
    """operand with each indexed entry replaced by its maximum with `updates` (at the index rows `indices` along
    `axes`). The card's `axes` form; funcgrad.lax.scatter_max takes JAX's ScatterDimensionNumbers."""
    return scatter(operand, indices, updates, axes, "max")
