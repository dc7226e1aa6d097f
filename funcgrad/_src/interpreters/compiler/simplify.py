"""Algebraic simplification: rewrite equations into cheaper equivalents, or into nothing.

    before: { lambda ; a:f32[3]. let b:f32[3] = neg a; c:f32[3] = neg b
                                     d:f32[3] = broadcast_in_dim[broadcast_dimensions=(), shape=(3,)] -0.0
                                     e:f32[3] = add c d in (e,) }
    after:  { lambda ; a:f32[3]. let  in (a,) }          (after dce)

Rules (x, y variables; "0", "1" any operand known to hold that one value everywhere: a constant, a
`full`, or a broadcast / reshape / transpose / convert of one):
  x * 1, 1 * x, x / 1, x + 0, 0 + x, x - 0, x ** 1, integer_pow(x, 1)  -> x   (for floats, the zero
                                                 added must be -0 and the zero subtracted +0: -0 + +0 is +0)
  x * 0, 0 * x, x & 0, x - x            -> 0    for integers and bools only: for floats x * 0 is NaN
                                                 when x is inf or NaN, and x - x is NaN for inf
  x & True, x | False, x ^ False, x | 0, x ^ 0, max(x, x), min(x, x), x & x, x | x -> x
  select(p, x, x), select(True, x, y) -> x;   select(False, x, y) -> y
  neg(neg x), not(not x), conj(conj x)      -> x
  transpose(transpose(x, p), q)             -> transpose(x, p o q), or x for the identity
  transpose(dot_general(a, b)) swapping the two operands' free dimensions -> dot_general(b, a)
  dot_general(transpose(a), b) -> dot_general(a, b) with the dimension numbers mapped (order kept)
  reshape/squeeze/expand_dims chains        -> one reshape, or x when the shape comes back
  broadcast_in_dim(broadcast_in_dim(x))     -> one broadcast_in_dim; a broadcast to x's own shape -> x
  convert(x) to x's dtype, convert(convert(x, wider), x.dtype) -> x
  reduce_sum/max/min/prod over axes of size 1 -> reshape
A variable is only replaced by one of the same shape and dtype (and, for an output of the jaxpr, the
same weak type). Rewrites keep the jaxpr differentiable: jit differentiates optimised jaxprs.
"""
from __future__ import annotations

import numpy as np

from ...core.jaxpr import Eqn, Jaxpr, Var
from ...core.primitive import registry
from ._ir import RESHAPES, Renamer, is_value, new_const, rebuild, replace_outvars_ok, uniform_value, uses

_VIEWS_OF_ONE_VALUE = ("broadcast_in_dim", "reshape", "squeeze", "expand_dims", "transpose", "rev")


