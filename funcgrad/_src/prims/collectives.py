"""Collectives over named axes: psum, pmean, pmax, pmin, all_gather, ppermute, axis_index (JAX's lax names).

A named axis is introduced by `vmap(f, axis_name="i")` (or `pmap`): while the per-example function is
traced, the axis environment below holds one frame per named vmap (its name, size and trace). A collective
names axes; it is recorded at the trace of the innermost frame it names (even when its operand is a
constant: `psum(1, "i")` is the axis size), and when that vmap re-interprets its jaxpr, it applies the
collective across its batch dimension (`apply_collective`). Other names are left to the enclosing vmaps.

Each collective is a Primitive card with jvp and vjp rules written with collectives (psum's transpose
is psum, ppermute's is the inverse permutation, all_gather's is a psum then this member's slice), and a
batch rule for vmaps that do not name its axis (the operation is then elementwise over their axis).
The cards are not in the primitive registry: they have no meaning outside a named axis, which the
registry-wide property tests do not provide; tests/test_collectives.py checks them.

Across processes: in a multi-process job, pmap's axis spans every process's devices (`nproc` > 1 in
`apply_collective`; the frame's size is then the global size). The vmap applies the collective to its own
members, then combines the processes' partial results with two primitives that call the job's reducer
(_src/core/processes.py, set by funcgrad.distributed): `process_psum` (an Allreduce) and
`process_allgather`. They run when the compiled function runs, in program order on every process, and
carry their own jvp/vjp/batch rules, so grad of or around a pmap works across processes too.
"""
from __future__ import annotations

import threading
from typing import NamedTuple

import numpy as np

from ..core import dtypes, processes
from ..core.array import ArrayBase, to_array, canonical_array
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from ..core.trace import _state as _trace_state, find_top
from ..core.tree_util import tree_flatten, tree_unflatten
from .shape import move_axis
from .elementwise import add, convert_element_type, div, eq, mul
from .reduction import reduce_max, reduce_min, reduce_sum
from .shape import (broadcast_in_dim, broadcasted_iota, concatenate, expand_dims, full, reshape, slice as _slice,
                    squeeze)
from .dynamic_slicing import dynamic_slice_in_dim
from ..core.jaxpr import Jaxpr


# --- the axis environment -------------------------------------------------------------------------

class AxisFrame(NamedTuple):
    name: object
    size: int
    trace: object  # the vmap's Trace (collectives naming this axis are recorded there)


class _Env(threading.local):
    def __init__(self):
        self.frames = []
        self.max_level = None  # while a collective binds at a trace: the deepest level below it
        self.pmap_axis = None  # (name, nproc) while a pmap spanning processes starts its vmap


_env = _Env()


class axis_frame:
    """Context manager: the named axis `name` of size `size`, traced by `trace`, is in scope."""

    def __init__(self, name, size: int, trace):
        self.frame = AxisFrame(name, size, trace)

    def __enter__(self):
        _env.frames.append(self.frame)
        return self.frame

    def __exit__(self, *exc):
        _env.frames.remove(self.frame)


class spanning_processes:
    """Context manager (pmap's): the next vmap named `name` maps an axis spanning `nproc` processes."""

    def __init__(self, name, nproc: int):
        self.pending = (name, nproc)

    def __enter__(self):
        self.prev, _env.pmap_axis = _env.pmap_axis, self.pending

    def __exit__(self, *exc):
        _env.pmap_axis = self.prev


def claim_processes(name) -> int:
    """How many processes the axis of a vmap named `name` spans: pmap's (once), else 1."""
    pending = _env.pmap_axis
    if pending is not None and pending[0] == name:
        _env.pmap_axis = None
        return pending[1]
    return 1


def in_named_axis() -> bool:
    """Whether a named axis (a vmap's or pmap's) is being traced."""
    return bool(_env.frames)


