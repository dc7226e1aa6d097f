"""Windowed reductions: reduce_window with add, max or min (sum/max/min pooling), as jax.lax has them.

Each monoid is one card (reduce_window_sum, reduce_window_max, reduce_window_min) whose params are
window_dimensions, window_strides, padding (explicit (lo, hi) pairs), base_dilation and
window_dilation. Padding and base-dilation holes hold the monoid's identity (XLA's semantics).
The impls combine one strided slice per window offset (or reduce one strided view of all windows when
windows are large). Max/min send derivatives to one selected element of each window, through two
selection cards as in JAX: select_and_gather_add (the jvp) and select_and_scatter_add (the vjp), each
the other's transpose. Which element is the face's convention, the `kink` param of max/min and of
both selection cards (left out for "jax", the default):
- "jax": XLA's select scan (ge for max, le for min) over the padded window, as jax.grad of
  lax.reduce_window: the first extreme; a NaN restarts the scan at the next element (so a NaN is
  selected only as a window's last element); padding can be selected (an all -inf window's first).
- "torch": torch's max pooling kernel: the window's last NaN, else its first extreme; padding is never
  selected: a window of the identity alone (all -inf) selects its first operand element, and a window
  with no operand element sends its derivative to torch's starting index (_torch_starts), read as a
  flat offset over the whole operand, as torch's backward kernel writes it (past its plane, into the
  next one, or nowhere past the operand's end). No base dilation.
"""
from __future__ import annotations

import builtins
import itertools
import math
import operator

import numpy as np

from ..core.array import ArrayBase, get_aval, to_array
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from ._util import batch_size, check_dtype, type_error, value_error
from .shape import move_axis, to_front
from .conv import (as_strided, dilate_dim, explicit_padding, pad_dilate, vjp_lhs_padding,
                   window_out_dim)
from .elementwise import convert_element_type, ge_p, le_p, max as _max, min as _min
from .shape import broadcast_in_dim, full, pad


def _identity(kind: str, dtype):
    dtype = np.dtype(dtype)
    if kind == "sum":
        return dtype.type(0)
    if dtype == np.bool_:
        return kind == "min"
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if kind == "max" else info.max
    return -np.inf if kind == "max" else np.inf


