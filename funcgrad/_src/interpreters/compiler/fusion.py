"""Elementwise fusion, backend-neutral: which equations run together as one kernel.

`plan(jaxpr, fusible, broadcastable)` groups chains (and DAGs) of elementwise equations of one shape
into `FusedGroup`s and returns the program as a list of items, each an `Eqn` or a `FusedGroup`, in an
order that respects every dependency. A backend then emits each group as one kernel: the NumPy code
generator evaluates a large group block by block (a cache-sized flat slice of every operand at a time,
writing into preallocated outputs) and a small one as in-place ufunc calls; the CuPy backend emits one
generated ElementwiseKernel per group from the same description (cuda_kernels.py). Each backend passes
its own `fusible` predicate (NumPy: groups of at least config.fusion_min_size elements; CuPy: every
elementwise equation with an exact C translation, whatever its size).

A group's
- `eqns` are its members, in program order;
- `inputs` the variables it reads from outside (operands, constants, and the operands of absorbed
  broadcasts);
- `outputs` the members' results read after it (by other equations or as results of the jaxpr); the
  other results are internal and never materialised at full size;
- `broadcasts` maps a `broadcast_in_dim` result that only this group reads to (operand, expanded
  shape): the kernel reads the small operand directly, relying on the backend's broadcasting.

Grouping is greedy in program order. An equation joins a group (preferably one that produced one of
its operands) while no equation outside the group has yet read any of the group's results: the group
then runs where its last member stood, and nothing between its members needed it earlier, so the order
stays valid without any reordering.
"""
from __future__ import annotations

from ...core.jaxpr import Eqn, Jaxpr, Var, _Namer, pp_eqn


class FusedGroup:
    """Elementwise equations of one shape evaluated together (see the module docstring)."""

    def __init__(self, shape):
        self.shape = tuple(shape)
        self.eqns: list[Eqn] = []
        self.inputs: list[Var] = []
        self.outputs: list[Var] = []
        self.broadcasts: dict = {}
        self.closed = False

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __repr__(self) -> str:
        return f"FusedGroup({len(self.eqns)} ops over {self.shape}, {len(self.inputs)} in, {len(self.outputs)} out)"

    def pretty(self, name) -> str:
        """The group as text, naming variables with `name(var)`."""
        ins = " ".join(f"{name(v)}:{v.aval.str_short()}" for v in self.inputs)
        lines = [f"fused[{len(self.eqns)} ops, shape={self.shape}] {ins} {{"]
        for w, (x, expanded) in self.broadcasts.items():
            lines.append(f"    {name(w)} = broadcast {name(x)} as {expanded}")
        lines += ["    " + pp_eqn(e, name) for e in self.eqns]
        lines.append(f"  }} -> ({', '.join(name(v) for v in self.outputs)})")
        return "\n".join(lines)


def plan(jaxpr: Jaxpr, fusible, broadcastable=lambda e: False, min_ops: int = 2) -> list:
    """The program as items (Eqn or FusedGroup) in execution order; see the module docstring.

    fusible(eqn): whether the backend can put eqn in a kernel (an elementwise equation);
    broadcastable(eqn): whether that kernel op broadcasts smaller operands itself."""
    group_of = {}   # var -> group whose member produced it
    groups = []
    items = []      # Eqn or FusedGroup
    last_open = {}  # shape -> most recent group of that shape
    for e in jaxpr.eqns:
        fus = fusible(e)
        g = None
        if fus:
            shape = tuple(e.outvars[0].aval.shape)
            cands = [group_of[v] for v in e.invars if v in group_of]
            if shape in last_open:
                cands.append(last_open[shape])
            for c in cands:
                if not c.closed and c.shape == shape:
                    g = c
                    break
        # every group whose result this equation reads from outside is closed from now on
        for v in e.invars:
            h = group_of.get(v)
            if h is not None and h is not g:
                h.closed = True
        if fus:
            if g is None:
                g = FusedGroup(e.outvars[0].aval.shape)
                groups.append(g)
                items.append(g)
                last_open[g.shape] = g
            g.eqns.append(e)
            for v in e.outvars:
                group_of[v] = g
        else:
            items.append(e)
    # A group runs where its last member stood.
    index_of = {id(e): k for k, e in enumerate(jaxpr.eqns)}
    items.sort(key=lambda it: index_of[id(it.eqns[-1] if isinstance(it, FusedGroup) else it)])
    return _finish(jaxpr, items, broadcastable, min_ops)


def _finish(jaxpr: Jaxpr, items: list, broadcastable, min_ops: int) -> list:
    readers = {}
    for it in items:
        for e in (it.eqns if isinstance(it, FusedGroup) else [it]):
            for v in e.invars:
                readers.setdefault(v, []).append((it, e))
    outset = set(jaxpr.outvars)
    out = []
    for it in items:
        if isinstance(it, FusedGroup) and len(it.eqns) < min_ops:
            out.extend(it.eqns)
        else:
            out.append(it)
    # Absorb broadcasts read only by one group's broadcasting members.
    absorbed = set()
    for it in out:
        if isinstance(it, FusedGroup) or it.prim.name != "broadcast_in_dim" or it.prim.multiple_results:
            continue
        w = it.outvars[0]
        rs = readers.get(w, [])
        if w in outset or not rs:
            continue
        g = rs[0][0]
        if not isinstance(g, FusedGroup) or len(g.eqns) < min_ops or \
                any(r is not g or not broadcastable(e) for r, e in rs):
            continue
        x = it.invars[0]
        shape, dims = tuple(it.params["shape"]), tuple(it.params["broadcast_dimensions"])
        expanded = [1] * len(shape)
        for i, d in enumerate(dims):
            expanded[d] = x.aval.shape[i]
        g.broadcasts[w] = (x, tuple(expanded))
        absorbed.add(id(it))
    out = [it for it in out if id(it) not in absorbed]
    # Inputs and outputs of each group.
    later_reads = {}
    for it in out:
        es = it.eqns if isinstance(it, FusedGroup) else [it]
        for e in es:
            for v in e.invars:
                later_reads.setdefault(v, set()).add(id(it))
        for x, _ in (it.broadcasts.values() if isinstance(it, FusedGroup) else ()):
            later_reads.setdefault(x, set()).add(id(it))  # (read through an absorbed broadcast)
    for it in out:
        if not isinstance(it, FusedGroup):
            continue
        produced = {v for e in it.eqns for v in e.outvars}
        seen = set()
        for e in it.eqns:
            for v in e.invars:
                src = it.broadcasts[v][0] if v in it.broadcasts else v
                if v in produced or src in seen:
                    continue
                seen.add(src)
                it.inputs.append(src)
        for e in it.eqns:
            for v in e.outvars:
                if v in outset or any(r != id(it) for r in later_reads.get(v, ())):
                    it.outputs.append(v)
    return out


def pretty_plan(items) -> str:
    """The fused program as text (groups shown with their member equations)."""
    name = _Namer()
    lines = []
    for it in items:
        lines.append(it.pretty(name) if isinstance(it, FusedGroup) else pp_eqn(it, name))
    return "\n".join(lines)
