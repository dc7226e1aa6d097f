"""funcgrad.custom_batching: JAX's custom_vmap (a function with its own vmap rule) and sequential_vmap.

A custom_vmap function is recorded as one call primitive holding the function's jaxpr (used to evaluate
it, to differentiate it and under jit) and the user's rule, which its batch rule applies:
`rule(axis_size, in_batched, *args) -> (out, out_batched)`, where in_batched / out_batched are pytrees
of bools shaped like the arguments / outputs, and batched values carry the batch axis first.
"""
from __future__ import annotations

import functools
from typing import Callable

from .. import numpy as jnp
from .._src.core.array import ArrayBase, get_aval
from .._src.core.jaxpr import eval_jaxpr
from .._src.core.primitive import Primitive
from .._src.core.trace import hoist_tracer_consts, transform_active
from .._src.core.tree_util import broadcast_prefix, tree_flatten, tree_map, tree_unflatten
from .._src.interpreters import compiler
from .._src.interpreters.ad import jvp, vjp
from .._src.interpreters.batching import trace_to_jaxpr
from .._src.interpreters.custom import _batched_jaxpr, _zeros
from .._src.prims._util import batch_size
from .._src.prims.shape import to_front

__all__ = ["custom_vmap", "sequential_vmap"]


def _call_vjp(cts, ans, args, needs, *, jaxpr, rule, in_tree, n_consts, name):
    cts = [_zeros(av) if c is None else c for c, av in zip(cts, jaxpr.out_avals)]
    _, pull = vjp(lambda *a: eval_jaxpr(jaxpr, *a), *args)
    return list(pull(cts))


def _call_jvp(args, tangents, ans, *, jaxpr, rule, in_tree, n_consts, name):
    ts = [_zeros(get_aval(a)) if t is None else t for a, t in zip(args, tangents)]
    return list(jvp(lambda *a: eval_jaxpr(jaxpr, *a), list(args), ts)[1])


def _call_batch(args, dims, *, jaxpr, rule, in_tree, n_consts, name):
    if any(d is not None for d in dims[:n_consts]):
        # a batched value the function closes over: the rule cannot see it, so batch the body instead
        size = batch_size(args, dims)
        args = [to_front(a, d, size) if d is not None else a for a, d in zip(args, dims)]
        bj = _batched_jaxpr(jaxpr, args, [0 if d is not None else None for d in dims])
        outs = eval_jaxpr(bj, *args)
        return list(outs), [0] * len(outs)
    size = batch_size(args, dims)
    consts, leaves = list(args[:n_consts]), list(args[n_consts:])
    ldims = list(dims[n_consts:])
    leaves = [to_front(a, d, size) if d is not None else a for a, d in zip(leaves, ldims)]
    in_batched = tree_unflatten(in_tree, [d is not None for d in ldims])
    out, out_batched = rule(size, list(in_batched), *tree_unflatten(in_tree, leaves))
    o_leaves, o_tree = tree_flatten(out)
    b_leaves = _broadcast_flags(out_batched, out, name)
    return o_leaves, [0 if b else None for b in b_leaves]


def _broadcast_flags(flags, out, name):
    try:
        return [bool(b) for b in broadcast_prefix(flags, out, "out_batched")]
    except (ValueError, TypeError):
        raise ValueError(f"custom_vmap rule of {name}: out_batched {flags!r} must match the structure of its "
                         "output") from None


def _jaxpr_impl(xp):
    def run(*bufs, jaxpr, **params):
        compiled = jaxpr._cache.get("compiled")
        if compiled is None:
            compiled = jaxpr._cache["compiled"] = compiler.compile_jaxpr(jaxpr)
        return compiled(*bufs)
    return run


def _jaxpr_rule(*avals, jaxpr, **params):
    return list(jaxpr.out_avals)


custom_vmap_call_p = Primitive("custom_vmap_call", impl=_jaxpr_impl, abstract_eval=_jaxpr_rule,
                               jvp_full=_call_jvp, vjp_full=_call_vjp, batch=_call_batch,
                               multiple_results=True, register=False)
custom_vmap_call_p.is_call = True


class custom_vmap:
    """A function with a user-supplied vmap rule: `f.def_vmap(rule)`, with
    rule(axis_size, in_batched, *args) -> (out, out_batched). Differentiation goes through the function
    itself (its rule is used only for batching)."""

    def __init__(self, fun: Callable):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule = None

    def def_vmap(self, vmap_rule: Callable) -> Callable:
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TypeError("custom_vmap functions take positional arguments only")
        if self.vmap_rule is None:
            raise AttributeError(f"No batching rule defined for custom_vmap function {self.__name__}; "
                                 "call .def_vmap(rule) first")
        if not transform_active():
            return self.fun(*args)
        leaves, in_tree = tree_flatten(args)
        leaves = [a if isinstance(a, ArrayBase) else jnp.asarray(a) for a in leaves]
        store = []

        def flat(*ls):
            out = self.fun(*tree_unflatten(in_tree, ls))
            o_leaves, o_tree = tree_flatten(out)
            store.append(o_tree)
            return o_leaves

        jaxpr = trace_to_jaxpr(flat, [get_aval(x) for x in leaves], "custom_vmap")
        (jaxpr,), hoisted = hoist_tracer_consts([jaxpr])
        outs = custom_vmap_call_p.bind(*hoisted, *leaves, jaxpr=jaxpr, rule=self.vmap_rule, in_tree=in_tree,
                                       n_consts=len(hoisted), name=self.__name__)
        return tree_unflatten(store[-1], outs)


def sequential_vmap(f: Callable) -> custom_vmap:
    """f as a custom_vmap function whose vmap runs f once per batch member, in order (a Python loop),
    and stacks the results."""

    g = custom_vmap(f)

    @g.def_vmap
    def rule(axis_size, in_batched, *args):
        flags = tree_flatten(in_batched)[0]
        leaves, tree = tree_flatten(args)
        outs = []
        for i in range(axis_size):
            member = [a[i] if b else a for a, b in zip(leaves, flags)]
            outs.append(f(*tree_unflatten(tree, member)))
        out = tree_map(lambda *xs: jnp.stack(xs), *outs)
        return out, tree_map(lambda _: True, out)

    return g
