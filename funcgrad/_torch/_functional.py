"""Views and in-place ops of tensors that hold tracers (inside funcgrad.func transforms and jit), functionalised
as torch.func does it.

A view of a traced tensor stays linked to its root (`_base`, with `_vfn`: root value -> view value). An in-place
op on the root or on any view replaces the root's value functionally -- a scatter of the new values into the
root positions the view covers -- and refreshes every live view of that root from the new value, so all of them
see the write on their next use, as eager views sharing a buffer do.

Which root positions a view covers comes from a *shadow*: a NumPy array laid out as the root (for a traced root
an uninitialised int8 array, whose untouched pages cost nothing) to which each view applies the same NumPy view
function an eager tensor would. So strides, contiguity (whether reshape views or copies), storage offsets and
expand's overlapping elements follow the eager rules exactly, and a view's flat root positions are its shadow's
offsets and strides.

An eager tensor (one with a buffer, e.g. made by torch.zeros inside the function) written with a traced value is
*promoted*: it and the views of it made while a transform was active become traced. Under vmap, writing a batched
value into a tensor that is not batched raises torch's RuntimeError, as does any in-place op on an input that a
grad-like transform differentiates.
"""
from __future__ import annotations

import weakref

import numpy as np

from .._src.core.array import Array
from .._src.core.trace import Tracer
from ._errors import (_INF_INPLACE_MSG, _LEAF_MSG, _OVERLAP_MSG, _VIEW_LEAF_MSG, _check_cast, _multi_view_msg,
                      _shape_mismatch)
from . import _jnp as jnp
from .._src.prims.dynamic_slicing import dynamic_update_slice
from .._src.prims.elementwise import stop_gradient
from ..autograd.grad_mode import state

_VMAP_INPLACE_MSG = ("vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
                     "Tensor `other` in extra_args that has more elements than `self`. This happened due to "
                     "`other` being vmapped over but `self` not being vmapped over in a vmap. Please try to use "
                     "out-of-place operators instead of inplace arithmetic. If said operator is being called "
                     "inside the PyTorch framework, please file a bug report instead.")


# --- shadows and views ---------------------------------------------------------------------------------------

def shadow(t) -> np.ndarray:
    """The NumPy layout stand-in of traced tensor t (made on first need for a root)."""
    sh = t._sh
    if sh is None:
        sh = t._sh = np.empty(t._a.shape, np.int8)
    return sh


def _register(root, t) -> None:
    lv = root._lv
    if lv is None:
        root._lv = [weakref.ref(t)]
    else:
        _append_live(lv, t)


def _append_live(refs: list, t) -> None:
    """Append a weak reference to t, dropping dead ones now and then (views made in a loop and discarded)."""
    refs.append(weakref.ref(t))
    if len(refs) % 256 == 0:
        refs[:] = [r for r in refs if r() is not None]


def _compose(f, g):
    if f is None:
        return g
    return lambda a: g(f(a))


def view(x, t, np_fn, arr_fn, name: str = "View"):
    """Traced tensor t (made by Tensor over arr_fn of x's value) linked as a view of traced tensor x: np_fn on
    x's shadow gives its layout."""
    root = x._base if x._base is not None else x
    t._sh = np_fn(shadow(x))
    t._base = root
    t._vfn = arr_fn if x is root else _compose(x._vfn, arr_fn)
    if x._mv is not None:
        t._mv = (name, 0)
    _register(root, t)
    return t


def views(x, outs, np_fns, arr_fn, name: str = "Split"):
    """Several traced views of x at once (split, chunk, unbind): traced tensors outs (made by Tensor over the
    list arr_fn gives of x's value) linked as views of x, np_fns[k] on x's shadow giving outs[k]'s layout."""
    root = x._base if x._base is not None else x
    sh = shadow(x)
    for k, (f, t) in enumerate(zip(np_fns, outs)):
        t._sh = f(sh)
        t._base = root
        t._vfn = _compose(x._vfn if x is not root else None, (lambda k: lambda a: arr_fn(a)[k])(k))
        t._mv = (name, k)
        _register(root, t)
    return outs


