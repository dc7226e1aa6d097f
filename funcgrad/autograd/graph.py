"""The define-by-run graph: nodes holding recorded tapes, leaf accumulators, and the backward engine.

A `Node` is made when an operation on tensors that require grad runs with grad mode on. It holds the
operation's record: usually a `Recorded` (the primitive binds the op made eagerly, with their values),
else the tape `funcgrad._src.interpreters.ad.record` made of it; plus the Array-level function itself, the
input tensors with their storage versions, and one edge per differentiable input (the input's own
grad_fn, or its leaf's AccumulateGrad). Backward walks nodes in topological order and applies the
record's vjp rules to the cotangents: every derivative formula used is a primitive's own vjp rule.
Complex gradients follow torch's convention (the conjugate of the functional face's cotangent). With create_graph=True each node's backward is itself run as a
recorded tensor operation (a vjp of the node's function), so it can be differentiated again.
"""
from __future__ import annotations

import heapq as _heapq
import itertools
import sys
import traceback
import warnings
import weakref

import numpy as _np

from .._src.core import dtypes
from .._src.core.array import Array, get_aval as _get_aval
from .._src.core.jaxpr import Eqn, Var
from .._src.core.trace import Trace, Tracer, new_trace
from .._src.interpreters import ad, backward_cache as _bc
from .._src.interpreters.ad import eqn_vjp, walk_backward
from .._src.interpreters.backward_cache import NodeBackward
from .._src.prims.elementwise import add, conj
from .._src.prims.reduction import reduce_sum
from .._src.prims.shape import reshape
from ..numpy import zeros_like as _zeros_like
from .grad_mode import _force_grad, state as _gs

_seq = itertools.count()

FREED_MSG = ("Trying to backward through the graph a second time (or directly access saved tensors after "
             "they have already been freed). Saved intermediate values of the graph are freed when you call "
             ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
             "graph a second time or if you need to access saved tensors after calling backward.")

_HINT = (" Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
         "with torch.autograd.set_detect_anomaly(True, check_nan=False).")

_TENSOR = None  # funcgrad._torch._tensor, set on import of that module (it imports this one)
_DISPATCH = None  # funcgrad._torch._dispatch (the tensor ops' dispatch, forward-AD flags), set likewise


def _T():
    return _TENSOR


def _output_of(t) -> str:
    """", which is output 0 of Mul," for a saved tensor some node made (torch 2.13 names the node without its
    "Backward0"), "" for a leaf."""
    gfn = t.grad_fn
    if gfn is None:
        return ""
    return f", which is output {t._onr} of {_forward_name(gfn.name())},"


def _forward_name(name: str) -> str:
    """MulBackward0 -> Mul, torch::autograd::CopySlices -> CopySlices: how torch 2.13's saved-tensor error
    names the node."""
    name = name.rsplit("::", 1)[-1]
    return name[:name.rindex("Backward")] if "Backward" in name else name


def _type_name(t) -> str:
    """torch's legacy type name for error messages: torch.FloatTensor [3, 4]."""
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
             "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
             "complex128": "ComplexDouble", "bfloat16": "BFloat16"}
    dt = t.dtype.name if hasattr(t.dtype, "name") else str(t.dtype)
    return f"[torch.{names.get(dt, dt)}Tensor [{', '.join(str(d) for d in t.shape)}]]"


_PKG = __file__.rsplit("/autograd/", 1)[0]


def _user_stack():
    """The forward traceback without funcgrad's own frames."""
    frames = [f for f in traceback.extract_stack()[:-1] if not f.filename.startswith(_PKG)]
    return traceback.format_list(frames)


def _conj_if_complex(a):
    """conj(a) for complex Arrays (or tracers), a itself otherwise."""
    if a.dtype.kind == "c":
        return conj(a)
    return a


def _compiled_ok() -> bool:
    """Whether a node's backward may run compiled now: the compiled-backward cache is on, no transform or
    eager hook is active (backward_cache.usable), and anomaly mode is off (its errors come from the rules)."""
    return _bc.usable() and not _gs.anomaly


def _one_backward(prim, params, args, ans, g, needs, pos, n) -> list:
    """The cotangents of a one-bind node's n inputs: the bind's vjp rules on `g`, each operand's cotangent
    summed down to its shape and added into the input it is (pos[k], -1 for a constant operand)."""
    res = [None] * n
    i = -1
    for c in eqn_vjp(prim, params, args, ans, g, needs):
        i += 1
        if c is None:
            continue
        a = args[i]
        if c.shape != a.shape:
            c = _unbroadcast(c, a.shape)
        k = pos[i]
        prev = res[k]
        res[k] = c if prev is None else add(prev, c)
    return res


def _planned_backward(prim, params, args, ans, ins, plan, cts) -> list:
    """The cotangents of the inputs `ins` of one bind (prim, params, args -> ans, one output) given its output's
    cotangent (cts[0]), following its plan (Recorded.plan): compiled once the plan's signature has been met
    often, else the bind's vjp rules."""
    g = cts[0]
    if g is None or not prim.differentiable:
        return [None] * len(ins)
    needs, pos, state = plan
    n = len(ins)
    if state is not None and _compiled_ok():
        r = _bc.node_backward(state, cts, (*args, ans), lambda c, v: _one_backward(
            prim, params, v[:-1], v[-1], c[0], needs, pos, n))
        if r is not None:
            return r
    return _one_backward(prim, params, args, ans, g, needs, pos, n)


def _one_bind(t) -> "Recorded":
    """The Recorded of a one-bind record kept in its tuple form, (prim, params, args, ans, ins, kept, plan): the
    form the torch face's dispatch makes (a tuple costs less to make than a Recorded, and the common backward,
    Node.apply, reads it as it is); the rarer paths that inspect a record expand it (Node.record)."""
    prim, params, args, ans, ins, kept, plan = t
    return Recorded(ins, ((prim, params, args, ans),), (ans,), kept, plan)


class Recorded:
    """An operation recorded eagerly (see funcgrad._src.core.primitive.record_eager): its differentiable input
    Arrays, the primitive binds it made as (prim, params, args, out), and its output Arrays. Backward runs
    ad's backward sweep (`ad.walk_backward`) over the binds through a small adapter (`eqns`). The equivalent
    `ad.Tape` (`trace`, `inputs`, `outputs`) is built on first use by the rarer paths that inspect the
    tape's structure."""
    __slots__ = ("ins", "binds", "outs", "kept", "plan", "__dict__")
    # rarely set attributes live in the instance __dict__ (these are the defaults: one record a node, so
    # every store saved counts)
    _tape = None  # the equivalent ad.Tape, once built
    sig = None    # the NodeSig of a record pruned by signature (see prune), with
    vals = None   # its values in the signature's order (what a compiled backward reads)

    def __init__(self, ins, binds, outs, kept=None, plan=None):
        self.ins, self.binds, self.outs = ins, binds, outs
        self.kept = kept  # (kept inputs (positions in ins), kept outputs) when pruned to those (see prune)
        self.plan = plan  # (one bind, one output) (needs, position in ins of each operand or -1, NodeBackward)

    def backward(self, cts) -> list:
        """Cotangents of `ins` (None where no path) given cotangents of `outs` (None means zero). A node whose
        signature (plan or sig) has been met often runs its backward compiled (backward_cache.node_backward)."""
        binds = self.binds
        if len(binds) == 1 and len(cts) == 1 and (self.plan is not None or self.sig is None):
            # one bind, one output (most ops): the equation's own step (one pruned by signature, without a
            # plan, runs as a record of several binds: compiled once its signature has been met often)
            prim, params, args, ans = binds[0]
            if self.outs[0] is ans and not prim.multiple_results:
                plan = self.plan
                if plan is None:
                    ins = self.ins
                    if cts[0] is None or not prim.differentiable:
                        return [None] * len(ins)
                    return _one_backward(prim, params, args, ans, cts[0], _needs(args, ins),
                                         [_index(ins, a) for a in args], len(ins))
                return _planned_backward(prim, params, args, ans, self.ins, plan, cts)
        sig = self.sig
        if sig is not None and _compiled_ok():
            r = _bc.node_backward(sig.bwd, cts, self.vals, sig.walk)
            if r is not None:
                return r
        eqns, in_vars, out_vars = self.eqns()
        return walk_backward(eqns, in_vars, out_vars, cts, _unbroadcast)

    def eqns(self, aval=None, keep_constant: bool = False) -> tuple:
        """The adapter from binds to the sweep's equations: (eqns, in_vars, out_vars). Binds refer to their
        operands by identity; each Array that depends on `ins` (an input, or an output of a differentiable
        bind with such an operand) becomes one Var, every other operand a constant Var, and a bind with no
        such operand (it computes a constant) is left out unless `keep_constant`. `aval(a)` gives a Var's
        abstract value; by default the Array stands for its own (the sweep reads only shape and dtype)."""
        binds = self.binds
        var = {}
        in_vars = []
        for a in self.ins:
            v = var[id(a)] = Var(a if aval is None else aval(a), a)
            in_vars.append(v)
        eqns = []
        for prim, params, args, ans in binds:
            invars = []
            live = False
            for a in args:
                v = var.get(id(a))
                if v is None:
                    v = Var(None if aval is None else _get_aval(a), a, True)
                else:
                    live = True
                invars.append(v)
            if not (live and prim.differentiable):  # (comparisons, stop_gradient, ...): constant outputs
                if not keep_constant:
                    continue
                live = False
            outvars = []
            for o in (ans if prim.multiple_results else (ans,)):
                v = Var(o if aval is None else aval(o), o, not live)
                if live:
                    var[id(o)] = v
                outvars.append(v)
            eqns.append(Eqn(prim, invars, outvars, params))
        return eqns, in_vars, [var.get(id(o)) for o in self.outs]

    # --- the equivalent tape, for the structural checks (in-place detection, create_graph) ---------
    def _build(self):
        tape = self._tape
        if tape is None:
            trace = Trace(0, True, "autograd", "")
            trace.alive = False
            eqns, in_vars, _ = self.eqns(_get_aval, keep_constant=True)
            trace.eqns.extend(eqns)
            ins = [Tracer(trace, v.aval, v.val, v) for v in in_vars]
            tracers = {id(v.val): t for v, t in zip(in_vars, ins)}
            for e in eqns:
                for v in e.outvars:
                    tracers[id(v.val)] = Tracer(trace, v.aval, v.val, v)
            outputs = [tracers.get(id(o), o) for o in self.outs]
            tape = self._tape = ad.Tape(trace, ins, outputs)
        return tape

    @property
    def trace(self):
        return self._build().trace

    @property
    def inputs(self):
        return self._build().inputs

    @property
    def outputs(self):
        return self._build().outputs

    def out_values(self) -> list:
        return list(self.outs)


