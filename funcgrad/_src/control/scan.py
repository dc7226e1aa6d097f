"""scan, fori_loop and map: the scan card (its vjp runs the body's residual jaxprs backwards over a
tape of the forward's carries) and the user functions. Static fori_loop bounds lower to scan, so reverse
mode works; traced bounds lower to while_loop."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..core import dtypes
from ..core.array import ArrayBase, get_aval, to_array, wrap
from ..core.aval import ShapedArray
from ..core.jaxpr import Jaxpr
from ..core.primitive import Primitive
from ..core.trace import concrete_value, Tracer
from ..core.tree_util import tree_flatten, tree_unflatten
from ..prims import elementwise as ew
from ..prims.shape import concatenate, expand_dims, full, slice as lslice, squeeze
from ..interpreters.ad import jvp, backward, record
from ..interpreters.batching import vmap
from ..prims._util import batch_size
from ..prims.shape import move_axis, to_front
from ..interpreters.compiler.dce import dce
from ._bodies import (_as_arrays, _avals, _carry_error, _compiled, _concrete, _fn, _partial, _promote_weak_carry,
                     _zeros, trace_flat)
from .while_loop import _Promote, _check_eager_carry, _while_traced


def _scan_rule(*args, jaxpr, n_consts, n_carry, length, reverse):
    outs = jaxpr.out_avals
    ys = [ShapedArray((length,) + a.shape, a.dtype, a.weak_type) for a in outs[n_carry:]]
    return list(outs[:n_carry]) + ys


def _scan_impl(xp):
    def run(*args, jaxpr, n_consts, n_carry, length, reverse):
        consts, carry, xs = list(args[:n_consts]), list(args[n_consts:n_consts + n_carry]), args[n_consts + n_carry:]
        body = _compiled(jaxpr)
        ys = None
        order = range(length - 1, -1, -1) if reverse else range(length)
        for i in order:
            out = body(*consts, *carry, *[x[i] for x in xs])
            carry = list(out[:n_carry])
            if ys is None:
                ys = [xp.empty((length,) + np.shape(y), dtype=np.asarray(y).dtype if xp is np else y.dtype)
                      for y in out[n_carry:]]
            for buf, y in zip(ys, out[n_carry:]):
                buf[i] = y
        if ys is None:
            ys = [xp.empty((length,) + a.shape, a.dtype) for a in jaxpr.out_avals[n_carry:]]
        return carry + ys
    return run


def _scan_jvp(args, tangents, ans, *, jaxpr, n_consts, n_carry, length, reverse, res=None):
    nc, k = n_consts, n_carry
    cidx = [i for i in range(nc) if tangents[i] is not None]  # consts without a tangent stay fixed
    m = len(cidx)
    ts = [_zeros(get_aval(a)) if t is None else t for a, t in zip(args, tangents)]
    consts, carry, xs = args[:nc], args[nc:nc + k], args[nc + k:]
    tc, tk, tx = [ts[i] for i in cidx], ts[nc:nc + k], ts[nc + k:]
    nx = len(xs)
    x_avals = [ShapedArray(get_aval(x).shape[1:], get_aval(x).dtype) for x in xs]
    avals = ([get_aval(a) for a in list(consts) + list(tc) + list(carry) + list(tk)] + x_avals + x_avals)

    def body(*a):
        c, dc = a[:nc], a[nc:nc + m]
        h, dh = a[nc + m:nc + m + k], a[nc + m + k:nc + m + 2 * k]
        x, dx = a[nc + m + 2 * k:nc + m + 2 * k + nx], a[nc + m + 2 * k + nx:]
        out, tout = jvp(_partial(jaxpr, c, cidx), [c[i] for i in cidx] + list(h) + list(x),
                        list(dc) + list(dh) + list(dx))
        return list(out[:k]) + list(tout[:k]) + list(out[k:]) + list(tout[k:])

    key = ("jvp", nc, k, nx, tuple(cidx), _avals_key(avals))
    new = jaxpr._cache.get(key)
    if new is None:
        new = jaxpr._cache[key] = trace_flat(body, avals, "scan")
    outs = scan_p.bind(*consts, *tc, *carry, *tk, *xs, *tx, jaxpr=new, n_consts=nc + m, n_carry=2 * k,
                       length=length, reverse=reverse)
    ny = len(jaxpr.outvars) - k
    return list(outs[k:2 * k]) + list(outs[2 * k + ny:])


def _avals_key(avals) -> tuple:
    """A hashable key for derived body jaxprs: everything tracing depends on in each aval."""
    return tuple((tuple(a.shape), np.dtype(a.dtype).str, bool(a.weak_type)) for a in avals)


_VIEW_PRIMS = frozenset({"slice", "reshape", "squeeze", "expand_dims", "transpose", "broadcast_in_dim", "rev"})


def _tape_values(tape):
    """Every place a recorded tape keeps a value the backward walk may read: (holder, how) pairs for its
    variables and for the residuals a primitive's tape rule stored in its parameters (scan, custom_vjp)."""
    seen, places = set(), []
    for v in [t.var for t in tape.inputs] + [v for e in tape.trace.eqns for v in e.invars + e.outvars]:
        if id(v) not in seen:
            seen.add(id(v))
            places.append(v)
    stored = []
    for e in tape.trace.eqns:
        if "res" in e.params:
            leaves, tree = tree_flatten(e.params["res"])
            if any(isinstance(x, Tracer) for x in leaves):
                stored.append((e, leaves, tree))
    return places, stored


