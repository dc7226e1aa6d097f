"""Helpers shared by the passes: building jaxprs, renaming variables, reading constants.

A pass never mutates its input: it builds new `Eqn`s (reusing `Var`s, which are immutable) and a new
`Jaxpr`, so `optimize(j)` leaves `j` printing exactly as before.
"""
from __future__ import annotations

import numpy as np

from ...core.array import Array, wrap
from ...core.aval import ShapedArray
from ...core.jaxpr import Eqn, Jaxpr, Var

# Primitives that carry a jaxpr and simply run it (their impl is "evaluate params['jaxpr']").
CALL_PRIMS = ("pjit", "custom_jvp_call", "custom_vjp_call", "remat")

# Structural primitives whose result is a reshaping of the operand's data (same elements, same order).
RESHAPES = ("reshape", "squeeze", "expand_dims")


def is_call(eqn: Eqn) -> bool:
    return bool(getattr(eqn.prim, "is_call", False))


def replace_outvars_ok(old: Var, new: Var, outvars: set) -> bool:
    """Whether every read of `old` may read `new` instead: same shape and dtype, and, when `old` is an
    output of the jaxpr, the same weak type (the weak type of an output is visible to the caller)."""
    a, b = old.aval, new.aval
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return old not in outvars or a.weak_type == b.weak_type


class Renamer:
    """A substitution of variables, applied to equation inputs and outputs as a pass goes."""
    __slots__ = ("map",)

    def __init__(self):
        self.map = {}

    def __call__(self, v: Var) -> Var:
        m = self.map
        while v in m:
            v = m[v]
        return v

    def set(self, old: Var, new: Var) -> None:
        if old is not new:
            self.map[old] = new

    def eqn(self, e: Eqn) -> Eqn:
        """`e` with its inputs renamed (the same object when nothing changes)."""
        ins = [self(v) for v in e.invars]
        if all(a is b for a, b in zip(ins, e.invars)):
            return e
        return Eqn(e.prim, ins, e.outvars, e.params)


def rebuild(jaxpr: Jaxpr, eqns, outvars=None, constvars=None, consts=None, invars=None) -> Jaxpr:
    return Jaxpr(jaxpr.constvars if constvars is None else constvars,
                 jaxpr.consts if consts is None else consts,
                 jaxpr.invars if invars is None else invars, eqns,
                 jaxpr.outvars if outvars is None else outvars)


def new_const(value, aval: ShapedArray) -> tuple[Var, Array]:
    """A fresh constant variable holding `value` (a backend buffer or Array) with abstract value `aval`."""
    arr = value if isinstance(value, Array) else wrap(value, aval.weak_type)
    return Var(aval, arr, is_const=True), arr


def buffer_of(c):
    return c._buf if isinstance(c, Array) else c


def uniform_value(c, limit: int = 4096):
    """The single value every element of the constant `c` holds, as a NumPy scalar, or None.

    Cheap: a size-1 constant, a broadcast (all strides 0) or a small array checked elementwise."""
    buf = buffer_of(c)
    if not isinstance(buf, (np.ndarray, np.generic)):
        return None
    buf = np.asarray(buf)
    if buf.size == 0:
        return None
    first = buf.reshape(-1)[0] if buf.flags.c_contiguous or buf.ndim <= 1 else buf[(0,) * buf.ndim]
    if buf.size == 1 or all(s == 0 for s in buf.strides):
        return first
    if buf.size <= limit:
        with np.errstate(all="ignore"):
            same = buf == first
            if buf.dtype.kind in "fc" and first != first:  # NaN: compare NaN-ness instead
                same = buf != buf
        if bool(np.all(same)):
            return first
    return None


def is_value(x, target) -> bool:
    """Whether the scalar x equals `target` exactly (and is not NaN); complex parts compared too."""
    if x is None:
        return False
    try:
        return bool(x == target) and not (isinstance(x, (float, np.floating)) and x != x)
    except Exception:  # noqa: BLE001
        return False


def uses(jaxpr: Jaxpr) -> dict:
    """var -> number of equation inputs (and outputs of the jaxpr) that read it."""
    n = {}
    for e in jaxpr.eqns:
        for v in e.invars:
            n[v] = n.get(v, 0) + 1
    for v in jaxpr.outvars:
        n[v] = n.get(v, 0) + 1
    return n


def producers(eqns) -> dict:
    return {v: e for e in eqns for v in e.outvars}


# Pointwise primitives: one output, every operand of the output's shape, element i of the output a
# function of element i of the operands only. (Fusion and folding rely on this.)
ELEMENTWISE = frozenset((
    "neg exp exp2 log log2 log10 log1p expm1 logistic sin cos tan asin acos atan sinh cosh tanh asinh "
    "acosh atanh sqrt rsqrt cbrt square abs sign stop_gradient floor ceil round nextafter is_finite not "
    "and or xor shift_left shift_right_arithmetic shift_right_logical population_count add sub mul div "
    "rem pow max min atan2 integer_pow clamp real imag conj complex eq ne lt le gt ge select "
    "convert_element_type erf erfc erf_inv lgamma digamma polygamma random_gamma_grad").split())
