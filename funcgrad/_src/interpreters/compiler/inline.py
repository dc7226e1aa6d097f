"""Inlining: replace call equations (nested `jit`, and for code generation also custom_jvp/custom_vjp
calls and remat) by the equations of the jaxprs they carry.

    before: { lambda ; a:f32[2]. let b:f32[2] = pjit[jaxpr={ lambda ; a. let b = sin a in (b,) }] a
                                      c:f32[2] = add b b in (c,) }
    after:  { lambda ; a:f32[2]. let b:f32[2] = sin a; c:f32[2] = add b b in (c,) }

`inline_calls` (a pass of `optimize`) only inlines `pjit`: its rules are those of the jaxpr it carries,
so the result differentiates and batches the same. `inline_all_calls` also inlines custom_jvp_call,
custom_vjp_call and remat, whose impl is "run the primal jaxpr": code generation uses it, after which
the custom rules are no longer needed.
"""
from __future__ import annotations

from ...core.jaxpr import Eqn, Jaxpr, Var
from ._ir import CALL_PRIMS, Renamer, rebuild


def _inline(jaxpr: Jaxpr, names) -> Jaxpr:
    if not any(e.prim.name in names and "jaxpr" in e.params for e in jaxpr.eqns):
        return jaxpr
    constvars, consts = list(jaxpr.constvars), list(jaxpr.consts)
    eqns = []
    rename = Renamer()
    for e in jaxpr.eqns:
        inner = e.params.get("jaxpr") if e.prim.name in names else None
        if not isinstance(inner, Jaxpr) or len(inner.invars) != len(e.invars):
            eqns.append(rename.eqn(e))
            continue
        inner = _inline(inner, names)
        local = {}
        for v, c in zip(inner.constvars, inner.consts):
            nv = Var(v.aval, c, is_const=True)
            constvars.append(nv)
            consts.append(c)
            local[v] = nv
        for v, a in zip(inner.invars, e.invars):
            local[v] = rename(a)
        for ie in inner.eqns:
            outs = [Var(v.aval) for v in ie.outvars]
            local.update(zip(ie.outvars, outs))
            eqns.append(Eqn(ie.prim, [local[v] for v in ie.invars], outs, ie.params))
        for v, iv in zip(e.outvars, inner.outvars):
            rename.set(v, local[iv])
    return rebuild(jaxpr, eqns, [rename(v) for v in jaxpr.outvars], constvars, consts)


def inline_calls(jaxpr: Jaxpr) -> Jaxpr:
    """Replace nested `pjit` equations by the equations of their jaxprs."""
    return _inline(jaxpr, ("pjit",))


def inline_all_calls(jaxpr: Jaxpr) -> Jaxpr:
    """Inline every call primitive whose impl just runs its jaxpr (for code generation only)."""
    return _inline(jaxpr, CALL_PRIMS)
