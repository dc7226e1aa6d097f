"""numpy.pad with every practical NumPy mode (constant, edge, wrap, reflect, symmetric, linear_ramp, the
statistics modes): the index maps are worked out with NumPy on concrete positions, the data moves with one
gather per axis, so pad works under grad, vmap and jit."""
from __future__ import annotations

import numpy as np
from .._src.core import dtypes
from .._src.core.array import Array, ArrayBase, wrap
from .._src.prims import elementwise as ew
from .._src.prims import reduction as red
from .._src.prims import shape as sh
from ._manipulation import _need_concrete, _slice_axis, _take_axis, _zeros
from ._promote import _holds_array, asarray_any, broadcast_to


def _negative_pad(name: str, x) -> None:
    raise ValueError(f"pad: {name} can't contain negative values, got {np.asarray(x).tolist()}")


def _as_pairs(x, ndim, as_index=False, name: str = "pad_width"):
    """NumPy's pad-argument broadcasting: a scalar, a (before, after) pair, or one pair per axis."""
    if x is None:
        return ((None, None),) * ndim
    x = np.array(x)
    if as_index:
        x = np.round(x).astype(np.intp, copy=False)
    if x.ndim < 3:
        if x.size == 1:
            x = x.ravel()
            if as_index and x[0] < 0:
                _negative_pad(name, x)
            return ((x[0], x[0]),) * ndim
        if x.size == 2 and x.shape != (2, 1):
            x = x.ravel()
            if as_index and (x[0] < 0 or x[1] < 0):
                _negative_pad(name, x)
            return ((x[0], x[1]),) * ndim
    if as_index and x.size and x.min() < 0:
        _negative_pad(name, x)
    return np.broadcast_to(x, (ndim, 2)).tolist()


def _value_pairs(values, ndim, dtype):
    """constant_values / end_values as per-axis pairs of 0-d arrays of `dtype` (traced values allowed)."""
    if isinstance(values, ArrayBase) or (isinstance(values, (list, tuple)) and _holds_array(values)):
        v = asarray_any(values) if isinstance(values, ArrayBase) else _stack_nested(values)
        v = ew.convert_element_type(v, dtype)
        if v.ndim < 3 and v.size == 1:
            e = sh.reshape(v, ())
            return [(e, e)] * ndim
        if v.ndim < 3 and v.size == 2 and tuple(v.shape) != (2, 1):
            f = sh.reshape(v, (2,))
            b, a = sh.reshape(sh.slice(f, (0,), (1,)), ()), sh.reshape(sh.slice(f, (1,), (2,)), ())
            return [(b, a)] * ndim
        v = broadcast_to(v, (ndim, 2))
        return [tuple(sh.reshape(sh.slice(v, (i, j), (i + 1, j + 1)), ()) for j in range(2)) for i in range(ndim)]
    pairs = _as_pairs(values, ndim)
    return [tuple(_const(v, dtype) for v in p) for p in pairs]


def _stack_nested(values):
    from ._creation import array as _array  # (cycle: _creation imports this module)
    return _array(values)


def _const(v, dtype):
    if dtype == dtypes.bool_:
        return wrap(np.asarray(np.asarray(v).astype(bool)))
    with np.errstate(all="ignore"):
        return wrap(np.asarray(v).astype(dtype))


def _same_const(pairs):
    """The common Python value if every pad value is the same concrete scalar, else None."""
    vals = set()
    for p in pairs:
        for v in p:
            if not isinstance(v, Array):
                return None
            h = np.asarray(v).item()
            if isinstance(h, float) and h != h:
                return None
            vals.add(h)
    return vals.pop() if len(vals) == 1 else None


_PAD_KWARGS = {
    "empty": [], "edge": [], "wrap": [], "constant": ["constant_values"],
    "linear_ramp": ["end_values"], "maximum": ["stat_length"], "mean": ["stat_length"],
    "median": ["stat_length"], "minimum": ["stat_length"], "reflect": ["reflect_type"],
    "symmetric": ["reflect_type"],
}


