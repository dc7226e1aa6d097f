"""The dispatch every tensor op goes through (`_apply`, `_apply_prim`, ...), and its recording for autograd.

When grad mode is on and an input requires grad, the op's Array-level function is run eagerly while its
primitive binds are listed (`funcgrad._src.core.primitive.record_eager`) and the list becomes a graph `Node`
whose backward applies the primitives' vjp rules directly (see funcgrad.autograd.graph). An op that is one
bind of a primitive is recorded without listing binds, from a cached plan (`_record_prim`). Functions over
sub-computations (control flow, jit, custom rules) are recorded on a tape (`ad.record`) instead.
"""
from __future__ import annotations

import weakref

import numpy as np

from ..autograd import graph as _graph
from ..autograd import node_record as _rec
from ..autograd.node_record import Recorded as _Recorded
from ..autograd.grad_mode import state as _gs
from .._src.core.array import Array, ArrayBase as _ArrayBase
from .._src.core.primitive import _rec_state, hooks as _hooks, record_eager as _record_eager
from .._src.core.jaxpr import Jaxpr
from .._src.interpreters import ad as _ad, backward_cache as _bc
from ._tensor import Tensor, _differentiable, _make, _new_obj, _wrap

_weakref = weakref.ref
_next_seq = _graph._seq.__next__  # (the creation order of nodes: one counter, shared with Node.__init__)
_fw_on = False  # a forward-AD dual level is active (set by funcgrad.autograd.forward_ad, which is _fwd)
_fwd = None

_INF_SAVED_MSG = ("Inference tensors cannot be saved for backward. Please do not use Tensors created in inference "
                  "mode in computation tracked by autograd. To work around this, you can make a clone to get a "
                  "normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
                  "`torch.inference_mode()`.")
# ops whose backward never reads their inputs: an inference tensor may take part in them (as in torch)
_NOT_SAVED = frozenset(("Add", "Sub", "Rsub1", "Neg", "Sum", "Cat", "Stack", "Clone", "Expand", "View", "Reshape"))


def _req(t) -> bool:
    """Whether t requires grad, refreshing a view whose base was modified in place (with gradients)
    since the view was made."""
    if t._rg:
        return True
    b = t._base
    if b is not None and t._vrb != b._rebases and b._rg:
        t._grad_fn_now()
        return t._rg
    return False


def _edge(t):
    """The graph edge to tensor t: its grad_fn and output number; for a leaf, its AccumulateGrad while one is
    alive, else the leaf tensor itself, which the graph turns into the leaf's AccumulateGrad when it is first
    walked (graph.leaf_edges: by the engine or `next_functions`), so that an op on a leaf whose graph has gone
    does not make an AccumulateGrad it may never use. The one place this rule lives (the recording paths all
    call it)."""
    if t._base is None:
        g = t._gfn
    else:
        g = t._grad_fn_now()
    if g is not None:
        return (g, t._onr)
    ref = t._accref
    if ref is not None:
        acc = ref()
        if acc is not None:
            return (acc, 0)
    return (t, 0)


_NODE_CLS: dict = {}
# The signatures an op's records had: (fn's code, op name, differentiable input positions) -> [NodeSig, ...]
# (node_record.prune's, the latest first, at most _SIGS_PER_OP). A record is checked against them (node_record.match,
# cheaper than building the signature's key: the inputs' shapes and dtypes first) and on a match pruned from
# its NodeSig straight; the key only chooses which signatures to check, so an op whose binds depend on more
# than it holds (a closure's constants, the inputs' shapes) is recorded as exactly as by node_record.prune.
_SIG_OF_OP: dict = {}
_SIGS_PER_OP = 8
# match's check of a signature is generated code, whose compilation costs about what it saves in 150-300 calls
# whatever the signature's size (0.25 ms for addmm's 2 binds, 1.2 ms for std_mean's 18, 14 ms for a stack of 100
# tensors): a record of a signature the op has met fewer times than this goes the general way (node_record.prune)
_MATCH_AFTER = 64


