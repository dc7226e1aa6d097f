"""The IR: typed variables, equations `outs = prim[params](ins)`, jaxprs, a printer and an evaluator.

    { lambda a:f32[3] ; b:f32[3]. let c:f32[3] = mul b a; d:f32[] = reduce_sum[axes=(0,)] c in (d,) }

Constants (closed-over arrays) are the variables before the `;`; scalar constants print inline.
"""
from __future__ import annotations

import itertools

import numpy as np

from .aval import ShapedArray


class Var:
    """A variable of a jaxpr. On a tape (a value-carrying trace) `val` holds its value one level down."""
    __slots__ = ("aval", "val", "is_const", "__weakref__")

    def __init__(self, aval: ShapedArray, val=None, is_const: bool = False):
        self.aval = aval
        self.val = val
        self.is_const = is_const

    def __repr__(self) -> str:
        return f"Var({self.aval.str_short()})"


class Eqn:
    """One equation `outvars = prim[params](*invars)`."""
    __slots__ = ("prim", "invars", "outvars", "params")

    def __init__(self, prim, invars, outvars, params):
        self.prim = prim
        self.params = params
        self.invars = invars if invars.__class__ is list else list(invars)
        self.outvars = outvars if outvars.__class__ is list else list(outvars)

    @property
    def primitive(self):
        """The equation's primitive (JAX's JaxprEqn.primitive)."""
        return self.prim

    def __repr__(self) -> str:
        return pp_eqn(self, _Namer())


class Literal:
    """JAX's literal operand of an equation. funcgrad's jaxprs bind every constant, scalars included, to
    a constvar (the printer shows scalar ones inline), so no equation holds one; the class exists for
    interpreters written against JAX, whose `isinstance(v, Literal)` / `type(v) is Literal` tests then
    take the variable branch."""
    __slots__ = ("val", "aval")

    def __init__(self, val, aval=None):
        self.val = val
        self.aval = aval

    def __repr__(self) -> str:
        return f"Literal({self.val!r})"


class Jaxpr:
    """A closed jaxpr: constvars bound to `consts`, then invars, eqns and outvars."""
    __slots__ = ("constvars", "consts", "invars", "eqns", "outvars", "__weakref__", "_cache")

    def __init__(self, constvars, consts, invars, eqns, outvars):
        self.constvars, self.consts = list(constvars), list(consts)
        self.invars, self.eqns, self.outvars = list(invars), list(eqns), list(outvars)
        self._cache = {}  # derived artefacts (compiled code, derivative jaxprs) keyed by purpose

    @property
    def jaxpr(self) -> "Jaxpr":
        """Itself: JAX's make_jaxpr returns a ClosedJaxpr whose `.jaxpr` is the open jaxpr; funcgrad's
        jaxprs are closed (constvars bound to `consts`) and serve as both."""
        return self

    @property
    def literals(self) -> list:
        return self.consts

    @property
    def in_avals(self) -> list:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list:
        return [v.aval for v in self.outvars]

    def __str__(self) -> str:
        return pp_jaxpr(self)

    __repr__ = __str__

    def pretty_print(self) -> str:
        return pp_jaxpr(self)

    @property
    def effects(self) -> set:
        return set()


class _Namer:
    def __init__(self):
        self.names = {}
        self.gen = _names()

    def __call__(self, v) -> str:
        if v not in self.names:
            self.names[v] = next(self.gen)
        return self.names[v]


def _names():
    letters = "abcdefghijklmnopqrstuvwxyz"
    for n in itertools.count(1):
        for combo in itertools.product(letters, repeat=n):
            yield "".join(combo)


def _fmt_param(v) -> str:
    if isinstance(v, Jaxpr):
        return "{ " + pp_jaxpr(v).replace("\n", "\n  ") + " }"
    if isinstance(v, np.dtype):
        return str(v)
    if callable(v):
        return getattr(v, "__name__", type(v).__name__)
    return repr(v)


def pp_eqn(eqn: Eqn, name, literals=None) -> str:
    literals = literals or {}
    lhs = " ".join(f"{name(v)}:{v.aval.str_short()}" for v in eqn.outvars)
    params = ""
    if eqn.params:
        params = "[" + ", ".join(f"{k}={_fmt_param(v)}" for k, v in sorted(eqn.params.items())) + "]"
    ins = " ".join(literals.get(v) or name(v) for v in eqn.invars)
    return f"{lhs} = {eqn.prim.name}{params} {ins}"


def _literal_text(val) -> str | None:
    """Scalars print inline, as literals; anything bigger stays a named constant."""
    try:
        if getattr(val, "shape", None) == ():
            return repr(np.asarray(val).item())
    except Exception:
        return None
    return None


def pp_jaxpr(jaxpr: Jaxpr) -> str:
    name = _Namer()
    literals = {}
    kept_consts = []
    for v, c in zip(jaxpr.constvars, jaxpr.consts):
        lit = _literal_text(c)
        if lit is not None:
            literals[v] = f"{lit}:{v.aval.str_short()}"
        else:
            kept_consts.append(v)
    consts = " ".join(f"{name(v)}:{v.aval.str_short()}" for v in kept_consts)
    ins = " ".join(f"{name(v)}:{v.aval.str_short()}" for v in jaxpr.invars)
    lines = [pp_eqn(e, name, literals) for e in jaxpr.eqns]
    outs = ", ".join(literals.get(v) or name(v) for v in jaxpr.outvars)
    body = "\n    ".join(lines)
    head = "{ lambda " + (consts + " " if consts else "") + "; " + ins + ". let"
    if not lines:
        return f"{head} in ({outs},) }}"
    return f"{head}\n    {body}\n  in ({outs},) }}"


def eval_jaxpr(jaxpr: Jaxpr, *args):
    """Run a jaxpr by binding each equation's primitive: under transforms this re-traces it."""
    env = {}
    for v, c in zip(jaxpr.constvars, jaxpr.consts):
        env[v] = c
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
    for v, a in zip(jaxpr.invars, args):
        env[v] = a
    for eqn in jaxpr.eqns:
        outs = eqn.prim.bind(*[env[v] for v in eqn.invars], **eqn.params)
        if eqn.prim.multiple_results:
            for v, o in zip(eqn.outvars, outs):
                env[v] = o
        else:
            env[eqn.outvars[0]] = outs
    return [env[v] for v in jaxpr.outvars]


def eval_jaxpr_consts(jaxpr: Jaxpr, consts, *args, propagate_source_info=True) -> list:
    """JAX's `jax.core.eval_jaxpr(jaxpr, consts, *args)`: the constvars take `consts` (as a closed
    jaxpr's `.consts` / `.literals`), the invars `args`; returns the list of outputs."""
    consts = list(consts)
    if len(consts) != len(jaxpr.constvars):
        raise TypeError(f"jaxpr has {len(jaxpr.constvars)} constants, got {len(consts)}")
    open_jaxpr = Jaxpr([], [], list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.eqns, jaxpr.outvars)
    return eval_jaxpr(open_jaxpr, *consts, *args)


def jaxpr_as_fun(closed: Jaxpr):
    """A function running a closed jaxpr on its arguments (JAX's `core.jaxpr_as_fun`); returns a list."""
    def fun(*args):
        return eval_jaxpr(closed, *args)
    return fun