class _Simplifier:
    def __init__(self, jaxpr: Jaxpr):
        self.jaxpr = jaxpr
        self.outset = set(jaxpr.outvars)
        self.rename = Renamer()
        self.constvars, self.consts = list(jaxpr.constvars), list(jaxpr.consts)
        self.const_val = dict(zip(jaxpr.constvars, jaxpr.consts))
        self.prod = {}
        self.eqns = []
        self._known = {}
        self.changed = False

    # --- facts about variables ---------------------------------------------------------------
    def known(self, v: Var):
        """The one value every element of v holds, when that is known at compile time (else None)."""
        if v in self._known:
            return self._known[v]
        val = None
        if v in self.const_val:
            val = uniform_value(self.const_val[v])
        else:
            e = self.prod.get(v)
            if e is not None:
                name = e.prim.name
                if name in _VIEWS_OF_ONE_VALUE:
                    val = self.known(e.invars[0])
                elif name == "full" and not e.invars:
                    try:
                        val = np.full((), e.params["fill_value"], e.params["dtype"])[()]
                    except Exception:  # noqa: BLE001
                        val = None
                elif name == "convert_element_type":
                    x = self.known(e.invars[0])
                    if x is not None:
                        with np.errstate(all="ignore"):
                            x = np.asarray(x)
                            if x.dtype.kind == "c" and np.dtype(e.params["new_dtype"]).kind != "c":
                                x = x.real
                            val = x.astype(e.params["new_dtype"])[()]
        self._known[v] = val
        return val

    def is_(self, v: Var, target) -> bool:
        return is_value(self.known(v), target)

    def is_zero(self, v: Var, *, negative: bool) -> bool:
        """v is known to be 0; for floating dtypes, a zero of the given sign: x + (-0) and x - (+0) are x
        for every x, but x + (+0) is +0 where x is -0 (IEEE 754)."""
        k = self.known(v)
        if not is_value(k, 0):
            return False
        k = np.asarray(k)
        if k.dtype.kind == "c":
            return bool(np.signbit(k.real)) == negative and bool(np.signbit(k.imag)) == negative
        return k.dtype.kind != "f" or bool(np.signbit(k)) == negative

    # --- rewriting ---------------------------------------------------------------------------
    def alias(self, out: Var, x: Var) -> bool:
        if replace_outvars_ok(out, x, self.outset):
            self.rename.set(out, x)
            self.changed = True
            return True
        return False

    def constant(self, out: Var, value) -> bool:
        a = out.aval
        buf = np.broadcast_to(np.full((), value, a.dtype), a.shape)
        v, c = new_const(buf, a)
        self.constvars.append(v)
        self.consts.append(c)
        self.const_val[v] = c
        return self.alias(out, v)

    def emit(self, prim_name: str, ins, out: Var, **params) -> bool:
        e = Eqn(registry[prim_name], ins, [out], params)
        self.eqns.append(e)
        self.prod[out] = e
        self.changed = True
        return True

    def reshape_to(self, out: Var, x: Var) -> bool:
        if out.aval.shape == x.aval.shape:
            return self.alias(out, x)
        return self.emit("reshape", [x], out, new_sizes=tuple(out.aval.shape))

    def rule(self, e: Eqn) -> bool:
        """Try to rewrite e; True when it was replaced (by an alias, a constant or new equations)."""
        name = e.prim.name
        if e.prim.multiple_results or len(e.outvars) != 1:
            return False
        out = e.outvars[0]
        ins = e.invars
        kind = out.aval.dtype.kind
        exact = kind in "iub"  # integer / bool arithmetic: no inf or NaN
        if name == "add" and len(ins) == 2:
            x, y = ins
            if self.is_zero(y, negative=True) and self.alias(out, x):
                return True
            if self.is_zero(x, negative=True) and self.alias(out, y):
                return True
        elif name == "sub" and len(ins) == 2:
            x, y = ins
            if self.is_zero(y, negative=False) and self.alias(out, x):
                return True
            if exact and x is y:
                return self.constant(out, 0)
        elif name == "mul" and len(ins) == 2:
            x, y = ins
            if self.is_(y, 1) and self.alias(out, x):
                return True
            if self.is_(x, 1) and self.alias(out, y):
                return True
            if exact and (self.is_(x, 0) or self.is_(y, 0)):
                return self.constant(out, 0)
        elif name in ("div", "pow") and len(ins) == 2:
            if self.is_(ins[1], 1) and self.alias(out, ins[0]):
                return True
        elif name == "integer_pow":
            if e.params.get("y") == 1 and self.alias(out, ins[0]):
                return True
        elif name in ("and", "or", "xor") and len(ins) == 2:
            x, y = ins
            if name != "xor" and x is y and self.alias(out, x):
                return True
            for a, b in ((x, y), (y, x)):
                k = self.known(b)
                if k is None:
                    continue
                if name == "and":
                    if kind == "b" and is_value(k, True) and self.alias(out, a):
                        return True
                    if is_value(k, 0):
                        return self.constant(out, 0)
                elif name == "or":
                    if is_value(k, 0) and self.alias(out, a):
                        return True
                    if kind == "b" and is_value(k, True):
                        return self.constant(out, True)
                elif is_value(k, 0) and self.alias(out, a):
                    return True
        elif name in ("max", "min") and len(ins) == 2:
            if ins[0] is ins[1] and self.alias(out, ins[0]):
                return True
        elif name == "select" and len(ins) == 3:
            p, a, b = ins
            if a is b and self.alias(out, a):
                return True
            k = self.known(p)
            if k is not None and self.alias(out, a if bool(k) else b):
                return True
        elif name in ("neg", "not", "conj"):
            pe = self.prod.get(ins[0])
            if pe is not None and pe.prim.name == name and self.alias(out, pe.invars[0]):
                return True
        elif name == "transpose":
            return self.transpose(e, out)
        elif name == "dot_general":
            return self.dot_of_transpose(e, out)
        elif name in RESHAPES:
            x = ins[0]
            pe = self.prod.get(x)
            if pe is not None and pe.prim.name in RESHAPES:
                return self.reshape_to(out, pe.invars[0])
            if pe is not None and pe.prim.name == "broadcast_in_dim" and pe.invars[0].aval.shape == ():
                return self.emit("broadcast_in_dim", [pe.invars[0]], out, shape=tuple(out.aval.shape),
                                 broadcast_dimensions=())
            if out.aval.shape == x.aval.shape and self.alias(out, x):
                return True
        elif name == "broadcast_in_dim":
            x = ins[0]
            shape, dims = tuple(e.params["shape"]), tuple(e.params["broadcast_dimensions"])
            if shape == tuple(x.aval.shape) and dims == tuple(range(len(shape))) and self.alias(out, x):
                return True
            pe = self.prod.get(x)
            if pe is not None and pe.prim.name == "broadcast_in_dim":
                inner = tuple(pe.params["broadcast_dimensions"])
                return self.emit("broadcast_in_dim", [pe.invars[0]], out, shape=shape,
                                 broadcast_dimensions=tuple(dims[d] for d in inner))
        elif name == "convert_element_type":
            x = ins[0]
            if x.aval.dtype == out.aval.dtype and self.alias(out, x):
                return True
            pe = self.prod.get(x)
            if pe is not None and pe.prim.name == "convert_element_type":
                x0 = pe.invars[0]
                if x0.aval.dtype == out.aval.dtype and np.can_cast(x0.aval.dtype, x.aval.dtype, "safe") \
                        and self.alias(out, x0):
                    return True
        elif name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"):
            x = ins[0]
            axes = e.params.get("axes", ())
            if axes and all(x.aval.shape[a] == 1 for a in axes):
                return self.reshape_to(out, x)
        elif name == "slice":
            x = ins[0]
            if out.aval.shape == x.aval.shape and all(s == 0 for s in e.params["start_indices"]) \
                    and all(k == 1 for k in e.params["strides"]) and self.alias(out, x):
                return True
        return False

    def transpose(self, e: Eqn, out: Var) -> bool:
        x = e.invars[0]
        perm = tuple(e.params["permutation"])
        if perm == tuple(range(len(perm))) and self.alias(out, x):
            return True
        pe = self.prod.get(x)
        if pe is None:
            return False
        if pe.prim.name == "transpose":
            inner = tuple(pe.params["permutation"])
            composed = tuple(inner[p] for p in perm)
            if composed == tuple(range(len(composed))):
                return self.alias(out, pe.invars[0])
            return self.emit("transpose", [pe.invars[0]], out, permutation=composed)
        if pe.prim.name == "dot_general" and self.uses.get(x, 0) == 1:
            (lc, rc), (lb, rb) = pe.params["dimension_numbers"]
            a, b = pe.invars
            nb = len(lb)
            na = a.aval.ndim - len(lc) - nb
            nf = b.aval.ndim - len(rc) - nb
            swap = tuple(range(nb)) + tuple(range(nb + na, nb + na + nf)) + tuple(range(nb, nb + na))
            if perm == swap:
                params = dict(pe.params, dimension_numbers=((tuple(rc), tuple(lc)), (tuple(rb), tuple(lb))))
                return self.emit("dot_general", [b, a], out, **params)
        return False

    def dot_of_transpose(self, e: Eqn, out: Var) -> bool:
        """dot_general(transpose(a, p), b) -> dot_general(a, b) with the dimension numbers mapped through
        p (and likewise for b), when the free dimensions keep their order (the result is unchanged)."""
        (lc, rc), (lb, rb) = e.params["dimension_numbers"]
        ins = list(e.invars)
        dims = [[tuple(lc), tuple(lb)], [tuple(rc), tuple(rb)]]
        changed = False
        for k in range(2):
            pe = self.prod.get(ins[k])
            if pe is None or pe.prim.name != "transpose":
                continue
            perm = tuple(pe.params["permutation"])
            c, b = dims[k]
            free = [i for i in range(len(perm)) if i not in c and i not in b]
            mapped_free = [perm[i] for i in free]
            if mapped_free != sorted(mapped_free):
                continue
            dims[k] = [tuple(perm[i] for i in c), tuple(perm[i] for i in b)]
            ins[k] = pe.invars[0]
            changed = True
        if not changed:
            return False
        dn = ((dims[0][0], dims[1][0]), (dims[0][1], dims[1][1]))
        return self.emit("dot_general", ins, out, **dict(e.params, dimension_numbers=dn))

    def run(self) -> Jaxpr:
        self.uses = uses(self.jaxpr)
        for e in self.jaxpr.eqns:
            e = self.rename.eqn(e)
            if not self.rule(e):
                self.eqns.append(e)
                for v in e.outvars:
                    self.prod[v] = e
        if not self.changed:
            return self.jaxpr
        return rebuild(self.jaxpr, self.eqns, [self.rename(v) for v in self.jaxpr.outvars],
                       self.constvars, self.consts)


def simplify(jaxpr: Jaxpr) -> Jaxpr:
    """Algebraic simplification (see the module docstring). Leaves dead producers for `dce`."""
    return _Simplifier(jaxpr).run()


__all__ = ["simplify"]