def _record(name, fn, ts):
    """Record fn(*arrays of ts) as a graph node. Returns (node, list of output Arrays, multi)."""
    if getattr(fn, "records_on_a_tape", False):  # fn declares a primitive over sub-computations (a scan):
        _check_inference(name, ts)  # the eager record would be run and discarded
        arrs = [t._arr() for t in ts]
        diff = [i for i, t in enumerate(ts) if t._rg]
        tape, vals, multi = _record_traced(fn, arrs, diff)
        return _make_node(name, tape, fn, ts, diff), vals, multi
    # the common case: run fn eagerly, listing the primitive binds it made (no trace, no tracers)
    arrs, diff, ins = [], [], []
    k = 0
    for t in ts:
        if t._inf and name not in _NOT_SAVED:
            raise RuntimeError(_INF_SAVED_MSG)
        a = t._arr()
        if t._rg:  # a fresh handle, so that the differentiable inputs are told apart by identity
            a = Array(a._buf, a.weak_type)
            diff.append(k)
            ins.append(a)
        arrs.append(a)
        k += 1
    out, binds = _record_eager(fn, arrs)
    multi = isinstance(out, (list, tuple))
    vals = list(out) if multi else [out]
    key = None
    if not _fw_on and not _gs.saved_hooks:  # (pruning, below; a pack hook sees the node as recorded)
        code = getattr(fn, "__code__", None)
        if code is not None:
            key = (code, name, *diff)
            sigs = _SIG_OF_OP.get(key)
            if sigs is not None:
                for sig in sigs:
                    if sig.matcher is None:  # (its check, compiled code, is made once met often: _MATCH_AFTER)
                        sig.uses += 1
                        if sig.uses < _MATCH_AFTER:
                            continue
                    v = _rec.match(sig, ins, binds, vals)
                    if v is not None:  # (complete: its signature's first record passed _recorded_ok)
                        return _node_of_sig(name, sig, v, fn, ts, diff, arrs), vals, multi
    if _recorded_ok(binds, vals, arrs, diff):
        tape = _rec.Recorded(ins, binds, list(vals))
        node = _make_node(name, tape, fn, ts, diff)
        if not _fw_on:  # keep only what the vjp rules read (as torch saves only what its formulas use)
            dropped, kept = _rec.prune(tape)
            # (else a backward building a graph recomputes the op: inputs stay; so do they where torch's
            # backward op takes self, see graph._BACKWARD_TAKES_INPUT)
            if kept is not None and type(node).__name__ not in _graph._BACKWARD_TAKES_INPUT:
                node.inputs = _pruned_inputs(dropped, arrs, ts)
            if key is not None and tape.sig is not None:
                _remember_sig(key, tape.sig)
        return node, vals, multi
    # a composite the eager record cannot stand for (custom rules, values made outside binds)
    tape, vals, multi = _record_traced(fn, arrs, diff)
    return _make_node(name, tape, fn, ts, diff), vals, multi


def _pruned_inputs(dropped, arrs, ts) -> tuple:
    """A pruned node's input tensors: a placeholder (no memory) for each whose Array is in `dropped` (ids)."""
    if not dropped:
        return tuple(ts)
    return tuple([_make(_rec.zeros_of(a._buf)) if id(a) in dropped else t for a, t in zip(arrs, ts)])


def _node_of_sig(name, sig, vals, fn, ts, diff, arrs):
    """The node of a record whose values `vals` matched signature `sig` (node_record.match): what _record's general
    path makes of it, pruned as node_record.prune would (vals is taken over)."""
    cls = _NODE_CLS.get(name)
    if cls is None:
        cls = _node_cls(name)
    inputs = ts
    if sig.kept is not None and cls.__name__ not in _graph._BACKWARD_TAKES_INPUT:  # (as _pruned_inputs)
        inputs = list(ts)
        ph = sig.ph
        for k in sig.in_drop:  # (input k of the record is tensor diff[k]'s fresh handle)
            inputs[diff[k]] = _make(ph[k]._buf)
        if len(diff) != len(ts):  # a tensor not requiring grad may be a dropped constant
            for k in sig.const_drop:
                x = vals[k]
                for i, a in enumerate(arrs):
                    if a is x:
                        inputs[i] = _make(ph[k]._buf)
        inputs = tuple(inputs)
    edges = [_edge(ts[i]) for i in diff]
    return cls(sig.record(vals), fn, inputs, diff, edges, [0 if t._st is None else t._st.version for t in ts])


def _remember_sig(key, sig) -> None:
    """Put NodeSig sig first among the op's signatures (see _SIG_OF_OP): a new list, so that a thread going
    through the old one is not disturbed."""
    sigs = _SIG_OF_OP.get(key)
    if sigs is not None and sigs[0] is sig:
        return
    if sigs is None and len(_SIG_OF_OP) > 4096:
        _SIG_OF_OP.clear()
    _SIG_OF_OP[key] = [sig] if sigs is None else [sig, *[s for s in sigs if s is not sig][:_SIGS_PER_OP - 1]]