def _out_shape(shape, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    return tuple(window_out_dim(dilate_dim(n, bd) + lo + hi, dilate_dim(w, wd), s)
                 for n, w, s, (lo, hi), bd, wd in zip(shape, window_dimensions, window_strides, padding,
                                                      base_dilation, window_dilation))


def _check_kink(op: str, kink, base_dilation, shape) -> None:
    if kink not in ("jax", "torch"):
        type_error(op, f"kink must be 'jax' or 'torch', got {kink!r}")
    if kink == "torch" and any(d != 1 for d in base_dilation):
        value_error(op, f"kink='torch' (torch's max pooling) takes no base dilation, got base_dilation="
                        f"{tuple(base_dilation)} for an operand of shape {tuple(shape)}")


def _check_window(op: str, x: ShapedArray, kinds: str, *, window_dimensions, window_strides, padding,
                  base_dilation, window_dilation, kink="jax") -> tuple:
    """The shape rule shared by the windowed cards: validate, and return the windows' (output) shape."""
    check_dtype(op, x, kinds)
    _check_kink(op, kink, base_dilation, x.shape)
    if not (len(window_dimensions) == len(window_strides) == len(padding) == len(base_dilation)
            == len(window_dilation) == x.ndim):
        type_error(op, f"window_dimensions, window_strides, padding, base_dilation and window_dilation "
                       f"need one entry per dimension of the operand {x.str_short()}, got "
                       f"{window_dimensions}, {window_strides}, {padding}, {base_dilation}, {window_dilation}")
    for name, v in (("window_dimensions", window_dimensions), ("window_strides", window_strides),
                    ("base_dilation", base_dilation), ("window_dilation", window_dilation)):
        if any(i < 1 for i in v):
            value_error(op, f"{name} entries must be positive, got {v} for operand {x.str_short()}")
    for n, (lo, hi), bd in zip(x.shape, padding, base_dilation):
        if dilate_dim(n, bd) + lo + hi < 0:
            value_error(op, f"padding {padding} leaves a negative size for operand {x.str_short()}")
    return _out_shape(x.shape, window_dimensions, window_strides, padding, base_dilation, window_dilation)


def _rule(kind: str):
    op = f"reduce_window_{kind}"

    def rule(x: ShapedArray, **params) -> ShapedArray:
        if kind == "sum" and "kink" in params:
            type_error(op, "a sum has no kink: kink is a param of reduce_window_max/min only")
        out = _check_window(op, x, "ifc" if kind == "sum" else "bif", **params)
        return ShapedArray(out, x.dtype, x.weak_type)
    return rule


_LOOP_LIMIT = 64  # windows up to this many elements: one vectorised op per window offset


def _impl(kind: str):
    def factory(xp):
        reducer = {"sum": xp.sum, "max": xp.max, "min": xp.min}[kind]
        combine = {"sum": xp.add, "max": xp.maximum, "min": xp.minimum}[kind]

        def f(x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation, kink="jax"):
            init = _identity(kind, x.dtype)  # (kink only picks where the derivatives go)
            out = _out_shape(x.shape, window_dimensions, window_strides, padding, base_dilation,
                             window_dilation)
            if math.prod(out) == 0 or math.prod(window_dimensions) == 0:
                return xp.full(out, init, dtype=x.dtype)
            if kind != "sum":
                split = _tiling(x.shape, dict(window_dimensions=window_dimensions, window_strides=window_strides,
                                              padding=padding, base_dilation=base_dilation,
                                              window_dilation=window_dilation))
                if split:
                    return _tiled_extreme(xp, x, combine, split).reshape(out)
            xp_ = pad_dilate(xp, x, [(lo, hi, bd - 1) for (lo, hi), bd in zip(padding, base_dilation)], init)
            if math.prod(window_dimensions) <= _LOOP_LIMIT:
                # Small windows: combine the strided slice at each window offset (fast in NumPy).
                acc = None
                for idx in _window_slices(out, window_dimensions=window_dimensions,
                                          window_strides=window_strides, window_dilation=window_dilation):
                    sl = xp_[idx]
                    if acc is None:
                        acc = xp.array(sl, dtype=x.dtype, copy=True)
                    else:
                        combine(acc, sl, out=acc)
                return acc
            # Large windows (global pooling): reduce one strided view of all windows.
            st = xp_.strides
            win = as_strided(xp, xp_, out + tuple(window_dimensions),
                             tuple(s * k for s, k in zip(st, window_strides))
                             + tuple(s * d for s, d in zip(st, window_dilation)))
            axes = tuple(range(x.ndim, 2 * x.ndim))
            if kind == "sum":
                return reducer(win, axis=axes, dtype=x.dtype)
            return reducer(win, axis=axes)
        return f
    return factory


# --- derivatives ----------------------------------------------------------------------------------

def _sum_vjp(g, ans, x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    """A reduce_window_sum of g dilated by the strides (the transpose of an all-ones convolution)."""
    n = x.ndim
    if math.prod(g.shape) == 0:
        return full(x.shape, 0, x.dtype)
    pads = vjp_lhs_padding(x.shape, window_dimensions, window_strides, g.shape, padding, base_dilation,
                           window_dilation)
    pg = pad(g, full((), 0, g.dtype), [(lo, hi, s - 1) for (lo, hi), s in zip(pads, window_strides)])
    return reduce_window_sum_p.bind(pg, window_dimensions=window_dimensions, window_strides=base_dilation,
                                    padding=((0, 0),) * n, base_dilation=(1,) * n,
                                    window_dilation=window_dilation)


def _window_slices(out, *, window_dimensions, window_strides, window_dilation, **unused):
    """Per window offset, the index (a tuple of slices) of the padded operand's elements at that
    offset of every window: a strided view shaped like the output."""
    for off in itertools.product(*[range(w) for w in window_dimensions]):
        yield tuple(builtins.slice(o * d, o * d + (m - 1) * s + 1, s)
                    for o, d, m, s in zip(off, window_dilation, out, window_strides))


def _batch(prim):
    """vmap rule: the mapped axis becomes a leading window dimension of size 1 (every operand); a trailing
    one under kink="torch", whose flat starting indices then never run from one example into the next."""
    def rule(args, dims, *, window_dimensions, window_strides, padding, base_dilation, window_dilation,
             **rest):
        size = batch_size(args, dims)
        args = [to_front(a, d, size) for a, d in zip(args, dims)]
        if rest.get("kink") == "torch":
            args = [move_axis(a, 0, a.ndim - 1) for a in args]
            out = prim.bind(*args, window_dimensions=tuple(window_dimensions) + (1,),
                            window_strides=tuple(window_strides) + (1,), padding=tuple(padding) + ((0, 0),),
                            base_dilation=tuple(base_dilation) + (1,),
                            window_dilation=tuple(window_dilation) + (1,), **rest)
            return out, out.ndim - 1
        return prim.bind(*args, window_dimensions=(1,) + tuple(window_dimensions),
                         window_strides=(1,) + tuple(window_strides), padding=((0, 0),) + tuple(padding),
                         base_dilation=(1,) + tuple(base_dilation),
                         window_dilation=(1,) + tuple(window_dilation), **rest), 0
    return rule


# --- selection: where max/min pooling sends derivatives -------------------------------------------
# select_and_gather_add(t, x) picks, per window of x, t at the window's selected element (the jvp of
# max/min pooling); select_and_scatter_add(g, x) adds each g into the operand at that element (the
# vjp). Each is linear in its first operand and the other's transpose; x only selects (by `kink`).

def _ordinary(xp, best, kind: str, kink: str) -> bool:
    """Whether every window's selection is its first extreme element, under either convention: no NaN
    extreme (and, for torch's, no window of the identity alone, whose first element may be padding)."""
    if kink == "torch":
        ident = _identity(kind, best.dtype)
        return bool((best > ident).all() if kind == "max" else (best < ident).all())
    return best.dtype.kind not in "fc" or not bool(xp.isnan(best).any())


def _xla_scan(xp, xpad, slices, select_prim):
    """XLA's select over each window in order (JAX's convention): the selected element stays while
    select(selected, next) holds (ge for max, le for min), else the next one is taken; offsets of the
    selected elements."""
    keep = xp.greater_equal if select_prim is ge_p else xp.less_equal
    val = xp.array(xpad[slices[0]], copy=True)
    sel = xp.zeros(val.shape, dtype=np.int64)
    for k, sl in enumerate(slices[1:], 1):
        cur = xpad[sl]
        take = ~keep(val, cur)
        val = xp.where(take, cur, val)
        sel[take] = k
    return sel


def _torch_scan(xp, x, xpad, cfg, slices, best):
    """torch's max pooling scan over each window's operand elements (padding is never selected): offsets
    of the last NaN, else of the first extreme (the first operand element in an all -inf window); -1 for
    a window with no operand element."""
    inside = pad_dilate(xp, xp.ones(x.shape, dtype=bool), cfg, False)
    nan = best != best
    sel = xp.full(best.shape, -1, dtype=np.int64)
    for k, sl in enumerate(slices):
        cur = xpad[sl]
        cand = inside[sl] & xp.where(nan, cur != cur, cur == best)
        cand &= nan | (sel < 0)
        sel[cand] = k
    return sel


def _torch_starts(shape, out, p):
    """torch's starting index of each window (its max pooling kernel's index before the scan): per
    dimension the first point of the window's lattice at or past 0 (past the window's end, or the operand,
    where the window holds no operand element), flattened row-major over the whole operand without
    bounding any coordinate, as torch's pointer arithmetic reads it."""
    flat = np.zeros((), np.int64)
    for n, o, s, (lo, _), d in zip(shape, out, p["window_strides"], p["padding"], p["window_dilation"]):
        start = np.arange(o, dtype=np.int64) * s - lo
        first = np.where(start < 0, start + (-start + d - 1) // d * d, start)
        flat = flat[..., None] * n + first
    return flat


def _selection(xp, x, select_prim, p, kink="jax"):
    """(padding config, padded shape, output shape, [(index, hit mask)], strays): per window offset, the
    windows whose selected element lies there (at most one offset per window); strays: None, or (mask,
    flat operand indices) of the windows that select no element of theirs, under torch's convention."""
    kind = "max" if select_prim is ge_p else "min"
    combine = xp.maximum if kind == "max" else xp.minimum
    cfg = [(lo, hi, bd - 1) for (lo, hi), bd in zip(p["padding"], p["base_dilation"])]
    xpad = pad_dilate(xp, x, cfg, _identity(kind, x.dtype))
    out = _out_shape(x.shape, p["window_dimensions"], p["window_strides"], p["padding"], p["base_dilation"],
                     p["window_dilation"])
    if not math.prod(out):
        return cfg, xpad.shape, out, [], None
    slices = list(_window_slices(out, **p))
    best = None
    for sl in slices:
        best = xp.array(xpad[sl], copy=True) if best is None else combine(best, xpad[sl], out=best)
    if _ordinary(xp, best, kind, kink):
        taken = xp.zeros(out, dtype=bool)
        hits = []
        for sl in slices:  # the first extreme in window order wins ties (XLA's select: keep unless beaten)
            hit = xpad[sl] == best
            hit &= ~taken
            taken |= hit
            hits.append((sl, hit))
        return cfg, xpad.shape, out, hits, None
    strays = None
    if kink == "jax":
        sel = _xla_scan(xp, xpad, slices, select_prim)
    else:
        sel = _torch_scan(xp, x, xpad, cfg, slices, best)
        none = sel < 0
        if bool(none.any()):
            strays = none, xp.asarray(_torch_starts(x.shape, out, p))[none]
    return cfg, xpad.shape, out, [(sl, sel == k) for k, sl in enumerate(slices)], strays


def _unpad(xp, y, cfg, shape):
    """The transpose of pad_dilate: y (padded shape) back to the operand's shape."""
    y = pad_dilate(xp, y, [(max(-lo, 0), max(-hi, 0), 0) for lo, hi, _ in cfg])
    return y[tuple(builtins.slice(max(lo, 0), max(lo, 0) + dilate_dim(n, i + 1), i + 1)
                   for (lo, hi, i), n in zip(cfg, shape))]


def _masked(xp, v, hit, finite: bool, out):
    """v where hit, else 0, into `out`. A product is much faster than a select in NumPy (and right for
    finite v)."""
    if finite:
        return xp.multiply(v, hit, out=out)
    return xp.where(hit, v, 0)


def _gather_impl(xp):
    def f(t, x, *, select_prim, kink="jax", **p):
        cfg, _, out, hits, strays = _selection(xp, x, select_prim, p, kink)
        res = xp.zeros(out, dtype=t.dtype)
        if hits and math.prod(out):
            tpad = pad_dilate(xp, t, cfg)
            finite, tmp = bool(xp.isfinite(t).all()), xp.empty_like(res)
            for sl, hit in hits:
                res += _masked(xp, tpad[sl], hit, finite, tmp)
        if strays is not None:  # t at torch's starting index, 0 past the operand
            none, idx = strays
            ok = idx < t.size
            res[none] = xp.where(ok, t.reshape(-1)[xp.where(ok, idx, 0)], 0)
        return res
    return f


def _tiling(x_shape, p):
    """For windows that tile the operand exactly (stride = window, no padding or dilation): the
    operand's shape with every axis split into (windows, offset); else None."""
    w, s = p["window_dimensions"], p["window_strides"]
    if tuple(w) != tuple(s) or any(lo or hi for lo, hi in p["padding"]) or \
            any(d != 1 for d in p["base_dilation"]) or any(d != 1 for d in p["window_dilation"]) or \
            any(n % k for n, k in zip(x_shape, w)):
        return None
    return tuple(d for n, k in zip(x_shape, w) for d in (n // k, k))


def _tiled_extreme(xp, x, combine, split):
    """max/min over windows that tile x, one window axis at a time on x's (windows, offset) view: the
    first axis reduced combines whole contiguous rows, each later one works on the shrunken result.
    (Exact in any order: max and min round nothing; NaN propagates as in the general path.)"""
    acc = x.reshape(split)
    if all(w == 1 for w in split[1::2]):
        return xp.array(acc, copy=True)  # a new buffer, never a view of the operand
    for i in range(len(split) // 2):
        w = split[2 * i + 1]
        if w == 1:
            continue
        take = [builtins.slice(None)] * acc.ndim
        parts = []
        for j in range(w):
            take[2 * i + 1] = builtins.slice(j, j + 1)
            parts.append(acc[tuple(take)])
        nxt = combine(parts[0], parts[1])
        for part in parts[2:]:
            combine(nxt, part, out=nxt)
        acc = nxt
    return acc


_UINT_OF_SIZE = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _tiled_scatter(xp, g, x, kind, kink, split):
    """select_and_scatter_add for exactly tiling windows (max pooling's usual case): the window offsets
    are gathered into one contiguous (offsets, windows) array so that the extreme, the first hit of
    each window and the masked cotangents are contiguous passes; only the K reads and K writes of
    the operand's layout are strided. Values as the general path: 0.0 + g at the first extreme of
    each window, 0.0 elsewhere. Each offset's write is one pass: the bits of 0.0 + g times the hit
    mask (an integer product: g's bits or +0.0's all-zero bits exactly, whatever g holds), not a
    float product (g * 0 is -0.0 for a negative g, NaN for an infinite one) and a second pass.
    None where a window's selection is not its first extreme (_ordinary): the general path's."""
    w = split[1::2]
    out = split[0::2]
    offsets = list(itertools.product(*[range(k) for k in w]))
    where = [tuple(i for o in off for i in (builtins.slice(None), o)) for off in offsets]
    xs = x.reshape(split)
    stack = xp.empty((len(offsets),) + tuple(out), dtype=x.dtype)
    for k, ix in enumerate(where):
        stack[k] = xs[ix]
    best = stack.max(axis=0) if kind == "max" else stack.min(axis=0)
    if not _ordinary(xp, best, kind, kink):
        return None
    res = xp.empty(split, dtype=g.dtype)
    free = xp.ones(out, dtype=bool)   # windows whose extreme is not yet found
    hit = xp.empty(out, dtype=bool)
    uint = _UINT_OF_SIZE.get(g.dtype.itemsize) if xp is np else None
    if uint is not None:
        gbits, rbits = xp.add(g, 0).view(uint), res.view(uint)
    else:
        tmp, finite = xp.empty(out, dtype=g.dtype), bool(xp.isfinite(g).all())
    for k, ix in enumerate(where):
        xp.equal(stack[k], best, out=hit)
        if k:
            hit &= free
        if k + 1 < len(where):
            free ^= hit
        if uint is not None:
            xp.multiply(gbits, hit, out=rbits[ix])
        else:
            v = xp.multiply(g, hit, out=tmp) if finite else xp.where(hit, g, 0)
            xp.add(v, 0, out=res[ix])
    return res.reshape(x.shape)


def _scatter_impl(xp):
    def f(g, x, *, select_prim, kink="jax", **p):
        split = _tiling(x.shape, p)
        if split and math.prod(x.shape):  # (a 0-d operand has nothing to tile)
            res = _tiled_scatter(xp, g, x, "max" if select_prim is ge_p else "min", kink, split)
            if res is not None:
                return res
        cfg, pshape, out, hits, strays = _selection(xp, x, select_prim, p, kink)
        acc = xp.zeros(pshape, dtype=g.dtype)
        if math.prod(out):
            finite, tmp = bool(xp.isfinite(g).all()), xp.empty_like(g)
            for sl, hit in hits:
                if acc.ndim:
                    view = acc[sl]
                    view += _masked(xp, g, hit, finite, tmp)
                else:  # acc[()] of a 0-d array is a scalar copy, not a view
                    acc[...] += _masked(xp, g, hit, finite, tmp)
        res = _unpad(xp, acc, cfg, x.shape)
        if strays is not None:  # torch's backward: g added at the starting index, dropped past the operand
            none, idx = strays
            ok = idx < res.size
            res = xp.array(res, copy=True)
            xp.add.at(res.reshape(-1), idx[ok], g[none][ok])
        return res
    return f


def _select_rule(op: str, a_is_windows: bool):
    def rule(a: ShapedArray, x: ShapedArray, *, select_prim, **params) -> ShapedArray:
        if select_prim not in (ge_p, le_p):
            value_error(op, f"select_prim must be ge (max) or le (min), got {select_prim}")
        out = _check_window(op, x, "bif", **params)
        check_dtype(op, a, "fc")
        want = tuple(out) if a_is_windows else tuple(x.shape)
        if tuple(a.shape) != want:
            type_error(op, f"the first operand {a.str_short()} must have shape {want} for operand "
                           f"{x.str_short()}")
        return ShapedArray(x.shape if a_is_windows else out, a.dtype, a.weak_type)
    return rule


def _select_cards():
    """select_and_gather_add and select_and_scatter_add: each is linear in its first operand (its jvp is
    itself applied to the tangent) and each is the other's transpose (its vjp)."""
    cards = {}

    def card(name, impl, a_is_windows, transpose):
        p = cards[name] = Primitive(name, impl=impl, abstract_eval=_select_rule(name, a_is_windows),
                                    jvp=[lambda t, ans, a, x, **q: p.bind(t, x, **q), None],
                                    vjp=[lambda g, ans, a, x, **q: cards[transpose].bind(g, x, **q), None],
                                    weak_type=lambda w, q: w[0])
        p.batch = _batch(p)
        return p
    return (card("select_and_gather_add", _gather_impl, False, "select_and_scatter_add"),
            card("select_and_scatter_add", _scatter_impl, True, "select_and_gather_add"))


select_and_gather_add_p, select_and_scatter_add_p = _select_cards()


def _chooser_rules(select_prim):
    def jvp(t, ans, x, **p):
        return select_and_gather_add_p.bind(t, x, select_prim=select_prim, **p)

    def vjp(g, ans, x, **p):
        return select_and_scatter_add_p.bind(g, x, select_prim=select_prim, **p)
    return [jvp], [vjp]


reduce_window_sum_p = Primitive(
    "reduce_window_sum", impl=_impl("sum"), abstract_eval=_rule("sum"),
    jvp=[lambda t, ans, x, **p: reduce_window_sum_p.bind(t, **p)], vjp=[_sum_vjp])
reduce_window_sum_p.batch = _batch(reduce_window_sum_p)

reduce_window_max_p = Primitive(
    "reduce_window_max", impl=_impl("max"), abstract_eval=_rule("max"),
    jvp=_chooser_rules(ge_p)[0], vjp=_chooser_rules(ge_p)[1])
reduce_window_max_p.batch = _batch(reduce_window_max_p)

reduce_window_min_p = Primitive(
    "reduce_window_min", impl=_impl("min"), abstract_eval=_rule("min"),
    jvp=_chooser_rules(le_p)[0], vjp=_chooser_rules(le_p)[1])
reduce_window_min_p.batch = _batch(reduce_window_min_p)

_CARDS = {"sum": reduce_window_sum_p, "max": reduce_window_max_p, "min": reduce_window_min_p}


# --- public functions -----------------------------------------------------------------------------

def reduce_window_params(shape, window_dimensions, window_strides, padding, base_dilation=None,
                         window_dilation=None) -> dict:
    """The cards' normalised static params (explicit padding pairs, tuples of ints)."""
    op = "reduce_window"
    nd = len(shape)

    def ints(name, v):
        try:
            t = tuple(int(i) for i in v)
        except TypeError:
            raise TypeError(f"{op}: {name} must be a sequence of {nd} ints, got {v!r}") from None
        if len(t) != nd:
            raise TypeError(f"{op}: {name} needs one entry per operand dimension ({nd}; shape {tuple(shape)}), "
                            f"got {v!r}")
        return t

    window_dimensions = ints("window_dimensions", window_dimensions)
    window_strides = ints("window_strides", window_strides)
    base_dilation = (1,) * nd if base_dilation is None else ints("base_dilation", base_dilation)
    window_dilation = (1,) * nd if window_dilation is None else ints("window_dilation", window_dilation)
    padding = explicit_padding(op, padding, shape, [dilate_dim(w, d) for w, d in zip(window_dimensions,
                                                                                     window_dilation)],
                               window_strides, "operand")
    return dict(window_dimensions=window_dimensions, window_strides=window_strides, padding=padding,
                base_dilation=base_dilation, window_dilation=window_dilation)


_NAMES = {"add": "sum", "sum": "sum", "max": "max", "maximum": "max", "min": "min", "minimum": "min"}


def _monoid(computation) -> str:
    """'sum', 'max' or 'min' for a computation given as a function (lax.add, jnp.maximum, ...) or name."""
    if isinstance(computation, str):
        kind = _NAMES.get(computation.lower())
    elif computation in (operator.add, np.add, np.maximum, np.minimum):
        kind = {operator.add: "sum", np.add: "sum", np.maximum: "max", np.minimum: "min"}[computation]
    else:
        kind = _NAMES.get(getattr(computation, "__name__", None))
        if kind is None and callable(computation):  # e.g. lambda a, b: a + b: recognise it by its values
            try:
                probe = (float(computation(2.0, 3.0)), float(computation(-1.0, 4.0)))
            except Exception:
                probe = None
            kind = {(5.0, 3.0): "sum", (3.0, 4.0): "max", (2.0, -1.0): "min"}.get(probe)
    if kind is None:
        raise NotImplementedError(f"reduce_window: computation {computation!r} is not supported; use add, "
                                  "max or min (lax.add / jnp.add, lax.max / jnp.maximum, lax.min / jnp.minimum)")
    return kind


def _is_identity(kind, init_value, dtype) -> bool:
    """Whether init_value is concretely the monoid's identity (a tracer is not known to be)."""
    try:
        v = np.asarray(init_value)
        return v.shape == () and bool(v == _identity(kind, dtype))
    except Exception:
        return False


def reduce_window(operand, init_value, computation, window_dimensions, window_strides, padding,
                  base_dilation=None, window_dilation=None):
    """jax.lax.reduce_window for computation add, max or min (sum / max / min pooling).

    init_value must be the identity (0, -inf, +inf) for pooling; any other value fills the padding
    and starts every window, as in XLA. padding: 'SAME', 'VALID' or [(lo, hi), ...] per dimension.

    >>> import funcgrad.numpy as jnp, funcgrad.lax as lax
    >>> x = jnp.arange(16.).reshape(4, 4)
    >>> reduce_window(x, -jnp.inf, lax.max, (2, 2), (2, 2), 'VALID').tolist()   # 2x2 max pooling
    [[5.0, 7.0], [13.0, 15.0]]
    """
    if isinstance(operand, (tuple, list)):
        raise NotImplementedError("reduce_window: pytrees of operands are not supported; pass one array")
    kind = _monoid(computation)
    aval = get_aval(operand)
    params = reduce_window_params(aval.shape, window_dimensions, window_strides, padding, base_dilation,
                                  window_dilation)
    out = _CARDS[kind].bind(operand, **params)
    if _is_identity(kind, init_value, aval.dtype):
        return out
    # XLA fills padding with init_value and starts each window's reduction from it.
    if isinstance(init_value, ArrayBase):
        init = broadcast_in_dim(convert_element_type(init_value, aval.dtype), out.shape, ())
    else:
        init = full(out.shape, init_value, aval.dtype)
    if kind == "max":
        return _max(out, init)
    if kind == "min":
        return _min(out, init)
    real = reduce_window_sum_p.impl(np.ones(aval.shape, dtype=np.int64), **params)
    n_init = 1 + math.prod(params["window_dimensions"]) - real
    return out + init * _const(n_init, aval.dtype)


def _const(values, dtype):
    return to_array(np.asarray(values).astype(dtype))


def reduce_window_sum(operand, window_dimensions, window_strides, padding, base_dilation=None,
                      window_dilation=None):
    """Sums over sliding windows (zero padding)."""
    return _reduce_window_card("sum", operand, window_dimensions, window_strides, padding, base_dilation,
                               window_dilation)


def reduce_window_max(operand, window_dimensions, window_strides, padding, base_dilation=None,
                      window_dilation=None, kink: str = "jax"):
    """Maxima over sliding windows (max pooling; padding never wins); kink: where the derivatives go
    ("jax" or "torch", see the module's docstring)."""
    return _reduce_window_card("max", operand, window_dimensions, window_strides, padding, base_dilation,
                               window_dilation, kink)


def reduce_window_min(operand, window_dimensions, window_strides, padding, base_dilation=None,
                      window_dilation=None, kink: str = "jax"):
    """Minima over sliding windows (padding never wins)."""
    return _reduce_window_card("min", operand, window_dimensions, window_strides, padding, base_dilation,
                               window_dilation, kink)


def _reduce_window_card(kind, operand, window_dimensions, window_strides, padding, base_dilation=None,
                        window_dilation=None, kink="jax"):
    params = reduce_window_params(get_aval(operand).shape, window_dimensions, window_strides, padding,
                                  base_dilation, window_dilation)
    if kink != "jax":  # (the default is left out of the params, as every kinked card does)
        _check_kink(f"reduce_window_{kind}", kink, params["base_dilation"], get_aval(operand).shape)
        params["kink"] = kink
    return _CARDS[kind].bind(operand, **params)


__all__ = ["reduce_window", "reduce_window_max", "reduce_window_max_p", "reduce_window_min",
           "reduce_window_min_p", "reduce_window_params", "reduce_window_sum", "reduce_window_sum_p",
           "select_and_gather_add_p", "select_and_scatter_add_p"]
