"""Trace levels and tracers.

A transform runs a function on tracers of a new `Trace`. Binding a primitive whose arguments include
tracers records an equation at the highest live trace among them. A value-carrying trace (the one under
grad/jvp/vjp) also computes each output by binding at the level below, so its recorded equations form
a tape with values; an abstract trace (jit, vmap, make_jaxpr) knows only shapes and dtypes.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

from .dtypes import is_inexact
from .array import Array, ArrayBase, get_aval, to_array, canonical_array
from .aval import ShapedArray, _interned, shaped
from .errors import (ConcretizationError, TracerArrayConversionError, TracerBoolConversionError,
                     TracerIntegerConversionError, UnexpectedTracerError, user_location)
from .jaxpr import Eqn, Jaxpr, Var


class _State(threading.local):
    def __init__(self):
        self.stack = []


_state = _State()

# While a dict (funcgrad.onnx.export sets one around its trace): id(eqn) -> the user's line that recorded the
# equation, so a later error about one equation (an unsupported primitive) can point at the user's code.
# None otherwise: recording costs a frame walk per equation.
source_lines: dict | None = None


class Trace:
    """One level of tracing: records equations (a tape when `carries_values`)."""

    def __init__(self, level: int, carries_values: bool, name: str, origin: str):
        self.level = level
        self.carries_values = carries_values
        self.name = name
        self.origin = origin
        self.alive = True
        self.eqns = []
        self._consts = {}  # id(value) -> (Var, value)

    def __repr__(self) -> str:
        return f"<{self.name} trace, level {self.level}>"

    def new_arg(self, aval: ShapedArray, val=None) -> "Tracer":
        return Tracer(self, aval, val, Var(aval, val))

    def const_var(self, x) -> Var:
        entry = self._consts.get(id(x))
        if entry is None:
            val = x if isinstance(x, ArrayBase) else canonical_array(x)
            entry = (Var(get_aval(val), val, is_const=True), x)  # keeps x alive so its id stays unique
            self._consts[id(x)] = entry
        return entry[0]

    def var_of(self, x) -> Var:
        if isinstance(x, Tracer) and x._trace is self:
            return x.var
        return self.const_var(x)

    def process(self, prim, args, params):
        """Record `prim(*args)` here; returns the output tracer(s)."""
        if self.carries_values:
            if len(args) == 1 and prim.tape_rule is None:  # (unrolled: the eager grad's hot path)
                a = args[0]
                if a.__class__ is Tracer and a._trace is self:
                    invars = [a.var]
                    a = a.val
                else:
                    invars = [self.const_var(a)]
                outs = prim.bind(a, **params) if params else prim.bind(a)
            elif len(args) == 2 and prim.tape_rule is None:
                a, b = args
                if a.__class__ is Tracer and a._trace is self:
                    va = a.var
                    a = a.val
                else:
                    va = self.const_var(a)
                if b.__class__ is Tracer and b._trace is self:
                    invars = [va, b.var]
                    b = b.val
                else:
                    invars = [va, self.const_var(b)]
                outs = prim.bind(a, b, **params) if params else prim.bind(a, b)
            else:
                invars, lower = [], []
                for a in args:
                    if a.__class__ is Tracer and a._trace is self:
                        invars.append(a.var)
                        lower.append(a.val)
                    else:
                        invars.append(self.const_var(a))
                        lower.append(a)
                if prim.tape_rule is not None:  # (which operands are this tape's: those it differentiates)
                    outs, params = prim.tape_rule(lower, params, [not v.is_const for v in invars])
                else:
                    outs = prim.bind(*lower, **params) if params else prim.bind(*lower)
            if not prim.multiple_results:  # the common case, without the lists
                if outs.__class__ is Array:
                    b = outs._buf
                    av = _interned.get((b.shape, b.dtype, outs.weak_type))
                    if av is None:
                        av = shaped(b.shape, b.dtype, bool(outs.weak_type))
                else:
                    av = outs.aval
                if _carries_no_derivative(prim, av.dtype, invars):
                    return outs  # a plain value, as JAX's symbolic-zero tangent: float() etc. work on it
                var = Var(av, outs)
                self.eqns.append(Eqn(prim, invars, [var], params))
                if source_lines is not None:
                    source_lines[id(self.eqns[-1])] = user_location()
                return Tracer(self, av, outs, var)
            avals = [get_aval(o) for o in outs]
        else:
            invars = [a.var if a.__class__ is Tracer and a._trace is self else self.const_var(a) for a in args]
            avals = prim.abstract_eval(*[get_aval(a) for a in args], **params)
            avals = avals if prim.multiple_results else (avals,)
            outs = (None,) * len(avals)
        tracers = [Tracer(self, av, o, Var(av, o)) for av, o in zip(avals, outs)]
        self.eqns.append(Eqn(prim, invars, [t.var for t in tracers], params))
        if source_lines is not None:
            source_lines[id(self.eqns[-1])] = user_location()
        if not prim.multiple_results:
            return tracers[0]
        if self.carries_values:  # outputs that carry no derivative are their plain values
            return [o if _carries_no_derivative(prim, t.aval.dtype, invars) else t for t, o in zip(tracers, outs)]
        return tracers

    def record(self, prim, args, params, outs):
        """Record an equation whose outputs (one level down) were computed by the caller."""
        invars = [self.var_of(a) for a in args]
        tracers = [Tracer(self, get_aval(o), o, Var(get_aval(o), o)) for o in outs]
        self.eqns.append(Eqn(prim, invars, [t.var for t in tracers], params))
        return tracers

    def to_jaxpr(self, in_tracers, outs) -> Jaxpr:
        """The recorded equations as a closed jaxpr from `in_tracers` to `outs`."""
        outvars = [self.var_of(o) for o in outs]
        constvars = [v for v, _ in self._consts.values()]
        consts = [v.val for v in constvars]
        return Jaxpr(constvars, consts, [t.var for t in in_tracers], self.eqns, outvars)


_INEXACT: dict = {}
_ZERO_RULES: dict = {}  # primitive -> (its jvp list, its vjp list, operand indices without a derivative)
_ALL = range(1 << 30)  # (every operand: a primitive without derivative)


def _zero_rule_args(prim):
    """The operand indices of `prim` whose jvp and vjp rules are both None (all of them for a primitive
    without derivative; none where a rule covers every operand at once), cached per primitive."""
    jvp, vjp = prim.jvp, prim.vjp
    entry = _ZERO_RULES.get(prim)
    if entry is not None and entry[0] is jvp and entry[1] is vjp:
        return entry[2]
    if not prim.differentiable:
        zero = _ALL
    elif (prim.jvp_full is not None or prim.vjp_full is not None or prim.tape_rule is not None
          or jvp.__class__ not in (list, tuple) or vjp.__class__ not in (list, tuple)):
        zero = frozenset()  # (rules built per operand or for all operands at once: assume a derivative)
    else:
        zero = frozenset(i for i in range(min(len(jvp), len(vjp))) if jvp[i] is None and vjp[i] is None)
    _ZERO_RULES[prim] = (jvp, vjp, zero)
    return zero


def _carries_no_derivative(prim, dtype, invars) -> bool:
    """Whether an output of `prim` of `dtype` computed from `invars` (those not `is_const` are the trace's
    own operands) has a derivative that is structurally zero: an integer or boolean output, a primitive
    without derivative (stop_gradient, comparisons, rounding), or only operands whose rules are None. Such
    an output is returned as its plain value under grad, as JAX does for a symbolic-zero tangent, so
    Python conversions of it (float(), numpy) work and say nothing false about derivatives."""
    d = _INEXACT.get(dtype)
    if d is None:
        d = _INEXACT[dtype] = is_inexact(dtype)
    if not d:
        return True
    zero = _zero_rule_args(prim)
    if not zero:
        return False
    for i, v in enumerate(invars):
        if not v.is_const and i not in zero:
            return False
    return True


@contextmanager
def new_trace(name: str, carries_values: bool):
    """Open a new, innermost trace level for the duration of a transform."""
    stack = _state.stack
    trace = Trace(len(stack) + 1, carries_values, name, user_location(4))
    stack.append(trace)
    try:
        yield trace
    finally:
        trace.alive = False
        stack.pop()


def transform_active() -> bool:
    """Whether any transform is tracing on this thread."""
    return bool(_state.stack)


def _leak_error(t: "Tracer") -> UnexpectedTracerError:
    tr = t._trace
    return UnexpectedTracerError(
        f"Encountered a tracer that leaked out of the transform that created it: {t!r} was created by "
        f"the {tr.name} transform started at {tr.origin}, which has finished. A tracer is only valid "
        "inside the function being transformed; return values out of it instead of storing them "
        "(for example in a global, a list or an object attribute).")


def find_top(args):
    """The highest live trace among the tracers in `args`, or None if none are tracers."""
    top = None
    for a in args:
        if isinstance(a, Tracer):
            tr = a._trace
            if not tr.alive:
                raise _leak_error(a)
            if top is None or tr.level > top.level:
                top = tr
    return top


def _concrete_or_raise(t: "Tracer", what: str, error=ConcretizationError):
    if not t._trace.alive:
        raise _leak_error(t)
    if t.val is None:
        raise error(
            f"Abstract tracer value encountered where a concrete value is expected: {what} of a traced "
            f"array {t.aval.str_short()} at {user_location(3)}. Under {t._trace.name} the value is not "
            "known while tracing. If it depends only on a Python value, mark that argument static "
            "(jit's static_argnums / static_argnames); otherwise use structured control flow "
            "(funcgrad.lax.cond / while_loop, or funcgrad.numpy.where) instead of Python if/while.")
    return t.val


def _no_derivative_error(t: "Tracer", what: str, fix: str, error=ConcretizationError):
    """The error for converting a traced value to a Python or NumPy value that cannot carry the derivative
    (float(), complex(), math.*, numpy functions, tolist()): raised whether or not the value is known, as
    JAX raises, since the derivative through the conversion would silently be zero."""
    if not t._trace.alive:
        return _leak_error(t)
    if t.val is None:
        why = f"Under {t._trace.name} the value is not known while tracing"
    else:
        why = (f"Under {t._trace.name} the result would be a constant and the derivative through it "
               "silently zero")
    return error(
        f"Abstract tracer value encountered where a concrete value is expected: {what} of a traced array "
        f"{t.aval.str_short()} at {user_location(2)}. {why}. {fix} To look at a value without "
        "differentiating through it, use funcgrad.lax.stop_gradient(x) first (float(stop_gradient(x))), "
        "or compute it outside the transformed function.")


_SCALAR_FIX = ("Use funcgrad.numpy functions on the array instead of Python's (funcgrad.numpy.exp instead of "
               "math.exp); to change the dtype use x.astype(float).")
_NUMPY_FIX = ("Use funcgrad.numpy's function of the same name instead of NumPy's (funcgrad.numpy.sin instead "
              "of numpy.sin, funcgrad.numpy.asarray instead of numpy.asarray).")


class Tracer(ArrayBase):
    """A stand-in for an array inside a transform: an abstract value plus, when known, the value one
    level down.

    Conversions follow JAX: bool(), int(), operator.index and item() give the concrete value where the
    trace carries one (grad/jvp/vjp: Python control flow over values works) and raise under jit/vmap;
    float(), complex(), tolist() and NumPy conversion (`__array__`: numpy.asarray, numpy ufuncs) always
    raise, since the derivative through them would silently be zero. A value with no derivative (computed
    under stop_gradient, a comparison, an integer) is a plain Array under grad, not a tracer, so
    converting it works."""
    __slots__ = ("_trace", "aval", "val", "var", "__weakref__")

    def __init__(self, trace: Trace, aval: ShapedArray, val, var: Var):
        self._trace, self.aval, self.val, self.var = trace, aval, val, var

    @property
    def shape(self) -> tuple:
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    def __repr__(self) -> str:
        return f"Traced<{self.aval.str_short()}>with<{self._trace.name}, level {self._trace.level}>"

    def __bool__(self) -> bool:
        return bool(_concrete_or_raise(self, "bool()", TracerBoolConversionError))

    def __float__(self) -> float:
        raise _no_derivative_error(self, "float()", _SCALAR_FIX)

    def __int__(self) -> int:
        return int(_concrete_or_raise(self, "int()", TracerIntegerConversionError))

    def __complex__(self) -> complex:
        raise _no_derivative_error(self, "complex()", _SCALAR_FIX)

    def __index__(self) -> int:
        return _concrete_or_raise(self, "use as an index (__index__)", TracerIntegerConversionError).__index__()

    def __array__(self, dtype=None, copy=None):
        raise _no_derivative_error(self, "conversion to a NumPy array (numpy.asarray, a NumPy function, "
                                   "__array__)", _NUMPY_FIX, TracerArrayConversionError)

    def item(self, *args):
        return _concrete_or_raise(self, "item()").item(*args)

    def tolist(self):
        raise _no_derivative_error(self, "tolist()", "Use the array itself (or funcgrad.numpy functions on it).")

    def tobytes(self, order="C"):
        raise _no_derivative_error(self, "tobytes()", "Use the array itself.")

    def __dlpack__(self, *args, **kwargs):
        raise _no_derivative_error(self, "__dlpack__()", "Use the array itself.")

    def __reduce__(self):
        raise _no_derivative_error(self, "pickling (__reduce__)", "Return the value from the transformed "
                                   "function and pickle that.")

    def __copy__(self) -> "Tracer":  # immutable, as Arrays: a copy is itself (copy.deepcopy of a pytree works)
        return self

    def __deepcopy__(self, memo) -> "Tracer":
        return self


def hoist_tracer_consts(jaxprs: list) -> tuple[list, list]:
    """Closure conversion for sub-functions (bodies, branches, jitted functions): the constants of
    `jaxprs` that are tracers of enclosing transforms become explicit leading inputs, so every transform
    rule sees them as ordinary operands rather than as values frozen into a parameter.

    Returns (new jaxprs, hoisted values): each new jaxpr takes (*hoisted, *its inputs); a tracer several
    jaxprs read is hoisted once (a jaxpr ignores the hoisted inputs it does not read)."""
    hoisted, index = [], {}
    for j in jaxprs:
        for c in j.consts:
            if isinstance(c, Tracer) and id(c) not in index:
                index[id(c)] = len(hoisted)
                hoisted.append(c)
    if not hoisted:
        return list(jaxprs), []
    out = []
    for j in jaxprs:
        sub, consts_v, consts = {}, [], []
        for v, c in zip(j.constvars, j.consts):
            if isinstance(c, Tracer):
                sub[index[id(c)]] = v
            else:
                consts_v.append(v)
                consts.append(c)
        fresh = {}
        ins = []
        for i, c in enumerate(hoisted):
            v = sub.get(i)
            nv = Var(c.aval)
            if v is not None:
                fresh[v] = nv
            ins.append(nv)
        eqns = [Eqn(e.prim, [fresh.get(v, v) for v in e.invars], e.outvars, e.params) for e in j.eqns]
        outvars = [fresh.get(v, v) for v in j.outvars]
        out.append(Jaxpr(consts_v, consts, ins + list(j.invars), eqns, outvars))
    return out, hoisted


def concrete_value(x):
    """The concrete Array beneath `x` if there is one (walking down value-carrying levels), else None.
    funcgrad's own code reads static values (shapes, indices, counts computed from data) through this,
    as JAX's core.concrete_or_error, never through float()/numpy.asarray of a tracer."""
    while isinstance(x, Tracer):
        x = x.val
    return x if isinstance(x, Array) else None
