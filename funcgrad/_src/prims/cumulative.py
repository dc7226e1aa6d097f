"""Scans along one axis (cumsum, cumprod, cummax, cummin, cumlogsumexp) and the boolean reductions
reduce_and / reduce_or.

The scans take params `axis` and `reverse`, as jax.lax.cumsum: out[k] combines x[0..k] (x[k..n-1]
when reverse=True) along `axis`.

Derivatives (all written with funcgrad operations, so they differentiate again):
- cumsum is linear: its jvp is a cumsum of the tangent, its vjp a cumsum in the other direction.
- cumprod and cumlogsumexp have Jacobians of the form J[k, j] = c[j] * prod_{j < i <= k} a[i]
  (cumprod: a = x, c = the exclusive product; cumlogsumexp: a[k] = exp(out[k-1] - out[k]) and
  c[k] = exp(x[k] - out[k]), both in [0, 1]). The jvp is the first-order linear recurrence
  d[k] = a[k] d[k-1] + c[k] t[k] and the vjp its transpose; both are evaluated by `linear_recurrence`,
  a log-depth (Hillis-Steele) scan of multiplications and additions. No division is involved, so
  cumprod's derivative is exact with zeros in x, and cumlogsumexp's is stable for large inputs and
  -inf entries (as in JAX, whose rules come from an associative scan too).
- cummax / cummin have JAX's derivative: the jvp of an associative scan of max (min), whose ties split
  evenly at each node of the scan's tree (so tied elements get powers of 1/2), and its transpose.
- reduce_and / reduce_or act on bools and have no derivative.

associative_scan (lax.associative_scan) is a plain function of slices, with no card of its own.
"""
from __future__ import annotations

from typing import Callable

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.array import ArrayBase, canonical_array
from ..core.primitive import Primitive
from ..core.tree_util import tree_flatten, tree_unflatten
from . import elementwise as ew
from ._util import check_dtype, type_error, value_error
from .shape import broadcast_in_dim, concatenate, full, move_axis, pad, rev

# --- helpers: shifts and the linear recurrence ----------------------------------------------------


def shift(x, axis: int, steps: int, fill, reverse: bool = False):
    """x moved `steps` places along `axis`, filling the vacated places with the scalar `fill`:
    y[k] = x[k - steps] (y[k] = x[k + steps] when reverse=True)."""
    cfg = [(0, 0, 0)] * x.ndim
    cfg[axis] = (-steps, steps, 0) if reverse else (steps, -steps, 0)
    return pad(x, full((), fill, x.dtype), cfg)


def linear_recurrence(a, b, axis: int, reverse: bool = False):
    """h with h[k] = a[k] * h[k-1] + b[k] along `axis` (h[-1] = 0); with reverse=True
    h[k] = a[k] * h[k+1] + b[k] (h[n] = 0).

    A log-depth scan over the affine maps h -> a h + b, so it is built from mul/add/pad and is
    differentiable and batchable like any funcgrad expression."""
    n = b.shape[axis]
    steps = 1
    while steps < n:
        b = ew.add(ew.mul(a, shift(b, axis, steps, 0, reverse)), b)
        if 2 * steps < n:
            a = ew.mul(a, shift(a, axis, steps, 1, reverse))
        steps *= 2
    return b


def _isfinite(x):
    return ew.eq(ew.sub(x, x), ew.zeros_like(x))


# --- the cards ------------------------------------------------------------------------------------

def _scan_rule(op: str, kinds: str):
    def rule(x: ShapedArray, *, axis, reverse, order="window") -> ShapedArray:
        check_dtype(op, x, kinds)
        if order not in ("window", "sequential"):
            value_error(op, f"order must be 'window' or 'sequential', got {order!r}")
        if not isinstance(axis, int) or not 0 <= axis < x.ndim:
            value_error(op, f"axis {axis!r} out of range for operand {x.str_short()} "
                            "(a scan needs an array of rank >= 1 and 0 <= axis < rank)")
        if not isinstance(reverse, bool):
            type_error(op, f"reverse must be a bool, got {reverse!r}")
        return x
    return rule


def _kind(dt) -> str:
    return "b" if dt == dtypes.bool_ else "i" if dtypes.is_integer(dt) else "f" if dtypes.is_float(dt) else "c"