# --- what a node keeps: only the values its vjp rules read (as torch saves only what its formulas use) ------

_READS: dict = {}  # (prim, needs, params, operand avals) -> (reads arg k..., reads output j...) | None
_ZEROS: dict = {}  # (shape, dtype) -> a read-only all-zero buffer of no memory (a broadcast zero)


def _rule_reads(prim, params, args, ans, needs):
    """For one bind: a tuple of flags, one per operand then one per output, saying whether its vjp rule
    (given `needs`) reads that value; None when that cannot be told (then everything is kept). Found by
    running the rule once on abstract tracers and following which of them its results depend on; cached
    per primitive, params, needs and operand avals (a rule may branch on shapes: prod's on a length of 1)."""
    try:
        key = (prim, needs, tuple(params.items()) if params else None,
               tuple([(a._buf.shape, a._buf.dtype, a.weak_type) for a in args]))
        r = _READS.get(key, 0)
    except (TypeError, AttributeError):  # unhashable params, or an operand that is not an array
        return None
    if r == 0:
        if len(_READS) > 4096:
            _READS.clear()
        r = _READS[key] = _trace_reads(prim, params, args, ans, needs)
    return r


def _trace_reads(prim, params, args, ans, needs):
    multi = prim.multiple_results
    outs = list(ans) if multi else [ans]
    try:
        with new_trace("saved-values", carries_values=False) as tr:
            gs = [tr.new_arg(_get_aval(o)) for o in outs]
            ans_t = [tr.new_arg(_get_aval(o)) for o in outs]
            args_t = [tr.new_arg(_get_aval(a)) for a in args]
            res = eqn_vjp(prim, params, args_t, ans_t if multi else ans_t[0], gs if multi else gs[0],
                          list(needs))
    except Exception:  # noqa: BLE001 - a rule that needs concrete values reads them
        return None
    slot = {t.var: k for k, t in enumerate(args_t + ans_t)}
    deps = {v: 1 << k for v, k in slot.items()}
    for e in tr.eqns:
        d = 0
        for v in e.invars:
            d |= deps.get(v, 0)
        if d:
            for v in e.outvars:
                deps[v] = d
    read = 0
    for r in res:
        if isinstance(r, Tracer):
            if r._trace is not tr:
                return None
            read |= deps.get(r.var, 0)
        elif r is not None and not isinstance(r, Array):
            return None
    n = len(args_t)
    return tuple(bool(read >> k & 1) for k in range(n)) + tuple(bool(read >> (n + j) & 1) for j in range(len(outs)))


def placeholder(a):
    """An Array standing for `a` where its value is not needed: its shape, dtype and weak type over a
    buffer of zeros that takes no memory (every placeholder of one shape and dtype shares it)."""
    b = a._buf
    k = (b.shape, b.dtype)
    z = _ZEROS.get(k)
    if z is None:
        if len(_ZEROS) > 1024:
            _ZEROS.clear()
        z = _ZEROS[k] = _np.broadcast_to(_np.zeros((), b.dtype), b.shape)
    return Array(z, a.weak_type)


_MISS = object()
_ONE: dict = {}  # prune_one's plans: (prim, params, operand avals, which are inputs) -> plan | None


def prune_one(prim, params, args, ans, ins):
    """For a node of one bind (not multiple results): (args, ans, ins, dropped operand positions, kept) with
    every value the vjp rule does not read replaced by a placeholder (the same one wherever it occurs), so
    that the node does not keep it alive; kept = (positions in ins kept, outputs kept) (Recorded.kept);
    None when nothing is dropped. `ins` is modified in place. Unary and binary binds of distinct operands
    (a graph's most common nodes) follow a cached plan, the placeholders included (a placeholder is never
    written and stands for no particular value, so nodes may share one)."""
    n = len(args)
    if n == 2:
        a, b = args
        if a is b or len(ins) > 2:
            return _prune_one(prim, params, args, ans, ins)
        x0 = ins[0]
        ba, bb = a._buf, b._buf
        try:
            key = (prim, tuple(params.items()) if params else None, ba.shape, ba.dtype, a.weak_type,
                   a is x0 or a is ins[-1], bb.shape, bb.dtype, b.weak_type, b is x0 or b is ins[-1])
            r = _ONE.get(key, _MISS)
        except TypeError:
            return None
    elif n == 1:
        a = args[0]
        ba = a._buf
        try:
            key = (prim, tuple(params.items()) if params else None, ba.shape, ba.dtype, a.weak_type)
            r = _ONE.get(key, _MISS)
        except TypeError:
            return None
    else:
        return _prune_one(prim, params, args, ans, ins)
    if r is _MISS:
        if len(_ONE) > 4096:
            _ONE.clear()
        r = _ONE[key] = _one_plan(prim, params, args, ans, ins)
    if r is None:
        return None
    pargs, pans, dropped, kept = r
    if dropped:
        new = list(args)
        for k in dropped:
            p = pargs[k]
            for i, x in enumerate(ins):
                if x is args[k]:
                    ins[i] = p
            new[k] = p
        args = new
    return args, ans if pans is None else pans, ins, dropped, kept


def _one_plan(prim, params, args, ans, ins):
    """prune_one's cached plan: (placeholder per operand (None where kept), the output's (None where kept),
    dropped operand positions, kept)."""
    r = _prune_one(prim, params, args, ans, list(ins))
    if r is None:
        return None
    nargs, nans, _, dropped, kept = r
    return (tuple([p if k in dropped else None for k, p in enumerate(nargs)]), None if nans is ans else nans,
            tuple(dropped), kept)


def _index(ins, a) -> int:
    """The position of Array `a` (by identity) among a node's inputs `ins`, or -1."""
    k = 0
    for x in ins:
        if x is a:
            return k
        k += 1
    return -1


def _needs(args, ins) -> list:
    """For each operand of a recorded op: whether it is one of the node's inputs and inexact (so it gets a
    cotangent). A loop, not a comprehension: this runs once per node of every backward pass."""
    needs = []
    for a in args:
        for x in ins:
            if a is x:
                needs.append(_inexact(a))
                break
        else:
            needs.append(False)
    return needs