def _check_inference(name, ts) -> None:
    """torch's error for an inference tensor in an op whose backward saves it."""
    for t in ts:
        if t._inf and name not in _NOT_SAVED:
            raise RuntimeError(_INF_SAVED_MSG)


def _recorded_ok(binds, vals, arrs, diff) -> bool:
    """Whether the eager record of fn is complete: every output is an Array made by a recorded bind (or is
    an input), and no recorded primitive needs a tape of its own (custom_vjp, scan)."""
    if len(binds) == 1 and len(vals) == 1 and vals[0] is binds[0][3] and \
            _HIGHER_ORDER.get(binds[0][0]) is False:
        return True  # the common case: one first-order primitive
    made = set()
    for b in binds:
        ho = _HIGHER_ORDER.get(b[0])
        if ho is None:
            ho = _HIGHER_ORDER[b[0]] = _is_higher_order(b[0], b[1])
        if ho:
            return False
        if b[0].multiple_results:
            made.update(id(o) for o in b[3])
        else:
            made.add(id(b[3]))
    for v in vals:
        if type(v) is not Array:
            return False
        if id(v) not in made and not any(v is arrs[i] for i in diff):
            return False
    return True


_HIGHER_ORDER: dict = {}  # Primitive -> whether it carries sub-computations (then the tape path is used)
_HO_NAMES = frozenset({"cond", "while", "scan", "pjit", "custom_jvp_call", "custom_vjp_call", "remat"})


def _is_higher_order(prim, params) -> bool:
    """A primitive over sub-computations (control flow, jit, custom rules): its differentiation on a tape
    differs from its eager bind (a while_loop over concrete values is unrolled on the tape, say)."""
    return prim.tape_rule is not None or prim.name in _HO_NAMES or \
        any(isinstance(v, Jaxpr) for v in params.values())


def _make_node(name, tape, fn, ts, diff):
    edges = [_edge(ts[i]) for i in diff]
    versions = [0 if t._st is None else t._st.version for t in ts]
    cls = _NODE_CLS.get(name)
    if cls is None:
        cls = _node_cls(name)
    return cls(tape, fn, ts, diff, edges, versions)


# op names whose trailing digits belong to the op (torch's Exp2Backward0), not to an overload (MaxBackward1)
_DIGIT_OPS = frozenset({"Exp2", "Expm1", "Log2", "Log10", "Atan2", "Arctan2", "Rot90", "I0", "Logaddexp2"})


def _node_name(name: str) -> str:
    """torch's node class name for op `name` (CamelCase: masked_fill -> MaskedFill, log1p -> Log1P): a trailing
    digit names torch's overload ("Max1": MaxBackward1) unless it belongs to the op; else Backward0."""
    if "_" in name or any(c.isdigit() for c in name[:-1]):
        parts = []
        for w in name.split("_"):
            w = w[:1].upper() + w[1:]
            parts.append("".join(c.upper() if k and w[k - 1].isdigit() else c for k, c in enumerate(w)))
        name = "".join(parts)
    if name[-1].isdigit() and name not in _DIGIT_OPS:
        return name[:-1] + "Backward" + name[-1]
    return name + "Backward0"


def _node_cls(name):
    """The Node class for op `name` (see _node_name)."""
    cls = _NODE_CLS[name] = _graph.node_class(_node_name(name))
    return cls


def _record_traced(fn, arrs, diff):
    """Record fn on tracers (an `ad.Tape`): the general path. Returns (tape, output Arrays, multi)."""
    multi = [False]
    if len(diff) == len(arrs):
        def flat(*xs):
            r = fn(*xs)
            if isinstance(r, (list, tuple)):
                multi[0] = True
                return list(r)
            return [r]
        prim = arrs
    else:
        def flat(*xs):
            full = list(arrs)
            for i, x in zip(diff, xs):
                full[i] = x
            r = fn(*full)
            if isinstance(r, (list, tuple)):
                multi[0] = True
                return list(r)
            return [r]
        prim = [arrs[i] for i in diff]
    tape = _fast_record(flat, prim, "autograd")
    return tape, tape.out_values(), multi[0]


