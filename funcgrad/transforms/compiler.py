"""jit's compiler: optimisation passes over a jaxpr, then code generation to one Python function.

Passes (each jaxpr -> jaxpr): inline nested jit calls, constant folding, common-subexpression
elimination, dead-code elimination. Code generation emits one line per equation calling the backend
directly (an expression template where the card gives one), with constants bound as globals.
"""
from __future__ import annotations

import functools

import numpy as np

from ..core.array import Array
from ..core.jaxpr import Eqn, Jaxpr, Var


# --- passes ---------------------------------------------------------------------------------------

def inline_calls(jaxpr: Jaxpr) -> Jaxpr:
    """Replace nested `pjit` equations by the equations of their jaxprs."""
    if not any(getattr(e.prim, "is_call", False) and e.prim.name == "pjit" for e in jaxpr.eqns):
        return jaxpr
    constvars, consts = list(jaxpr.constvars), list(jaxpr.consts)
    eqns = []
    rename = {}

    def sub(v):
        return rename.get(v, v)

    for e in jaxpr.eqns:
        if e.prim.name == "pjit":
            inner = inline_calls(e.params["jaxpr"])
            local = {}
            for v, c in zip(inner.constvars, inner.consts):
                nv = Var(v.aval, c, is_const=True)
                constvars.append(nv)
                consts.append(c)
                local[v] = nv
            for v, a in zip(inner.invars, e.invars):
                local[v] = sub(a)
            for ie in inner.eqns:
                outs = [Var(v.aval) for v in ie.outvars]
                for v, nv in zip(ie.outvars, outs):
                    local[v] = nv
                eqns.append(Eqn(ie.prim, [local[v] for v in ie.invars], outs, ie.params))
            for v, iv in zip(e.outvars, inner.outvars):
                rename[v] = local[iv]
        else:
            eqns.append(Eqn(e.prim, [sub(v) for v in e.invars], e.outvars, e.params))
    return Jaxpr(constvars, consts, jaxpr.invars, eqns, [sub(v) for v in jaxpr.outvars])


def fold_constants(jaxpr: Jaxpr) -> Jaxpr:
    """Evaluate equations whose inputs are all constants (small results only) at compile time."""
    const_val = dict(zip(jaxpr.constvars, jaxpr.consts))
    constvars, consts = list(jaxpr.constvars), list(jaxpr.consts)
    eqns = []
    for e in jaxpr.eqns:
        in_size = max([v.aval.size for v in e.invars], default=1)
        if all(v in const_val for v in e.invars) and not getattr(e.prim, "is_call", False) \
                and all(v.aval.size <= in_size for v in e.outvars):  # never materialise a broadcast
            outs = e.prim.bind(*[const_val[v] for v in e.invars], **e.params)
            outs = outs if e.prim.multiple_results else [outs]
            if all(isinstance(o, Array) for o in outs):
                for v, o in zip(e.outvars, outs):
                    const_val[v] = o
                    constvars.append(v)
                    consts.append(o)
                continue
        eqns.append(e)
    return Jaxpr(constvars, consts, jaxpr.invars, eqns, jaxpr.outvars)


def _param_key(params):
    try:
        key = tuple(sorted(params.items()))
        hash(key)
        return key
    except TypeError:
        return None


def cse(jaxpr: Jaxpr) -> Jaxpr:
    """Common-subexpression elimination: one equation per (primitive, params, inputs)."""
    seen = {}
    rename = {}
    eqns = []
    for e in jaxpr.eqns:
        invars = [rename.get(v, v) for v in e.invars]
        pk = _param_key(e.params)
        key = None if pk is None else (e.prim, tuple(id(v) for v in invars), pk)
        if key is not None and key in seen:
            for v, prev in zip(e.outvars, seen[key]):
                rename[v] = prev
            continue
        if key is not None:
            seen[key] = e.outvars
        eqns.append(Eqn(e.prim, invars, e.outvars, e.params))
    return Jaxpr(jaxpr.constvars, jaxpr.consts, jaxpr.invars, eqns, [rename.get(v, v) for v in jaxpr.outvars])


def dce(jaxpr: Jaxpr) -> Jaxpr:
    """Dead-code elimination: drop equations (and constants) no output depends on."""
    live = set(jaxpr.outvars)
    eqns = []
    for e in reversed(jaxpr.eqns):
        if any(v in live for v in e.outvars):
            eqns.append(e)
            live.update(e.invars)
    eqns.reverse()
    keep = [(v, c) for v, c in zip(jaxpr.constvars, jaxpr.consts) if v in live]
    return Jaxpr([v for v, _ in keep], [c for _, c in keep], jaxpr.invars, eqns, jaxpr.outvars)


