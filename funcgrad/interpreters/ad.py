"""jax.interpreters.ad for user primitives: `primitive_jvps[p] = rule` with
rule(primals, tangents, **params) -> (primal_out, tangent_out), where a tangent not being computed
is a `Zero`; `primitive_transposes[p] = rule` with rule(ct, *args, **params) -> one cotangent per
argument (None for the non-linear ones), the linear arguments arriving as `UndefinedPrimal`s. Reverse
mode through a user primitive transposes its jvp's tangent computation with these rules (and with the
library's own rules for its primitives), as JAX does."""
from __future__ import annotations

primitive_jvps: dict = {}
primitive_transposes: dict = {}


class Zero:
    """A symbolic zero tangent or cotangent of abstract value `aval`."""

    def __init__(self, aval):
        self.aval = aval

    @staticmethod
    def from_primal_value(x):
        from .._src.core.array import get_aval
        return Zero(get_aval(x))

    def instantiate(self):
        from .._src.prims.shape import full
        return full(self.aval.shape, 0, self.aval.dtype)

    def __repr__(self) -> str:
        return f"Zero({self.aval})"


class UndefinedPrimal:
    """Stands for a linear argument of a primitive being transposed."""

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval})"


def is_undefined_primal(x) -> bool:
    return isinstance(x, UndefinedPrimal)


def instantiate_zeros(t):
    return t.instantiate() if isinstance(t, Zero) else t


def defjvp(primitive, *jvp_rules) -> None:
    """One rule per argument, rule(tangent, *primals, **params) -> that argument's contribution."""
    def rule(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        total = None
        for r, t in zip(jvp_rules, tangents):
            if r is None or isinstance(t, Zero):
                continue
            c = r(t, *primals, **params)
            total = c if total is None else total + c
        return out, (Zero.from_primal_value(out) if total is None else total)
    primitive_jvps[primitive] = rule


def deflinear(primitive, transpose_rule) -> None:
    """A primitive linear in all its arguments: its jvp applies it to the tangents, and
    transpose_rule(ct, **params) gives the cotangents."""
    def jvp(primals, tangents, **params):
        ts = [instantiate_zeros(t) for t in tangents]
        return primitive.bind(*primals, **params), primitive.bind(*ts, **params)
    primitive_jvps[primitive] = jvp
    primitive_transposes[primitive] = lambda ct, *args, **params: transpose_rule(ct, **params)