def _residual_bodies(jaxpr, nc, k, cidx, fwd_avals, ny):
    """The scan body split into a forward that also returns, per step, every value its vjp reads, and a
    backward that reads them instead of recomputing the step (as JAX's partial evaluation does):

        fwd: (consts, carry, x) -> (carry', y, *residuals)
        bwd: (consts, g_carry, g_consts, x, g_y, *residuals) -> (g_carry_before, g_consts', g_x)

    Residuals the backward does not read are dropped from both. Cached on the body jaxpr."""
    key = ("vjp_residuals", nc, k, tuple(cidx), _avals_key(fwd_avals))
    hit = jaxpr._cache.get(key)
    if hit is not None:
        return hit
    m, nx = len(cidx), len(fwd_avals) - nc - k
    box = {}

    def fwd_body(*a):
        c, h, x = list(a[:nc]), list(a[nc:nc + k]), list(a[nc + k:])
        tape = record(_partial(jaxpr, c, cidx), [c[i] for i in cidx] + h + x, "scan")
        outs = _as_arrays(tape.out_values())
        inputs = {id(t): t for t in c + x}  # the backward gets these as its own inputs
        places, stored = _tape_values(tape)
        # a view of another value (a gate sliced out of a stacked product, a reshape) is cheaper to
        # take again in the backward than to save for every step
        views = [e for e in tape.trace.eqns if e.prim.name in _VIEW_PRIMS and len(e.invars) == 1
                 and isinstance(e.invars[0].val, Tracer) and isinstance(e.outvars[0].val, Tracer)]
        cid = {id(e.outvars[0].val) for e in views}
        cands = []
        for val in [v.val for v in places] + [x for _, leaves, _ in stored for x in leaves]:
            if isinstance(val, Tracer) and id(val) not in inputs and id(val) not in cid:
                cid.add(id(val))
                cands.append(val)
        box.update(tape=tape, c=c, x=x, cands=cands, places=places, stored=stored, views=views)
        return outs + cands

    fwd = trace_flat(fwd_body, fwd_avals, "scan")
    tape, cands = box["tape"], box["cands"]
    n_out = k + ny
    res_avals = [v.aval for v in fwd.outvars[n_out:]]
    bwd_avals = (list(fwd_avals[:nc]) + list(fwd.out_avals[:k]) + [fwd_avals[i] for i in cidx]
                 + list(fwd_avals[nc + k:]) + list(fwd.out_avals[k:n_out]) + res_avals)

    def bwd_body(*a):
        c = a[:nc]
        g_h = list(a[nc:nc + k])
        g_c = list(a[nc + k:nc + k + m])
        x = a[nc + k + m:nc + k + m + nx]
        g_y = list(a[nc + k + m + nx:nc + k + m + nx + ny])
        res = a[nc + k + m + nx + ny:]
        new = {id(t): u for t, u in zip(box["c"] + box["x"] + cands, list(c) + list(x) + list(res))}
        for e in box["views"]:
            new[id(e.outvars[0].val)] = e.prim.bind(new[id(e.invars[0].val)], **e.params)
        for v in box["places"]:  # the tape now reads this trace's values
            val = v.val
            if isinstance(val, Tracer) and id(val) in new:
                v.val = new[id(val)]
        for e, leaves, tree in box["stored"]:
            e.params = dict(e.params, res=tree_unflatten(tree, [new.get(id(x), x) for x in leaves]))
        gs = backward(tape, g_h + g_y)
        gs = [_zeros(av) if g is None else g for g, av in zip(gs, [fwd_avals[i] for i in cidx]
                                                                   + list(fwd_avals[nc:]))]
        new_gc = [ew.add(acc, g) for acc, g in zip(g_c, gs[:m])]
        return list(gs[m:m + k]) + new_gc + list(gs[m + k:])

    bwd = dce(trace_flat(bwd_body, bwd_avals, "scan"))
    # keep only the residuals the backward reads
    n_fixed = nc + k + m + nx + ny
    used_vars = {id(v) for e in bwd.eqns for v in e.invars} | {id(v) for v in bwd.outvars}
    keep = [r for r, v in enumerate(bwd.invars[n_fixed:]) if id(v) in used_vars]
    fwd = Jaxpr(fwd.constvars, fwd.consts, fwd.invars, fwd.eqns,
                list(fwd.outvars[:n_out]) + [fwd.outvars[n_out + r] for r in keep])
    bwd = Jaxpr(bwd.constvars, bwd.consts, list(bwd.invars[:n_fixed]) + [bwd.invars[n_fixed + r] for r in keep],
                bwd.eqns, bwd.outvars)
    hit = jaxpr._cache[key] = (fwd, bwd)
    return hit