try:  # ad.record without its user-facing niceties (the origin line of the trace) on the hot path
    from .._src.core.trace import Trace as _Trace, _state as _trace_state

    def _fast_record(flat, prims, name):
        stack = _trace_state.stack
        trace = _Trace(len(stack) + 1, True, name, "")
        stack.append(trace)
        try:
            ins = [trace.new_arg(p.aval, p) for p in prims]
            outs = [o if isinstance(o, _ArrayBase) else _ad._as_array(o) for o in flat(*ins)]
        finally:
            trace.alive = False
            stack.pop()
        return _ad.Tape(trace, ins, outs)
except ImportError:  # pragma: no cover - if the trace internals change, use the public entry point
    _fast_record = _ad.record


def _outputs(node, vals):
    if len(vals) == 1:
        t = _wrap(vals[0])
        if _differentiable(t._np_dtype()):
            t._rg = True
            t._gfn = node
        if t._v is not None:
            node.bind_outputs1(t)
        else:
            node.bind_outputs([t])
        return [t]
    outs = []
    for k, val in enumerate(vals):
        t = _wrap(val)
        if _differentiable(t._np_dtype()):
            t._rg = True
            t._gfn = node
            if k:
                t._onr = k
        outs.append(t)
    node.bind_outputs(outs)
    return outs


def _apply(name, fn, ts):
    """The result tensor(s) of the Array-level fn applied to tensors ts (recording when needed)."""
    if _fw_on and _fwd.has_tangent(ts):
        return _fwd.apply(name, fn, ts)
    return _apply0(name, fn, ts)


def _apply0(name, fn, ts):
    """_apply without tangents."""
    if _gs.enabled:
        for t in ts:
            if t._rg or (t._base is not None and _req(t)):
                # (tensors holding tracers of funcgrad.func transforms are differentiated by those)
                if all(u._v is not None for u in ts):
                    node, vals, multi = _record(name, fn, ts)
                    outs = _outputs(node, vals)
                    return outs if multi else outs[0]
                break
    out = fn(*[t._arr() for t in ts])
    if isinstance(out, (list, tuple)):
        return [_wrap(o) for o in out]
    return _wrap(out)


_NOPARAMS: dict = {}


def _apply_prim(name, prim, fn, ts, params=_NOPARAMS):
    """The result tensor of fn on tensors ts, where fn(*arrays) is exactly one bind of `prim` on the
    arrays in order with `params` (e.g. an elementwise op on operands of one dtype). Unrecorded, the
    primitive's impl runs straight on the tensors' buffers; recorded, the node is built without listing
    binds (see _record_prim). The primitive's impl must return a new array (not a view of an operand)."""
    if _fw_on and _fwd.has_tangent(ts):
        return _fwd.apply(name, fn, ts)
    if _gs.enabled:
        for t in ts:
            if t._rg or (t._base is not None and _req(t)):
                for u in ts:
                    if u._v is None:  # tensors holding tracers: their transform differentiates
                        return _wrap(fn(*[u._arr() if u._v is not None else u._a for u in ts]))
                return _record_prim(name, prim, fn, ts, params)
    vs = []
    for t in ts:
        v = t._v
        if v is None:
            return _wrap(fn(*[u._arr() if u._v is not None else u._a for u in ts]))
        vs.append(v)
    try:
        r = prim.impl(*vs, **params)
    except Exception:  # the primitive's bind reports it in its own words
        return _wrap(fn(*[t._arr() for t in ts]))
    if r.__class__ is not np.ndarray or r.base is not None:
        r = np.array(r)
    return _make(r)


def _apply_prim_scalar(name, prim, afn, t, s, left):
    """afn(t, s) (afn(s, t) when left) for a float tensor t and a Python number s taken in t's dtype, where
    afn is one bind of prim: as _apply_prim, the number entering as a constant."""
    if _fw_on and _fwd.has_tangent((t,)):
        c = Array(np.array(s, t._v.dtype))
        return _fwd.apply(name, (lambda q: afn(c, q)) if left else (lambda p: afn(p, c)), (t,))
    if _gs.enabled and (t._rg or (t._base is not None and _req(t))):
        if left and name == "Sub":
            name = "Rsub1"  # (torch computes number - tensor as rsub(tensor, number): RsubBackward1)
        dt = t._v.dtype
        c = Array(np.array(s, dt))
        fn = (lambda q: afn(c, q)) if left else (lambda p: afn(p, c))
        return _record_prim(name, prim, fn, (c, t) if left else (t, c))
    v = t._v
    c = v.dtype.type(s)
    try:
        r = prim.impl(c, v) if left else prim.impl(v, c)
    except Exception:  # the primitive's bind reports it in its own words
        c = Array(np.array(s, v.dtype))
        return _wrap(afn(c, t._arr()) if left else afn(t._arr(), c))
    if r.__class__ is not np.ndarray or r.base is not None:
        r = np.array(r)
    return _make(r)


