"""Forward-mode AD on tensors (dual tensors), as torch.autograd.forward_ad.

    with dual_level():
        d = make_dual(x, v)            # x carrying the tangent v
        y = f(d)                       # every Tensor op propagates the tangent
        jvp = unpack_dual(y).tangent   # J_f(x) v

A tangent is kept on the tensor (`Tensor._fw`, tagged with the level it belongs to). While a level is
active, the Tensor dispatch (`funcgrad._torch._dispatch`) hands every op that has a tangent-carrying input to
`apply` here, which computes the output tangent with funcgrad's functional `jvp` over the op's Array-level
function: the primitives' jvp rules, so no derivative formula lives here. The tangent computation is itself
an op on tensors (primals and tangents), recorded for backward when they require grad, so reverse mode
composes with it. A view's tangent is the same view of its input's tangent (sharing the tangent's storage),
and an in-place op writes the new tangent into the old one, as in torch.
"""
from __future__ import annotations

import weakref
from contextlib import contextmanager
from typing import NamedTuple, Optional

import numpy as np

from .grad_mode import state as _gs

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]


class _Level:
    """One dual level (only one may exist at a time, as in torch); tensors' tangents name it."""
    __slots__ = ("number", "tensors", "__weakref__")

    def __init__(self, number: int):
        self.number = number
        self.tensors = weakref.WeakSet()  # tensors holding a tangent of this level (cleared on exit)


_current: Optional[_Level] = None


def _T():
    """The torch face's tensor modules (they sit above this one): (_tensor, _dispatch, _views)."""
    from .._torch import _dispatch, _tensor, _views
    return _tensor, _dispatch, _views


def enter_dual_level() -> int:
    """Open a new dual level and return its number (0: nested levels are not supported, as in torch)."""
    global _current
    if _current is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    R = _T()[1]
    _current = _Level(0)
    R._fwd = __import__(__name__, fromlist=["apply"])
    R._fw_on = True
    return 0


def exit_dual_level(*, level: Optional[int] = None) -> None:
    """Close the dual level `level` (default: the current one); every tangent of it is dropped."""
    global _current
    cur = -1 if _current is None else _current.number
    if level is None:
        level = cur
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != cur:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    lv = _current
    _current = None
    _T()[1]._fw_on = False
    for t in list(lv.tensors):
        t.__dict__.pop("_fw", None)


@contextmanager
def dual_level():
    """Context manager for a dual level: tangents made inside it are dropped on exit."""
    level = enter_dual_level()
    try:
        yield level
    finally:
        exit_dual_level(level=level)


class UnpackedDualTensor(NamedTuple):
    """The (primal, tangent) pair of a dual tensor; tangent is None when it has none."""
    primal: object
    tangent: object


def _check_level(level, what: str) -> _Level:
    if _current is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if level is not None and level != _current.number:
        raise RuntimeError(f"Invalid level given to {what}")
    return _current


def _dtype_ok(x, what: str) -> None:
    if x._np_dtype().kind not in "fc":
        raise ValueError(f"Expected {what} to be floating point or complex, but got: {x.dtype}")