def _tape_cidx(args, nc, traced):
    """The consts a tape-recorded scan keeps residuals for: the tape's own operands of a float or complex
    dtype, those its backward walk may ask a cotangent for (it may ask for fewer)."""
    return [i for i in range(nc) if (traced is None or traced[i]) and dtypes.is_inexact(get_aval(args[i]).dtype)]


def _fwd_avals(args, nc, k):
    return [get_aval(a) for a in args[:nc + k]] + [ShapedArray(get_aval(x).shape[1:], get_aval(x).dtype,
                                                               get_aval(x).weak_type) for x in args[nc + k:]]


def _forward_with_residuals(args, jaxpr, nc, k, length, reverse, cidx):
    """The scan's outputs plus the stacked residuals of its vjp (see _residual_bodies)."""
    ny = len(jaxpr.outvars) - k
    fwd, _ = _residual_bodies(jaxpr, nc, k, cidx, _fwd_avals(args, nc, k), ny)
    outs = scan_p.bind(*args, jaxpr=fwd, n_consts=nc, n_carry=k, length=length, reverse=reverse)
    return list(outs[:k + ny]), list(outs[k + ny:])


def _scan_tape(lower, params, traced=None):
    """On a tape, run the forward scan once, keeping the per-step residuals for the backward pass."""
    nc = params["n_consts"]
    cidx = _tape_cidx(lower, nc, traced)
    outs, stacked = _forward_with_residuals(list(lower), params["jaxpr"], nc, params["n_carry"],
                                            params["length"], params["reverse"], cidx)
    return outs, dict(params, res=(tuple(cidx), stacked))


def _scan_vjp(cts, ans, args, needs, *, jaxpr, n_consts, n_carry, length, reverse, res=None):
    nc, k = n_consts, n_carry
    consts, carry, xs = list(args[:nc]), list(args[nc:nc + k]), list(args[nc + k:])
    outs_avals = _scan_rule(*[get_aval(a) for a in args], jaxpr=jaxpr, n_consts=nc, n_carry=k,
                            length=length, reverse=reverse)
    cts = [_zeros(av) if c is None else c for c, av in zip(cts, outs_avals)]
    ct_carry, ct_ys = cts[:k], cts[k:]
    ny = len(ct_ys)
    # 1. The per-step residuals: kept from the forward pass when recorded on a tape, else computed now
    # (for the consts whose cotangent is asked for).
    if res is not None:
        cidx, stacked = list(res[0]), res[1]
    else:
        cidx = [i for i in range(nc) if needs[i]]
        stacked = _forward_with_residuals(list(args), jaxpr, nc, k, length, reverse, cidx)[1]
    _, bwd = _residual_bodies(jaxpr, nc, k, cidx, _fwd_avals(args, nc, k), ny)
    # 2. Backward, in the opposite order: carry (ct of carry, accumulated ct of consts); per step
    # (x_t, ct_y_t, residuals_t).
    zero_c = [_zeros(get_aval(consts[i])) for i in cidx]
    out = scan_p.bind(*consts, *ct_carry, *zero_c, *xs, *ct_ys, *stacked, jaxpr=bwd, n_consts=nc,
                      n_carry=k + len(cidx), length=length, reverse=not reverse)
    m = len(cidx)
    g_init, g_consts, g_xs = out[:k], out[k:k + m], out[k + m:]
    out_c = [None] * nc
    for i, g in zip(cidx, g_consts):
        if needs[i]:
            out_c[i] = g
    return out_c + list(g_init) + list(g_xs)