def _scan_impl(make, kinds: str):
    """impl(xp) from make(xp) -> f(x, axis) computing the forward scan."""
    def impl(xp):
        f = make(xp)

        def scan(x, *, axis, reverse):
            if not 0 <= axis < x.ndim or _kind(x.dtype) not in kinds:
                raise ValueError("bad operand")  # the caller reports it with the shape rule's message
            if reverse:
                return xp.flip(f(xp.flip(x, axis), axis), axis)
            return f(x, axis)
        return scan
    return impl


def _accumulate(name):
    def make(xp):
        ufunc = getattr(xp, name)

        def f(x, axis):
            try:
                return ufunc.accumulate(x, axis=axis)
            except (AttributeError, NotImplementedError, TypeError):  # e.g. CuPy without accumulate
                import numpy as np
                return xp.asarray(getattr(np, name).accumulate(xp.asnumpy(x), axis=axis))
        return f
    return make


def _forward_only(rule):
    """A derivative rule written for reverse=False, extended to reverse=True by flipping the axis."""
    def wrapped(t, ans, x, *, axis, reverse, order="window"):
        if not reverse:
            return rule(t, ans, x, axis)
        return rev(rule(rev(t, (axis,)), rev(ans, (axis,)), rev(x, (axis,)), axis), (axis,))
    return wrapped


def _scan_batch(prim):
    def rule(args, dims, *, axis, **params):
        return prim.bind(move_axis(args[0], dims[0], 0), axis=axis + 1, **params), 0
    return rule


def _affine_rules(coefficients):
    """(jvp, vjp) for a scan whose Jacobian is J[k, j] = c[j] prod_{j<i<=k} a[i], with
    coefficients(ans, x, axis) -> (a, c) for the forward direction."""
    def jvp(t, ans, x, axis):
        a, c = coefficients(ans, x, axis)
        return linear_recurrence(a, ew.mul(c, t), axis)

    def vjp(g, ans, x, axis):
        a, c = coefficients(ans, x, axis)
        # grad[j] = c[j] * s[j] with s[j] = g[j] + a[j+1] * s[j+1].
        return ew.mul(c, linear_recurrence(shift(a, axis, 1, 0, reverse=True), g, axis, reverse=True))
    return _forward_only(jvp), _forward_only(vjp)


def _cumprod_coefficients(ans, x, axis):
    return x, shift(ans, axis, 1, 1)  # c[k] = prod_{i<k} x[i]


def _cumlogsumexp_coefficients(ans, x, axis):
    prev = shift(ans, axis, 1, float("-inf"))
    ok = _isfinite(ans)  # where out[k] is -inf (or inf, nan) the derivative is taken as 0
    zero = ew.zeros_like(ans)
    safe = ew.select(ok, ans, zero)
    a = ew.select(ok, ew.exp(ew.sub(prev, safe)), zero)
    c = ew.select(ok, ew.exp(ew.sub(x, safe)), zero)
    return a, c


def _extreme_scan_jvp(combine):
    """cummax / cummin's jvp, JAX's: the jvp of associative_scan(max) (min), so each output's tangent is
    the one its tree of pairwise max / min gives (JAX's max splits a tie evenly: the tied elements' weights
    are powers of 1/2 in the pattern of the tree, and NaN passes no tangent)."""
    def pair(a, b):
        (xa, ta), (xb, tb) = a, b
        m = combine(xa, xb)
        return m, ew.add(ew.mul(ta, ew._balanced_eq(xa, m, xb)), ew.mul(tb, ew._balanced_eq(xb, m, xa)))

    def jvp(t, ans, x, *, axis, reverse):
        return associative_scan(pair, (x, t), reverse=reverse, axis=axis)[1]
    return jvp


def _extreme_scan_vjp(jvp):
    """The transpose of the (linear in the tangent) jvp above."""
    def vjp(g, ans, x, *, axis, reverse):
        from ..interpreters.ad import vjp as vjp_  # (a card may not import ad: the transpose is not written out)
        return vjp_(lambda t: jvp(t, ans, x, axis=axis, reverse=reverse), ew.zeros_like(x))[1](g)[0]
    return vjp


