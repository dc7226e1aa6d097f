"""Sums of zero-padded blocks: an add tree whose leaves pad disjoint blocks into one shape becomes one
concatenation.

Reverse mode turns slicing into padding: the cotangent of x[:, a:b] is its cotangent padded with zeros
back to x's shape. So a function that splits an array (jnp.split, an LSTM's gates) gets a backward pass
that builds one zero-filled full-size array per piece and adds them up (k allocations and fills, k - 1
additions) for what is one concatenation:

    before: j:f32[3,8] = pad[((0,0,0),(5,0,0))] f 0.0;  k:f32[3,8] = pad[((0,0,0),(2,3,0))] h 0.0
            l:f32[3,8] = add j k;  m:f32[3,8] = pad[((0,0,0),(0,6,0))] i 0.0;  n:f32[3,8] = add l m
    after:  o:f32[3,8] = concatenate[dimension=1] i h f;  n:f32[3,8] = add o 0.0

Each element of such a sum is one block's element plus padding zeros, and +0.0 + x is +0.0 for x = -0.0,
so a floating-point result adds the padding zero once (one pass, in place) to stay bit for bit what the
additions give; a padding of -0.0 needs nothing. Gaps between blocks are that zero.

Applies when every leaf is a `pad` with a zero padding value (one zero for all: +0.0 or -0.0), no
interior padding and no cropping, all differing from the full shape along one axis only, over disjoint ranges; an inner add
must be read by the tree alone. A tree that does not qualify is tried again from each inner add.
"""
from __future__ import annotations

import numpy as np

from ...core.aval import ShapedArray
from ...core.jaxpr import Eqn, Jaxpr, Var
from ...prims.elementwise import add_p
from ...prims.shape import concatenate_p
from ._ir import is_value, new_const, producers, rebuild, uniform_value, uses


class _Trees:
    def __init__(self, jaxpr: Jaxpr):
        self.prod = producers(jaxpr.eqns)
        self.nuses = uses(jaxpr)
        self.outset = set(jaxpr.outvars)
        self.const_val = dict(zip(jaxpr.constvars, jaxpr.consts))

    def inner_add(self, v: Var):
        """The add equation making v when the tree may absorb it (read once, not an output)."""
        e = self.prod.get(v)
        if e is None or e.prim.name != "add" or self.nuses.get(v, 0) != 1 or v in self.outset:
            return None
        return e

    def leaves(self, e: Eqn, out: list, inner_adds: list) -> None:
        for v in e.invars:
            inner = self.inner_add(v)
            if inner is None:
                out.append(v)
            else:
                inner_adds.append(inner)
                self.leaves(inner, out, inner_adds)

    def block(self, v: Var):
        """(axis, start, stop, operand, padding value) when v pads one block along one axis, else None."""
        e = self.prod.get(v)
        if e is None or e.prim.name != "pad":
            return None
        x, pv = e.invars
        if pv not in self.const_val:
            return None
        value = uniform_value(self.const_val[pv])
        cfg = e.params["padding_config"]
        axes = [i for i, (lo, hi, interior) in enumerate(cfg) if lo or hi or interior]
        if len(axes) != 1:
            return None
        ax = axes[0]
        lo, hi, interior = cfg[ax]
        if not is_value(value, 0) or interior or lo < 0 or hi < 0:  # (a sum of other paddings is no concatenation)
            return None
        return ax, lo, lo + x.aval.shape[ax], x, value


def _signs(z) -> tuple:
    z = np.asarray(z)
    if z.dtype.kind == "c":
        return bool(np.signbit(z.real)), bool(np.signbit(z.imag))
    return (bool(np.signbit(z)),) if z.dtype.kind == "f" else ()


def _same(a, b) -> bool:
    return a.dtype == b.dtype and a == b and _signs(a) == _signs(b)


def _concatenation(trees: _Trees, root: Eqn, constvars: list, consts: list, absorbed: set):
    """The equations computing root's output as one concatenation, or None."""
    leaves, inner_adds = [], []
    trees.leaves(root, leaves, inner_adds)
    if len(leaves) < 2:
        return None
    blocks = [trees.block(v) for v in leaves]
    if any(b is None for b in blocks):
        return None
    ax, value = blocks[0][0], blocks[0][4]
    if any(b[0] != ax or not _same(b[4], value) for b in blocks):
        return None
    out = root.outvars[0]
    aval = out.aval
    blocks.sort(key=lambda b: b[1])
    pieces, at = [], 0
    for _, start, stop, x, _ in blocks:
        if start < at:
            return None  # overlapping blocks
        if start > at:
            pieces.append(_filler(aval, ax, start - at, value, constvars, consts))
        pieces.append(x)
        at = stop
    if at < aval.shape[ax]:
        pieces.append(_filler(aval, ax, aval.shape[ax] - at, value, constvars, consts))
    absorbed.update(id(a) for a in inner_adds)  # (dead now: dce drops them)
    if aval.dtype.kind not in "fc" or all(_signs(value)):  # (integers; a -0.0 padding adds nothing)
        return [Eqn(concatenate_p, pieces, [out], {"dimension": ax})]
    joined = Var(aval)
    zero = _filler(aval, ax, aval.shape[ax], value, constvars, consts)
    return [Eqn(concatenate_p, pieces, [joined], {"dimension": ax}), Eqn(add_p, [joined, zero], [out], {})]


def _filler(aval: ShapedArray, ax: int, n: int, value, constvars: list, consts: list) -> Var:
    """A constant of aval's dtype holding `value`, n long along ax (a zero-stride broadcast: no memory)."""
    shape = tuple(n if i == ax else s for i, s in enumerate(aval.shape))
    buf = np.broadcast_to(np.asarray(value, aval.dtype), shape)
    v, arr = new_const(buf, ShapedArray(shape, aval.dtype, False))
    constvars.append(v)
    consts.append(arr)
    return v


def sum_of_pads(jaxpr: Jaxpr) -> Jaxpr:
    """Rewrite every qualifying add tree of pads (see the module docstring) into one concatenation."""
    if not any(e.prim.name == "pad" for e in jaxpr.eqns):
        return jaxpr
    trees = _Trees(jaxpr)
    constvars, consts = list(jaxpr.constvars), list(jaxpr.consts)
    absorbed = set()  # ids of the inner adds of a tree already tried as part of a larger one
    rewritten = {}  # id(root add) -> its replacement equations
    for e in reversed(jaxpr.eqns):
        if e.prim.name != "add" or id(e) in absorbed:
            continue
        todo = [e]
        while todo:
            root = todo.pop()
            new = _concatenation(trees, root, constvars, consts, absorbed)
            if new is not None:
                rewritten[id(root)] = new
                continue
            for v in root.invars:  # try the subtrees on their own
                inner = trees.inner_add(v)
                if inner is not None:
                    absorbed.add(id(inner))
                    todo.append(inner)
    if not rewritten:
        return jaxpr
    eqns = []
    for e in jaxpr.eqns:
        eqns.extend(rewritten.get(id(e), (e,)))
    return rebuild(jaxpr, eqns, constvars=constvars, consts=consts)


__all__ = ["sum_of_pads"]
