"""lax functions about the program rather than its values: optimization_barrier and
with_sharding_constraint (identities on one device), platform_dependent (a rule per platform) and
composite (a function marked as one operation)."""
from __future__ import annotations

import functools

from .._src.core.array import Array
from .._src.core.tree_util import tree_leaves, tree_map
from .._src.core.sharding import Sharding

__all__ = ["composite", "optimization_barrier", "platform_dependent", "with_sharding_constraint"]


def optimization_barrier(operand):
    """The identity on a pytree (JAX uses it to stop the compiler moving work across it)."""
    return tree_map(lambda v: v, operand)


def with_sharding_constraint(x, shardings):
    """x unchanged: on one device every sharding is satisfied (a sharding over several devices raises)."""
    for s in tree_leaves(shardings, is_leaf=lambda v: isinstance(v, Sharding)):
        if isinstance(s, Sharding):
            s.single_device("with_sharding_constraint")
    return tree_map(lambda v: v, x)


def platform_dependent(*args, default=None, **per_platform):
    """Call the rule given for the platform the arguments live on (cpu, or cuda / gpu for CuPy arrays),
    else `default` (jax.lax.platform_dependent)."""
    on_gpu = any(isinstance(a, Array) and a.device.platform != "cpu" for a in args)
    names = ("cuda", "gpu") if on_gpu else ("cpu",)
    for n in names:
        if n in per_platform:
            return per_platform[n](*args)
    if default is None:
        raise NotImplementedError(f"platform_dependent: no rule for platform {names[0]!r} and no default")
    return default(*args)


def composite(decomposition, name: str, version: int = 0):
    """A function marked as a composite operation (jax.lax.composite): funcgrad runs, differentiates and
    compiles its decomposition."""
    @functools.wraps(decomposition)
    def call(*args, **kwargs):
        return decomposition(*args, **kwargs)
    call.composite_name, call.composite_version = name, version
    return call