def _prune_one(prim, params, args, ans, ins):
    needs = _needs(args, ins)
    reads = _rule_reads(prim, params, args, ans, tuple(needs))
    if reads is None or all(reads):
        return None
    new = {}
    dropped = []
    args = list(args)
    for k, a in enumerate(args):
        if not reads[k]:
            p = new.get(id(a))
            if p is None:
                p = new[id(a)] = placeholder(a)
            args[k] = p
            dropped.append(k)
    for k, a in enumerate(args):  # an operand that is also read elsewhere in the bind stays
        if reads[k] and id(a) in new:
            return None
    keep_out = reads[len(args)]
    if not keep_out:
        ans = placeholder(ans)
    kin = []
    for k, x in enumerate(ins):
        p = new.get(id(x))
        if p is None:
            kin.append(k)
        else:
            ins[k] = p
    return args, ans, ins, dropped, (tuple(kin), (0,) if keep_out else ())


class NodeSig:
    """What every record of one signature (see _signature) shares: its structure (per bind: primitive,
    params, operand numbers, output numbers; the numbers of the record's outputs), which values pruning drops
    with a placeholder for each, `kept`, and the compiled backward (backward_cache.NodeBackward)."""
    __slots__ = ("n_in", "struct", "out_refs", "drop", "ph", "rebuild", "kept", "bwd")

    def __init__(self, n_in, struct, out_refs):
        self.n_in, self.struct, self.out_refs = n_in, struct, out_refs
        self.drop, self.ph, self.rebuild, self.kept = (), {}, (), None
        self.bwd = _bc.NodeBackward()

    def walk(self, cts, vals) -> list:
        """The record's interpreted backward, on `vals` in the signature's order (the compiled backward's
        trace: vals are then abstract stand-ins)."""
        binds = [(p, pa, tuple([vals[r] for r in refs]), [vals[o] for o in outs] if multi else vals[outs])
                 for p, pa, refs, outs, multi in self.struct]
        return Recorded(list(vals[:self.n_in]), binds, [vals[r] for r in self.out_refs]).backward(cts)


_SIGS: dict = {}  # signature key -> NodeSig
_AMBIGUOUS = _bc._AMBIGUOUS


def _pkey(params) -> tuple:
    """backward_cache._params_key: params as a key, values equal across types (1 == 1.0 == True, 0.0 == -0.0)
    told apart by type and repr."""
    for v in params.values():
        if v.__class__ in _AMBIGUOUS:
            return tuple([(k, v.__class__, repr(v)) if v.__class__ in _AMBIGUOUS else (k, v)
                          for k, v in params.items()])
    return tuple(params.items())


def _signature(rec):
    """(key, values) of a record, or None when it has none (an operand that is not a NumPy-backed Array).
    Values are numbered in order of first appearance (the inputs, then each bind's new operands and its
    outputs); the key holds each input's and each other operand's abstract value and each bind's primitive,
    params and operand numbers (outputs' abstract values follow from those), then the outputs' numbers."""
    index = {}
    vals = []
    key = [len(rec.ins)]
    for a in rec.ins:
        b = a._buf
        if b.__class__ is not _np.ndarray:
            return None
        index[id(a)] = len(vals)
        vals.append(a)
        key += (b.shape, b.dtype, a.weak_type)
    for prim, params, args, ans in rec.binds:
        refs = []
        for a in args:
            r = index.get(id(a))
            if r is None:
                if a.__class__ is not Array or a._buf.__class__ is not _np.ndarray:
                    return None
                b = a._buf
                r = index[id(a)] = len(vals)
                vals.append(a)
                key += (b.shape, b.dtype, a.weak_type)
            refs.append(r)
        if prim.multiple_results:
            outs = []
            for o in ans:
                if o.__class__ is not Array or o._buf.__class__ is not _np.ndarray:
                    return None
                index[id(o)] = len(vals)
                outs.append(len(vals))
                vals.append(o)
            key += (prim, _pkey(params) if params else (), tuple(refs), len(outs))
        else:
            if ans.__class__ is not Array or ans._buf.__class__ is not _np.ndarray:
                return None
            index[id(ans)] = len(vals)
            vals.append(ans)
            key += (prim, _pkey(params) if params else (), tuple(refs))
    out_refs = []
    for o in rec.outs:
        r = index.get(id(o))
        if r is None:
            return None
        out_refs.append(r)
    key.append(tuple(out_refs))
    return tuple(key), vals


def _new_sig(rec, vals) -> NodeSig:
    """The NodeSig of rec's signature: its structure from the binds, what to drop from _prune_binds."""
    index = {id(v): k for k, v in enumerate(vals)}
    struct = []
    for prim, params, args, ans in rec.binds:
        refs = tuple([index[id(a)] for a in args])
        if prim.multiple_results:
            struct.append((prim, params, refs, tuple([index[id(o)] for o in ans]), True))
        else:
            struct.append((prim, params, refs, index[id(ans)], False))
    sig = NodeSig(len(rec.ins), tuple(struct), tuple([index[id(o)] for o in rec.outs]))
    dropped, kept = _prune_binds(rec)  # (on rec itself: its placeholders are replaced by sig's below)
    drop = tuple(k for k, v in enumerate(vals) if id(v) in dropped)
    sig.drop, sig.kept = drop, kept
    sig.ph = {k: placeholder(vals[k]) for k in drop}
    d = set(drop)
    sig.rebuild = tuple(i for i, (_, _, refs, outs, multi) in enumerate(struct)
                        if d.intersection(refs) or (d.intersection(outs) if multi else outs in d))
    return sig


def prune(rec) -> tuple:
    """Replace, in Recorded `rec` (several binds), every value no vjp rule of its live binds reads by a
    placeholder. Returns (the ids of the dropped Arrays, kept): kept as prune_one's when every value read
    that depends on the inputs is an input or an output of the node (then its input tensors not read can
    be dropped too), else None (a rule reads a value made inside the op: a backward that builds a graph
    recomputes the op from all its inputs, which are kept). What to drop is found once per signature
    (_signature) and kept in its NodeSig, which the record refers to (rec.sig, rec.vals) for its backward."""
    s = _signature(rec)
    if s is None:
        return _prune_binds(rec)
    key, vals = s
    try:
        sig = _SIGS.get(key)
    except TypeError:  # unhashable params
        return _prune_binds(rec)
    orig = vals
    if sig is None:
        if len(_SIGS) > 4096:
            _SIGS.clear()
        sig = _SIGS[key] = _new_sig(rec, vals)
    drop = sig.drop
    if drop:
        vals = list(vals)
        ph = sig.ph
        for k in drop:
            vals[k] = ph[k]
        binds = rec.binds = list(rec.binds)
        struct = sig.struct
        for i in sig.rebuild:
            p, pa, refs, outs, multi = struct[i]
            binds[i] = (p, pa, tuple([vals[r] for r in refs]), [vals[o] for o in outs] if multi else vals[outs])
        rec.ins = vals[:sig.n_in]
        rec.outs = [vals[r] for r in sig.out_refs]
        dropped = {id(orig[k]) for k in drop}
    else:
        dropped = set()
    rec.kept = sig.kept
    rec.sig = sig
    rec.vals = vals
    return dropped, sig.kept


