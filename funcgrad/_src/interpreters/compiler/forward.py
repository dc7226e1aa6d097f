"""Forwarding of inputs to outputs: an output that is an input (or a constant) passed through
operations that leave its value unchanged is returned as that input itself.

    before: { lambda ; a:f32[3] b:f32[3]. let c:f32[3] = reshape[new_sizes=(3,)] a
                                               d:f32[3] = convert_element_type[new_dtype=float32] c
                                               e:f32[3] = mul b b in (d, e) }
    after:  { lambda ; a:f32[3] b:f32[3]. let e:f32[3] = mul b b in (a, e) }   (after dce)

The generated code then returns the caller's buffer instead of computing (or copying) anything, and
`jit` hands back the caller's own Array object for such an output (`forwarded_outputs`). The value-
preserving operations are: a reshape, squeeze or expand_dims to the same shape, the identity
transpose, broadcast or slice, a conversion to the same dtype, and `copy`-like identities.
"""
from __future__ import annotations

from ...core.jaxpr import Jaxpr
from ._ir import RESHAPES, producers, rebuild, replace_outvars_ok


def _identity_input(e):
    """The operand whose value e's result equals exactly (same shape and dtype), else None."""
    name = e.prim.name
    if e.prim.multiple_results or len(e.outvars) != 1 or not e.invars:
        return None
    out, x = e.outvars[0], e.invars[0]
    if out.aval.shape != x.aval.shape or out.aval.dtype != x.aval.dtype:
        return None
    p = e.params
    if name in RESHAPES or name == "convert_element_type":
        return x
    if name == "transpose" and tuple(p["permutation"]) == tuple(range(x.aval.ndim)):
        return x
    if name == "broadcast_in_dim" and tuple(p["broadcast_dimensions"]) == tuple(range(x.aval.ndim)):
        return x
    if name == "slice" and all(k == 1 for k in p["strides"]) and all(s == 0 for s in p["start_indices"]):
        return x
    if name == "rev" and all(x.aval.shape[d] <= 1 for d in p["dimensions"]):
        return x
    if name in ("max", "min", "and", "or") and len(e.invars) == 2 and e.invars[0] is e.invars[1]:
        return x
    if name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod") and not p.get("axes", ()):
        return x
    return None


def forward_inputs(jaxpr: Jaxpr) -> Jaxpr:
    """Replace outputs that equal an input or a constant by that input or constant."""
    sources = set(jaxpr.invars) | set(jaxpr.constvars)
    prod = producers(jaxpr.eqns)
    outset = set(jaxpr.outvars)
    outvars = []
    changed = False
    for v in jaxpr.outvars:
        w = v
        while w not in sources and w in prod:
            x = _identity_input(prod[w])
            if x is None:
                break
            w = x
        if w is not v and w in sources and replace_outvars_ok(v, w, outset):
            outvars.append(w)
            changed = True
        else:
            outvars.append(v)
    return rebuild(jaxpr, jaxpr.eqns, outvars) if changed else jaxpr


def forwarded_outputs(jaxpr: Jaxpr) -> list:
    """For each output of the jaxpr, the index of the input it is (forwarded unchanged), or None."""
    index = {v: i for i, v in enumerate(jaxpr.invars)}
    return [index.get(v) for v in jaxpr.outvars]
