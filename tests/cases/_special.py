"""Where a primitive is defined at special points: the declaration a case module gives in `SPECIAL`.

The registry-wide property tests (tests/test_primitive_properties.py) also run vjp-vs-jvp, vmap-vs-loop,
jit-vs-eager and jvp-vs-finite-differences on inputs drawn from funcgrad.testing.strategies'
special values (0, -0.0, +-1, +-0.5, +-2, the smallest normal number, eps, the primitive's bounds):
the case's own draw, with a random non-empty subset of each floating operand's entries replaced by
special values of the operand's kind. A primitive without a SPECIAL entry gets `Special()`: every
floating operand takes "real" special values and finite differences run at all of them, so a case
module must declare where that is wrong (a domain, kinks, or fd=False with the reason).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

# A domain edge is not a place for central differences (the step leaves the domain); nor is a kink.
EDGES = {"real": (), "nonnegative": (0.0,), "positive": (0.0,), "unit": (-1.0, 1.0), "nonzero": (0.0,)}
FD_CLEARANCE = 1e-3  # central differences (step 1e-5) only at special values this far from edges and kinks


@dataclass(frozen=True)
class Special:
    """A primitive's special-points declaration.

    kinds: a funcgrad.testing.strategies.special_values kind ("real", "nonnegative", "positive", "unit",
        "nonzero") for every floating operand, or a tuple with one per operand (None: the operand keeps
        the case's values, e.g. the structure a case builds), or a tuple of floats: the special values of
        an operand whose domain is none of the kinds (betainc's x in [0, 1]).
    kinks: values where the function is not smooth (kept among the special points; excluded from the
        finite-difference check only). bounds: more special values (a clamp's bounds).
    ties: operand pairs (i, j): at random entries operand j is set equal to operand i (max/min ties;
        pair kinks, so not in the finite-difference draw).
    fd: False where the function has kinks that depend on several operands or entries (ties of a
        reduction, multiples in rem), so finite differences are not checked at special points; `why`
        says so. case: a case generator at special points (singular matrices, ...) used instead of
        replacing entries, for primitives whose input has a structure (why says which points).
    """
    kinds: str | tuple | None = "real"
    kinks: tuple = ()
    bounds: tuple = ()
    ties: tuple = ()
    fd: bool = True
    why: str = ""
    case: Callable | None = None
    huge: bool = False
    tiny: bool = True  # the smallest normal number and eps among the special values (False: 1/x**2 overflows)
    shift: float = 0.0  # added to the special values (acosh: "nonnegative" shifted to [1, inf))

    def kind_of(self, i: int):
        if isinstance(self.kinds, tuple):
            return self.kinds[i] if i < len(self.kinds) else None
        return self.kinds

    def fd_safe(self, kind, value: float) -> bool:
        """Whether central differences are meaningful at `value` (away from kinks and domain edges)."""
        edges = () if isinstance(kind, tuple) else tuple(e + self.shift for e in EDGES[kind])
        avoid = tuple(self.kinks) + edges
        return all(abs(value - k) > FD_CLEARANCE for k in avoid)