def _prune_binds(rec) -> tuple:
    """prune, worked out from the vjp rules' reads (_rule_reads) bind by bind."""
    live = {id(a) for a in rec.ins}
    read = set()
    known = {}  # id -> value, every operand and output of the binds
    for prim, params, args, ans in rec.binds:
        multi = prim.multiple_results
        for a in args:
            known[id(a)] = a
        if multi:
            for o in ans:
                known[id(o)] = o
        else:
            known[id(ans)] = ans
        needs = tuple([id(a) in live and _inexact(a) for a in args])
        if not (prim.differentiable and any(needs)):
            continue
        if multi:
            for o in ans:
                live.add(id(o))
        else:
            live.add(id(ans))
        reads = _rule_reads(prim, params, args, ans, needs)
        if reads is None:
            return set(), None
        n = len(args)
        for k in range(n):
            if reads[k]:
                read.add(id(args[k]))
        if multi:
            for j, o in enumerate(ans):
                if reads[n + j]:
                    read.add(id(o))
        elif reads[n]:
            read.add(id(ans))
    drop = known.keys() - read
    if not drop:
        return drop, None
    ins_ids = {id(a): k for k, a in enumerate(rec.ins)}
    out_ids = {id(o): j for j, o in enumerate(rec.outs)}
    kept = None
    if all(i in ins_ids or i in out_ids for i in read if i in live):
        kept = (tuple(sorted(ins_ids[i] for i in read if i in ins_ids)),
                tuple(sorted(j for i, j in out_ids.items() if i in read and i not in ins_ids)))
    new = {}  # id -> the placeholder of each dropped Array
    for i in drop:
        a = known[i]
        if isinstance(a, Array):
            new[i] = placeholder(a)
    get = new.get
    binds = []
    for b in rec.binds:
        prim, params, args, ans = b
        for a in args:
            if id(a) in new:
                break
        else:
            if prim.multiple_results:
                if not any(id(o) in new for o in ans):
                    binds.append(b)
                    continue
            elif id(ans) not in new:
                binds.append(b)  # (nothing of this bind is dropped: the same tuple)
                continue
        binds.append((prim, params, tuple([get(id(a), a) for a in args]),
                      [get(id(o), o) for o in ans] if prim.multiple_results else get(id(ans), ans)))
    rec.binds = binds
    rec.ins = [get(id(a), a) for a in rec.ins]
    rec.outs = [get(id(o), o) for o in rec.outs]
    rec.kept = kept
    return drop, kept


def _inexact(a) -> bool:
    k = a.dtype.kind
    return k == "f" or k == "c" or (k not in "biu" and dtypes.is_inexact(a.dtype))


def _unbroadcast(c, shape):
    """c summed down to `shape` (the adjoint of NumPy's implicit broadcasting to c.shape)."""
    lead = c.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape) if d == 1 and c.shape[lead + i] != 1)
    if axes:
        c = reduce_sum(c, axes)
    return reshape(c, tuple(shape)) if c.shape != tuple(shape) else c


