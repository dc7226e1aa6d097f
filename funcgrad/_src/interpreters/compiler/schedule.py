"""Scheduling for donation: move the elementwise chains that end in outputs to just after their inputs.

A training step's jaxpr computes every gradient, then every update `p - lr * g`; so all gradients are
alive at once. With donated parameters (jit's donate_argnums) an update can be written into its
parameter's buffer as soon as the gradient exists and the parameter's other readers have run: the
gradient then dies early and the step's peak memory is one gradient, not all of them. Used by
codegen.generate for donating code only (without donation the update's result needs a buffer anyway).
"""
from __future__ import annotations

from ...core.jaxpr import Jaxpr
from ._ir import ELEMENTWISE, rebuild


def hoist_output_chains(jaxpr: Jaxpr) -> Jaxpr:
    """`jaxpr` with each chain of elementwise equations whose results are only outputs or read by the
    chain (an update) placed right after the last of: its inputs' producers, and the earlier readers of
    those inputs (so that a donated input is dead there and can take the result). Same values."""
    eqns = jaxpr.eqns
    readers = {}
    for k, e in enumerate(eqns):
        for v in e.invars:
            readers.setdefault(v, []).append(k)
    outset = set(jaxpr.outvars)
    chain = {}  # eqn index -> chain id (union-find root)
    for k in range(len(eqns) - 1, -1, -1):  # backwards: a member's readers are members already
        e = eqns[k]
        if e.prim.name not in ELEMENTWISE or len(e.outvars) != 1:
            continue
        rs = readers.get(e.outvars[0], [])
        if not (e.outvars[0] in outset or rs) or any(r not in chain for r in rs):
            continue
        roots = {_find(chain, r) for r in rs}
        chain[k] = k
        for r in roots:
            chain[r] = k
    if not chain:
        return jaxpr
    groups = {}
    for k in chain:
        groups.setdefault(_find(chain, k), []).append(k)
    made = {v: k for k, e in enumerate(eqns) for v in e.outvars}
    consts = set(jaxpr.constvars)
    place = {}
    for members in groups.values():
        first = min(members)
        inside = set(members)
        at = -1
        for k in members:
            for v in eqns[k].invars:
                if v in made and made[v] not in inside:
                    at = max(at, made[v])
                for r in () if v in consts else readers.get(v, ()):  # (a constant is never written)
                    if r < first and r not in inside:
                        at = max(at, r)
        for k in members:  # (later than the first member only where a member's input is made later)
            place[k] = at
    order = sorted(range(len(eqns)), key=lambda k: (place[k], 1, k) if k in place else (k, 0, k))
    if order == list(range(len(eqns))):
        return jaxpr
    return rebuild(jaxpr, [eqns[k] for k in order])


def _find(chain: dict, k: int) -> int:
    while chain[k] != k:
        chain[k] = chain[chain[k]]
        k = chain[k]
    return k
