"""A node's record: the primitive binds an operation made eagerly (`Recorded`, or a tuple for one bind), the
backward that applies their vjp rules, and what a node keeps of them.

A node keeps only the values its vjp rules read, as torch saves only what its formulas use: every other value is
replaced by a placeholder (`prune_one` for one bind, `prune` for several). What to drop is found once per
signature of a record (`NodeSig`: its structure, which values are dropped, its compiled backward); the torch face
finds an op's NodeSig again by checking a new record against it (`match`) instead of rebuilding the key.
"""
from __future__ import annotations

import numpy as _np

from .._src.core import dtypes
from .._src.core.array import Array, get_aval as _get_aval
from .._src.core.jaxpr import Eqn, Var
from .._src.core.trace import Trace, Tracer, new_trace
from .._src.interpreters import ad, backward_cache as _bc
from .._src.interpreters.ad import eqn_vjp, walk_backward
from .._src.prims.elementwise import add, conj
from .._src.prims.reduction import reduce_sum
from .._src.prims.shape import reshape
from .grad_mode import state as _gs


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
    __slots__ = ("ins", "_binds", "outs", "kept", "plan", "sig", "vals", "__dict__")
    # rarely set attributes live in the instance __dict__ (these are the defaults: one record a node, so
    # every store saved counts)
    _tape = None  # the equivalent ad.Tape, once built

    def __init__(self, ins, binds, outs, kept=None, plan=None, sig=None, vals=None):
        self.ins, self._binds, self.outs = ins, binds, outs
        self.kept = kept  # (kept inputs (positions in ins), kept outputs) when pruned to those (see prune)
        self.plan = plan  # (one bind, one output) (needs, position in ins of each operand or -1, NodeBackward)
        self.sig = sig    # the NodeSig of a record pruned by signature (see prune), with
        self.vals = vals  # its values in the signature's order (what a compiled backward reads)

    @property
    def binds(self) -> list:
        """The binds as (prim, params, args, out); a record pruned by signature keeps only its values (`vals`)
        and makes its binds from the signature's structure when first asked (the compiled backward reads
        only vals)."""
        b = self._binds
        if b is None:
            b = self._binds = self.sig.binds(self.vals)
        return b

    @binds.setter
    def binds(self, b) -> None:
        self._binds = b

    def backward(self, cts) -> list:
        """Cotangents of `ins` (None where no path) given cotangents of `outs` (None means zero). A node whose
        signature (plan or sig) has been met often runs its backward compiled (backward_cache.node_backward)."""
        sig = self.sig
        binds = self._binds  # (None only for a record pruned by signature, whose binds are not read here)
        if len(cts) == 1 and (self.plan is not None or sig is None) and len(binds) == 1:
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
    return Array(zeros_of(a._buf), a.weak_type)


