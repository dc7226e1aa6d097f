"""jax.ad_checkpoint's names: checkpoint (remat), checkpoint_name, the policies, and
print_saved_residuals.

funcgrad's checkpoint recomputes the whole checkpointed function in the backward pass whatever the
policy (results are identical; only memory and time differ)."""
from __future__ import annotations

import inspect

from . import checkpoint_policies
from .checkpoint_policies import checkpoint_name
from ._src.core.tree_util import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten
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
    leaf (positional and keyword, named as JAX names them: `W`, `p['a']`, `rest[0]`), and the output of each
    equation of f's jaxpr (funcgrad's tape keeps what it records; inside a checkpoint only the checkpoint's
    inputs)."""
    from ._src.interpreters.jit import make_jaxpr
    leaves, in_tree = tree_flatten((args, kwargs))

    def f_(*flat):
        a, kw = tree_unflatten(in_tree, list(flat))
        return f(*a, **kw)
    jaxpr = make_jaxpr(f_)(*leaves)
    names = _arg_names(f, args, kwargs)
    out = [(v.aval, f"from the argument {names[i] if names else i}") for i, v in enumerate(jaxpr.invars)]
    for e in jaxpr.eqns:
        for v in e.outvars:
            out.append((v.aval, f"output of {e.prim.name}"))
    return out


def _arg_names(f, args, kwargs) -> list | None:
    """Each argument leaf's name, in tree_flatten((args, kwargs))'s order, as JAX's debug info spells it: the
    parameter's name and the leaf's path in it (`p[1]['b']`; `rest[0]` for *rest, `kw['z']` for **kw).
    None where f has no signature to read."""
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return None
    P = inspect.Parameter
    named = [p.name for p in params if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    var = [p.name for p in params if p.kind is P.VAR_POSITIONAL]
    var_kw = [p.name for p in params if p.kind is P.VAR_KEYWORD]
    names = []
    for i, a in enumerate(args):
        head = named[i] if i < len(named) else f"{var[0]}[{i - len(named)}]" if var else f"args[{i}]"
        names += [head + keystr(path) for path, _ in tree_flatten_with_path(a)[0]]
    for k in sorted(kwargs):  # (a dict flattens in sorted key order)
        head = k if any(p.name == k for p in params) or not var_kw else f"{var_kw[0]}[{k!r}]"
        names += [head + keystr(path) for path, _ in tree_flatten_with_path(kwargs[k])[0]]
    return names


def print_saved_residuals(f, *args, **kwargs) -> None:
    """Print saved_residuals(f, *args): one line per kept value, its type and where it comes from."""
    for aval, where in saved_residuals(f, *args, **kwargs):
        print(aval.str_short(), where)


__all__ = ["checkpoint", "remat", "checkpoint_name", "checkpoint_policies", "print_saved_residuals",
           "saved_residuals", "Saveable", "Recompute", "Offloadable"]