def _scan_batch(args, dims, *, jaxpr, n_consts, n_carry, length, reverse):
    size = batch_size(args, dims)
    nc, k = n_consts, n_carry
    consts = list(args[:nc])
    cdims = list(dims[:nc])
    carry = [to_front(a, d, size) for a, d in zip(args[nc:nc + k], dims[nc:nc + k])]
    xs, xdims = [], []
    for a, d in zip(args[nc + k:], dims[nc + k:]):
        if d is None:
            xs.append(a)
            xdims.append(None)
        else:
            xs.append(move_axis(a, d, 1))  # scanned axis stays first; batch second
            xdims.append(0)
    vbody = vmap(_fn(jaxpr), in_axes=tuple(cdims) + (0,) * k + tuple(xdims), out_axes=0, axis_size=size)
    avals = ([get_aval(a) for a in consts + carry]
             + [ShapedArray(get_aval(x).shape[1:], get_aval(x).dtype) for x in xs])
    new = trace_flat(lambda *a: list(vbody(*a)), avals, "scan")
    outs = scan_p.bind(*consts, *carry, *xs, jaxpr=new, n_consts=nc, n_carry=k, length=length, reverse=reverse)
    return list(outs), [0] * k + [1] * (len(outs) - k)


scan_p = Primitive("scan", impl=_scan_impl, abstract_eval=_scan_rule, jvp_full=_scan_jvp,
                   vjp_full=_scan_vjp, batch=_scan_batch, tape_rule=_scan_tape, multiple_results=True)


scan_p.is_call = True


def _index(x, i):
    return squeeze(lslice(x, (i,) + (0,) * (x.ndim - 1), (i + 1,) + tuple(x.shape[1:])), (0,))


def _stack(ys):
    return concatenate([expand_dims(y, (0,)) for y in ys], 0)


def scan(f: Callable, init, xs=None, length: int | None = None, reverse: bool = False, unroll: int = 1):
    """Loop `carry, y = f(carry, x)` over the leading axis of xs, stacking the ys (as jax.lax.scan). The
    carry keeps its types: a body that changes its structure, shape or dtype raises TypeError, run
    eagerly or traced (a weakly typed Python-scalar carry takes the body's dtype where JAX allows).

    The body is traced once and run `length` times; the loop is differentiable in both modes (reverse
    mode stores each step's residuals). Combine with `checkpoint` on the body to trade memory for compute.

    Args:
        f: `f(carry, x) -> (new_carry, y)`.
        init: the initial carry (a pytree).
        xs: the pytree scanned over its leading axis, or None (then `length` is required).
        length: the number of steps, when xs is None (or to check it).
        reverse: scan from the end.
        unroll: accepted (a compiler hint in JAX); the result is the same.

    Returns:
        `(final_carry, ys)`, the ys stacked along a new leading axis.

    Examples:
        >>> import funcgrad.numpy as jnp
        >>> from funcgrad import lax
        >>> lax.scan(lambda c, x: (c + x, c * x), 0.0, jnp.arange(4.0))
        (Array(6., dtype=float32), Array([0., 0., 2., 9.], dtype=float32))
    """
    return _scan(f, init, xs, length, reverse, unroll, "scan", f, 0)