def make_dual(tensor, tangent, *, level: Optional[int] = None):
    """A view of `tensor` (sharing its storage) that carries `tangent` at the dual level."""
    T, R, V = _T()
    lv = _check_level(level, "_make_dual")
    if not isinstance(tensor, T.Tensor) or not isinstance(tangent, T.Tensor):
        bad = tensor if not isinstance(tensor, T.Tensor) else tangent
        raise TypeError(f"make_dual(): expected Tensor arguments, but got {type(bad).__name__}")
    _dtype_ok(tensor, "primal")
    _dtype_ok(tangent, "tangent")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    if tangent_of(tensor) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward gradient at the "
                           f"same level {lv.number} is not supported.")
    with _suspended():  # the alias itself carries no tangent of tensor's
        dual = V._view("View", tensor, _alias_np, _alias_arr)
    tv, pv = tangent._v, tensor._v
    if tv is not None and pv is not None and [x // tv.itemsize for x in tv.strides] != \
            [x // pv.itemsize for x in pv.strides]:
        # the tangent takes the primal's layout (a copy), so that views of the dual map onto it, as in torch
        lay = np.empty_like(pv, dtype=tv.dtype) if pv.flags.c_contiguous or pv.flags.f_contiguous else \
            np.empty(pv.shape, tv.dtype)
        new = T._make(lay)
        with _suspended():
            new.copy_(tangent)
        tangent = new
    set_tangent(dual, tangent)
    return dual


def _alias_np(v):
    return v.view()


def _alias_arr(a):
    return a


def unpack_dual(tensor, *, level: Optional[int] = None) -> UnpackedDualTensor:
    """(primal, tangent) of `tensor`: the primal is a view of it without the tangent; the tangent is the
    tangent tensor itself (None if there is none at `level`)."""
    T, R, V = _T()
    if _current is None:
        return UnpackedDualTensor(tensor, None)
    tan = tangent_of(tensor)
    if level is not None and level != _current.number:
        if tan is not None:
            raise RuntimeError("Invalid level given to _fw_primal")
        tan = None
    with _suspended():
        primal = V._view("View", tensor, _alias_np, _alias_arr) if tensor._v is not None else tensor
    if primal is not tensor:
        set_tangent(primal, None)  # a primal view never takes its base's tangent
    return UnpackedDualTensor(primal, tan)


# --- the dispatch hooks (called by funcgrad._torch._dispatch and _views only while a level is active) --------------------

def tangent_of(t):
    """t's tangent at the current level, or None. A view without one of its own whose base has one gets
    (and keeps) the matching view of the base's tangent, as in torch."""
    fw = t.__dict__.get("_fw")
    if fw is not None and _current is not None and fw[0] is _current:
        return fw[1]
    b = t._base
    if b is None or _current is None:
        return None
    bfw = b.__dict__.get("_fw")
    if bfw is None or bfw[0] is not _current or bfw[1] is None:
        return None
    tan = _alias(bfw[1], b, t, t._vfn)
    if tan is not None:
        set_tangent(t, tan)
    return tan


def set_tangent(t, tan) -> None:
    lv = _current
    t.__dict__["_fw"] = (lv, tan)
    lv.tensors.add(t)


def has_tangent(ts) -> bool:
    """Whether any tensor in ts carries a tangent at the current level."""
    lv = _current
    if _gs.inference:  # inference mode computes no tangents, as in torch
        return False
    for t in ts:
        d = getattr(t, "__dict__", None)
        if d:
            fw = d.get("_fw")
            if fw is not None and fw[0] is lv:
                if fw[1] is not None:
                    return True
                continue
            b = d.get("_base")
            if b is not None:
                fw = b.__dict__.get("_fw")
                if fw is not None and fw[0] is lv and fw[1] is not None:
                    return True
    return False


def _tangent_fn(fn, nprim: int, has: list):
    """(primals..., tangents of the inputs in `has`) -> output tangents of fn, by funcgrad's jvp. A tangent
    keeps its own dtype (torch allows a float64 tangent on a float32 primal; the rules then promote)."""
    from .._src.interpreters.ad import jvp

    def g(*arrs):
        prims = list(arrs[:nprim])
        tans = list(arrs[nprim:])
        ins = [prims[i] for i in has]

        def f(*xs):
            full = list(prims)
            for i, x in zip(has, xs):
                full[i] = x
            return fn(*full)
        _, tout = jvp(f, ins, tans)
        return tout
    return g


def _tangents(name, fn, ts):
    """The output tangent tensor(s) of fn on tensors ts (some carrying tangents), as an op on tensors (so
    recorded for backward when primals or tangents require grad)."""
    T, R, V = _T()
    has = [i for i, t in enumerate(ts) if tangent_of(t) is not None]
    tans = [tangent_of(ts[i]) for i in has]
    return R._apply0(name, _tangent_fn(fn, len(ts), has), tuple(ts) + tuple(tans))


def _attach(outs, tans) -> None:
    for o, tn in zip(outs, tans):
        if o._np_dtype().kind in "fc" and tn is not None:
            set_tangent(o, tn)


def apply(name, fn, ts):
    """An op with tangent-carrying inputs: the primal result as without tangents, plus its tangent."""
    T, R, V = _T()
    out = R._apply0(name, fn, ts)
    tans = _tangents(name, fn, ts)
    _attach(out if isinstance(out, list) else [out], tans if isinstance(tans, list) else [tans])
    return out


def view(x, t, name, np_fn, arr_fn) -> None:
    """A view t of x: its tangent is the same view of x's tangent (sharing the tangent's storage)."""
    tan = tangent_of(x)
    if tan is None or tan._v is None:
        return
    _, R, V = _T()
    with _suspended():
        nv = np_fn(tan._v)
        if nv.size and not np.may_share_memory(nv, tan._v):
            # np_fn reads the primal's storage itself (as_strided, unfold): map t's place in x onto x's
            # tangent, or else (other layouts) the tangent is the view function applied to it, unaliased
            tv = _alias(tan, x, t, arr_fn)
            set_tangent(t, tv if tv is not None else R._apply0(name, arr_fn, (tan,)))
        else:
            set_tangent(t, V._view(name, tan, lambda _: nv, arr_fn))


def views(x, outs, name, np_fns, arr_fn) -> None:
    """Views outs of x (split, unbind, ...): their tangents are the same views of x's tangent."""
    tan = tangent_of(x)
    if tan is None or tan._v is None:
        return
    with _suspended():
        touts = _T()[2]._views(name, tan, np_fns, arr_fn)
    for o, tn in zip(outs, touts):
        set_tangent(o, tn)


def inplace_tangent(name, t, fn, others):
    """Before the in-place op fn on t (some operand carrying a tangent): t's new tangent, computed on a
    snapshot of t's old value (recorded when t requires grad, for reverse-over-forward)."""
    T, R, V = _T()
    if R._req(t) and _gs.enabled:
        old = R._apply0("Clone", _alias_arr, (t,))
    else:
        old = T._make(np.array(t._v))
    fw = tangent_of(t)
    if fw is not None:
        set_tangent(old, fw)
    return _tangents(name, fn, (old,) + tuple(others))


def inplace_write(t, new_tan) -> None:
    """After an in-place op on t: write its new tangent into t's tangent (a view of its base's when t is a
    view), making one (zeros for the base) where there is none."""
    T, R, V = _T()
    tan = tangent_of(t)
    with _suspended():
        if tan is None and t._base is not None:
            base = t._base
            btan = tangent_of(base)
            if btan is None and base._v is not None and base._v.flags.c_contiguous:
                btan = T._make(np.zeros_like(base._v))
                set_tangent(base, btan)
            if btan is not None:
                tan = _alias(btan, base, t, t._vfn)
                if tan is not None:
                    set_tangent(t, tan)
        if tan is None:
            set_tangent(t, new_tan)
            return
        tan.copy_(new_tan)


def _alias(btan, base, t, arr_fn):
    """t's layout within base, applied to base's tangent btan (a view of it; arr_fn maps base's value to
    t's), or None if the layouts differ."""
    T, R, V = _T()
    bv, tv, tb = base._v, t._v, btan._v
    if tb is None or tv is None or tb.shape != bv.shape or tb.strides != bv.strides or tb.dtype != bv.dtype:
        return None
    off = tv.__array_interface__["data"][0] - bv.__array_interface__["data"][0]
    root = tb
    while root.base is not None and isinstance(root.base, np.ndarray):
        root = root.base
    if not root.flags.c_contiguous:
        return None
    off += tb.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    try:
        nv = np.ndarray(tv.shape, tv.dtype, buffer=root, offset=off, strides=tv.strides)
    except (TypeError, ValueError):  # t reaches outside base's region of the storage
        return None
    return V._view("AsStrided", btan, lambda v: nv, arr_fn)


@contextmanager
def _suspended():
    """Tensor ops without tangent propagation (a custom Function's forward and jvp, as in torch; ops on
    tangents and aliases)."""
    R = _T()[1]
    prev = R._fw_on
    R._fw_on = False
    try:
        yield
    finally:
        R._fw_on = prev


def custom_function(cls, args, kwargs):
    """autograd.Function.apply on tangent-carrying inputs: forward without tangents, then the output
    tangents from the Function's own jvp(ctx, *input tangents) (zeros for inputs without one)."""
    T, R, V = _T()
    from .function import Function
    if cls.jvp is Function.jvp:
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")
    box = []
    tans = []
    for a in args:
        if isinstance(a, T.Tensor):
            tn = tangent_of(a)
            tans.append(tn if tn is not None else T._make(np.zeros(a.shape, a._np_dtype())))
        else:
            tans.append(None)
    with _suspended():
        out = cls._apply_impl(args, kwargs, box)
        ctx = box[0]
        prev = ctx._saved, ctx._saved_versions
        fwd_saved = getattr(ctx, "saved_for_forward", None)
        if fwd_saved is not None or ctx._saved is None:  # jvp sees what save_for_forward saved
            saved = list(fwd_saved if fwd_saved is not None else (getattr(ctx, "to_save", ()) or ()))
            ctx._saved = saved
            ctx._saved_versions = [t._st.version if (t is not None and t._st is not None) else 0 for t in saved]
        try:
            r = cls.jvp(ctx, *tans)
        finally:
            if prev[0] is not None:
                ctx._saved, ctx._saved_versions = prev
    outs = out if isinstance(out, tuple) else (out,)
    rs = r if isinstance(r, tuple) else (r,)
    if len(rs) != len(outs):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients (expected {len(outs)} "
                           f"but got {len(rs)})")
    for o, tn in zip(outs, rs):
        if isinstance(o, T.Tensor) and tn is not None and o._np_dtype().kind in "fc":
            set_tangent(o, tn)
    return out