def zeros_of(b):
    """The read-only all-zero buffer of no memory (a broadcast zero) of NumPy array b's shape and dtype."""
    k = (b.shape, b.dtype)
    z = _ZEROS.get(k)
    if z is None:
        if len(_ZEROS) > 1024:
            _ZEROS.clear()
        z = _ZEROS[k] = _np.broadcast_to(_np.zeros((), b.dtype), b.shape)
    return z


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
    params, operand numbers, output numbers; the numbers of the record's outputs), the abstract value of each
    input and constant ((shape, dtype, weak type) by number, None for a bind's output: what `match` checks),
    which values pruning drops with a placeholder for each, `kept`, and the compiled backward
    (backward_cache.NodeBackward)."""
    __slots__ = ("n_in", "struct", "out_refs", "avals", "matcher", "uses", "drop", "in_drop", "const_drop", "ph",
                 "kept", "bwd")

    def __init__(self, n_in, struct, out_refs, avals=()):
        self.n_in, self.struct, self.out_refs, self.avals = n_in, struct, out_refs, avals
        self.matcher = None  # match's check of a record against this signature (_matcher), made when first used
        self.uses = 0        # (a caller's count of the records it met before it first matched one: see _dispatch)
        self.drop, self.ph, self.kept = (), {}, None
        self.in_drop = self.const_drop = ()  # the numbers in drop of inputs, of the other values
        self.bwd = _bc.NodeBackward()

    def binds(self, vals) -> list:
        """The binds (prim, params, args, out) of a record of this signature whose values are `vals`."""
        return [(p, pa, tuple([vals[r] for r in refs]), [vals[o] for o in outs] if multi else vals[outs])
                for p, pa, refs, outs, multi in self.struct]

    def walk(self, cts, vals) -> list:
        """The record's interpreted backward, on `vals` in the signature's order (the compiled backward's
        trace: vals are then abstract stand-ins)."""
        return Recorded(list(vals[:self.n_in]), self.binds(vals), [vals[r] for r in self.out_refs]).backward(cts)

    def record(self, vals) -> "Recorded":
        """The pruned Recorded of a record of this signature whose values (found by `match`) are `vals`, a
        list it takes over: each dropped value replaced by its placeholder; its binds made when first asked
        (Recorded.binds)."""
        drop = self.drop
        if drop:
            ph = self.ph
            for k in drop:
                vals[k] = ph[k]
        return Recorded(vals[:self.n_in], None, [vals[r] for r in self.out_refs], self.kept, None, self, vals)


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


def match(sig, ins, binds, outs):
    """The values, in the signature's order, of the record (ins, binds, outs; ins distinct) when its signature
    (see _signature) is sig's, else None: the check a caller's cache of signatures (the torch face's, by op)
    makes instead of building the signature's key. Everything the key holds is compared -- the abstract
    value of each input and constant, each bind's primitive, params (equal values of the same types, as
    _pkey tells them: floats by repr, so 0.0 and -0.0 differ) and operands by identity, the outputs -- so a
    record that matches has that key. Runs the signature's own check, straight-line code (_matcher)."""
    m = sig.matcher
    if m is None:
        m = sig.matcher = _matcher(sig)
    try:
        return m(ins, binds, outs)
    except Exception:  # noqa: BLE001 - another operand count (unpacking), params that do not compare (arrays)
        return None


def _matcher(sig):
    """match's check for NodeSig sig as a Python function of (ins, binds, outs), generated once: one line per
    value and bind (no loop, no unpacking of the signature's structure at each call)."""
    ns = {"nd": _np.ndarray, "Arr": Array}
    avals = sig.avals
    n_in = sig.n_in
    src = [f"    if len(ins) != {n_in} or len(binds) != {len(sig.struct)} or len(outs) != {len(sig.out_refs)}:",
           "        return None"]

    def aval_check(k):
        ns[f"S{k}"], ns[f"D{k}"], ns[f"W{k}"] = avals[k]
        src.append(f"    b = v{k}._buf")
        src.append(f"    if b.__class__ is not nd or b.shape != S{k} or (b.dtype is not D{k} and b.dtype != D{k}) or "
                   f"v{k}.weak_type is not W{k}:")
        src.append("        return None")
    if n_in:
        src.append(f"    {''.join(f'v{k}, ' for k in range(n_in))}= ins")
    for k in range(n_in):
        aval_check(k)
    n = n_in
    for i, (p, pa, refs, outs, multi) in enumerate(sig.struct):
        ns[f"P{i}"], ns[f"PA{i}"] = p, pa
        src.append(f"    p, pa, a, o = binds[{i}]")
        src.append(f"    if p is not P{i} or pa != PA{i}:")
        src.append("        return None")
        typed = []  # (equal values of other types: 1 and 1.0, a dtype and its name)
        for j, (key, v) in enumerate(pa.items()):
            ns[f"K{i}_{j}"], ns[f"T{i}_{j}"] = key, v.__class__
            typed.append(f"pa[K{i}_{j}].__class__ is not T{i}_{j}")
            if v.__class__ in _AMBIGUOUS:
                ns[f"R{i}_{j}"] = repr(v)
                typed.append(f"repr(pa[K{i}_{j}]) != R{i}_{j}")
        if typed:
            src.append(f"    if {' or '.join(typed)}:")
            src.append("        return None")
        names = []
        for r in refs:
            if r < n:
                names.append(f"a{len(names)}")
                continue
            names.append(f"v{n}")  # the first use of a constant: a NumPy-backed Array, none of the values before
            n += 1
        src.append(f"    {''.join(x + ', ' for x in names)}= a" if names else "    if a:\n        return None")
        same = [f"{x} is not v{r}" for x, r in zip(names, refs) if x[0] == "a"]
        if same:
            src.append(f"    if {' or '.join(same)}:")
            src.append("        return None")
        for x, r in zip(names, refs):
            if x[0] == "v" and int(x[1:]) == r:
                src.append(f"    if {x}.__class__ is not Arr:")
                src.append("        return None")
                aval_check(r)
                if r:
                    src.append(f"    if {' or '.join(f'{x} is v{q}' for q in range(r))}:")
                    src.append("        return None")
        outs = outs if multi else (outs,)
        src.append(f"    {''.join(f'v{o}, ' for o in outs)}= o" if multi else f"    v{outs[0]} = o")
        for o in outs:
            src.append(f"    if v{o}.__class__ is not Arr or v{o}._buf.__class__ is not nd:")
            src.append("        return None")
        n += len(outs)
    if sig.out_refs:
        src.append(f"    {''.join(f'o{j}, ' for j in range(len(sig.out_refs)))}= outs")
        src.append(f"    if {' or '.join(f'o{j} is not v{r}' for j, r in enumerate(sig.out_refs))}:")
        src.append("        return None")
    src.append(f"    return [{', '.join(f'v{k}' for k in range(n))}]")
    code = "def m(ins, binds, outs):\n" + "\n".join(src) + "\n"
    exec(compile(code, "<node_record.match: a NodeSig's check>", "exec"), ns)
    return ns["m"]


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
    # (numbered operands: the inputs and constants; the outputs' numbers are set after their binds')
    outs_of = {o for _, _, _, outs, multi in struct for o in (outs if multi else (outs,))}
    avals = tuple(None if k in outs_of else (v._buf.shape, v._buf.dtype, v.weak_type) for k, v in enumerate(vals))
    sig = NodeSig(len(rec.ins), tuple(struct), tuple([index[id(o)] for o in rec.outs]), avals)
    dropped, kept = _prune_binds(rec)  # (on rec itself: its placeholders are replaced by sig's below)
    drop = tuple(k for k, v in enumerate(vals) if id(v) in dropped)
    sig.drop, sig.kept = drop, kept
    sig.in_drop = tuple(k for k in drop if k < sig.n_in)
    sig.const_drop = tuple(k for k in drop if k >= sig.n_in)
    sig.ph = {k: placeholder(vals[k]) for k in drop}
    return sig


def prune(rec) -> tuple:
    """Replace, in Recorded `rec` (several binds), every value no vjp rule of its live binds reads by a
    placeholder. Returns (the ids of the dropped Arrays, kept): kept as prune_one's when every value read
    that depends on the inputs is an input or an output of the node (then its input tensors not read can
    be dropped too), else None (a rule reads a value made inside the op: a backward that builds a graph
    recomputes the op from all its inputs, which are kept). What to drop is found once per signature
    (_signature) and kept in its NodeSig, which the record refers to (rec.sig, rec.vals) for its backward;
    the record's binds are then made from the NodeSig when first asked (Recorded.binds)."""
    s = _signature(rec)
    if s is None:
        return _prune_binds(rec)
    key, vals = s
    try:
        sig = _SIGS.get(key)
    except TypeError:  # unhashable params
        return _prune_binds(rec)
    if sig is None:
        if len(_SIGS) > 4096:
            _SIGS.clear()
        sig = _SIGS[key] = _new_sig(rec, vals)
    drop = sig.drop
    dropped = {id(vals[k]) for k in drop} if drop else set()
    pruned = sig.record(vals)  # (vals: _signature's list)
    rec.ins, rec._binds, rec.outs = pruned.ins, None, pruned.outs
    rec.kept, rec.sig, rec.vals = sig.kept, sig, pruned.vals
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