def pad(array, pad_width, mode="constant", **kwargs):
    """Pad an array, as numpy.pad.

    Modes: 'constant' (constant_values: scalar, (before, after) or per-axis pairs; traced values
    allowed), 'empty' (zeros), 'edge', 'wrap', 'reflect' and 'symmetric' (reflect_type 'even' or
    'odd'), 'linear_ramp' (end_values), 'maximum', 'minimum', 'mean' (stat_length). pad_width: an
    int, (before, after), or one pair per axis. Axes are padded in order, so corners come from the
    later axes, as in NumPy. Not supported: mode 'median' and callable modes."""
    x = asarray_any(array)
    pw = np.asarray(_need_concrete(pad_width, "pad", "pad_width"))
    if pw.dtype.kind not in "iu":
        raise TypeError("`pad_width` must be of integral type.")
    pw = [(int(b), int(a)) for b, a in _as_pairs(pw, x.ndim, as_index=True)]
    if callable(mode):
        raise NotImplementedError("pad: a callable mode is not supported by funcgrad")
    try:
        unsupported = set(kwargs) - set(_PAD_KWARGS[mode])
    except (KeyError, TypeError):
        raise ValueError(f"mode '{mode}' is not supported") from None
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if mode in ("constant", "empty"):
        values = _value_pairs(kwargs.get("constant_values", 0) if mode == "constant" else 0, x.ndim, x.dtype)
        c = _same_const(values)
        if c is not None:
            return sh.pad(x, sh.full((), c, x.dtype), [(b, a, 0) for b, a in pw])
        for ax, ((b, a), (vb, va)) in enumerate(zip(pw, values)):
            if vb is va:
                x = _pad1(x, ax, b, a, vb)
            else:
                x = _pad1(_pad1(x, ax, b, 0, vb), ax, 0, a, va)
        return x
    if x.size == 0:
        for ax, (b, a) in enumerate(pw):
            if x.shape[ax] == 0 and (b or a):
                raise ValueError(f"can't extend empty axis {ax} using modes other than 'constant' or 'empty'")
        return _zeros([n + b + a for n, (b, a) in zip(x.shape, pw)], x.dtype)
    if mode in ("edge", "wrap", "reflect", "symmetric"):
        odd = kwargs.get("reflect_type", "even")
        if odd not in ("even", "odd"):
            raise ValueError(f"pad: reflect_type must be 'even' or 'odd', got {odd!r}")
        for ax, (b, a) in enumerate(pw):
            if b or a:
                x = _pad_index_mode(x, ax, b, a, mode, odd == "odd")
        return x
    if mode == "linear_ramp":
        ends = _value_pairs(kwargs.get("end_values", 0), x.ndim, x.dtype)
        for ax, ((b, a), (eb, ea)) in enumerate(zip(pw, ends)):
            x = _pad_ramp(x, ax, b, a, eb, ea)
        return x
    lengths = _as_pairs(kwargs.get("stat_length", None), x.ndim, as_index=True, name="stat_length")
    for ax, ((b, a), lp) in enumerate(zip(pw, lengths)):
        x = _pad_stat(x, ax, b, a, lp, mode)
    return x


def _pad1(x, ax, b, a, v):
    if not b and not a:
        return x
    cfg = [(0, 0, 0)] * x.ndim
    cfg[ax] = (b, a, 0)
    return sh.pad(x, v, cfg)


def _pad_index_mode(x, ax, b, a, mode, odd):
    n = x.shape[ax]
    if n == 1 and mode in ("reflect", "symmetric"):
        mode, odd = "edge", False  # NumPy's legacy rule for a singleton axis
    if not odd:  # a pure index map along the axis: NumPy's own on arange(n), then one gather
        idx = np.pad(np.arange(n, dtype=np.int64), (b, a), mode=mode)
        return _take_axis(x, idx, ax)
    # reflect_type="odd": NumPy's loop (_set_reflect_both), each pass appending one reflected chunk
    # 2 * edge - mirror image per side (bools compute as integers and are cast back each pass)
    include_edge = mode == "symmetric"
    calc = dtypes.int64 if x.dtype == dtypes.bool_ else x.dtype
    cur = x
    lp, rp = b, a
    while lp > 0 or rp > 0:
        length = cur.shape[ax]
        if include_edge:
            old, off = length // n * n, 1
        else:
            old, off = (length - 1) // (n - 1) * (n - 1), 0
        parts = []
        if lp > 0:
            c = min(old, lp)
            parts.append(_odd_chunk(_slice_axis(cur, ax, 1 - off, c - off + 1), _slice_axis(cur, ax, 0, 1),
                                    ax, calc, x.dtype))
            lp -= c
        parts.append(cur)
        if rp > 0:
            c = min(old, rp)
            k = 1 - off
            parts.append(_odd_chunk(_slice_axis(cur, ax, length - k - c, length - k),
                                    _slice_axis(cur, ax, length - 1, length), ax, calc, x.dtype))
            rp -= c
        cur = sh.concatenate(parts, ax)
    return cur