# XLA computes a scan as JAX lowers it, a reduce_window over the whole axis (out[k] sums its window left
# to right from the identity), which XLA's reduce-window rewriter splits into rows of 16: each row scanned
# on its own, the rows' totals scanned the same way (recursively), and each row's result combined with
# the totals of the rows before it (after it, in reverse). Floating-point sums and products round in that
# order, so the impls below follow it (integers are exact in any order and take NumPy's scan). The param
# order="sequential" gives a running sum or product instead (torch's CPU kernels).
_ROW = 16


def _row_scan(xp, op, accumulate, x, reverse: bool):
    """The scan of each row along the last axis, each output its window's left-to-right combination:
    x[0] op ... op x[k], or x[k] op ... op x[n-1] in reverse (15 vectorised steps for a row of 16)."""
    if not reverse:
        return accumulate(x, axis=-1, dtype=x.dtype)
    out = x.copy()
    for j in range(1, x.shape[-1]):
        out[..., :j] = op(out[..., :j], x[..., j:j + 1])
    return out


def _window_scan(xp, op, accumulate, identity, x, reverse: bool):
    """XLA's scan along the last axis of x (see _ROW)."""
    n = x.shape[-1]
    if n <= _ROW:
        return _row_scan(xp, op, accumulate, x, reverse)
    m = -(-n // _ROW)
    lead = x.shape[:-1]
    rows = xp.concatenate([x, xp.full(lead + (m * _ROW - n,), identity, x.dtype)], -1).reshape(lead + (m, _ROW))
    inner = _row_scan(xp, op, accumulate, rows, reverse)
    totals = _window_scan(xp, op, accumulate, identity, inner[..., 0] if reverse else inner[..., -1], reverse)
    one = xp.full(lead + (1,), identity, x.dtype)
    before = xp.concatenate([totals[..., 1:], one], -1) if reverse else xp.concatenate([one, totals[..., :-1]], -1)
    return op(before[..., None], inner).reshape(lead + (m * _ROW,))[..., :n]


def _xla_scan(xp, name: str, identity, x, axis: int, reverse: bool):
    op, accumulate = (xp.add, xp.cumsum) if name == "add" else (xp.multiply, xp.cumprod)
    if name == "add" and x.dtype.kind not in "iub" and (x.shape[axis] > 1 or x.dtype == dtypes.bfloat16):
        x = x + xp.zeros((), x.dtype)   # the window's sum starts from +0: a -0.0 term adds as +0.0 (XLA keeps
        #                                 a window of one float32/16 element as it is, not bfloat16's)
    if x.dtype.kind in "iub" or x.shape[axis] <= 1:
        y = accumulate(xp.flip(x, axis) if reverse else x, axis=axis, dtype=x.dtype)
        return xp.flip(y, axis) if reverse else y
    y = _window_scan(xp, op, accumulate, identity, xp.moveaxis(x, axis, -1), reverse)
    return xp.moveaxis(y, -1, axis)


def _xla_scan_impl(name: str, identity, kinds: str):
    def impl(xp):
        def scan(x, *, axis, reverse, order="window"):
            if not 0 <= axis < x.ndim or _kind(x.dtype) not in kinds:
                raise ValueError("bad operand")  # the caller reports it with the shape rule's message
            if order == "sequential":
                accumulate = xp.cumsum if name == "add" else xp.cumprod
                y = accumulate(xp.flip(x, axis) if reverse else x, axis=axis, dtype=x.dtype)
                return xp.flip(y, axis) if reverse else y
            return _xla_scan(xp, name, identity, x, axis, reverse)
        return scan
    return impl


cumsum_p = Primitive(
    "cumsum", impl=_xla_scan_impl("add", 0, "ifc"), abstract_eval=_scan_rule("cumsum", "ifc"),
    jvp=[lambda t, ans, x, *, axis, reverse, order="window": cumsum(t, axis, reverse, order=order)],
    vjp=[lambda g, ans, x, *, axis, reverse, order="window": cumsum(g, axis, not reverse, order=order)])

_cumprod_jvp, _cumprod_vjp = _affine_rules(_cumprod_coefficients)
cumprod_p = Primitive(
    "cumprod", impl=_xla_scan_impl("multiply", 1, "ifc"), abstract_eval=_scan_rule("cumprod", "ifc"),
    jvp=[_cumprod_jvp], vjp=[_cumprod_vjp])

_cle_jvp, _cle_vjp = _affine_rules(_cumlogsumexp_coefficients)
cumlogsumexp_p = Primitive(
    "cumlogsumexp", impl=_scan_impl(_accumulate("logaddexp"), "f"),
    abstract_eval=_scan_rule("cumlogsumexp", "f"), jvp=[_cle_jvp], vjp=[_cle_vjp])

_cummax_jvp = _extreme_scan_jvp(ew.max)
_cummax_vjp = _extreme_scan_vjp(_cummax_jvp)
cummax_p = Primitive(
    "cummax", impl=_scan_impl(_accumulate("maximum"), "bif"), abstract_eval=_scan_rule("cummax", "bif"),
    jvp=[_cummax_jvp], vjp=[_cummax_vjp])

_cummin_jvp = _extreme_scan_jvp(ew.min)
_cummin_vjp = _extreme_scan_vjp(_cummin_jvp)
cummin_p = Primitive(
    "cummin", impl=_scan_impl(_accumulate("minimum"), "bif"), abstract_eval=_scan_rule("cummin", "bif"),
    jvp=[_cummin_jvp], vjp=[_cummin_vjp])

for _p in (cumsum_p, cumprod_p, cumlogsumexp_p, cummax_p, cummin_p):
    _p.batch = _scan_batch(_p)


# --- boolean reductions ---------------------------------------------------------------------------

def _bool_reduce_rule(op: str):
    def rule(x: ShapedArray, *, axes) -> ShapedArray:
        if x.dtype != dtypes.bool_:
            type_error(op, f"operand must be bool, got {x.str_short()}; compare it with 0 first")
        if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
            value_error(op, f"axes {axes} out of range or repeated for operand {x.str_short()}")
        return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in axes), x.dtype, False)
    return rule


