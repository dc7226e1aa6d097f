"""Views (aliasing their base's storage, recorded with a grad_fn that replays the view) and in-place ops (written
into the tensor's buffer, bumping its version counter and re-pointing its or its base's grad_fn), as torch's."""
from __future__ import annotations

import numpy as np

from ..autograd import graph as _graph
from ..autograd.grad_mode import state as _gs, _force_grad
from .._src.core.array import Array
from .._src.core.trace import Tracer, _state as _trace_state
from .._src.prims import elementwise as _ew
from . import _functional as _fn
from . import _tensor as _T
from . import _dispatch as _D
from ._dispatch import _edge, _record, _req
from ._errors import (_INF_INPLACE_MSG, _LEAF_MSG, _OVERLAP_MSG, _VIEW_LEAF_MSG, _check_cast, _multi_view_msg,
                      _shape_mismatch)
from ._tensor import Tensor, _make, _new_obj, _traced


# --- views ------------------------------------------------------------------------------------------------

def _compose(f, g):
    if f is None:
        return g
    return lambda a: g(f(a))


def _view(name, x, np_fn, arr_fn):
    """A view of x: np_fn on its NumPy view (aliasing the storage); arr_fn is the same on Arrays."""
    v = x._v
    if v is None:
        return _fn.view(x, _traced(arr_fn(x._a)), np_fn, arr_fn, name)
    nv = np_fn(v)
    t = _new_obj(Tensor)
    t._v = nv
    t._a = None
    t._st = x._st if x._st is not None else x._storage()
    t._rg = False
    t._gfn = None
    base = x._base
    if base is None:
        base = x
        t._vfn = arr_fn
    else:
        t._vfn = _compose(x._vfn, arr_fn)
    t._base = base
    if base._rebases:
        t._vrb = base._rebases
    if x._inf:
        t._inf = True
    if x._mv is not None:  # a view of a multi-view op's output inherits its refusal of in-place writes
        ng = x._mv[2] if len(x._mv) > 2 else 0
        t._mv = (name, 0, 2 if ng and _gs.enabled else ng)
    if _trace_state.stack:
        _fn.track_eager(base, t)
    if (base._rg or x._rg) and _gs.enabled and _req(x):  # (x: a leaf view of a base without grad)
        node, vals, _ = _record(name, arr_fn, (x,))
        t._rg = True
        t._gfn = node
        node.bind_outputs([t])
    if _D._fw_on:
        _D._fwd.view(x, t, name, np_fn, arr_fn)
    return t


def _views(name, x, np_fns, arr_fn, multi=True):
    """Several views of x at once (split, chunk, unbind): arr_fn returns the list of their values. As torch's,
    the outputs of a multi-view op (`multi`) refuse in-place writes under grad mode (see check_multi_view);
    tensor_split's (multi=False) are single views to torch's autograd."""
    v = x._v
    if v is None:
        outs = _fn.views(x, [_traced(val) for val in arr_fn(x._a)], np_fns, arr_fn, name)
        if not multi:
            for t in outs:
                t._mv = None
        return outs
    st = x._st if x._st is not None else x._storage()
    base = x._base if x._base is not None else x
    outs = []
    for k, f in enumerate(np_fns):
        t = _make(f(v))
        t._st = st
        t._base = base
        t._vfn = _compose(x._vfn, (lambda k: lambda a: arr_fn(a)[k])(k))
        if multi:
            t._mv = (name, k, 0 if _gs.enabled else 1)
        outs.append(t)
    if multi:
        st.mv = True
    if base._rebases:
        for t in outs:
            t._vrb = base._rebases
    if _trace_state.stack:
        for t in outs:
            _fn.track_eager(base, t)
    if x._inf:
        for t in outs:
            t._inf = True
    if (base._rg or x._rg) and _gs.enabled and _req(x):  # (x: a leaf view of a base without grad)
        node, vals, _ = _record(name, arr_fn, (x,))
        for k, t in enumerate(outs):
            t._rg = True
            t._gfn = node
            if k:
                t._onr = k
        node.bind_outputs(outs)
    if _D._fw_on:
        _D._fwd.views(x, outs, name, np_fns, arr_fn)
    return outs


def check_multi_view(t, indirect=False) -> None:
    """torch's refusal of an in-place write under grad mode into t, an output of a multi-view op (split, chunk,
    unbind) or a view of one (`indirect`: the write went to its base or another of its views, and t's grad_fn
    is being re-made). t._mv holds the op's name, the output number and 0, or 1 when the op ran under no_grad,
    or 2 for a view made with grad of such an output."""
    mv = t._mv
    if mv is not None:
        g = t._gfn
        ng = mv[2] if len(mv) > 2 else 0
        name = mv[0].rstrip("0123456789") if ng == 2 else None if g is None else _graph._forward_name(g.name())
        raise RuntimeError(_multi_view_msg(name, 0 if ng == 2 else t._onr, indirect, bool(ng)))


def _view_regen(view, base):
    """Re-make a view's grad_fn from its base's current one (after an in-place op on the base)."""
    check_multi_view(view, True)
    view._vrb = base._rebases
    with _force_grad(True):
        node, vals, _ = _record("AsStrided", view._vfn, (base,))
    view._rg = True
    view._gfn = node
    if "_onr" in view.__dict__:
        del view.__dict__["_onr"]
    node.bind_outputs([view])



_T._view_regen = _view_regen


