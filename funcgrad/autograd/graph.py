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

import itertools
import sys
import traceback
import weakref

import numpy as _np

from .._src.core.array import Array
from .._src.core.trace import Tracer, new_trace
from .._src.interpreters import ad, backward_cache as _bc
from ..numpy import zeros_like as _zeros_like
from .grad_mode import _force_grad, state as _gs
from .node_record import Recorded, _conj_if_complex, _one_bind, _planned_backward

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
    _undefined = False      # torch's backward returns undefined gradients (vector_norm at ord 0): none flows on

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
        which torch computes as x.mul(0.5)); not a number first for sub/div (torch's rsub, reciprocal-mul).
        An in-place op's node (x.mul_(2)) is marked by its method."""
        if self.__dict__.get("number_operand"):
            return True
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
        if self._undefined:
            return [None] * len(self.edges)
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
        given = [k for k, c in enumerate(cts) if c is not None]
        meta = self.out_meta

        ng = len(given)

        def bwd(*arrs):  # (the cotangents first, as torch's backward functions take grad_output first)
            prim = list(arrs[ng:])
            cs = arrs[:ng]

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
        ts = tuple(cts[k] for k in given) + ins
        res = _DISPATCH._apply_multi(_double_backward_name(self), bwd, ts)
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
        ng = len(given)

        def bwd(*arrs):  # (the cotangents first, as torch's backward functions take grad_output first)
            sub = {id(a): x for a, x in zip(slots, arrs[ng:ng + len(slots)])}
            binds = [(p, pa, tuple([sub.get(id(a), a) for a in args]),
                      [sub.get(id(o), o) for o in ans] if p.multiple_results else sub.get(id(ans), ans))
                     for p, pa, args, ans in rec.binds]
            ins = [sub.get(id(a), a) for a in rec.ins]
            r = Recorded(ins, binds, [sub.get(id(o), o) for o in rec.outs])
            g = [None] * len(rec.outs)
            for k, c in zip(given, arrs[:ng]):
                g[k] = _conj_if_complex(c)
            return [_zeros_like(a) if c is None else _conj_if_complex(c) for a, c in zip(ins, r.backward(g))]
        if type(self).__name__ in _BACKWARD_TAKES_INPUT:  # torch's backward op takes self: an edge to it
            ts += [self.inputs[self.diff[k]] for k in range(len(self.diff)) if k not in kin]
        elif type(self).__name__ in _BACKWARD_MASK_ONLY:  # the values saved, no edge back to them
            ts = [t.detach() for t in ts]
        return list(_DISPATCH._apply_multi(_double_backward_name(self), bwd,
                                           tuple(cts[k] for k in given) + tuple(ts)))

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


# The node recording a node's backward under create_graph=True (the gradient's grad_fn), named as torch's: where
# torch's backward is one op (tanh_backward, _softmax_backward_data, ...), that op's node; where its formula ends
# in one op (sin: grad * cos(x), a MulBackward0; sum: grad.expand(...)), that op's. Others: named after the node.
_DOUBLE_BACKWARD = {
    "SinBackward0": "Mul", "CosBackward0": "Mul", "ExpBackward0": "Mul", "PowBackward0": "Mul", "AbsBackward0": "Mul",
    "TanBackward0": "Mul", "Expm1Backward0": "Mul", "SinhBackward0": "Mul", "CoshBackward0": "Mul",
    "ErfBackward0": "Mul", "MulBackward0": "Mul", "SiluBackward0": "Mul", "LogsumexpBackward0": "Mul",
    "LinalgVectorNormBackward0": "Mul", "VarBackward0": "Mul", "StdBackward0": "Mul", "ProdBackward0": "Mul",
    "DivBackward0": "Div", "AtanBackward0": "Div", "SumBackward0": "Expand", "SumBackward1": "Expand",
    "MeanBackward0": "Div1", "MeanBackward1": "Div1", "MmBackward0": "Mm", "ViewBackward0": "View",
    "PermuteBackward0": "Permute", "TBackward0": "T", "TransposeBackward0": "Transpose", "NegBackward0": "Neg",
    "UnsqueezeBackward0": "Squeeze1", "SelectBackward0": "SelectBackward", "SliceBackward0": "SliceBackward",
    "GatherBackward0": "ScatterAdd", "ToCopyBackward0": "ToCopy", "AmaxBackward0": "Mul", "MaxBackward1": "MaskedFill1",
    "ClampBackward1": "Where", "AddmmBackward0": "Mm", "CumsumBackward0": "Flip",
    "TanhBackward0": "TanhBackward", "SigmoidBackward0": "SigmoidBackward", "ReluBackward0": "ThresholdBackward",
    "ThresholdBackward0": "ThresholdBackward", "GeluBackward0": "GeluBackward",
    "EluBackward0": "EluBackward", "SoftplusBackward0": "SoftplusBackward",
    "HardtanhBackward0": "HardtanhBackward", "LeakyReluBackward0": "LeakyReluBackward",
    "HardsigmoidBackward0": "HardsigmoidBackward", "HardswishBackward0": "HardswishBackward",
    "SoftmaxBackward0": "SoftmaxBackwardData", "LogSoftmaxBackward0": "LogSoftmaxBackwardData",
    "LogSigmoidBackward0": "LogSigmoidBackward", "SoftshrinkBackward0": "SoftshrinkBackward",
    "HardshrinkBackward0": "HardshrinkBackward", "MseLossBackward0": "MseLossBackward",
    "SmoothL1LossBackward0": "SmoothL1LossBackward", "HuberLossBackward0": "HuberLossBackward",
    "BinaryCrossEntropyBackward0": "BinaryCrossEntropyBackward", "NllLossBackward0": "NllLossBackward",
    "AvgPool2DBackward0": "AvgPool2DBackward", "AvgPool3DBackward0": "AvgPool3DBackward",
    "MaxPool2DWithIndicesBackward0": "MaxPool2DWithIndicesBackward",
    "MaxPool3DWithIndicesBackward0": "MaxPool3DWithIndicesBackward",
    "AdaptiveAvgPool2DBackward0": "AdaptiveAvgPool2DBackward", "AdaptiveAvgPool3DBackward0": "AdaptiveAvgPool3DBackward",
    "NativeLayerNormBackward0": "NativeLayerNormBackward", "NativeBatchNormBackward0": "NativeBatchNormBackward",
    "ConvolutionBackward0": "ConvolutionBackward", "EmbeddingBackward0": "EmbeddingBackward"}


def _double_backward_name(node) -> str:
    """The op name (before "Backward0") of the node recording node's backward under create_graph=True."""
    name = type(node).__name__
    return _DOUBLE_BACKWARD.get(name) or name + "Backward"


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

    @property
    def next_functions(self) -> tuple:
        """torch's: the base's edge, then the op's entries after its self (whose gradient goes back into the
        base's view region; here the op's edge to the view's old value carries it)."""
        base = self.edges[0]
        return ((None, 0) if base is None else base,) + tuple(self.op.next_functions[1:])

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


def leaf_edges(n) -> list:
    """n's edges with every edge to a leaf tensor (how an op on a leaf without a live AccumulateGrad records
    it, see _dispatch._edge) replaced by the leaf's AccumulateGrad, made now if none is alive; the node keeps
    them, so every node of one graph refers to the same AccumulateGrad of a leaf, as in torch."""
    edges = n.edges
    if any(e is not None and not isinstance(e[0], Node) for e in edges):
        edges = n.edges = [e if e is None or isinstance(e[0], Node) else (e[0]._acc_node(), 0) for e in edges]
    return edges
