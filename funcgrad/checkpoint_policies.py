"""funcgrad.checkpoint_policies: JAX's names for rematerialisation policies.

A policy says which intermediates of a `checkpoint`-ed function may be saved for the backward pass
instead of recomputed: `policy(prim, *avals, **params) -> bool`. funcgrad's checkpoint accepts them
but always recomputes everything (the results are the same; only memory and time differ), so these
exist for JAX programs that pass them.
"""
from __future__ import annotations

from typing import Callable

__all__ = ["everything_saveable", "nothing_saveable", "dots_saveable", "checkpoint_dots",
           "dots_with_no_batch_dims_saveable", "checkpoint_dots_with_no_batch_dims", "save_only_these_names",
           "save_anything_except_these_names", "save_any_names_but_these", "save_from_both_policies",
           "checkpoint_name", "save_and_offload_only_these_names", "offload_dot_with_no_batch_dims"]


def everything_saveable(*args, **kwargs) -> bool:
    """Save every intermediate (no recomputation)."""
    return True


def nothing_saveable(*args, **kwargs) -> bool:
    """Save nothing (recompute every intermediate)."""
    return False


def dots_saveable(prim, *avals, **params) -> bool:
    """Save the results of matrix products (dot_general)."""
    return getattr(prim, "name", prim) == "dot_general"


checkpoint_dots = dots_saveable


def dots_with_no_batch_dims_saveable(prim, *avals, **params) -> bool:
    """Save the results of matrix products without batch dimensions."""
    if getattr(prim, "name", prim) != "dot_general":
        return False
    dims = params.get("dimension_numbers")
    return dims is None or not dims[1][0]


checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


def _names_policy(keep: bool, names) -> Callable:
    names = frozenset(names)

    def policy(prim, *avals, **params) -> bool:
        if getattr(prim, "name", prim) != "name":
            return False
        return (params.get("name") in names) == keep
    return policy


def save_only_these_names(*names) -> Callable:
    """Save only the values tagged with checkpoint_name(x, name) for these names."""
    return _names_policy(True, names)


def save_anything_except_these_names(*names) -> Callable:
    """Save every tagged value except those with these names."""
    return _names_policy(False, names)


save_any_names_but_these = save_anything_except_these_names


def save_from_both_policies(policy_1: Callable, policy_2: Callable) -> Callable:
    """Save what either policy saves."""
    return lambda *args, **kwargs: bool(policy_1(*args, **kwargs) or policy_2(*args, **kwargs))


def save_and_offload_only_these_names(*, names_which_can_be_saved, names_which_can_be_offloaded,
                                      offload_src=None, offload_dst=None) -> Callable:
    """Save the tagged values named in either list (funcgrad has no host offloading: an offloadable
    value is simply saved)."""
    return _names_policy(True, list(names_which_can_be_saved) + list(names_which_can_be_offloaded))


def offload_dot_with_no_batch_dims(offload_src=None, offload_dst=None) -> Callable:
    """As dots_with_no_batch_dims_saveable (offloading to the host is saving, here)."""
    return dots_with_no_batch_dims_saveable


def checkpoint_name(x, name: str):
    """Tag x with a name for the policies above (the identity on values)."""
    return x