_PLANS: dict = {}  # _record_prim's plans: (name, prim, params, each operand's shape, dtype, role) -> plan


def _record_prim(name, prim, fn, ts, params=_NOPARAMS):
    """Record fn = one bind of prim on the arrays of ts (tensors; an Array in ts is a constant operand) as a
    graph node: a `Recorded` of that bind. Returns the output tensor.

    The node's inputs enter the record as their tensors' own read-only Arrays, or as fresh handles on the
    same buffers where one Array would stand for two operands (x * x) or be weakly typed, and outside the
    common case: identity is how the backward tells operands apart. What the node keeps follows a plan (see
    _plan): which operands and whether the output its vjp rule reads (the others replaced by placeholders),
    its node class and the backward's `needs` and operand-to-input map. In the common case (no enclosing
    recording, forward AD, anomaly mode, saved-tensor hooks or multiple results) the plan is cached per op
    name, primitive, params and operand signature (shape, dtype, role), so recording costs one dict lookup
    beyond building the node; otherwise it is made for the one call."""
    fast = _rec_state.rec is None and not _fw_on and not _gs.anomaly and not _gs.saved_hooks and \
        not prim.multiple_results
    key = [name, prim, tuple(params.items()) if params else None]
    args = []
    bufs = []
    ins = []
    diff = []
    edges = []
    versions = []
    tensors = []
    for t in ts:
        if t.__class__ is Array:
            b = t._buf
            key += (b.shape, b.dtype, 3 if t.weak_type else 2)
            args.append(t)
            bufs.append(b)
            continue
        if t._inf and name not in _NOT_SAVED:
            raise RuntimeError(_INF_SAVED_MSG)
        a = t._a
        if a is None:
            a = t._arr()
        v = t._v
        if t._rg or (t._base is not None and _req(t)):
            key += (v.shape, v.dtype, 1)
            if not fast or a.weak_type:
                a = Array(a._buf)
            elif args:
                for x in args:
                    if x is a:  # (one Array for two operands: identity must tell them apart)
                        a = Array(a._buf)
                        break
            ins.append(a)
            diff.append(len(tensors))
            edges.append(_edge(t))
        else:
            key += (v.shape, v.dtype, 4 if a.weak_type else 0)
            if args:
                for x in args:
                    if x is a:
                        a = Array(a._buf, a.weak_type)
                        break
        st = t._st
        versions.append(0 if st is None else st.version)
        tensors.append(t)
        args.append(a)
        bufs.append(v)
    plan = r = ans = None
    if fast:
        try:
            key = tuple(key)
            plan = _PLANS.get(key)
            r = prim.impl(*bufs, **params) if params else prim.impl(*bufs)
        except Exception:  # unhashable params; or the impl failed: bind raises it in the primitive's words
            fast = False
    elif _rec_state.rec is None:  # (else bind, which also lists the bind for the enclosing recording)
        try:
            r = prim.impl(*bufs, **params) if params else prim.impl(*bufs)
        except Exception:
            pass  # bind raises it in the primitive's words
    if r is None:
        ans = prim.bind(*args, **params)
        r = ans._buf
    elif r.__class__ is not np.ndarray:
        r = np.asarray(r)
    if plan is None:
        plan = _plan(key if fast else None, name, prim, params, args, ins, Array(r) if ans is None else ans)
    _, ph_args, _, ph_ts, _, rplan, _ = plan
    if ph_args is not None:  # each operand the rule does not read becomes its placeholder
        ipos = rplan[1]
        k = j = 0
        for t in ts:
            p = ph_args[k]
            if p is not None:
                args[k] = p
                if ipos[k] >= 0:
                    ins[ipos[k]] = p
                if t.__class__ is not Array:  # (and the node's input tensor: a tensor over it)
                    tensors[j] = ph_ts[k] if ph_ts is not None else _make(p._buf)
            if t.__class__ is not Array:
                j += 1
            k += 1
    return _node_out(plan, fn, prim, params, tuple(args), ins, r, tuple(tensors), diff, edges, versions, ans, fast)