class Node:
    """A recorded operation in the backward graph (the object a tensor's grad_fn refers to)."""
    __slots__ = ("tape", "fn", "inputs", "diff", "edges", "versions", "out_refs", "out_versions",
                 "seq", "__dict__", "__weakref__")
    # rarely set attributes live in the instance __dict__ (these are the defaults)
    out_meta = None         # [(shape, dtype) of each output] for a node of several outputs (bind_outputs)
    _pre_hooks = None       # {output nr: [tensor hooks]}
    _retains = None         # {output nr: weakref to a tensor that retains its grad}
    _post_hooks = None
    _node_pre_hooks = None
    _hooked = False         # whether any of the four above was ever set (one attribute for the engine to read)
    _packed = None          # (saved_tensors_hooks' unpack hook, [(input position, packed value)])
    _stack = None           # the forward traceback (anomaly mode)

    def __init__(self, tape, fn, inputs, diff, edges, versions):
        self.tape = tape
        self.fn = fn
        self.inputs = inputs
        self.diff = diff
        self.edges = edges
        self.versions = versions
        self.out_refs = None
        self.out_versions = None
        self.seq = next(_seq)
        if _gs.anomaly:
            self._stack = _user_stack()
        if _gs.saved_hooks:
            _pack_saved(self)

    @property
    def metadata(self) -> dict:
        """A dict for the user's own data about this node (as torch's Node.metadata)."""
        d = self.__dict__.get("_metadata")
        if d is None:
            d = self.__dict__["_metadata"] = {}
        return d

    # --- the public face of a grad_fn ---------------------------------------------------------------
    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    @property
    def next_functions(self) -> tuple:
        """One (node, output number) per floating or complex tensor input of the op, as torch's: (None, 0) for
        one that does not require grad (the node keeps edges only for those that do, at `diff`'s positions;
        integer and bool inputs, a where's condition or an index, have no entry)."""
        edges = leaf_edges(self)
        ins, diff = self.inputs, self.diff
        if ins is None or len(ins) < len(edges) or len(diff) != len(edges):  # (released; a Function's: the edges)
            out = [(None, 0) if e is None else e for e in edges]
            for i in self.__dict__.get("absent_slots", ()):  # (a Function's tensor inputs without grad)
                out.insert(i, (None, 0))
            return tuple(out)
        at = dict(zip(diff, edges))
        out = []
        hidden = self.__dict__.get("hidden_inputs", ())  # (inputs that are no arguments of torch's node)
        for i, t in enumerate(ins):
            if i in hidden:
                continue
            if i in at:
                e = at[i]
                out.append((None, 0) if e is None else e)
            elif t._np_dtype().kind in "fcV":  # (V: bfloat16)
                out.append((None, 0))
        if type(self).__name__ in _NUMBER_OPS and self._number_operand():
            out.append((None, 0))  # (torch's add/sub/mul/div wrap a Python number as a tensor: its entry)
        for i in self.__dict__.get("absent_slots", ()):  # (an optional tensor argument not given: torch's entry)
            out.insert(i, (None, 0))
        return tuple(out)

    def _number_operand(self) -> bool:
        """Whether this one-bind node's op took a Python number as its second operand (x * 0.5, and 0.5 * x,
        which torch computes as x.mul(0.5)); not a number first for sub/div (torch's rsub, reciprocal-mul)."""
        tape = self.tape
        if tape.__class__ is tuple:
            args, ins = tape[2], tape[4]
        elif type(tape) is Recorded and len(tape.binds) == 1:
            args, ins = tape.binds[0][2], tape.ins
        else:
            return False
        if len(args) != 2 or len(ins) != 1 or len(self.inputs) != 1:
            return False
        number_first = args[1] is ins[0] and args[0] is not ins[0]
        return not number_first or type(self).__name__ in ("MulBackward0", "AddBackward0")

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) -> None or replacement grad_inputs; runs after this node."""
        if self._post_hooks is None:
            self._post_hooks = []
            self._hooked = True
        self._post_hooks.append(fn)
        return RemovableHandle._of_list(self._post_hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) -> None or replacement grad_outputs; runs before this node."""
        if self._node_pre_hooks is None:
            self._node_pre_hooks = []
            self._hooked = True
        self._node_pre_hooks.append(fn)
        return RemovableHandle._of_list(self._node_pre_hooks, fn)

    def _register_tensor_hook(self, nr: int, fn):
        if self._pre_hooks is None:
            self._pre_hooks = {}
            self._hooked = True
        lst = self._pre_hooks.setdefault(nr, [])
        lst.append(fn)
        return RemovableHandle._of_list(lst, fn)

    def _register_retain(self, nr: int, tensor):
        if self._retains is None:
            self._retains = {}
            self._hooked = True
        self._retains[nr] = weakref.ref(tensor)

    # --- bookkeeping ----------------------------------------------------------------------------------
    def bind_outputs(self, outs) -> None:
        """Remember the output tensors (weakly) with their storage versions and shapes/dtypes."""
        self.out_refs = [weakref.ref(t) for t in outs]
        self.out_versions = [t._st.version if t._st is not None else 0 for t in outs]
        self.out_meta = [((t._v if t._v is not None else t._a).shape, t._np_dtype()) for t in outs]

    def bind_outputs1(self, t) -> None:
        """bind_outputs([t]) for a fresh concrete tensor t (no storage object yet: version 0)."""
        self.out_refs = (weakref.ref(t),)
        self.out_versions = _V0 if t._st is None else (t._st.version,)

    def num_outputs(self) -> int:  # (out_meta None: one output)
        return len(self.out_meta) if self.out_meta is not None else 1

    def release(self) -> None:
        self.tape = None
        self.inputs = None

    def _released(self) -> bool:
        return self.tape is None

    def record(self):
        """The node's record: a Recorded or an ad.Tape (None once released); a one-bind record still in its
        tuple form (see _one_bind) is expanded here, once."""
        tape = self.tape
        if tape.__class__ is tuple:
            tape = self.tape = _one_bind(tape)
        return tape

    def check_versions(self) -> None:
        """Raise torch's error when a value the backward reads was modified in place since it was recorded
        (the common case, no version moved, is one pass over the inputs and outputs)."""
        for t, v in zip(self.inputs, self.versions):
            st = t._st
            if st is not None and st.version != v:
                return self._check_versions()
        refs = self.out_refs
        if refs is not None:
            for ref, v in zip(refs, self.out_versions):
                t = ref()
                if t is not None:
                    st = t._st
                    if st is not None and st.version != v:
                        return self._check_versions()

    def _check_versions(self) -> None:
        for t, v in zip(self.inputs, self.versions):
            st = t._st
            if st is None or st.version == v:
                continue
            cur = st.version
            if t._v is not None and self._value_needed(t._v):
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: {_type_name(t)}{_output_of(t)} is at version {cur}; expected version {v} instead."
                    + _HINT)
        if self.out_refs is not None:
            for k, (ref, v) in enumerate(zip(self.out_refs, self.out_versions)):
                t = ref()
                if t is None or t._st is None or t._v is None:
                    continue
                cur = t._st.version
                if cur != v and self._value_needed(t._v):
                    raise RuntimeError(
                        "one of the variables needed for gradient computation has been modified by an "
                        f"inplace operation: {_type_name(t)}, which is output {k} of "
                        f"{_forward_name(self.name())}, is at version {cur}; expected version {v} instead." + _HINT)

    def _value_needed(self, buf) -> bool:
        """Whether backward through this node reads any value that aliases `buf` (a conservative,
        exact-by-structure check: the vjp rules are traced abstractly and their dependence examined)."""
        tape = self.record()
        if tape is None:
            return False

        def aliases(v):
            val = v.val
            while isinstance(val, Tracer):
                val = val.val
            return isinstance(val, Array) and type(val._buf) is _np.ndarray and \
                _np.may_share_memory(val._buf, buf)

        tainted = set()
        for t in tape.inputs:
            if aliases(t.var):
                tainted.add(t.var)
        for eqn in tape.trace.eqns:
            for v in list(eqn.invars) + list(eqn.outvars):
                if aliases(v):
                    tainted.add(v)
        if not tainted:
            return False
        for eqn in tape.trace.eqns:
            if any(v in tainted for v in eqn.invars) or any(v in tainted for v in eqn.outvars):
                if _vjp_reads(eqn, tainted):
                    return True
        return False

    # --- backward ---------------------------------------------------------------------------------
    def apply(self, cts, create_graph: bool):
        """Cotangents for this node's differentiable inputs (aligned with `edges`)."""
        tape = self.tape
        if tape is None:
            raise RuntimeError(FREED_MSG)
        self.check_versions()
        if self._packed is not None:
            _unpack_saved(self)
        T = _TENSOR
        if create_graph and (any(c is not None and c._rg for c in cts) or
                             any(self.inputs[i]._rg for i in self.diff) or _saves_output(tape)):
            return self._apply_differentiable(cts)
        if _DISPATCH._fw_on and _DISPATCH._fwd.has_tangent(list(cts) + list(self.inputs)):
            return self._apply_differentiable(cts)  # forward AD: the gradients get tangents too, as in torch
        one = tape.__class__ is tuple  # (a one-bind record in its tuple form, see _one_bind)
        if len(cts) == 1 and (one or type(tape) is Recorded):
            out = _compiled_apply(self, tape, cts[0])
            if out is not None:
                return out
        # torch's gradient of a real loss w.r.t. complex z is the conjugate of the functional face's
        # (JAX's) cotangent: conjugate on the way in and on the way out
        arrs = [None if c is None else _cot_array(c) for c in cts]
        if one:
            prim, params, args, ans, ins, _, plan = tape
            in_cts = _planned_backward(prim, params, args, ans, ins, plan, arrs)
        else:
            in_cts = tape.backward(arrs) if type(tape) is Recorded else ad.backward(tape, arrs)
        out = []
        for k in range(len(in_cts)):
            c = in_cts[k]
            if c is None:  # no path inside the op: a zero gradient still reaches the input, as in torch
                x = self.inputs[self.diff[k]]
                out.append(T._make(_np.zeros(x.shape, x._np_dtype())))
                continue
            in_cts[k] = None
            if c.dtype.kind == "c":
                out.append(T._wrap(_conj_if_complex(c)))
                continue
            for j, a in enumerate(arrs):
                if c is a:  # the rule passed a cotangent through unchanged: pass its tensor on, as torch
                    out.append(cts[j])
                    break
            else:
                out.append(_adopt(c))
        return out

    def _apply_differentiable(self, cts):
        """Backward as a recorded tensor operation: the vjp of the node's function, as a function of the
        node's inputs and the cotangents, so that it can be differentiated again."""
        rec = self.record()
        if type(rec) is Recorded and rec.kept is not None:
            return self._apply_saved(cts)
        fn, inputs, diff = self.fn, self.inputs, self.diff
        n = len(inputs)
        given = [k for k, c in enumerate(cts) if c is not None]
        meta = self.out_meta

        def bwd(*arrs):
            prim = list(arrs[:n])
            cs = arrs[n:]

            def f(*d):
                full = list(prim)
                for i, x in zip(diff, d):
                    full[i] = x
                r = fn(*full)
                return list(r) if isinstance(r, (list, tuple)) else [r]

            outs, pull = ad.vjp(f, *[prim[i] for i in diff])
            full_ct = [_zeros_like(o) for o in outs]
            for k, c in zip(given, cs):
                full_ct[k] = _conj_if_complex(c)
            return [_conj_if_complex(c) for c in pull(full_ct)]

        # inputs whose values the backward does not read enter as constants (no edge back into the
        # forward graph for them), as torch's formulas only reference what they save
        read = self._inputs_read()
        if type(self).__name__ in _BACKWARD_TAKES_INPUT:
            read = read | set(diff)
        elif type(self).__name__ in _BACKWARD_MASK_ONLY:
            read = read - set(diff)
        ins = tuple(x if i in read else x.detach() for i, x in enumerate(inputs))
        ts = ins + tuple(cts[k] for k in given)
        res = _DISPATCH._apply_multi(type(self).__name__ + "Backward", bwd, ts)
        del meta
        return list(res)

    def _apply_saved(self, cts):
        """_apply_differentiable for a node that keeps only the inputs and outputs its rules read (see
        prune): its record's backward run as a recorded tensor operation of those inputs, those outputs
        (tensors whose grad_fn is this node, as torch's saved outputs) and the cotangents."""
        T = _TENSOR
        rec = self.record()
        kin, kout = rec.kept
        slots, ts = [], []
        for k in kin:
            slots.append(rec.ins[k])
            ts.append(self.inputs[self.diff[k]])
        for j in kout:
            o = rec.outs[j]
            t = self.out_refs[j]() if self.out_refs is not None else None
            if t is None or t._gfn is not self or t._onr != j or t._v is None:
                t = T._make(o._buf)  # the output as saved, its grad_fn this node
                t._rg = True
                t._gfn = self
                if j:
                    t._onr = j
            slots.append(o)
            ts.append(t)
        given = [k for k, c in enumerate(cts) if c is not None]
        n = len(slots)

        def bwd(*arrs):
            sub = {id(a): x for a, x in zip(slots, arrs[:len(slots)])}
            binds = [(p, pa, tuple([sub.get(id(a), a) for a in args]),
                      [sub.get(id(o), o) for o in ans] if p.multiple_results else sub.get(id(ans), ans))
                     for p, pa, args, ans in rec.binds]
            ins = [sub.get(id(a), a) for a in rec.ins]
            r = Recorded(ins, binds, [sub.get(id(o), o) for o in rec.outs])
            g = [None] * len(rec.outs)
            for k, c in zip(given, arrs[n:]):
                g[k] = _conj_if_complex(c)
            return [_zeros_like(a) if c is None else _conj_if_complex(c) for a, c in zip(ins, r.backward(g))]
        if type(self).__name__ in _BACKWARD_TAKES_INPUT:  # torch's backward op takes self: an edge to it
            ts += [self.inputs[self.diff[k]] for k in range(len(self.diff)) if k not in kin]
            n = len(ts)
        elif type(self).__name__ in _BACKWARD_MASK_ONLY:  # the values saved, no edge back to them
            ts = [t.detach() for t in ts]
        return list(_DISPATCH._apply_multi(type(self).__name__ + "Backward", bwd,
                                           tuple(ts) + tuple(cts[k] for k in given)))

    def _inputs_read(self) -> set:
        """Indices of inputs whose values (directly or through values computed from them inside the
        op) the vjp rules read."""
        tape = self.record()
        eqns = tape.trace.eqns
        read = set()
        pos = {t.var: k for k, t in enumerate(tape.inputs)}
        for k, i in enumerate(self.diff):
            tainted = {tape.inputs[k].var}
            for e in eqns:
                if any(v in tainted for v in e.invars):
                    tainted.update(e.outvars)
            if any(_vjp_reads(e, tainted) for e in eqns
                   if any(v in tainted for v in e.invars) or any(v in tainted for v in e.outvars)):
                read.add(i)
        del pos
        n = len(self.inputs)
        read |= {i for i in range(n) if i not in self.diff}  # non-differentiable inputs stay as they are
        return read