def track_eager(base, t) -> None:
    """Remember an eager view made while tracing, so that promoting its root promotes it too."""
    ev = base.__dict__.get("_ev")
    if ev is None:
        base._ev = [weakref.ref(t)]
    else:
        _append_live(ev, t)


# --- writes -------------------------------------------------------------------------------------------------

def _vmap_traces(x) -> frozenset:
    out = set()
    while isinstance(x, Tracer):
        tr = x._trace
        if tr.name == "vmap":
            out.add(tr)
        x = x.val
    return frozenset(out)


_REVERSE = frozenset(("vjp",))


def reverse_mode(x) -> bool:
    """Whether x is being differentiated in reverse mode (torch: requires grad under a grad transform)."""
    while isinstance(x, Tracer):
        if x._trace.name in _REVERSE:
            return True
        x = x.val
    return False


def requires_grad(t) -> bool:
    """Whether traced tensor t requires grad under a reverse-mode transform (now, or since its root did)."""
    root = t._base if t._base is not None else t
    return bool(root.__dict__.get("_rv")) or reverse_mode(t._a)


def check_batched(root, new) -> None:
    """torch's error for writing a value batched by some vmap into a tensor that vmap does not batch. Which vmaps
    batch a tensor is fixed when it is first written (a batched tensor filled with a constant stays batched)."""
    batched = root.__dict__.get("_bt")
    if batched is None:
        batched = root._bt = _vmap_traces(root._a) if root._v is None else frozenset()
    if isinstance(new, Tracer) and not _vmap_traces(new) <= batched:
        raise RuntimeError(_VMAP_INPLACE_MSG)