def _node_out(plan, fn, prim, params, args, ins, r, tensors, diff, edges, versions, ans=None, plain=True):
    """The end of recording one bind of prim (args -> r, following `plan`, see _plan; ans: the output's Array
    where the caller has one): its record, the node, and the output tensor over r. `plain`: no anomaly
    stack or saved-tensor hooks to set up, so Node.__init__ is inlined and the record kept in its tuple form
    (node_record._one_bind: what the common backward reads; the rare paths expand it)."""
    cls, _, rans, _, kept, rplan, out_diff = plan
    if rans is None:  # (the output is kept: its Array, or one over r)
        rans = ans
        if rans is None:
            rans = _new_obj(Array)  # (Array(r), inlined)
            rans._buf = r
            rans.weak_type = False
    if plain:
        node = _new_obj(cls)  # (Node.__init__, inlined)
        node.tape = (prim, params, args, rans, ins, kept, rplan)
        node.fn = fn
        node.inputs = tensors
        node.diff = diff
        node.edges = edges
        node.versions = versions
        node.seq = _next_seq()
    else:
        node = cls(_Recorded(ins, ((prim, params, args, rans),), (rans,), kept, rplan), fn, tensors, diff, edges,
                   versions)
    if r.base is None and r.flags.writeable:
        out = _new_obj(Tensor)
        out._v = r
        out._a = None
        out._st = None
        if _gs.inference:
            out._inf = True
    else:
        out = _wrap(Array(r))
    if out_diff:
        out._rg = True
        out._gfn = node
    else:
        out._rg = False
        out._gfn = None
    if kept is None or kept[1]:  # (node.bind_outputs1(out), inlined: a fresh tensor, version 0)
        node.out_refs = (_weakref(out),)
        node.out_versions = _V0
    else:  # the backward does not read the output: nothing to check its version against (as torch saves none)
        node.out_refs = node.out_versions = None
    return out


_LEAN: dict = {}  # _apply_prim1/2's plans: (name, prim, params, each operand's shape, dtype number, role) -> plan
_D0, _D1, _D01 = (0,), (1,), (0, 1)


def _apply_prim1(name, prim, fn, t, params=_NOPARAMS, bound=None):
    """_apply_prim(name, prim, fn, (t,), params) for one concrete tensor t (t._v set). Recorded in the common
    case (no forward AD, enclosing recording, NaN checks, anomaly mode or saved-tensor hooks; t's Array not
    weakly typed) without _record_prim's per-operand lists, from a plan keyed on t's shape and dtype number.
    `bound`, where a hot caller has it: (params as a hashable key, the card's impl with params bound, taking
    the buffer alone), which spares the key's tuple and the impl's keyword call; the caller vouches that it
    computes prim.impl(v, **params) for t's dtype."""
    if _gs.enabled and not _fw_on and (t._rg or t._base is not None and _req(t)):
        if _hooks.active or _gs.anomaly or _gs.saved_hooks or t._inf:
            return _record_prim(name, prim, fn, (t,), params)
        a = t._a
        if a is None:
            a = t._arr()
        elif a.weak_type:
            return _record_prim(name, prim, fn, (t,), params)
        v = t._v
        try:
            if bound is None:
                key = (name, prim, tuple(params.items()) if params else None, v.shape, v.dtype.num)
                r = prim.impl(v, **params) if params else prim.impl(v)
            else:
                key = (name, prim, bound[0], v.shape, v.dtype.num)
                r = bound[1](v)
            plan = _LEAN.get(key)
        except Exception:  # unhashable params; or the impl failed: bind raises it in the primitive's words
            return _record_prim(name, prim, fn, (t,), params)
        if r.__class__ is not np.ndarray:
            r = np.asarray(r)
        if plan is None:
            plan = _plan(key, name, prim, params, [a], [a], Array(r), _LEAN)
        ph_args = plan[1]
        st = t._st
        e = _edge(t)
        if ph_args is not None:
            a = ph_args[0]
            t = plan[3][0]
        return _node_out(plan, fn, prim, params, (a,), [a], r, (t,), _D0, [e], _V0 if st is None else (st.version,))
    if _fw_on:
        return _apply_prim(name, prim, fn, (t,), params)
    try:  # unrecorded: the impl straight on the buffer, as _apply_prim's (without its frame and lists)
        if bound is not None:
            r = bound[1](t._v)
        else:
            r = prim.impl(t._v, **params) if params else prim.impl(t._v)
    except Exception:  # the primitive's bind reports it in its own words
        return _wrap(fn(t._arr()))
    if r.__class__ is not np.ndarray or r.base is not None:
        r = np.array(r)
    return _make(r)