def _saves_output(tape) -> bool:
    """Whether a node's record keeps an output its rules read (a pruned Recorded's kept outputs, see prune)."""
    kept = tape[5] if tape.__class__ is tuple else tape.kept if type(tape) is Recorded else None
    return kept is not None and bool(kept[1])


_NUMBER_OPS = frozenset(("AddBackward0", "SubBackward0", "MulBackward0", "DivBackward0"))  # (see next_functions)


def _cot_array(c):
    """The Array a cotangent tensor enters the vjp rules as (conjugated if complex, see Node.apply): a
    handle on its buffer (the engine never writes into a cotangent), or its cached read-only Array."""
    v = c._v
    if v is None or c._a is not None:
        return _conj_if_complex(c._arr() if v is not None else c._a)
    if v.dtype.kind == "c":
        return _conj_if_complex(c._arr())
    return Array(v)


_RAW_REFS = 3  # a compiled backward's result: its result tuple, _compiled_apply's `o`, getrefcount's argument


def _compiled_apply(node, rec, c):
    """Node.apply's common case on raw buffers: a node of one output given one real cotangent tensor `c` over
    its own NumPy buffer, whose signature's backward is compiled (backward_cache.node_fn). Runs the compiled
    function on the buffers (no Array made for the cotangent or the results) and returns the input
    gradients as tensors, as Node.apply's general path would (a result that is the cotangent's own buffer
    passes the tensor on, a fresh buffer nothing else refers to is adopted, anything else copied, an absent
    one a zero tensor); None where it does not apply (then the general path runs)."""
    b = c._v
    if b.__class__ is not _np.ndarray or c._a is not None or b.dtype.kind == "c" or _gs.anomaly or \
            not _bc.usable():  # (_compiled_ok, inlined: this runs once per node)
        return None
    if rec.__class__ is tuple:  # (a one-bind record in its tuple form, see _one_bind)
        prim, _, args, ans, _, _, plan = rec
        state = plan[2]
        if state is None or not prim.differentiable:
            return None
        vals = (*args, ans)
    elif rec.plan is not None:
        state = rec.plan[2]
        binds = rec.binds
        if state is None or len(binds) != 1:
            return None
        prim, _, args, ans = binds[0]
        if rec.outs[0] is not ans or prim.multiple_results or not prim.differentiable:
            return None
        vals = (*args, ans)
    else:
        sig = rec.sig
        if sig is None:
            return None
        state = sig.bwd
        vals = rec.vals
    entry = _bc.node_fn(state, b)
    if entry is None:
        return None
    outs = _bc.call_node(entry, [b], vals)
    if outs is None:
        return None
    del vals
    present = entry[2]
    make = _TENSOR._make
    res = []
    k = 0
    for p in present:
        if not p:  # no path inside the op: a zero gradient still reaches the input, as in torch
            x = node.inputs[node.diff[len(res)]]
            res.append(make(_np.zeros(x.shape, x._np_dtype())))
            continue
        o = outs[k]
        k += 1
        if o is b:  # the rule passed the cotangent through unchanged: pass its tensor on, as torch
            res.append(c)
        elif o.__class__ is not _np.ndarray or o.dtype.kind == "c":
            o = _np.array(o)  # a NumPy scalar; a complex gradient, conjugated (see Node.apply)
            res.append(make(_np.conjugate(o) if o.dtype.kind == "c" else o))
        elif _REFS_OK and o.flags.writeable and _getrefcount(o) == _RAW_REFS and (
                o.base is None or _owned_base(o)):
            res.append(make(o))  # a fresh buffer only the result refers to: adopted, as _adopt
        else:
            res.append(make(_np.array(o)))
    return res


def _owned_base(b) -> bool:
    """Whether view b's base is a same-size temporary only b refers to (then b's buffer can be adopted)."""
    base = b.base
    return type(base) is _np.ndarray and base.base is None and base.size == b.size and _getrefcount(base) == 3


# Nodes whose torch backward is one op of (grad_output, self) (hardtanh_backward, leaky_relu_backward,
# avg_pool2d_backward, ...), so that with create_graph=True their gradient requires grad whenever self does
# and differentiates back to self (to zero, these being piecewise linear), even where the vjp rule reads self
# only through a mask. Ops whose torch backward is a composite select on a mask (clamp, max, ...) are absent.
_BACKWARD_TAKES_INPUT = frozenset({
    "HardtanhBackward0", "LeakyReluBackward0", "HardsigmoidBackward0", "SoftshrinkBackward0",
    "HardshrinkBackward0", "ThresholdBackward0", "RreluWithNoiseBackward0", "PreluKernelBackward0",
    "LeakyReluBackward1", "ThresholdBackward1", "RreluWithNoiseBackward1",
    "AvgPool1DBackward0", "AvgPool2DBackward0", "AvgPool3DBackward0", "AdaptiveAvgPool1DBackward0",
    "AdaptiveAvgPool2DBackward0", "AdaptiveAvgPool3DBackward0", "AdaptiveMaxPool1DBackward0",
    "AdaptiveMaxPool2DBackward0", "AdaptiveMaxPool3DBackward0"})
# Nodes whose torch backward selects grad_output on a mask of self (and of the result): with create_graph=True
# their gradient depends on the forward values through no differentiable edge, so it requires grad only
# where grad_output does (and a second grad through it raises, as torch's), though the vjp rule reads them.
_BACKWARD_MASK_ONLY = frozenset({
    "ClampBackward0", "ClampBackward1", "ClampMinBackward0", "ClampMinBackward1", "ClampMaxBackward0",
    "ClampMaxBackward1", "MaxBackward0", "MaxBackward1", "MinBackward0", "MinBackward1", "AmaxBackward0",
    "AminBackward0", "MedianBackward0", "MedianBackward1", "NanmedianBackward0", "NanmedianBackward1",
    "MaximumBackward0", "MinimumBackward0", "FmaxBackward0", "FminBackward0"})


def _vjp_reads(eqn, tainted) -> bool:
    """Whether eqn's vjp rule reads the value of any tainted variable among its inputs/outputs."""
    prim = eqn.prim
    if not prim.differentiable:
        return False
    try:
        with new_trace("inplace-check", carries_values=False) as tr:
            gs = [tr.new_arg(v.aval) for v in eqn.outvars]
            ans_t = [tr.new_arg(v.aval) for v in eqn.outvars]
            args = [tr.new_arg(v.aval) for v in eqn.invars]
            dep = {t.var for t, v in zip(ans_t, eqn.outvars) if v in tainted}
            dep |= {t.var for t, v in zip(args, eqn.invars) if v in tainted}
            needs = [ad._differentiable(v) for v in eqn.invars]
            params = eqn.params
            ans = ans_t if prim.multiple_results else ans_t[0]
            if prim.vjp_full is not None:
                res = prim.vjp_full(gs if prim.multiple_results else [gs[0]], ans, args, needs, **params)
            else:
                g = gs if prim.multiple_results else gs[0]
                res = [prim.vjp[i](g, ans, *args, **params) if need and prim.vjp[i] is not None else None
                       for i, need in enumerate(needs)]
        for e in tr.eqns:
            if any(v in dep for v in e.invars):
                dep.update(e.outvars)
        for r in res:
            if isinstance(r, Tracer) and r._trace is tr and r.var in dep:
                return True
        return False
    except Exception:
        return True  # cannot tell: assume it does


class CopySlices(Node):
    """An in-place op on a view of a base: `op` is the op's own node (recorded on the view's old value,
    slice-sized). Backward sends the view region of the base's cotangent through `op` and the rest of it
    to the base's previous graph, as torch's CopySlices."""
    __slots__ = ("op", "vfn")

    def __init__(self, op, vfn, base_edge, base):
        Node.__init__(self, True, None, (), [], [base_edge] + list(op.edges), [])
        self.op = op
        self.vfn = vfn

    def name(self) -> str:
        return "torch::autograd::CopySlices"  # (torch's C++ nodes name themselves with their namespace)

    def check_versions(self) -> None:
        self.op.check_versions()

    def release(self) -> None:
        self.op.release()
        self.tape = None

    def apply(self, cts, create_graph: bool):
        if self.tape is None or self.op.tape is None:
            raise RuntimeError(FREED_MSG)
        self.op.check_versions()
        vfn = self.vfn
        g = cts[0]
        gv = _DISPATCH._apply1("CopySlicesView", vfn, g)

        def rest(a):  # a with the view region zeroed: a - V^T V a
            _, pull = ad.vjp(vfn, a)
            return a - pull(vfn(a))[0]
        gb = _DISPATCH._apply1("CopySlicesRest", rest, g) if self.edges[0] is not None else None
        return [gb] + list(self.op.apply([gv], create_graph))