def _bool_reduce(name, np_name):
    def impl(xp):
        fn = getattr(xp, np_name)

        def f(x, *, axes):
            if x.dtype != bool:
                raise TypeError("bad dtype")  # the caller reports it with the shape rule's message
            return xp.asarray(fn(x, axis=tuple(axes)))
        return f
    p = Primitive(name, impl=impl, abstract_eval=_bool_reduce_rule(name), jvp=[None], vjp=[None],
                  differentiable=False, weak_type=lambda w, params: False)
    p.batch = lambda args, dims, *, axes: (
        p.bind(move_axis(args[0], dims[0], 0), axes=tuple(a + 1 for a in axes)), 0)
    return p


reduce_and_p = _bool_reduce("reduce_and", "all")
reduce_or_p = _bool_reduce("reduce_or", "any")


# --- lax-style functions --------------------------------------------------------------------------

def _axis(x, axis) -> int:
    axis = int(axis)
    if x.ndim and -x.ndim <= axis < x.ndim:
        return axis % x.ndim
    return axis  # out of range: the shape rule reports it


def cumsum(operand, axis: int = 0, reverse: bool = False, *, order: str = "window"):
    """Cumulative sum along `axis` (from the end when reverse=True), as jax.lax.cumsum. `order` is the
    face's rounding order for floats: "window" XLA's (JAX), "sequential" a running sum (torch's CPU
    kernels); the default binds no param, so JAX's jaxprs read as JAX's."""
    return cumsum_p.bind(operand, axis=_axis(operand, axis), reverse=bool(reverse), **_order(order))


def cumprod(operand, axis: int = 0, reverse: bool = False, *, order: str = "window"):
    """Cumulative product along `axis`, as jax.lax.cumprod (its derivative is exact with zeros); `order`
    as cumsum's."""
    return cumprod_p.bind(operand, axis=_axis(operand, axis), reverse=bool(reverse), **_order(order))


def _order(order: str) -> dict:
    if order not in ("window", "sequential"):
        raise ValueError(f"cumsum/cumprod: order must be 'window' or 'sequential', got {order!r}")
    return {} if order == "window" else {"order": order}


def cummax(operand, axis: int = 0, reverse: bool = False):
    """Running maximum along `axis`, as jax.lax.cummax."""
    return cummax_p.bind(operand, axis=_axis(operand, axis), reverse=bool(reverse))