def _names(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def lookup(name) -> AxisFrame:
    for f in reversed(_env.frames):
        if f.name == name:
            return f
    bound = [f.name for f in _env.frames]
    raise NameError(f"unbound axis name: {name}. The following axis names (e.g. defined by vmap's or "
                    f"pmap's axis_name) are available to collective operations: {bound}")


def axis_size(axis_name) -> int:
    """The size of the named axis (the product over a tuple of names)."""
    n = 1
    for nm in _names(axis_name):
        n *= lookup(nm).size
    return n


# Traces whose jaxprs keep closed-over tracers as constants instead of turning them into operands
# (scan and while_loop bodies hoist them): a collective inside one is recorded there.
_KEEPS_CLOSURES = frozenset(("jit", "switch"))


def bind_collective(prim, args, params, use_stack: bool = True, max_level=None):
    """Bind a collective at the trace of the innermost vmap naming its axis, or at an operand's trace
    if that is deeper. scan and while_loop bodies traced inside the vmap turn such values into operands,
    but jit and cond do not: when one is being traced between that trace and the innermost one (up to
    `max_level`, the level below a value-carrying trace binding one level down), the collective is
    recorded at the innermost trace, inside the jitted function (psum(1, "i") under jit)."""
    frames = [lookup(nm) for nm in _names(params["axis_name"])]
    target = max((f.trace for f in frames), key=lambda t: t.level)
    if not target.alive:
        raise NameError(f"{prim.name}: the vmap that binds axis {params['axis_name']} has finished")
    args = [a if isinstance(a, ArrayBase) else canonical_array(a) for a in args]
    chosen = target
    top = find_top(args)
    if top is not None and top.level > chosen.level:
        chosen = top
    if use_stack:
        above = [tr for tr in _trace_state.stack
                 if tr.level > chosen.level and (max_level is None or tr.level <= max_level)]
        if any(tr.name in _KEEPS_CLOSURES for tr in above):
            chosen = above[-1]
    prev = _env.max_level
    _env.max_level = chosen.level - 1
    try:
        return chosen.process(prim, args, params)
    finally:
        _env.max_level = prev


def _tape_rule(prim):
    def rule(lower, params, traced=None):
        ml = _env.max_level
        return bind_collective(prim, lower, params, use_stack=ml is not None, max_level=ml), params
    return rule


def _eager_impl(name):
    def impl(xp):
        def run(*bufs, axis_name, **params):
            lookup(_names(axis_name)[0])  # raises NameError for an unbound name
            raise NameError(f"{name}: axis {axis_name} is not bound here")
        return run
    return impl


def _same_aval(x, **params):
    return x


def _make(name, abstract_eval=_same_aval, **rules):
    p = Primitive(name, impl=_eager_impl(name), abstract_eval=abstract_eval, register=False, **rules)
    p.collective = True
    p.tape_rule = _tape_rule(p)
    # binding (e.g. when a jaxpr is re-evaluated inside a vmap's batch rule) goes to the axis's trace,
    # also without traced operands (axis_index, psum of a constant)
    p.bind = lambda *args, **params: bind_collective(p, args, params)
    return p


def _elementwise_batch(prim):
    """A vmap that does not name the collective's axis: the collective acts elementwise over its axis."""
    def rule(args, dims, **params):
        return bind_collective(prim, args, params), dims[0]
    return rule


# --- psum / pmean / pmax / pmin -------------------------------------------------------------------

def _p(prim, x, axis_name):
    return bind_collective(prim, [x], {"axis_name": _names(axis_name)})


psum_p = _make("psum", jvp=[lambda t, ans, x, *, axis_name: _p(psum_p, t, axis_name)],
               vjp=[lambda g, ans, x, *, axis_name: _p(psum_p, g, axis_name)])
psum_p.batch = _elementwise_batch(psum_p)
pmean_p = _make("pmean", jvp=[lambda t, ans, x, *, axis_name: _p(pmean_p, t, axis_name)],
                vjp=[lambda g, ans, x, *, axis_name: _p(pmean_p, g, axis_name)])
pmean_p.batch = _elementwise_batch(pmean_p)


def _chooser_mask(ans, x, axis_name):
    m = convert_element_type(eq(x, ans), x.dtype)
    return div(m, _p(psum_p, m, axis_name))  # ties share the derivative evenly


def _chooser(name):
    p = _make(name,
              jvp=[lambda t, ans, x, *, axis_name: _p(psum_p, mul(t, _chooser_mask(ans, x, axis_name)), axis_name)],
              vjp=[lambda g, ans, x, *, axis_name: mul(_chooser_mask(ans, x, axis_name), _p(psum_p, g, axis_name))])
    p.batch = _elementwise_batch(p)
    return p


pmax_p = _chooser("pmax")
pmin_p = _chooser("pmin")


# --- axis_index, all_gather, ppermute -------------------------------------------------------------

axis_index_p = _make("axis_index", abstract_eval=lambda *, axis_name: ShapedArray((), dtypes.int32),
                     differentiable=False)


def _ag_rule(x, *, axis_name, axis, tiled, size):
    if not 0 <= axis <= x.ndim:
        raise ValueError(f"all_gather: axis {axis} out of range for an operand of rank {x.ndim}")
    if tiled:
        if x.ndim == 0:
            raise ValueError("all_gather: tiled=True needs an operand of rank >= 1")
        shape = x.shape[:axis] + (size * x.shape[axis],) + x.shape[axis + 1:]
    else:
        shape = x.shape[:axis] + (size,) + x.shape[axis:]
    return ShapedArray(shape, x.dtype, x.weak_type)


def _ag_vjp(g, ans, x, *, axis_name, axis, tiled, size):
    total = _p(psum_p, g, axis_name)
    i = axis_index(axis_name[0]) if len(axis_name) == 1 else _flat_index(axis_name)
    if tiled:
        return dynamic_slice_in_dim(total, i * x.shape[axis], x.shape[axis], axis)
    return squeeze(dynamic_slice_in_dim(total, i, 1, axis), (axis,))


def _ag_batch(args, dims, *, axis_name, axis, tiled, size):
    x = move_axis(args[0], dims[0], 0)
    return bind_collective(all_gather_p, [x], dict(axis_name=axis_name, axis=axis + 1, tiled=tiled,
                                                   size=size)), 0


all_gather_p = _make("all_gather", abstract_eval=_ag_rule,
                     jvp=[lambda t, ans, x, **p: bind_collective(all_gather_p, [t], p)], vjp=[_ag_vjp])
all_gather_p.batch = _ag_batch


def _inverse_perm(perm):
    return tuple((d, s) for s, d in perm)


ppermute_p = _make("ppermute",
                   jvp=[lambda t, ans, x, *, axis_name, perm: bind_collective(ppermute_p, [t], dict(
                       axis_name=axis_name, perm=perm))],
                   vjp=[lambda g, ans, x, *, axis_name, perm: bind_collective(ppermute_p, [g], dict(
                       axis_name=axis_name, perm=_inverse_perm(perm)))])
ppermute_p.batch = _elementwise_batch(ppermute_p)


def _flat_index(names):
    idx = None
    for nm in names:
        i = axis_index(nm)
        idx = i if idx is None else idx * lookup(nm).size + i
    return idx


# --- across processes: the job's Allreduce and Allgather as primitives ---------------------------

def _host(b):
    return b if isinstance(b, np.ndarray) else (b.get() if hasattr(b, "get") else np.asarray(b))


def _process_psum_impl(xp):
    def run(x):
        h = np.asarray(_host(x))
        out = processes.reducer().allreduce(h)[0]  # (half precision comes back in float32; 0-d as 1-d)
        return xp.asarray(out.astype(h.dtype, copy=False).reshape(h.shape))
    return run


def _process_allgather_impl(xp):
    def run(x, *, count, index):
        return xp.asarray(processes.reducer().allgather(np.asarray(_host(x)))[0])
    return run


def process_psum(x):
    """The sum of x over the processes of the job (every process gets it)."""
    return process_psum_p.bind(x)


def process_allgather(x):
    """Every process's x, stacked along a new leading axis in process order."""
    return process_allgather_p.bind(x, count=processes.count(), index=processes.index())


process_psum_p = Primitive("process_psum", impl=_process_psum_impl, abstract_eval=_same_aval, register=False,
                           jvp=[lambda t, ans, x: process_psum(t)],
                           vjp=[lambda g, ans, x: process_psum(g)],  # d(sum_q x_q)/dx_p: every g summed
                           batch=lambda args, dims: (process_psum(args[0]), dims[0]))


def _pag_vjp(g, ans, x, *, count, index):
    return _index(process_psum(g), 0, index)  # this process's slot of every process's cotangent


process_allgather_p = Primitive(
    "process_allgather", impl=_process_allgather_impl, register=False,
    abstract_eval=lambda x, *, count, index: ShapedArray((count,) + tuple(x.shape), x.dtype, x.weak_type),
    jvp=[lambda t, ans, x, **p: process_allgather_p.bind(t, **p)], vjp=[_pag_vjp],
    batch=lambda args, dims, **p: (process_allgather_p.bind(args[0], **p), None if dims[0] is None else dims[0] + 1))
for _p_ in (process_psum_p, process_allgather_p):
    _p_.foldable = False  # never run at compile time: every process runs it when the program runs


def _gathered_members(xb, size, nproc):
    """Every process's members (xb: this process's, batch leading), in global order: (nproc*size, ...)."""
    g = process_allgather(xb)
    return reshape(g, (nproc * size,) + tuple(xb.shape[1:]))


def _apply_across_processes(prim, x, d, params, name, size, nproc):
    """apply_collective for an axis of `size` members on each of `nproc` processes (this one holding
    members index*size ... index*size + size - 1)."""
    pname = prim.name
    me = processes.index()
    if pname == "axis_index":
        return add(broadcasted_iota(dtypes.int32, (size,), 0), full((size,), me * size, dtypes.int32)), 0
    rest = tuple(n for n in params["axis_name"] if n != name)
    if pname in ("psum", "pmean"):
        if d is None:
            part = mul(x, full(tuple(x.shape), size, x.dtype)) if x.dtype != np.bool_ else x
        else:
            part = reduce_sum(x, (d,))
        out = process_psum(part)
        if pname == "pmean":
            out = div(out, full(tuple(out.shape), size * nproc, out.dtype))
    elif pname in ("pmax", "pmin"):
        red = reduce_max if pname == "pmax" else reduce_min
        part = x if d is None else red(x, (d,))
        out = red(process_allgather(part), (0,))
    elif pname == "all_gather":
        if rest:
            raise NotImplementedError("all_gather over several axis names at once is not supported")
        axis, tiled = params["axis"], params["tiled"]
        xb = _broadcast_batch(x, size) if d is None else move_axis(x, d, 0)
        out = move_axis(_gathered_members(xb, size, nproc), 0, axis)
        if tiled:
            shp = tuple(out.shape)
            out = reshape(out, shp[:axis] + (shp[axis] * shp[axis + 1],) + shp[axis + 2:])
        return out, None
    elif pname == "ppermute":
        if rest:
            raise NotImplementedError("ppermute over several axis names at once is not supported")
        xb = _broadcast_batch(x, size) if d is None else move_axis(x, d, 0)
        g = _gathered_members(xb, size, nproc)  # every member's value (an Allgather: simple, not minimal)
        src_of = {dst: src for src, dst in params["perm"]}
        zero = expand_dims(full(tuple(xb.shape[1:]), 0, xb.dtype), (0,))
        rows = [expand_dims(_index(g, 0, src_of[j]), (0,)) if j in src_of else zero
                for j in range(me * size, (me + 1) * size)]
        return concatenate(rows, 0), 0
    else:
        raise NotImplementedError(f"no batching rule for the collective {pname}")
    if rest:
        out = bind_collective(prim, [out], dict(params, axis_name=rest))
    return out, None


# --- applying a collective across the batch dimension of the vmap that names it ------------------

def _index(x, d, i):
    starts, limits = [0] * x.ndim, list(x.shape)
    starts[d], limits[d] = i, i + 1
    return squeeze(_slice(x, tuple(starts), tuple(limits), None), (d,))


def _broadcast_batch(x, size):
    return broadcast_in_dim(x, (size,) + tuple(x.shape), tuple(range(1, x.ndim + 1)))


def apply_collective(prim, vals, dims, params, name, size, nproc: int = 1):
    """The collective `prim` applied across the batch dimension of the vmap named `name` (size `size`):
    returns (outs, out_dims) as a batch rule does. Names other than `name` are bound again for the
    enclosing vmaps. nproc > 1: the axis spans the job's processes, `size` members on each (pmap)."""
    if nproc > 1:
        return _apply_across_processes(prim, vals[0] if vals else None, dims[0] if dims else None, params,
                                       name, size, nproc)
    pname = prim.name
    if pname == "axis_index":
        return broadcasted_iota(dtypes.int32, (size,), 0), 0
    names = params["axis_name"]
    rest = tuple(n for n in names if n != name)
    x, d = vals[0], dims[0]
    if pname in ("psum", "pmean", "pmax", "pmin"):
        if d is None:
            if pname == "psum":
                out = mul(x, full((), size, x.dtype)) if x.dtype != np.bool_ else x
            else:
                out = x
        else:
            red = {"psum": reduce_sum, "pmean": reduce_sum, "pmax": reduce_max, "pmin": reduce_min}[pname]
            out = red(x, (d,))
            if pname == "pmean":
                out = div(out, full((), size, out.dtype))
        if rest:
            out = bind_collective(prim, [out], dict(params, axis_name=rest))
        return out, None
    if pname == "all_gather":
        if rest:
            raise NotImplementedError("all_gather over several axis names at once is not supported")
        axis, tiled = params["axis"], params["tiled"]
        xb = _broadcast_batch(x, size) if d is None else move_axis(x, d, 0)
        out = move_axis(xb, 0, axis)
        if tiled:
            shp = tuple(out.shape)
            out = reshape(out, shp[:axis] + (shp[axis] * shp[axis + 1],) + shp[axis + 2:])
        return out, None
    if pname == "ppermute":
        if rest:
            raise NotImplementedError("ppermute over several axis names at once is not supported")
        xb = _broadcast_batch(x, size) if d is None else move_axis(x, d, 0)
        src_of = {dst: src for src, dst in params["perm"]}
        zero = expand_dims(full(tuple(xb.shape[1:]), 0, xb.dtype), (0,))
        rows = [expand_dims(_index(xb, 0, src_of[j]), (0,)) if j in src_of else zero for j in range(size)]
        return concatenate(rows, 0), 0
    raise NotImplementedError(f"no batching rule for the collective {pname}")


# --- the public functions (lax names) -------------------------------------------------------------

def _check_groups(axis_index_groups, op):
    if axis_index_groups is not None:
        raise NotImplementedError(f"{op}: axis_index_groups is not supported")


def _tree_collective(prim, x, axis_name, **params):
    leaves, tree = tree_flatten(x)
    out = [bind_collective(prim, [v], dict(params, axis_name=_names(axis_name))) for v in leaves]
    return tree_unflatten(tree, out)


def _reduction(name: str, prim, doc: str):
    """psum/pmean/pmax/pmin: a pytree reduced over named axes (axis_index_groups is not supported)."""
    def collective(x, axis_name, *, axis_index_groups=None):
        _check_groups(axis_index_groups, name)
        return _tree_collective(prim, x, axis_name)
    collective.__name__ = collective.__qualname__ = name
    collective.__doc__ = doc
    return collective


psum = _reduction("psum", psum_p, "Sum x (a pytree) over the named axis (or tuple of axes): every member gets the "
                  "total.")
pmean = _reduction("pmean", pmean_p, "The mean of x over the named axis (or axes).")
pmax = _reduction("pmax", pmax_p, "The maximum of x over the named axis (or axes).")
pmin = _reduction("pmin", pmin_p, "The minimum of x over the named axis (or axes).")


def axis_index(axis_name):
    """This member's int32 position along the named axis (a tuple of names: the flattened position)."""
    names = _names(axis_name)
    if len(names) > 1:
        return _flat_index(names)
    return bind_collective(axis_index_p, [], {"axis_name": names})


def all_gather(x, axis_name, *, axis_index_groups=None, axis: int = 0, tiled: bool = False):
    """Every member's x, stacked along a new axis `axis` (tiled=True: concatenated along `axis`)."""
    _check_groups(axis_index_groups, "all_gather")
    names = _names(axis_name)
    size = axis_size(names)

    def one(v):
        v = v if isinstance(v, ArrayBase) else canonical_array(v)
        ax = axis % (v.ndim + (0 if tiled else 1)) if v.ndim or not tiled else axis
        return bind_collective(all_gather_p, [v], dict(axis_name=names, axis=ax, tiled=bool(tiled), size=size))
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [one(v) for v in leaves])