CopySlices.__name__ = "CopySlices"


class AccumulateGrad(Node):
    """The sink of a leaf tensor: accumulates the incoming gradient into `variable.grad`."""
    __slots__ = ("variable",)
    # constant for every AccumulateGrad: class attributes shadow Node's slots, so making one (once per graph
    # walked that reaches the leaf, which refers to its AccumulateGrad only weakly, as torch's) is cheap
    tape = True
    fn = None
    inputs = ()
    diff = ()
    edges = ()
    versions = ()
    out_refs = None
    out_versions = None
    seq = -1  # run last among ready nodes, as in torch

    def __init__(self, variable):
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def release(self) -> None:
        pass

    def apply(self, cts, create_graph: bool):
        accumulate(self.variable, cts[0], create_graph)
        return []


def accumulate(var, g, create_graph: bool) -> None:
    """var.grad += g, as torch's AccumulateGrad: the first time g itself when nothing else refers to it
    (else a copy), in place afterwards (out of place when building a graph of the gradient)."""
    T = _TENSOR
    if g is None:
        return
    old = var._grad
    if old is None:
        if create_graph and g._rg:
            var._grad = g
        elif not create_graph and _REFS_OK and _getrefcount(g) == _ACC_REFS and _stealable(g, var):
            var._grad = g
        elif g._v is not None and var._v is not None and var._v.flags.c_contiguous:
            var._grad = T._make(_np.array(g._v, order="C"))  # torch's layout: a contiguous parameter's
        else:
            var._grad = T._fresh(g)
    elif create_graph or old._rg or g._rg or old._v is None or not old._v.flags.writeable:
        with _force_grad(create_graph):
            var._grad = old + g
    else:
        _np.add(old._v, g._v, out=old._v, casting="unsafe")
        old._bump()
    hooks = var.__dict__.get("_pahooks")
    if hooks:
        for h in list(hooks):
            h(var)


# Reference counts tell when the engine holds the only reference to a gradient (as torch's use_count
# checks): then it is handed on without a copy. Only where CPython's counts are exact (3.14 may borrow
# references on the evaluation stack); elsewhere every such gradient is copied.
_REFS_OK = sys.implementation.name == "cpython" and sys.version_info < (3, 14)
_getrefcount = sys.getrefcount
_ACC_REFS = 3     # the engine's list of the node's cotangents, accumulate's argument, getrefcount's
_ADOPT_REFS = 3   # _adopt's argument, the caller's variable, getrefcount's argument
_SUM_REFS = 4     # the engine's buffer list, run_backward's `prev`, _sum_cts's argument, getrefcount's


def _stealable(g, var) -> bool:
    """Whether gradient tensor g (referenced only by the engine) can become var.grad as it is: a plain
    tensor owning a C-contiguous writeable buffer that no view, Array or other tensor shares."""
    v = g._v
    if not (v is not None and v.flags.writeable and v.flags.c_contiguous and _getrefcount(v) == 3
            and g._st is None and g._a is None and not g._rg and g._gfn is None and type(g) is _TENSOR.Tensor
            and v.dtype == var._np_dtype() and not g.__dict__):
        return False
    base = v.base  # a view (a transpose, a reshape) of a same-size temporary only it refers to will do
    return base is None or (type(base) is _np.ndarray and base.base is None and base.size == v.size
                            and _getrefcount(base) == 3)


def _adopt(c):
    """A tensor over the freshly computed Array c (from a vjp rule), over c's own buffer when nothing else
    refers to c or its memory, even where that buffer is a view (a transpose, a reshape) of a temporary
    of the same size; otherwise a copy (T._wrap)."""
    T = _TENSOR
    b = c._buf
    if _REFS_OK and type(b) is _np.ndarray and b.flags.writeable:
        if _getrefcount(c) == _ADOPT_REFS and _getrefcount(b) == 3:
            base = b.base
            if base is None or (type(base) is _np.ndarray and base.base is None and base.size == b.size
                                and _getrefcount(base) == 3):
                return T._make(b)
        return T._make(_np.array(b))  # the buffer is shared (say with a cotangent it came from): a copy
    return T._wrap(c)


def _pack_saved(node) -> None:
    """saved_tensors_hooks: the innermost pack hook runs on each input the node's backward reads (what torch's
    formulas save: both factors of x * w, none of x + w), as the op is recorded; the node keeps what pack
    returns with the matching unpack hook."""
    pack, unpack = _gs.saved_hooks[-1]
    idx = sorted(node._inputs_read()) if hasattr(node.record(), "trace") else []  # (a Function's ctx has no tape)
    node.__dict__["_packed"] = (unpack, [(i, pack(node.inputs[i])) for i in idx])


def _unpack_saved(node) -> None:
    """At backward, the unpack hook gets back each packed value and must return a tensor of the saved one's
    shape and dtype (the engine computes with the values it recorded)."""
    unpack, packed = node._packed
    for i, p in packed:
        t = node.inputs[i]
        u = unpack(p)
        if not isinstance(u, _TENSOR.Tensor) or tuple(u.shape) != tuple(t.shape) or u.dtype != t.dtype:
            raise TypeError(f"saved_tensors_hooks: the unpack hook must return the tensor pack was given (a "
                            f"{t.dtype} tensor of shape {list(t.shape)}), got {type(u).__name__}")


class saved_tensors_hooks:
    """torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook): within the block, pack_hook(tensor)
    runs on every tensor an operation keeps for backward, and unpack_hook(packed) when backward needs it.

    >>> with saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
    ...     y = (x * x).sum()
    """

    def __init__(self, pack_hook, unpack_hook) -> None:
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self) -> "saved_tensors_hooks":
        _gs.saved_hooks.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc) -> None:
        _gs.saved_hooks.pop()


class save_on_cpu(saved_tensors_hooks):
    """torch.autograd.graph.save_on_cpu: saved tensors are kept on the CPU (funcgrad's only device) and moved
    back to their device at backward."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(lambda t: (t.device, t.detach().cpu()), lambda p: p[1].to(p[0]))


_NO_ITEM = object()


class RemovableHandle:
    """torch.utils.hooks.RemovableHandle, what every register_*hook returns: `remove()` (or leaving a `with`
    block) unregisters the hook. `hooks_dict` maps handle ids to hooks (the hook is stored under `self.id`);
    `extra_dict` is one or more further dicts or sets whose entry for the id goes too. The engine's hook
    lists (iterated on the backward path) use `_of_list`, which removes the hook from its list instead."""
    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None) -> None:
        self.hooks_dict = hooks_dict
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if extra_dict is None:
            extra_dict = ()
        self.extra_dicts = tuple(extra_dict) if isinstance(extra_dict, (list, tuple)) else (extra_dict,)
        self._item = _NO_ITEM

    @classmethod
    def _of_list(cls, lst: list, item) -> "RemovableHandle":
        h = cls(lst)
        h._item = item
        return h

    def remove(self) -> None:
        d = self.hooks_dict
        if self._item is not _NO_ITEM:
            try:
                d.remove(self._item)
            except ValueError:
                pass
        else:
            d.pop(self.id, None)
        for e in self.extra_dicts:
            if isinstance(e, dict):
                e.pop(self.id, None)
            else:
                e.discard(self.id)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


_V0 = (0,)
_classes: dict = {}


def node_class(name: str):
    """A Node subclass named like torch's grad_fn classes (MulBackward0, ...)."""
    cls = _classes.get(name)
    if cls is None:
        cls = _classes[name] = type(name, (Node,), {"__slots__": ()})
    return cls


# --- the engine ---------------------------------------------------------------------------------------

