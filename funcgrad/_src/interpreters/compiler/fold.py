"""Constant folding: evaluate, once at compile time, equations whose inputs are all constants.

    before: { lambda a:f32[4] ; b:f32[4]. let c:f32[4] = exp a; d:f32[4] = add b c in (d,) }
    after:  { lambda c:f32[4] ; b:f32[4]. let d:f32[4] = add b c in (d,) }

A folded result must not cost memory the program would not have spent: it is kept when it is no bigger
than the largest input, when it is small (<= FOLD_LIMIT elements), or when it is a view of an input
constant (a broadcast of a scalar is a zero-stride view, free however large; so is a folded `full`,
which becomes a read-only broadcast of its fill value). Otherwise (arithmetic on big broadcasts, an
iota) the equation stays, to run at call time. Call primitives (control
flow, nested jit) are never folded.
"""
from __future__ import annotations

import numpy as np

from ...core.array import Array
from ...core.jaxpr import Jaxpr, Var
from ._ir import ELEMENTWISE, Renamer, is_call, rebuild, uniform_value

FOLD_LIMIT = 1024
# primitives whose result can be a view of an input (or, for `full`, a zero-stride broadcast): the ones
# whose big results may still be affordable
_MAY_VIEW = frozenset(("full", "broadcast_in_dim", "reshape", "transpose", "slice", "squeeze", "expand_dims",
                       "rev", "dynamic_slice", "convert_element_type", "copy", "copy_p"))


def _root(buf):
    while isinstance(buf, np.ndarray) and buf.base is not None:
        buf = buf.base
    return buf


def _affordable(outs, ins, in_size: int) -> bool:
    roots = {id(_root(c._buf)) for c in ins}
    for o in outs:
        b = o._buf
        if b.size <= max(in_size, FOLD_LIMIT):
            continue
        if isinstance(b, np.ndarray) and b.ndim and all(s == 0 for s in b.strides):
            continue  # a broadcast of one value: no memory
        if isinstance(b, np.ndarray) and b.base is not None and id(_root(b)) in roots:
            continue
        return False
    return True


def fold_constants(jaxpr: Jaxpr) -> Jaxpr:
    """Evaluate equations whose inputs are all constants (when the result is affordable; see above)."""
    const_val = dict(zip(jaxpr.constvars, jaxpr.consts))
    constvars, consts = list(jaxpr.constvars), list(jaxpr.consts)
    eqns = []
    rename = Renamer()
    for e in jaxpr.eqns:
        e = rename.eqn(e)
        if all(v in const_val for v in e.invars) and not is_call(e) and not e.prim.multiple_results \
                and getattr(e.prim, "foldable", True):
            ins = [const_val[v] for v in e.invars]
            in_size = max([v.aval.size for v in e.invars], default=1)
            if e.outvars[0].aval.size > max(in_size, FOLD_LIMIT) and e.prim.name not in _MAY_VIEW and not (
                    e.prim.name in ELEMENTWISE and all(uniform_value(c) is not None for c in ins)):
                eqns.append(e)  # a big fresh result (an iota, arithmetic on big constants): never kept, so
                continue        # not computed either (folding a 1e8-element iota took seconds)
            try:
                with np.errstate(all="ignore"):
                    if e.prim.name == "full" and not e.invars:  # a zero-stride view of one scalar
                        p = e.params
                        out = Array(np.broadcast_to(np.full((), p["fill_value"], p["dtype"]), p["shape"]),
                                    bool(p.get("weak_type", False)))
                    elif e.prim.name in ELEMENTWISE and e.outvars[0].aval.size > FOLD_LIMIT and \
                            all(uniform_value(c) is not None for c in ins):
                        # elementwise on broadcasts of scalars: compute one element, broadcast it
                        small = [Array(np.asarray(np.asarray(c._buf)[(0,) * c.ndim]), c.weak_type)
                                 for c in ins]
                        r = e.prim.bind(*small, **e.params)
                        out = Array(np.broadcast_to(np.asarray(r._buf), e.outvars[0].aval.shape),
                                    r.weak_type)
                    else:
                        out = e.prim.bind(*ins, **e.params)
            except Exception:  # noqa: BLE001 - leave it to run (and raise) at call time
                out = None
            if isinstance(out, Array) and out.weak_type != e.outvars[0].aval.weak_type:
                out = Array(out._buf, e.outvars[0].aval.weak_type)
            if isinstance(out, Array) and out.shape == e.outvars[0].aval.shape \
                    and out.dtype == e.outvars[0].aval.dtype and _affordable([out], ins, in_size):
                v = Var(e.outvars[0].aval, out, is_const=True)
                rename.set(e.outvars[0], v)
                const_val[v] = out
                constvars.append(v)
                consts.append(out)
                continue
        eqns.append(e)
    if len(eqns) == len(jaxpr.eqns):
        return jaxpr
    return rebuild(jaxpr, eqns, [rename(v) for v in jaxpr.outvars], constvars, consts)
