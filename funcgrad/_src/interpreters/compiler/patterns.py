"""Code-generation rewrites: multi-equation patterns replaced by one cheaper, compiler-internal operation.

These run in `lower` after the optimisation passes, on the jaxpr that code generation sees and never on
one that is differentiated or batched again, so the operations they introduce need no derivative rules
(they are not registered primitives).

max / min derivative (relu's backward). The vjp of z = max(x, y) weighs the cotangent g as JAX does,
1 where x alone attains z, 1/2 where x and y tie, 0 elsewhere, spelled in seven elementwise equations:

    bx = eq x z;  fx = convert bx;  by = eq y z;  fy = convert by;  d = add 1 fy;  w = div fx d;  r = mul g w

Because z is max(x, y) of these very operands, x == z exactly when x > y or x == y (a NaN on either side
makes z NaN and every comparison false), so r = g * ([x > y] + 1/2 [x == y]): `extremum_grad` computes
that as one comparison and one product, and touches ties only where there are any:

    r = extremum_grad[kind=max] g x y

The product keeps the rule's arithmetic exactly: g * 1, g * 0 (-0.0, or NaN for an infinite g) and g * 0.5.
The native tier (native_ops.py) lowers it into its loops as one select per element, fused with what reads
it (an MLP's bias gradient sums it in the same region).
"""
from __future__ import annotations

import numpy as np

from ...core.aval import ShapedArray
from ...core.jaxpr import Eqn, Jaxpr, Var
from ...core.primitive import Primitive
from ._ir import is_value, producers, rebuild, uniform_value


def _extremum_grad_impl(xp):
    def f(g, x, y, *, kind):
        wins = xp.greater(x, y) if kind == "max" else xp.less(x, y)
        if xp is np and wins.ndim:
            # the weights as g's float type first, then a float product: the same g * 1 / g * 0 as
            # multiply(g, wins), whose mixed bool-float loop casts element by element (~2x slower)
            out = np.empty(np.broadcast_shapes(np.shape(g), wins.shape), g.dtype)
            np.copyto(out, wins, casting="unsafe")
            np.multiply(g, out, out=out)
        else:
            out = xp.multiply(g, wins)
        tie = xp.equal(x, y)
        if tie.any():
            if xp is np and out.ndim:
                np.multiply(g, 0.5, out=out, where=tie)
            else:  # 0-d operands give a NumPy scalar, which takes no out=
                out = xp.where(tie, g * 0.5, out)
        return xp.asarray(out)
    return f


def _extremum_grad_rule(g: ShapedArray, x: ShapedArray, y: ShapedArray, *, kind) -> ShapedArray:
    return ShapedArray(g.shape, g.dtype, g.weak_type)


extremum_grad_p = Primitive("extremum_grad", impl=_extremum_grad_impl, abstract_eval=_extremum_grad_rule,
                            differentiable=False, register=False)


class _Matcher:
    def __init__(self, jaxpr: Jaxpr):
        self.prod = producers(jaxpr.eqns)
        self.const_val = dict(zip(jaxpr.constvars, jaxpr.consts))

    def only(self, v: Var, name: str):
        """The equation `name` that produced v (None if another did). Intermediates read elsewhere too
        (max's two masks serve both operands' weights) stay; dce drops those read nowhere else."""
        e = self.prod.get(v)
        if e is None or e.prim.name != name:
            return None
        return e

    def is_one(self, v: Var) -> bool:
        if v in self.const_val:
            return is_value(uniform_value(self.const_val[v]), 1)
        e = self.prod.get(v)
        if e is not None and e.prim.name == "broadcast_in_dim" and e.invars[0] in self.const_val:
            return is_value(uniform_value(self.const_val[e.invars[0]]), 1)
        return False

    def same(self, u: Var, v: Var) -> bool:
        """u and v hold the same value: one variable, or two uniform constants of one value and type
        (the eager layer caches a broadcast scalar per use, so max's 0 and the tie test's 0 can differ)."""
        if u is v:
            return True
        cu, cv = self.const_val.get(u), self.const_val.get(v)
        if cu is None or cv is None or u.aval.shape != v.aval.shape or u.aval.dtype != v.aval.dtype:
            return False
        # (no size limit: an eager conversion of a broadcast zero, as the tie test's promotion makes,
        # is a materialised array; checking it once at compile time is cheap next to what it saves)
        a, b = uniform_value(cu, limit=cu.size), uniform_value(cv, limit=cv.size)
        return a is not None and b is not None and (a == b and np.signbit(a) == np.signbit(b))

    def mask(self, v: Var, dtype):
        """(a, z) when v = convert(eq(a, z)) to `dtype`."""
        c = self.only(v, "convert_element_type")
        if c is None or np.dtype(c.params.get("new_dtype")) != dtype:
            return None
        b = self.only(c.invars[0], "eq")
        if b is None:
            return None
        return tuple(b.invars)

    def extremum_weight(self, w: Var, dtype):
        """(kind, x, y) when w is the tie-splitting weight of x in z = max/min(x, y)."""
        d = self.only(w, "div")
        if d is None:
            return None
        num, den = d.invars
        a = self.only(den, "add")
        if a is None:
            return None
        fy = a.invars[1] if self.is_one(a.invars[0]) else a.invars[0] if self.is_one(a.invars[1]) else None
        mx, my = self.mask(num, dtype), self.mask(fy, dtype) if fy is not None else None
        if mx is None or my is None:
            return None
        for z in set(mx) & set(my):
            ze = self.prod.get(z)
            if ze is None or ze.prim.name not in ("max", "min") or ze.params:
                continue
            x = mx[1] if mx[0] is z else mx[0]
            y = my[1] if my[0] is z else my[0]
            p, q = ze.invars
            # (the max's own operands are returned: equal in value to x and y, and a broadcast scalar
            # there stays one for code generation where the tie test's copy may be materialised)
            pair = (p, q) if self.same(x, p) and self.same(y, q) else \
                (q, p) if self.same(x, q) and self.same(y, p) else None
            if pair is not None and all(tuple(v.aval.shape) == tuple(z.aval.shape) and v.aval.dtype == dtype
                                        for v in pair):
                return (ze.prim.name,) + pair
        return None


def rewrite_extremum_grads(jaxpr: Jaxpr) -> Jaxpr:
    """Replace each g * (max/min tie weight) by one `extremum_grad` (see the module docstring).

    The replaced intermediates are left for dce to drop."""
    if not any(e.prim.name in ("max", "min") for e in jaxpr.eqns):
        return jaxpr
    m = _Matcher(jaxpr)
    eqns = []
    changed = False
    for e in jaxpr.eqns:
        if e.prim.name == "mul" and not e.params:
            out = e.outvars[0]
            dt = out.aval.dtype
            if dt.kind == "f":
                for i in (1, 0):
                    g, w = e.invars[1 - i], e.invars[i]
                    if tuple(g.aval.shape) != tuple(out.aval.shape) or g.aval.dtype != dt:
                        continue
                    hit = m.extremum_weight(w, dt)
                    if hit is not None:
                        kind, x, y = hit
                        e = Eqn(extremum_grad_p, [g, x, y], [out], {"kind": kind})
                        changed = True
                        break
        eqns.append(e)
    return rebuild(jaxpr, eqns) if changed else jaxpr


__all__ = ["extremum_grad_p", "rewrite_extremum_grads"]