def _odd_chunk(chunk, edge, ax, calc, dtype):
    """2 * edge - reversed(chunk) along ax, computed in `calc` and cast back to `dtype`."""
    chunk = ew.convert_element_type(sh.rev(chunk, (ax,)), calc)
    edge = broadcast_to(ew.convert_element_type(edge, calc), chunk.shape)
    out = ew.sub(ew.add(edge, edge), chunk)
    return ew.convert_element_type(out, dtype) if calc != dtype else out


def _with(shape, ax, size):
    s = list(shape)
    s[ax] = size
    return tuple(s)


def _pad_ramp(x, ax, b, a, eb, ea):
    n = x.shape[ax]
    parts = []
    from ._creation import linspace  # (cycle: _creation imports this module)
    if b:
        edge = sh.squeeze(_slice_axis(x, ax, 0, 1), (ax,))
        parts.append(linspace(eb, edge, num=b, endpoint=False, dtype=x.dtype, axis=ax))
    parts.append(x)
    if a:
        edge = sh.squeeze(_slice_axis(x, ax, n - 1, n), (ax,))
        parts.append(sh.rev(linspace(ea, edge, num=a, endpoint=False, dtype=x.dtype, axis=ax), (ax,)))
    return sh.concatenate(parts, ax) if len(parts) > 1 else x


def _floor(y):
    """floor(y) for finite floats, from truncation (there is no floor primitive)."""
    t = ew.convert_element_type(ew.convert_element_type(y, dtypes.int64), y.dtype)
    return ew.sub(t, ew.convert_element_type(ew.gt(t, y), y.dtype))


def _round_half_even(y):
    half = sh.full(y.shape, 0.5, y.dtype)
    r = _floor(ew.add(y, half))
    tie = ew.eq(ew.sub(r, y), half)
    two = sh.full(y.shape, 2.0, y.dtype)
    odd = ew.ne(ew.sub(r, ew.mul(_floor(ew.div(r, two)), two)), _zeros(y.shape, y.dtype))
    return ew.select(ew.select(tie, odd, tie), ew.sub(r, sh.full(y.shape, 1.0, y.dtype)), r)


def _stat(chunk, ax, mode, dtype):
    if mode == "maximum":
        return red.reduce_max(chunk, (ax,))
    if mode == "minimum":
        return red.reduce_min(chunk, (ax,))
    if mode == "median":
        from ._statistics import median  # (lazy: the statistics build on this module)
        m = median(chunk, axis=ax)
        if dtypes.is_inexact(dtype):
            return ew.convert_element_type(m, dtype)
        return ew.convert_element_type(_round_half_even(ew.convert_element_type(m, dtypes.float64)), dtype)
    n = chunk.shape[ax]
    if dtypes.is_inexact(dtype):
        s = red.reduce_sum(chunk, (ax,))
        return ew.div(s, sh.full(s.shape, n, dtype))
    # integers: NumPy averages in float64, rounds half to even and casts back
    s = red.reduce_sum(ew.convert_element_type(chunk, dtypes.float64), (ax,))
    m = _round_half_even(ew.div(s, sh.full(s.shape, n, dtypes.float64)))
    return ew.convert_element_type(m, dtype)


def _pad_stat(x, ax, b, a, lp, mode):
    n = x.shape[ax]
    lb, la_ = lp
    lb = n if lb is None or n < lb else int(lb)
    la_ = n if la_ is None or n < la_ else int(la_)
    if (lb == 0 or la_ == 0) and mode in ("maximum", "minimum", "median"):
        raise ValueError("stat_length of 0 yields no value for padding")
    if mode == "mean" and not dtypes.is_inexact(x.dtype) and x.dtype != dtypes.bool_ and (lb == 0 or la_ == 0):
        raise ValueError("pad: stat_length of 0 gives an undefined integer mean")
    if not b and not a:
        return x
    if x.dtype == dtypes.bool_ and mode == "mean":
        raise TypeError("pad: mode 'mean' is not supported for bool arrays")
    left = _stat(_slice_axis(x, ax, 0, lb), ax, mode, x.dtype)
    right = left if lb == la_ == n else _stat(_slice_axis(x, ax, n - la_, n), ax, mode, x.dtype)
    parts = []
    keep = tuple(i for i in range(x.ndim) if i != ax)
    if b:
        parts.append(sh.broadcast_in_dim(left, _with(x.shape, ax, b), keep))
    parts.append(x)
    if a:
        parts.append(sh.broadcast_in_dim(right, _with(x.shape, ax, a), keep))
    return sh.concatenate(parts, ax)
