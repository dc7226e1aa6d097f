"""Common-subexpression elimination: one equation per (primitive, params, inputs); equal constants
merged into one.

    before: { lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[3] = sin a; d:f32[3] = add b c in (d,) }
    after:  { lambda ; a:f32[3]. let b:f32[3] = sin a; d:f32[3] = add b b in (d,) }

Operands of commutative primitives (add, mul, max, min, eq, ne, and, or, xor) are compared as a set,
so `x * y` and `y * x` are one expression. Constants with the same dtype, shape and contents (small
ones, or broadcasts of one value) become one constant, so expressions over them can merge too.
All primitives are pure (random numbers come from explicit keys), so any repeat is redundant.
"""
from __future__ import annotations

import numpy as np

from ...core.jaxpr import Jaxpr
from ._ir import Renamer, buffer_of, rebuild, uniform_value

COMMUTATIVE = frozenset(("add", "mul", "max", "min", "eq", "ne", "and", "or", "xor"))
_SMALL = 256


def _param_key(params):
    try:
        key = tuple(sorted(params.items()))
        hash(key)
        return key
    except TypeError:
        return None


def _const_key(v, c):
    a = v.aval
    u = uniform_value(c, limit=_SMALL)
    if u is not None:
        return (a.shape, a.dtype, a.weak_type, "u", np.asarray(u).tobytes())
    buf = buffer_of(c)
    if isinstance(buf, np.ndarray) and buf.size <= _SMALL:
        return (a.shape, a.dtype, a.weak_type, "b", np.ascontiguousarray(buf).tobytes())
    return None


def cse(jaxpr: Jaxpr) -> Jaxpr:
    """Common-subexpression elimination (see the module docstring)."""
    rename = Renamer()
    constvars, consts = [], []
    seen_consts = {}
    for v, c in zip(jaxpr.constvars, jaxpr.consts):
        k = _const_key(v, c)
        if k is not None and k in seen_consts:
            rename.set(v, seen_consts[k])
            continue
        if k is not None:
            seen_consts[k] = v
        constvars.append(v)
        consts.append(c)
    order = {v: i for i, v in enumerate(list(constvars) + list(jaxpr.invars))}
    seen = {}
    eqns = []
    for e in jaxpr.eqns:
        e = rename.eqn(e)
        pk = _param_key(e.params)
        key = None
        if pk is not None:
            ins = tuple(order.get(v, id(v)) for v in e.invars)
            if e.prim.name in COMMUTATIVE:
                ins = tuple(sorted(ins))
            key = (e.prim, ins, pk)
        if key is not None and key in seen:
            for v, prev in zip(e.outvars, seen[key]):
                rename.set(v, prev)
            continue
        if key is not None:
            seen[key] = e.outvars
        for v in e.outvars:
            order[v] = len(order)
        eqns.append(e)
    outvars = [rename(v) for v in jaxpr.outvars]
    if len(eqns) == len(jaxpr.eqns) and len(constvars) == len(jaxpr.constvars) and \
            all(a is b for a, b in zip(outvars, jaxpr.outvars)) and \
            all(a is b for a, b in zip(eqns, jaxpr.eqns)):
        return jaxpr
    return rebuild(jaxpr, eqns, outvars, constvars, consts)