def _scan(f, init, xs, length, reverse, unroll, name: str, fun, carry_arg: int):
    """scan, with `name`, `fun` and `fun`'s carry argument position for messages (fori_loop's body)."""
    x_leaves, x_tree = tree_flatten(xs)
    lengths = {int(get_aval(x).shape[0]) if get_aval(x).shape else None for x in x_leaves}
    if None in lengths:
        raise ValueError(f"{name}: every leaf of xs needs a leading axis to scan over")
    if length is not None:
        lengths.add(int(length))
    if len(lengths) > 1:
        raise ValueError(f"{name}: xs leaves and length disagree on the scan length: {sorted(lengths)}")
    if not lengths:
        raise ValueError(f"{name}: give xs or length")
    n = lengths.pop()
    c_leaves, c_tree = tree_flatten(init)
    if n and _concrete(c_leaves + x_leaves):
        return _scan_python(f, init, c_leaves, c_tree, x_leaves, x_tree, n, reverse, name, fun, carry_arg)
    c_leaves, x_leaves = _as_arrays(c_leaves), _as_arrays(x_leaves)
    c_avals = _avals(c_leaves)
    x_avals = [ShapedArray(get_aval(x).shape[1:], get_aval(x).dtype, get_aval(x).weak_type) for x in x_leaves]
    store = []

    def body(*a):
        carry = tree_unflatten(c_tree, list(a[:len(c_leaves)]))
        x = tree_unflatten(x_tree, list(a[len(c_leaves):]))
        new_c, y = _scan_pair(name, f(carry, x))
        nc_leaves, nc_tree = tree_flatten(new_c)
        y_leaves, y_tree = tree_flatten(y)
        store.append((nc_tree, y_tree, len(nc_leaves)))
        return nc_leaves + y_leaves

    closed = trace_flat(body, c_avals + x_avals, name)
    nc_tree, y_tree, n_c = store[-1]
    promoted = _promote_weak_carry(c_leaves, closed.out_avals[:n_c]) if nc_tree == c_tree else None
    if promoted is not None:
        c_leaves, c_avals = promoted, _avals(promoted)
        closed = trace_flat(body, c_avals + x_avals, name)
        nc_tree, y_tree, n_c = store[-1]
    err = _carry_error(name, fun, carry_arg, init, c_tree, c_avals, nc_tree, closed.out_avals[:n_c])
    if err is not None:
        raise err
    consts = list(closed.consts)
    open_j = Jaxpr([], [], list(closed.constvars) + list(closed.invars), closed.eqns, closed.outvars)
    outs = scan_p.bind(*consts, *c_leaves, *x_leaves, jaxpr=open_j, n_consts=len(consts),
                       n_carry=len(c_leaves), length=n, reverse=bool(reverse))
    return tree_unflatten(c_tree, outs[:n_c]), tree_unflatten(y_tree, outs[n_c:])


def _scan_pair(name: str, out):
    if not (isinstance(out, tuple) and len(out) == 2):
        got = f"a tuple of {len(out)}" if isinstance(out, tuple) else type(out).__name__
        raise TypeError(f"{name}: the body function must return a pair (carry, y), got {got}")
    return out


def _scan_python(f, init, c_leaves, c_tree, x_leaves, x_tree, n, reverse, name, fun, carry_arg):
    """scan outside every transform: the body runs as Python on each slice, its carry checked against
    the initial carry's types at every step (as the traced scan checks its body once)."""
    x_leaves = _as_arrays(x_leaves)
    c_leaves = _as_arrays(c_leaves)
    order = range(n - 1, -1, -1) if reverse else range(n)
    while True:
        c_avals = _avals(c_leaves)
        carry, ys, y_type = tree_unflatten(c_tree, c_leaves), [], None
        try:
            for k, i in enumerate(order):
                x = tree_unflatten(x_tree, [_index(x, i) for x in x_leaves])
                new_c, y = _scan_pair(name, f(carry, x))
                carry = tree_unflatten(c_tree, _check_eager_carry(name, fun, carry_arg, init, c_tree, c_avals,
                                                                  c_leaves, k == 0, new_c))
                y_leaves, y_tree = tree_flatten(y)
                y_leaves = _as_arrays(y_leaves)
                t = (y_tree, [(a.shape, a.dtype) for a in _avals(y_leaves)])
                if y_type is None:
                    y_type = t
                elif t != y_type:
                    raise TypeError(f"{name}: the body function returned y of different types at different steps: "
                                    f"{y_type[0]} {[str(d) + str(list(s)) for s, d in y_type[1]]} and then "
                                    f"{t[0]} {[str(d) + str(list(s)) for s, d in t[1]]}; every step must return "
                                    "the same structure, shapes and dtypes (as when the body is traced once)")
                ys.append(y_leaves)
        except _Promote as p:
            c_leaves = p.leaves
            continue
        break
    if reverse:
        ys.reverse()
    stacked = [_stack([yl[j] for yl in ys]) for j in range(len(ys[0]))]
    return carry, tree_unflatten(y_type[0], stacked)