PASSES = [inline_calls, fold_constants, cse, dce]


def optimize(jaxpr: Jaxpr) -> Jaxpr:
    for p in PASSES:
        jaxpr = p(jaxpr)
    return jaxpr


# --- code generation ------------------------------------------------------------------------------

class Compiled:
    """A generated function over raw backend buffers, with its source for inspection."""

    def __init__(self, fn, source: str, out_weak):
        self.fn, self.source, self.out_weak = fn, source, out_weak

    def __call__(self, *bufs):
        return self.fn(*bufs)


# Primitives that are one backend ufunc call: their results are fresh buffers, and they accept out=.
UFUNCS = {"add": "add", "sub": "subtract", "mul": "multiply", "neg": "negative", "exp": "exp", "log": "log",
          "log1p": "log1p", "expm1": "expm1", "tanh": "tanh", "sin": "sin", "cos": "cos", "sqrt": "sqrt",
          "max": "maximum", "min": "minimum"}


def _last_uses(jaxpr: Jaxpr) -> dict:
    """var -> index of the last equation reading it (outputs are read 'after' the last equation)."""
    last = {}
    for k, e in enumerate(jaxpr.eqns):
        for v in e.invars:
            last[v] = k
    for v in jaxpr.outvars:
        last[v] = len(jaxpr.eqns)
    return last


def _reusable(jaxpr: Jaxpr) -> set:
    """Vars holding a fresh buffer that nothing else aliases: produced by a ufunc and read only by
    ufuncs (which never return views), so once dead their memory can take a later ufunc's result."""
    fresh = {v for e in jaxpr.eqns if e.prim.name in UFUNCS and not e.params for v in e.outvars
             if v.aval.shape}
    for e in jaxpr.eqns:
        if e.prim.name not in UFUNCS or e.params:
            fresh.difference_update(e.invars)
    fresh.difference_update(jaxpr.outvars)
    return fresh


def compile_jaxpr(jaxpr: Jaxpr, xp=np) -> Compiled:
    """Generate one straight-line function: one line per equation, dead buffers released (`del`) or
    reused as the `out=` of a later ufunc of the same shape and dtype."""
    names = {}
    glb = {}

    def name(v):
        n = names.get(v)
        if n is None:
            n = names[v] = f"v{len(names)}"
        return n

    for i, (v, c) in enumerate(zip(jaxpr.constvars, jaxpr.consts)):
        n = f"c{i}"
        names[v] = n
        glb[n] = c._buf if isinstance(c, Array) else c
    args = [name(v) for v in jaxpr.invars]
    lines = [f"def compiled({', '.join(args)}):"]
    last = _last_uses(jaxpr)
    reusable = _reusable(jaxpr) if xp is np else set()
    keep = set(jaxpr.constvars)
    for k, e in enumerate(jaxpr.eqns):
        ins = [name(v) for v in e.invars]
        dying = [v for v in dict.fromkeys(e.invars) if last.get(v) == k and v not in keep]
        outs = [name(v) for v in e.outvars]
        ufunc = UFUNCS.get(e.prim.name) if not e.params else None
        donor = None
        if ufunc is not None and e.outvars[0].aval.shape:
            out_aval = e.outvars[0].aval
            donor = next((v for v in dying if v in reusable and v.aval.shape == out_aval.shape
                          and v.aval.dtype == out_aval.dtype), None)
        if donor is not None:
            expr = f"np.{ufunc}({', '.join(ins)}, out={name(donor)})"
        elif e.prim.codegen is not None and not e.params:
            expr = e.prim.codegen.format(*ins)
        else:
            fn = f"f{k}"
            glb[fn] = functools.partial(e.prim.impl_for(xp), **e.params) if e.params else e.prim.impl_for(xp)
            expr = f"{fn}({', '.join(ins)})"
        lhs = ", ".join(outs) + ("," if e.prim.multiple_results and len(outs) == 1 else "")
        if e.prim.multiple_results and not outs:
            lhs = "_"
        lines.append(f"    {lhs} = {expr}")
        dead = [name(v) for v in dying if v not in jaxpr.outvars]
        dead += [name(v) for v in e.outvars if v not in last]  # results nobody reads
        if dead:
            lines.append(f"    del {', '.join(dead)}")
    lines.append(f"    return ({''.join(name(v) + ', ' for v in jaxpr.outvars)})")
    source = "\n".join(lines)
    glb["np"] = np
    exec(compile(source, f"<jit {id(jaxpr):x}>", "exec"), glb)
    return Compiled(glb["compiled"], source, [v.aval.weak_type for v in jaxpr.outvars])