def _index_map(view_sh: np.ndarray, root_sh: np.ndarray) -> np.ndarray:
    """The flat root positions of each element of a view, from the shadows' offsets and strides."""
    isz = root_sh.itemsize
    off = (view_sh.__array_interface__["data"][0] - root_sh.__array_interface__["data"][0]) // isz
    flat = np.arange(root_sh.size, dtype=np.int64)
    if view_sh.size == 0:
        return np.zeros(view_sh.shape, np.int64)
    return np.lib.stride_tricks.as_strided(flat[off:], view_sh.shape,
                                           tuple(s // isz * 8 for s in view_sh.strides)).copy()


def _box(view_sh: np.ndarray, root_sh: np.ndarray):
    """When a view covers a box of its root (slices of step 1 and integers, transposed, with dimensions of size
    1 added or dropped): (the view's dimensions in root order, the box's shape, its start); else None."""
    isz = root_sh.itemsize
    rshape = root_sh.shape
    rstrides = [s // isz for s in root_sh.strides]
    off = (view_sh.__array_interface__["data"][0] - root_sh.__array_interface__["data"][0]) // isz
    if not rshape or off < 0 or off >= max(root_sh.size, 1):
        return None
    if view_sh.size > 1 and _contiguous(view_sh, isz):  # a run of consecutive root elements
        return (None, view_sh.size, off)
    start = [int(i) for i in np.unravel_index(off, rshape)]
    box = [1] * len(rshape)
    order = []
    for j, (n, st) in enumerate(zip(view_sh.shape, view_sh.strides)):
        if n == 1:
            continue
        dims = [i for i in range(len(rshape)) if rstrides[i] == st // isz and rshape[i] > 1 and box[i] == 1]
        if len(dims) != 1 or start[dims[0]] + n > rshape[dims[0]]:
            return None
        box[dims[0]] = n
        order.append((dims[0], j))
    order.sort()
    return tuple(j for _, j in order), tuple(box), tuple(start)


def _contiguous(sh: np.ndarray, isz: int) -> bool:
    exp = isz
    for n, st in zip(reversed(sh.shape), reversed(sh.strides)):
        if n != 1 and st != exp:
            return False
        exp *= n
    return True


def _update_box(root_val, box, new):
    order, shape, start = box
    if order is None:  # a flat run
        flat = dynamic_update_slice(jnp.reshape(root_val, (-1,)), jnp.reshape(new, (-1,)), (start,))
        return jnp.reshape(flat, root_val.shape)
    kept = [j for j in range(new.ndim) if new.shape[j] != 1]
    upd = jnp.squeeze(new, tuple(j for j in range(new.ndim) if new.shape[j] == 1)) if len(kept) < new.ndim else new
    pos = {j: k for k, j in enumerate(kept)}
    perm = tuple(pos[j] for j in order)
    if perm != tuple(range(len(perm))):
        upd = jnp.transpose(upd, perm)
    return dynamic_update_slice(root_val, jnp.reshape(upd, shape), start)


def _scatter(root_val, idx: np.ndarray, new):
    shape = root_val.shape
    flat = jnp.reshape(root_val, (-1,)).at[Array(idx.reshape(-1))].set(jnp.reshape(new, (-1,)))
    return jnp.reshape(flat, shape)


def overlaps(sh) -> bool:
    """Whether a layout has elements sharing one memory location (a stride 0 over a dimension longer than 1, as
    expand makes): torch refuses in-place ops other than fills into such a tensor."""
    return sh is not None and any(s == 0 and n > 1 for n, s in zip(sh.shape, sh.strides)) and 0 not in sh.shape


# in-place ops torch lets write elements that share a location (each of them gets the same value)
FILLS = frozenset(("Fill2", "Fill3", "Zero", "Masked_fill", "IndexPut"))


def write(t, new, name: str = "inplace arithmetic", key=None) -> None:
    """Traced tensor t <- new (t's shape and dtype), or t[key] <- new (then new has t[key]'s shape): the root's
    value is updated and its live views refreshed. The caller has checked overlapping elements (`overlaps`)."""
    root = t._base if t._base is not None else t
    mv = t._mv
    if mv is not None and (requires_grad(t) or reverse_mode(new)):  # (torch checks this before the leaf)
        raise RuntimeError(_multi_view_msg(mv[0], mv[1]))
    frz = root.__dict__.get("_frz")
    if frz:
        raise RuntimeError(_LEAF_MSG if t is root else _VIEW_LEAF_MSG)
    old = root._a
    check_batched(root, new)
    if not root.__dict__.get("_rv") and reverse_mode(old):
        root._rv = True  # (requiring grad sticks to a tensor whatever is later written into it, as in torch)
    if t is root and key is None:
        root._a = new
        _refresh(root, t, None)
        return
    region = _region(t, root, key)
    if region is None:  # an advanced index into the root: its own scatter
        root._a = old.at[key].set(new)
    elif region.__class__ is tuple:
        root._a = _update_box(old, region, new)
    elif region.size:
        root._a = _scatter(old, region, new)
    if t is not root:
        t._a = new if key is None else t._vfn(root._a)
    _refresh(root, t, _written(root, region, key))


def _region(t, root, key):
    """Where t (or t[key]) lies in root: a box (see `_box`), or the flat root positions (an index map); None for
    an advanced key into the root itself."""
    from ._index import _is_basic, _np_key
    basic = key is None or _is_basic(key)
    if t is root and not basic:
        return None
    sh = t._sh if t._sh is not None else shadow(t)
    rsh = root._sh if root._sh is not None else shadow(root)
    if key is None:
        r = t.__dict__.get("_region")
        if r is None:
            r = _box(sh, rsh)
            if r is None:
                r = _index_map(sh, rsh)
            t._region = r
        return r
    if basic:
        sub = sh[_np_key(key)]
        r = _box(sub, rsh)
        return r if r is not None else _index_map(sub, rsh)
    return _index_map(sh, rsh)[key]


def _written(root, region, key) -> np.ndarray:
    """A boolean mask over root's elements: those a write to `region` (or root[key]) changed."""
    mask = np.zeros(root._a.shape, np.bool_)
    if region is None:
        mask[key] = True
    elif region.__class__ is tuple:
        order, shape, start = region
        if order is None:
            mask.reshape(-1)[start:start + shape] = True
        else:
            mask[tuple(slice(b, b + n) for b, n in zip(start, shape))] = True
    else:
        mask.reshape(-1)[region.reshape(-1)] = True
    return mask


def _touches(region, mask: np.ndarray) -> bool:
    if region.__class__ is tuple:
        order, shape, start = region
        if order is None:
            return bool(mask.reshape(-1)[start:start + shape].any())
        return bool(mask[tuple(slice(b, b + n) for b, n in zip(start, shape))].any())
    return bool(mask.reshape(-1)[region.reshape(-1)].any())


def _refresh(root, skip, mask) -> None:
    """Recompute the live views of root (those that overlap the written `mask`, or all when it is None)."""
    lv = root._lv
    if not lv:
        return
    a = root._a
    alive = []
    for r in lv:
        w = r()
        if w is None or w._base is not root:
            continue
        alive.append(r)
        if w is not skip and (mask is None or _touches(_region(w, root, None), mask)):
            w._a = w._vfn(a)
    root._lv = alive


def promote(t, new, name: str = "inplace arithmetic") -> None:
    """Eager tensor t <- traced value new: t's root and the views of it made while tracing become traced."""
    root = t._base if t._base is not None else t
    check_batched(root, new)
    members = [root]
    if t is not root:
        members.append(t)
    ev = root.__dict__.get("_ev")
    if ev:
        for r in ev:
            w = r()
            if w is not None and w is not t and w._v is not None:
                members.append(w)
        del root.__dict__["_ev"]
    if not root._v.flags.c_contiguous:  # shadows need a C-ordered root; lay one out afresh
        root_sh = np.empty(root._v.shape, np.int8)
        members = [root]
        if t is not root:
            raise RuntimeError(f"{name}: writing a traced value into a view of a non-contiguous tensor made "
                               "outside the transform is not supported; clone() it first")
    else:
        root_sh = root._v
    root._a = Array(np.array(root._v))
    for w in members:
        if w is not root:
            w._sh = w._v
            w._a = w._vfn(root._a)
            _register(root, w)
        w._v = None
        w._st = None
    root._sh = root_sh
    write(t, new, name)


def detached(a):
    """a with every gradient level stopped (tensor.detach() inside a transform): the value below each
    value-carrying trace, then stop_gradient at an abstract one (vmap, jit)."""
    while isinstance(a, Tracer) and a._trace.carries_values and a.val is not None:
        a = a.val
    if isinstance(a, Tracer):
        a = stop_gradient(a)
    return a


def write_readonly(t, fn, others, name: str) -> None:
    """Eager in-place op on a read-only view (one of an expanded tensor), as torch allows it: a fill, or a write to
    elements that do not share locations, goes through the root's buffer."""
    v = t._v
    if v.size == 0:  # (nothing to write: torch accepts any layout)
        return
    root = t._base
    rv = root._v if root is not None else None
    if (overlaps(v) and name not in FILLS) or rv is None or not rv.flags.writeable or not rv.flags.c_contiguous:
        raise RuntimeError(_OVERLAP_MSG)
    if t._inf:
        if not state.inference:
            raise RuntimeError(_INF_INPLACE_MSG)
    new = fn(t._arr(), *[o._arr() for o in others])
    _check_cast(new.dtype, v.dtype, name)
    if new.shape != v.shape:
        _shape_mismatch(v.shape, new.shape)
    if isinstance(new, Tracer):
        raise RuntimeError(_OVERLAP_MSG)
    rv.reshape(-1)[_index_map(v, rv).reshape(-1)] = np.asarray(new).reshape(-1)
    t._bump()