def fori_loop(lower, upper, body_fun: Callable, init_val, *, unroll=None):
    """body_fun(i, val) for i in [lower, upper). Static bounds lower to scan, so reverse mode works.
    `unroll` (a scan hint in JAX) changes nothing in the result; it is accepted and passed to scan.
    The carry keeps its types: a body that changes its structure, shape or dtype raises TypeError naming
    fori_loop, run eagerly or traced (even with no iterations), as in JAX.

    Examples:
        >>> import funcgrad as jax
        >>> from funcgrad import lax
        >>> lax.fori_loop(0, 5, lambda i, s: s + i, 0)
        Array(10, dtype=int32, weak_type=True)
        >>> jax.grad(lambda x: lax.fori_loop(0, 3, lambda i, y: y * x, 1.0))(2.0)
        Array(12., dtype=float32, weak_type=True)
    """
    if not callable(body_fun):
        raise TypeError("fori_loop: body_fun argument should be callable")
    _check_bounds(lower, upper)
    weak_index = get_aval(lower).weak_type and get_aval(upper).weak_type  # (Python ints: JAX's weak index)
    lo, hi = concrete_value(lower) if isinstance(lower, ArrayBase) else lower, \
        concrete_value(upper) if isinstance(upper, ArrayBase) else upper
    if lo is not None and hi is not None:
        lo, hi = int(lo), int(hi)
        leaves, tree = tree_flatten(init_val)
        if hi > lo and _concrete(leaves):  # run as Python; the index and the carry are arrays, as when traced
            leaves = _as_arrays(leaves)
            while True:
                avals = _avals(leaves)
                val = tree_unflatten(tree, leaves)
                try:
                    for i in range(lo, hi):
                        val = tree_unflatten(tree, _check_eager_carry(
                            "fori_loop", body_fun, 1, init_val, tree, avals, leaves, i == lo,
                            body_fun(wrap(np.int32(i), weak_index), val)))
                except _Promote as p:
                    leaves = p.leaves
                    continue
                return val
        idx = wrap(np.arange(lo, max(lo, hi), dtype=np.int32), weak_index)
        carry, _ = _scan(lambda c, i: (body_fun(i, c), None), init_val, idx, max(0, hi - lo), False,
                         1 if unroll is None else unroll, "fori_loop", body_fun, 1)
        return carry

    def cond_fun(c):
        return ew.lt(c[0], _bound(upper, c[0]))

    def body(c):
        new = body_fun(c[0], c[1])
        in_leaves, in_tree = tree_flatten(c[1])
        if not any(x.weak_type for x in in_leaves):  # (a weak carry leaf may yet be promoted: checked then)
            out_leaves, out_tree = tree_flatten(new)
            err = _carry_error("fori_loop", body_fun, 1, init_val, in_tree, _avals(in_leaves), out_tree,
                               _avals(_as_arrays(out_leaves)))
            if err is not None:
                raise err
        return (ew.add(c[0], full((), 1, c[0].dtype)), new)

    start = lower if isinstance(lower, ArrayBase) else wrap(np.asarray(lower, np.int32), weak_index)
    return _while_traced(cond_fun, body, *tree_flatten((start, init_val)), (start, init_val), "fori_loop")[1]


def _check_bounds(lower, upper) -> None:
    """JAX's rule for fori_loop's bounds: the same dtype, or signed integers of which one is weakly typed
    (a Python int beside an integer array)."""
    a, b = get_aval(lower), get_aval(upper)
    if a.dtype == b.dtype:
        return
    if a.dtype.kind == "i" and b.dtype.kind == "i" and a.weak_type != b.weak_type:
        return
    raise TypeError(f"fori_loop: lower and upper must have equal types, got {a.str_short()} and {b.str_short()} "
                    f"({lower!r}, {upper!r}); give integer bounds of one dtype (int(), .astype(jnp.int32))")


def _bound(b, like):
    b = b if isinstance(b, ArrayBase) else to_array(np.asarray(b, dtype=like.dtype))
    return ew.convert_element_type(b, like.dtype)


def map(f: Callable, xs, *, batch_size: int | None = None):  # noqa: A001 - lax name
    """Apply f to each slice of xs along the leading axis (a scan with no carry). `batch_size`, which
    in JAX vmaps f over that many slices per step, gives the same result; it is accepted and unused.

    Examples:
        >>> import funcgrad.numpy as jnp
        >>> from funcgrad import lax
        >>> lax.map(lambda x: x ** 2, jnp.arange(4.0))
        Array([0., 1., 4., 9.], dtype=float32)
    """
    if batch_size is not None and int(batch_size) < 1:
        raise ValueError(f"lax.map: batch_size must be positive, got {batch_size}")
    return scan(lambda _, x: ((), f(x)), (), xs)[1]