def _apply_prim2(name, prim, fn, x, y, params=_NOPARAMS, bound=None):
    """_apply_prim(name, prim, fn, (x, y), params) for two concrete tensors (`_v` set), recorded in the common
    case (as _apply_prim1's; one tensor as both operands by _record_same) without _record_prim's per-operand
    lists. `bound`: as _apply_prim1's, an impl taking the two buffers alone (the caller vouches for it)."""
    if _gs.enabled and not _fw_on:
        rx = x._rg or x._base is not None and _req(x)
        if x is y:  # (one tensor as both operands, as x * x)
            if rx:
                ax = x._a
                if ax is None:
                    ax = x._arr()
                if _hooks.active or _gs.anomaly or _gs.saved_hooks or x._inf or ax.weak_type:
                    return _record_prim(name, prim, fn, (x, y), params)
                return _record_same(name, prim, fn, x, ax, params)
            ry = False
        else:
            ry = y._rg or y._base is not None and _req(y)
        if rx or ry:
            ax = x._a
            if ax is None:
                ax = x._arr()
            ay = y._a
            if ay is None:
                ay = y._arr()
            if _hooks.active or _gs.anomaly or _gs.saved_hooks or x._inf or y._inf or ax.weak_type or \
                    ay.weak_type or ax is ay:  # (two tensors over one Array: identity cannot tell them apart)
                return _record_prim(name, prim, fn, (x, y), params)
            xv = x._v
            yv = y._v
            try:
                if bound is None:
                    key = (name, prim, tuple(params.items()) if params else None, xv.shape, xv.dtype.num, rx,
                           yv.shape, yv.dtype.num, ry)
                    r = prim.impl(xv, yv, **params) if params else prim.impl(xv, yv)
                else:
                    key = (name, prim, bound[0], xv.shape, xv.dtype.num, rx, yv.shape, yv.dtype.num, ry)
                    r = bound[1](xv, yv)
                plan = _LEAN.get(key)
            except Exception:  # unhashable params; or the impl failed: bind raises it in the primitive's words
                return _record_prim(name, prim, fn, (x, y), params)
            if r.__class__ is not np.ndarray:
                r = np.asarray(r)
            if rx:
                if ry:
                    ins, diff, edges = [ax, ay], _D01, [_edge(x), _edge(y)]
                else:
                    ins, diff, edges = [ax], _D0, [_edge(x)]
            else:
                ins, diff, edges = [ay], _D1, [_edge(y)]
            if plan is None:
                plan = _plan(key, name, prim, params, [ax, ay], ins, Array(r), _LEAN)
            ph_args = plan[1]
            st = x._st
            su = y._st
            versions = _V00 if st is None and su is None else \
                (0 if st is None else st.version, 0 if su is None else su.version)
            if ph_args is not None:  # each operand the rule does not read becomes its placeholder
                px, py = ph_args
                if px is not None:
                    ax = px
                    x = plan[3][0]
                    if rx:
                        ins[0] = px
                if py is not None:
                    ay = py
                    y = plan[3][1]
                    if ry:
                        ins[-1] = py
            return _node_out(plan, fn, prim, params, (ax, ay), ins, r, (x, y), diff, edges, versions)
    elif _fw_on:
        return _apply_prim(name, prim, fn, (x, y), params)
    try:  # unrecorded: the impl straight on the buffers, as _apply_prim's (without its frame and tuples)
        if bound is not None:
            r = bound[1](x._v, y._v)
        else:
            r = prim.impl(x._v, y._v, **params) if params else prim.impl(x._v, y._v)
    except Exception:  # the primitive's bind reports it in its own words
        return _wrap(fn(x._arr(), y._arr()))
    if r.__class__ is not np.ndarray or r.base is not None:
        r = np.array(r)
    return _make(r)