def cummin(operand, axis: int = 0, reverse: bool = False):
    """Running minimum along `axis`, as jax.lax.cummin."""
    return cummin_p.bind(operand, axis=_axis(operand, axis), reverse=bool(reverse))


def cumlogsumexp(operand, axis: int = 0, reverse: bool = False):
    """Running log(sum(exp(x))) along `axis` (numerically stable), as jax.lax.cumlogsumexp."""
    return cumlogsumexp_p.bind(operand, axis=_axis(operand, axis), reverse=bool(reverse))


def _bool_axes(x, axes) -> tuple:
    return tuple(sorted(_axis(x, a) for a in axes))  # out-of-range axes reach the shape rule


def reduce_and(operand, axes):
    """Logical and of a bool array over `axes`, as jax.lax.reduce_and."""
    axes = _bool_axes(operand, axes)
    return reduce_and_p.bind(operand, axes=axes) if axes else operand


def reduce_or(operand, axes):
    """Logical or of a bool array over `axes`, as jax.lax.reduce_or."""
    axes = _bool_axes(operand, axes)
    return reduce_or_p.bind(operand, axes=axes) if axes else operand


# --- associative_scan: a plain function of slices (no card; cummax / cummin's jvp runs it) ----------

def _interleave(a, b):
    """[a0, b0, a1, b1, ...] along axis 0 (len(a) == len(b) or len(b) + 1)."""
    extra_a = 1 if a.shape[0] == b.shape[0] else 0
    rest = [(0, 0, 0)] * (a.ndim - 1)
    pa = pad(a, full((), 0, a.dtype), [(0, extra_a, 1)] + rest)
    pb = pad(b, full((), 0, b.dtype), [(1, 1 - extra_a, 1)] + rest)
    mask = pad(full((a.shape[0],), True, dtypes.bool_), full((), False, dtypes.bool_), [(0, extra_a, 1)])
    return ew.select(broadcast_in_dim(mask, pa.shape, (0,)), pa, pb)


def associative_scan(fn: Callable, elems, reverse: bool = False, axis: int = 0):
    """Inclusive scan with an associative `fn` in O(log n) vectorised steps (as jax.lax.associative_scan).

    fn(a, b) must combine pytrees of arrays elementwise along the scanned axis (it is applied to whole
    slices at once), and be associative.

    Examples:
        >>> import funcgrad.numpy as jnp
        >>> from funcgrad import lax
        >>> lax.associative_scan(jnp.add, jnp.arange(5.0))
        Array([ 0.,  1.,  3.,  6., 10.], dtype=float32)
    """
    leaves, tree = tree_flatten(elems)
    leaves = [x if isinstance(x, ArrayBase) else canonical_array(x) for x in leaves]
    if not leaves:
        return elems
    nd = leaves[0].ndim
    ax = axis % nd if nd else 0
    n = leaves[0].shape[ax]
    if any(x.shape[ax] != n for x in leaves):
        raise ValueError(f"associative_scan: all leaves need the same length along axis {axis}, got "
                         f"{[x.shape[ax] for x in leaves]}")
    xs = [move_axis(x, ax, 0) for x in leaves]
    if reverse:
        xs = [rev(x, (0,)) for x in xs]

    def combine(a, b):
        out = fn(tree_unflatten(tree, a), tree_unflatten(tree, b))
        o_leaves, o_tree = tree_flatten(out)
        if o_tree != tree:
            raise TypeError(f"associative_scan: fn must return the structure of its inputs, {tree}; got {o_tree}")
        return [x if isinstance(x, ArrayBase) else canonical_array(x) for x in o_leaves]

    def scan_(xs):
        m = xs[0].shape[0]
        if m < 2:
            return xs
        odd = scan_(combine([x[0:-1:2] for x in xs], [x[1::2] for x in xs]))
        if m % 2 == 0:
            even = combine([o[:-1] for o in odd], [x[2::2] for x in xs])
        else:
            even = combine(odd, [x[2::2] for x in xs])
        even = [concatenate([x[0:1], e], 0) for x, e in zip(xs, even)]
        return [_interleave(e, o) for e, o in zip(even, odd)]

    out = scan_(xs)
    if reverse:
        out = [rev(x, (0,)) for x in out]
    return tree_unflatten(tree, [move_axis(x, 0, ax) for x in out])