def ppermute(x, axis_name, perm):
    """Send x from member `src` to member `dst` for each (src, dst) in `perm`; members no one sends to
    get zeros."""
    perm = tuple((int(s), int(d)) for s, d in perm)
    size = axis_size(axis_name)
    srcs, dsts = [s for s, _ in perm], [d for _, d in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute: perm sources and destinations must be unique, got {perm}")
    if any(not 0 <= i < size for i in srcs + dsts):
        raise ValueError(f"ppermute: perm {perm} has indices outside the axis of size {size}")
    return _tree_collective(ppermute_p, x, axis_name, perm=perm)


def pshuffle(x, axis_name, perm):
    """Member i gets the x of member perm[i] (perm a permutation of range(axis size))."""
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(axis_size(axis_name))):
        raise ValueError(f"pshuffle: perm must be a permutation of range({axis_size(axis_name)}), got {perm}")
    return ppermute(x, axis_name, [(src, dst) for dst, src in enumerate(perm)])


def psum_scatter(x, axis_name, *, scatter_dimension: int = 0, axis_index_groups=None, tiled: bool = False):
    """psum(x) split along `scatter_dimension` among the members: member i gets block i (tiled=True: a
    block of size/n along that dimension; else that dimension, of size n, is indexed away)."""
    _check_groups(axis_index_groups, "psum_scatter")
    n = axis_size(axis_name)
    idx = axis_index(axis_name)

    def one(v):
        v = v if isinstance(v, ArrayBase) else canonical_array(v)
        d = scatter_dimension % v.ndim
        size = v.shape[d]
        if tiled:
            if size % n:
                raise ValueError(f"psum_scatter: dimension {d} of size {size} is not divisible by the axis size {n}")
            block = size // n
            return dynamic_slice_in_dim(_p(psum_p, v, axis_name), idx * block, block, d)
        if size != n:
            raise ValueError(f"psum_scatter: dimension {d} has size {size}, but the axis has size {n} "
                             "(use tiled=True to split it into blocks)")
        return squeeze(dynamic_slice_in_dim(_p(psum_p, v, axis_name), idx, 1, d), (d,))
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [one(v) for v in leaves])