def _inplace(name, t, fn, others=(), reads_self=True):
    """t <- fn(t's value, *others' values), written into t's buffer; fn is Array-level and its result is
    cast to t's dtype. Records a node (re-pointing t's or its base's grad_fn) when gradients flow.
    reads_self=False promises that fn's derivatives never read t's old value (copy_, fill_, index_put_),
    so no snapshot of it is kept. Under forward AD t's tangent is updated in place too."""
    if _D._fw_on and t._v is not None and _D._fwd.has_tangent((t, t._base) + tuple(others)):
        new_tan = _D._fwd.inplace_tangent(name, t, fn, others)
        _inplace0(name, t, fn, others, reads_self)
        _D._fwd.inplace_write(t, new_tan)
        return t
    return _inplace0(name, t, fn, others, reads_self)


def _inplace0(name, t, fn, others=(), reads_self=True):
    """_inplace without tangents."""
    v = t._v
    dt = t._np_dtype()
    if v is None:  # a traced tensor: a functional update of its root (see _functional)
        new = fn(t._a, *[o._arr() for o in others])
        _check_cast(new.dtype, dt, name)
        if new.shape != t._a.shape:
            _shape_mismatch(t._a.shape, new.shape)
        if _fn.overlaps(t._sh) and (name not in _fn.FILLS or _fn.requires_grad(t)):  # (torch's rules)
            raise RuntimeError(_OVERLAP_MSG)
        _fn.write(t, _ew.convert_element_type(new, dt), name)
        return t
    if not v.flags.writeable:  # a view of an expanded tensor
        if _gs.enabled and (t._rg or (t._base is not None and t._base._rg) or any(_req(o) for o in others)):
            return _inplace_readonly(name, t, fn, others, reads_self)
        _fn.write_readonly(t, fn, others, name)
        return t
    if t._inf and not _gs.inference:
        raise RuntimeError(_INF_INPLACE_MSG)
    if _gs.enabled and (t._rg or (t._base is not None and t._base._rg) or any(_req(o) for o in others)):
        new, node, base = _rebase(name, t, fn, others, reads_self)
    else:
        node = None
        new = fn(t._arr(), *[o._arr() for o in others])
        _check_cast(new.dtype, dt, name)
        if new.shape != v.shape:
            _shape_mismatch(v.shape, new.shape)
    if new.__class__ is Array:
        np.copyto(v, new._buf, casting="unsafe")
    elif isinstance(new, Tracer):  # a traced value written into a buffer: the tensor becomes traced
        _fn.promote(t, _ew.convert_element_type(new, dt), name)
        return t
    else:
        np.copyto(v, np.asarray(new), casting="unsafe")
    t._bump()
    if node is not None:
        node.bind_outputs([base])
    return t


def _inplace_readonly(name, t, fn, others, reads_self):
    """A recorded in-place op on a view of an expanded tensor whose elements do not share locations (torch's
    backward refuses the others: its CopySlices writes the view region of the base's cotangent back through the
    view): the new values go through the root's buffer."""
    root = t._base
    rv = root._v if root is not None else None
    if _fn.overlaps(t._v) or rv is None or not rv.flags.writeable or not rv.flags.c_contiguous:
        raise RuntimeError(_OVERLAP_MSG)
    if t._inf and not _gs.inference:
        raise RuntimeError(_INF_INPLACE_MSG)
    new, node, base = _rebase(name, t, fn, others, reads_self)
    if isinstance(new, Tracer):
        raise RuntimeError(_OVERLAP_MSG)
    rv.reshape(-1)[_fn._index_map(t._v, rv).reshape(-1)] = np.asarray(new).reshape(-1)
    t._bump()
    node.bind_outputs([base])
    return t


def _rebase(name, t, fn, others, reads_self):
    """Record an in-place op on t (a whole tensor, or a view of a base) and re-point the base's grad_fn.

    On a whole tensor the node is the op itself, applied to the tensor's old value. On a view the node is
    a CopySlices: the op is recorded on the view's old value only (slice-sized), and backward routes the
    base's cotangent around the view region (see graph.CopySlices)."""
    base = t._base if t._base is not None else t
    check_multi_view(t)
    if base._rg and base._gfn is None:
        raise RuntimeError(_VIEW_LEAF_MSG if t is not base else _LEAF_MSG)
    if t is not base and t._rg and t._gfn is None and not base._rg:
        raise RuntimeError(_LEAF_MSG)
    dt = t._np_dtype()
    # the op's input: t's old value (a private snapshot when the op's derivative reads it; else an alias)
    # carrying t's current graph edge
    old = _make(np.array(t._v) if reads_self else t._v)
    if t is base:
        if base._rg:
            old._rg = True
            old._gfn = base._grad_fn_now()
            if base._onr:
                old._onr = base._onr
    elif _req(t) and (reads_self or name == "IndexPut"):
        # (an index_put_ keeps the view's unwritten elements: their cotangent goes back through t's graph;
        # the other reads_self=False ops overwrite the whole view, so t's old value gets none)
        old._rg = True
        old._gfn = t._grad_fn_now()
        if t._onr:
            old._onr = t._onr

    def f(a, *os):
        r = fn(a, *os)
        _check_cast(r.dtype, dt, name)
        if r.shape != a.shape:
            _shape_mismatch(a.shape, r.shape)
        return _ew.convert_element_type(r, dt)

    with _force_grad(True):
        node, vals, _ = _record(name, f, (old,) + tuple(others))
    new = vals[0]
    if t is not base:
        base_edge = _edge(base) if base._rg else None
        node = _graph.CopySlices(node, t._vfn, base_edge, base)
    base._gfn = node
    base._rg = True
    if "_onr" in base.__dict__:
        del base.__dict__["_onr"]
    base._rebases += 1
    return new, node, base