def _record_same(name, prim, fn, x, ax, params):
    """_apply_prim2's recording of fn(x, x) (one tensor as both operands, as x * x): the second operand enters
    the record as a fresh handle on the same buffer (identity tells the operands apart), both are inputs of
    the node, with two edges to x's grad_fn (as torch's MulBackward0 of x * x); from a plan keyed on x's
    shape and dtype number and marked as one operand twice."""
    v = x._v
    try:
        key = (name, prim, tuple(params.items()) if params else None, v.shape, v.dtype.num, _SAME)
        plan = _LEAN.get(key)
        r = prim.impl(v, v, **params) if params else prim.impl(v, v)
    except Exception:  # unhashable params; or the impl failed: bind raises it in the primitive's words
        return _record_prim(name, prim, fn, (x, x), params)
    if r.__class__ is not np.ndarray:
        r = np.asarray(r)
    if plan is None:
        ay = Array(ax._buf)
        plan = _plan(key, name, prim, params, [ax, ay], [ax, ay], Array(r), _LEAN)
    ph_args = plan[1]
    e = _edge(x)
    st = x._st
    ver = _V00 if st is None else (st.version, st.version)
    y = x
    # the second operand: a fresh handle on x's buffer (made only where the rule reads it), or its placeholder
    if ph_args is None:
        ay = None
    else:  # each operand the rule does not read becomes its placeholder
        px, ay = ph_args
        if px is not None:
            ax = px
            x = plan[3][0]
        if ay is not None:
            y = plan[3][1]
    if ay is None:
        ay = _new_obj(Array)  # (Array(v), inlined)
        ay._buf = v
        ay.weak_type = False
    return _node_out(plan, fn, prim, params, (ax, ay), [ax, ay], r, (x, y), _D01, [e, e], ver)


_SAME = "one operand twice"  # (the mark of _record_same's plans in _LEAN)


def _plan(key, name, prim, params, args, ins, ans, cache=_PLANS):
    """_record_prim's plan for one call: (node class, placeholder per operand (None where kept; None for all
    when every operand is kept), the output's placeholder (None where kept), placeholder tensor per operand
    (for the node's inputs), kept (Recorded.kept), Recorded.plan (needs, the input position of each operand
    or -1, the compiled backward's state), whether the output's dtype carries gradients). Cached in `cache` under `key` (placeholders included: a placeholder is never
    written) unless key is None: then made for this call alone (under forward AD everything is kept, for
    the tangents' rules)."""
    p = None if _fw_on else _rec.prune_one(prim, params, args, ans, list(ins))
    ph_args = ph_ans = ph_ts = kept = None
    if p is not None:
        nargs, nans, _, dropped, kept = p
        if dropped:
            ph_args = [None] * len(args)
            for k in dropped:
                ph_args[k] = nargs[k]
            ph_args = tuple(ph_args)
            if key is not None:
                ph_ts = tuple(None if p is None else _make(p._buf) for p in ph_args)
        if nans is not ans:
            ph_ans = nans
    needs = tuple(_rec._needs(args, ins))
    ipos = tuple(next((i for i, x in enumerate(ins) if x is a), -1) for a in args)
    cls = _NODE_CLS.get(name)
    if cls is None:
        cls = _node_cls(name)
    if cls.__name__ in _graph._BACKWARD_TAKES_INPUT:
        ph_ts = None  # the node keeps its input tensors (see graph._BACKWARD_TAKES_INPUT)
    plan = (cls, ph_args, ph_ans, ph_ts, kept, (needs, ipos, _bc.NodeBackward() if key is not None else None),
            _differentiable(ans._buf.dtype))
    if key is not None:
        if len(cache) > 4096:
            cache.clear()
        cache[key] = plan
    return plan


_V0, _V00 = (0,), (0, 0)  # the storage versions of one and two operands without a storage object yet


def _apply1(name, fn, x):
    if _fw_on and _fwd.has_tangent((x,)):
        return _fwd.apply(name, fn, (x,))
    if (x._rg or (x._base is not None and _req(x))) and _gs.enabled:
        return _apply(name, fn, (x,))
    a = x._a
    if a is None:
        a = x._arr()
    return _wrap(fn(a))


def _apply_multi(name, fn, ts):
    r = _apply(name, fn, ts)
    return r if isinstance(r, list) else [r]


def _apply_nograd(fn, ts):
    """An op whose outputs never carry gradients (comparisons, argmax, ...): nothing is recorded."""
    out = fn(*[t._arr() for t in ts])
    if isinstance(out, (list, tuple)):
        return [_wrap(o) for o in out]
    return _wrap(out)



_graph._DISPATCH = __import__(__name__, fromlist=["_apply"])
