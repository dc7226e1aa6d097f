"""jax.ad_checkpoint's names: checkpoint (remat), checkpoint_name, the policies, and
print_saved_residuals.

funcgrad's checkpoint recomputes the whole checkpointed function in the backward pass whatever the
policy (results are identical; only memory and time differ)."""
from __future__ import annotations

from . import checkpoint_policies
from .checkpoint_policies import checkpoint_name
from ._src.core.tree_util import tree_flatten
from ._src.interpreters.custom import checkpoint, remat


class Saveable:
    """A policy's answer: keep this value for the backward pass."""


class Recompute:
    """A policy's answer: recompute this value in the backward pass."""


class Offloadable:
    """A policy's answer: keep this value, moved to another memory (funcgrad keeps it in place)."""

    def __init__(self, src=None, dst=None):
        self.src, self.dst = src, dst


def saved_residuals(f, *args, **kwargs) -> list:
    """[(aval, description)] for the values reverse mode keeps from f's forward pass: every argument
    leaf, and the output of each equation of f's jaxpr (funcgrad's tape keeps what it records; inside a
    checkpoint only the checkpoint's inputs)."""
    from ._src.interpreters.jit import make_jaxpr
    jaxpr = make_jaxpr(lambda *a: f(*a, **kwargs))(*args)
    leaves, _ = tree_flatten(args)
    out = [(v.aval, f"from the argument {i}") for i, v in enumerate(jaxpr.invars)]
    for e in jaxpr.eqns:
        for v in e.outvars:
            out.append((v.aval, f"output of {e.prim.name}"))
    return out


def print_saved_residuals(f, *args, **kwargs) -> None:
    """Print saved_residuals(f, *args): one line per kept value, its type and where it comes from."""
    for aval, where in saved_residuals(f, *args, **kwargs):
        print(aval.str_short(), where)


__all__ = ["checkpoint", "remat", "checkpoint_name", "checkpoint_policies", "print_saved_residuals",
           "saved_residuals", "Saveable", "Recompute", "Offloadable"]
