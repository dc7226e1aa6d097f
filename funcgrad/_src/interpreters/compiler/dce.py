"""Dead-code elimination: drop equations and constants that no output depends on.

    before: { lambda ; a:f32[3]. let b:f32[3] = exp a; c:f32[3] = mul b 3.0; d:f32[3] = sin a in (d,) }
    after:  { lambda ; a:f32[3]. let d:f32[3] = sin a in (d,) }

This is what removes the unused residuals of a vjp: `jit(lambda x: vjp(f, x)[1](ct))` traces the whole
forward pass, but only the values the backward pass reads survive. Primitives are pure, so an equation
none of whose results is read can go. A `scan` whose per-step outputs (ys) are partly unused is
rewritten to stop producing them (its body is pruned too), as long as the carry is unaffected.
The exception is a primitive marked `effectful` (debug callbacks): it runs for its side effect.
"""
from __future__ import annotations

from ...core.jaxpr import Eqn, Jaxpr
from ._ir import rebuild


def _prune_scan(e: Eqn, live: set):
    """A scan equation without its unused ys outputs (None if nothing can be dropped)."""
    p = e.params
    body = p.get("jaxpr")
    n_carry = p.get("n_carry")
    if not isinstance(body, Jaxpr) or not isinstance(n_carry, int) or len(body.outvars) != len(e.outvars):
        return None
    keep = [i for i, v in enumerate(e.outvars) if i < n_carry or v in live]
    if len(keep) == len(e.outvars):
        return None
    new_body = dce(rebuild(body, body.eqns, [body.outvars[i] for i in keep]))
    params = dict(p, jaxpr=new_body)
    return Eqn(e.prim, e.invars, [e.outvars[i] for i in keep], params)


def dce(jaxpr: Jaxpr) -> Jaxpr:
    """Dead-code elimination (see the module docstring)."""
    live = set(jaxpr.outvars)
    eqns = []
    changed = False
    for e in reversed(jaxpr.eqns):
        if getattr(e.prim, "effectful", False) or any(v in live for v in e.outvars):
            if e.prim.name == "scan" and e.prim.multiple_results:
                pruned = _prune_scan(e, live)
                if pruned is not None:
                    e, changed = pruned, True
            eqns.append(e)
            live.update(e.invars)
        else:
            changed = True
    eqns.reverse()
    keep = [(v, c) for v, c in zip(jaxpr.constvars, jaxpr.consts) if v in live]
    if not changed and len(keep) == len(jaxpr.constvars):
        return jaxpr
    return rebuild(jaxpr, eqns, constvars=[v for v, _ in keep], consts=[c for _, c in keep])