def all_to_all(x, axis_name, split_axis: int, concat_axis: int, *, axis_index_groups=None, tiled: bool = False):
    """Member j receives chunk j of every member's x along `split_axis` (whose size must be the axis
    size), the chunks stacked in member order along a new axis at `concat_axis` in place of the split
    axis. Built from all_gather, so it is differentiable."""
    _check_groups(axis_index_groups, "all_to_all")
    if tiled:
        raise NotImplementedError("all_to_all: tiled=True is not supported")
    n = axis_size(axis_name)
    idx = axis_index(axis_name)

    def one(v):
        v = v if isinstance(v, ArrayBase) else canonical_array(v)
        s_ax, c_ax = split_axis % v.ndim, concat_axis % v.ndim
        if v.shape[s_ax] != n:
            raise ValueError(f"all_to_all: split_axis {split_axis} has size {v.shape[s_ax]}, but the axis "
                             f"{axis_name!r} has size {n}")
        g = all_gather(v, axis_name)  # (n sources, ...v)
        mine = squeeze(dynamic_slice_in_dim(g, idx, 1, s_ax + 1), (s_ax + 1,))  # (n sources, ...v without split)
        return move_axis(mine, 0, c_ax)
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [one(v) for v in leaves])


def pswapaxes(*args, **kwargs):
    """jax.lax.pswapaxes (swap a named axis with a positional one across devices): not supported, raises
    NotImplementedError."""
    raise NotImplementedError("pswapaxes is not supported")


def has_collective(jaxpr) -> bool:
    """Whether `jaxpr` (or a jaxpr in its equations' parameters) binds a collective."""
    for e in jaxpr.eqns:
        if getattr(e.prim, "collective", False):
            return True
        for v in e.params.values():
            if isinstance(v, Jaxpr) and has_collective(v):
                return True
    return False


__all__ = ["psum", "psum_scatter", "all_to_all", "pmean", "pmax", "pmin", "all_gather", "ppermute", "pshuffle",
           "axis_index", "axis_size",
           "axis_frame", "apply_collective", "has_collective", "lookup", "process_psum", "process_allgather",
           "spanning_processes", "claim_processes", "in_named_axis"]
