"""jax.interpreters.mlir's registration entry points. funcgrad compiles a primitive by calling its impl,
so a lowering rule is accepted and not used."""
from __future__ import annotations

_lowerings: dict = {}


def register_lowering(prim, rule, platform: str | None = None) -> None:
    _lowerings[(prim, platform)] = rule


def lower_fun(fun, multiple_results: bool = True):
    """The lowering rule that would trace `fun` (kept for register_lowering; never run here)."""
    return fun