def leaf_edges(n) -> list:
    """n's edges with every edge to a leaf tensor (how an op on a leaf without a live AccumulateGrad records
    it, see _dispatch._edge) replaced by the leaf's AccumulateGrad, made now if none is alive; the node keeps
    them, so every node of one graph refers to the same AccumulateGrad of a leaf, as in torch."""
    edges = n.edges
    if any(e is not None and not isinstance(e[0], Node) for e in edges):
        edges = n.edges = [e if e is None or isinstance(e[0], Node) else (e[0]._acc_node(), 0) for e in edges]
    return edges


def _has_nan(t) -> bool:
    v = t._v
    return v is not None and v.dtype.kind in "fc" and bool(_np.isnan(v).any())


def _order_key(n) -> tuple:
    return (-n.seq, id(n))


def _heap_order(roots, nodes) -> list:
    """The nodes in topological order (a node after every node with an edge to it), the most recently created
    first among those ready."""
    deps = {}
    for n in nodes:
        for e in n.edges:
            if e is not None:
                deps[id(e[0])] = deps.get(id(e[0]), 0) + 1
    ready = []
    for node in {id(n): n for n, _ in roots}.values():
        if deps.get(id(node), 0) == 0:
            _heapq.heappush(ready, (-node.seq, id(node), node))
    order = []
    while ready:
        _, _, n = _heapq.heappop(ready)
        order.append(n)
        for e in n.edges:
            if e is None:
                continue
            m = e[0]
            c = deps[id(m)] - 1
            deps[id(m)] = c
            if c == 0:
                _heapq.heappush(ready, (-m.seq, id(m), m))
    return order


def run_backward(roots, grads, retain_graph: bool, create_graph: bool, capture=None,
                 accumulate_into=None, accumulate_leaves: bool = True):
    """Run the graph backward from `roots` (a list of (node, output_nr)) seeded with `grads`.

    capture: {(node, nr): index} -> returns a list of captured gradients (autograd.grad);
    accumulate_into: a set of tensors whose .grad receives gradients (backward(inputs=...)); None means
    every leaf reached. Returns the captured list (or None).
    """
    # 1. discover the graph (2. its topological order, most recently created first among ready nodes, as
    # torch's CPU engine: every edge leads to an older node, as recording makes them, so that is the order of
    # decreasing seq, AccumulateGrad nodes (seq -1) last in order of id; else the ready nodes are kept on a heap)
    nodes = {}
    stack = []
    for node, _ in roots:
        if node not in nodes:
            nodes[node] = None
            stack.append(node)
    older = True
    while stack:
        n = stack.pop()
        s = n.seq
        edges = n.edges
        for e in edges:
            if e is not None and not isinstance(e[0], Node):
                edges = leaf_edges(n)
                break
        for e in edges:
            if e is None:
                continue
            m = e[0]
            if m.seq >= s:
                older = False
            if m not in nodes:
                nodes[m] = None
                stack.append(m)
    if older:
        order = sorted(nodes, key=_order_key)
    else:
        order = _heap_order(roots, nodes)
    # 3. which nodes must execute
    execute = None
    if capture is not None or accumulate_into is not None:
        targets = set()
        if capture is not None:
            targets |= {id(k[0]) for k in capture}
        acc_ids = set()
        if accumulate_into is not None:
            for t in accumulate_into:
                if t._gfn is None:
                    acc = t._acc_node(create=False)
                    if acc is not None:
                        acc_ids.add(id(acc))
                        targets.add(id(acc))
                else:
                    targets.add(id(t._grad_fn_now()))
        reach = {}
        execute = set()
        for n in reversed(order):
            ex = any(e is not None and reach.get(id(e[0]), False) for e in n.edges)
            if ex or id(n) in acc_ids:
                execute.add(id(n))
            reach[id(n)] = ex or id(n) in targets
    captured = [None] * (max(capture.values()) + 1) if capture else None
    nonleaf_acc = None
    if accumulate_into is not None:
        nonleaf_acc = {}
        for t in accumulate_into:
            if t._gfn is not None:
                nonleaf_acc.setdefault((id(t._grad_fn_now()), t._onr), []).append(t)
    # 4. seed and run
    buffers = {}
    for (node, nr), g in zip(roots, grads):
        buf = buffers.setdefault(id(node), [None] * node.num_outputs())
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    check_nan = _gs.anomaly and _gs.anomaly_check_nan
    pop = buffers.pop
    with _force_grad(create_graph):
        for n in order:
            cts = pop(id(n), None)
            if cts is None:
                continue
            if len(cts) == 1:
                if cts[0] is None:
                    continue
            elif all(c is None for c in cts):
                continue
            is_acc = type(n) is AccumulateGrad
            # tensor hooks (pre-hooks on this node's outputs), then retain_grad, then captures
            if is_acc:
                var = n.variable
                if var._hooks:
                    for h in list(var._hooks):
                        r = h(cts[0])
                        if r is not None:
                            cts[0] = r
            hooked = n._hooked
            if hooked:
                if n._pre_hooks and not is_acc:
                    for nr, hooks in n._pre_hooks.items():
                        if cts[nr] is not None:
                            for h in list(hooks):
                                r = h(cts[nr])
                                if r is not None:
                                    cts[nr] = r
                if n._node_pre_hooks:
                    for h in list(n._node_pre_hooks):
                        r = h(tuple(cts))
                        if r is not None:
                            cts = list(r)
                if n._retains:
                    for nr, ref in n._retains.items():
                        t = ref()
                        if t is not None and cts[nr] is not None:
                            _retain_store(t, cts[nr], create_graph)
            if capture is not None:
                for nr in range(len(cts)):
                    k = capture.get((n, nr)) if (n, nr) in capture else None
                    if k is not None and cts[nr] is not None:
                        captured[k] = cts[nr] if captured[k] is None else captured[k] + cts[nr]
            if nonleaf_acc:
                for nr in range(len(cts)):
                    for t in nonleaf_acc.get((id(n), nr), ()):
                        accumulate(t, cts[nr], create_graph)
            if execute is not None and id(n) not in execute:
                continue
            if is_acc:
                if accumulate_leaves or execute is not None:
                    n.apply(cts, create_graph)
                continue
            in_cts = n.apply(cts, create_graph)
            if check_nan:
                for i, c in enumerate(in_cts):
                    if c is not None and _has_nan(c):
                        if n._stack:
                            warnings.warn(f"Error detected in {n.name()}. Traceback of forward call that "
                                          "caused the error:\n" + "".join(n._stack), stacklevel=2)
                        raise RuntimeError(f"Function '{n.name()}' returned nan values in its {i}th output.")
            if hooked and n._post_hooks:
                for h in list(n._post_hooks):
                    r = h(tuple(in_cts), tuple(cts))
                    if r is not None:
                        in_cts = list(r)
            if not retain_graph:
                n.release()
            for e, c in zip(n.edges, in_cts):
                if e is None or c is None:
                    continue
                m, nr = e
                buf = buffers.get(id(m))
                if buf is None:
                    meta = m.out_meta
                    buffers[id(m)] = buf = [None] * len(meta) if meta is not None else [None]
                prev = buf[nr]
                buf[nr] = c if prev is None else _sum_cts(prev, c, create_graph)
            in_cts = c = buf = prev = None  # the buffers hold the gradients now (see _stealable)
    return captured


def _sum_cts(a, b, create_graph: bool):
    """a + b for two cotangents of one output: without a graph to build, two float tensors of one shape and
    dtype (no forward-AD level active: no tangents to carry) are summed by NumPy straight away (add's impl, the same
    values) rather than dispatched as an op: into a's own buffer when only the engine refers to a (the
    buffers' list, the caller's and this frame's names: as torch's InputBuffer accumulates in place)."""
    T = _TENSOR.Tensor
    if not create_graph and a.__class__ is T and b.__class__ is T and not _DISPATCH._fw_on:
        u, v = a._v, b._v
        if u.__class__ is _np.ndarray and v.__class__ is _np.ndarray and u.dtype == v.dtype and \
                u.shape == v.shape and u.dtype.kind in "fc" and not a._inf:
            if _REFS_OK and _getrefcount(a) == _SUM_REFS and _stealable(a, b):
                _np.add(u, v, out=u)
                return a
            return _TENSOR._make(_np.add(u, v, out=_np.empty_like(u)))
    return a + b


def _retain_store(t, g, create_graph):
    if t._grad is None:
        t._grad = g if (create_graph and g._rg) else _TENSOR._fresh(g)
    else:
        with _force_grad(create_graph):
            t._grad = t._grad + g
