"""vmap: trace the per-example function once, then re-interpret its jaxpr with batch rules."""
from __future__ import annotations

import threading
from typing import Callable

import numpy as np

from ..core.array import ArrayBase, get_aval, to_array, canonical_array
from ..core.aval import ShapedArray
from ..core.errors import user_location
from ..core.jaxpr import Jaxpr
from ..core.trace import new_trace
from ..core.tree_util import broadcast_prefix, tree_flatten, tree_unflatten
from ..prims.shape import move_axis
from ..prims.collectives import apply_collective, axis_frame, claim_processes, has_collective
from ..prims.shape import broadcast_in_dim


def trace_to_jaxpr(flat_fun: Callable, in_avals, name: str, axis=None):
    """Trace flat_fun on abstract tracers; returns the jaxpr. `axis` = (name, size[, nproc]) puts a named
    axis in scope for collectives while tracing (vmap's axis_name; of size*nproc members when it spans
    nproc processes, as pmap's does in a multi-process job)."""
    with new_trace(name, carries_values=False) as trace:
        ins = [trace.new_arg(a) for a in in_avals]
        if axis is None:
            outs = flat_fun(*ins)
        else:
            with axis_frame(axis[0], axis[1] * (axis[2] if len(axis) > 2 else 1), trace):
                outs = flat_fun(*ins)
        outs = [o if isinstance(o, ArrayBase) else canonical_array(o) for o in outs]
        jaxpr = trace.to_jaxpr(ins, outs)
    return jaxpr


def batch_jaxpr_eval(jaxpr: Jaxpr, args, dims, axis=None):
    """Evaluate `jaxpr` on batched args (batch dimension `dims[i]` or None): returns (outs, out_dims).
    `axis` = (name, size[, nproc]): collectives naming `name` act across the batch dimension (and the
    processes)."""
    env = {}
    for v, c in zip(jaxpr.constvars, jaxpr.consts):
        env[v] = (c, None)
    for v, a, d in zip(jaxpr.invars, args, dims):
        env[v] = (a, d)
    for eqn in jaxpr.eqns:
        vals, ds = zip(*[env[v] for v in eqn.invars]) if eqn.invars else ((), ())
        prim = eqn.prim
        if axis is not None and getattr(prim, "collective", False) and axis[0] in eqn.params["axis_name"]:
            outs, out_ds = apply_collective(prim, list(vals), list(ds), eqn.params, *axis)
            outs, out_ds = [outs], [out_ds]
        elif axis is not None and getattr(prim, "is_call", False) and prim.name == "pjit" and \
                has_collective(eqn.params["jaxpr"]):  # a jitted function with collectives: inline it
            outs, out_ds = batch_jaxpr_eval(eqn.params["jaxpr"], list(vals), list(ds), axis)
        elif axis is not None and getattr(prim, "is_call", False) and vals and _nested_collectives(eqn.params):
            # control flow whose bodies use collectives: its batch rule's vmaps take this axis's name
            # (with no batched operand, the first is batched by broadcasting: the bodies may still
            # depend on the member through axis_index)
            vals, ds = list(vals), list(ds)
            if all(d is None for d in ds):
                vals[0], ds[0] = _place(_as_array(vals[0]), None, 0, axis[1]), 0
            _inherit.stack.append(axis)
            try:
                outs, out_ds = prim.batch(vals, ds, **eqn.params)
            finally:
                _inherit.stack.pop()
            if not prim.multiple_results:
                outs, out_ds = [outs], [out_ds]
        elif all(d is None for d in ds):
            outs = prim.bind(*vals, **eqn.params)  # a collective's bind goes to its axis's trace
            outs = outs if prim.multiple_results else [outs]
            out_ds = [None] * len(outs)
        else:
            outs, out_ds = prim.batch(list(vals), list(ds), **eqn.params)
            if not prim.multiple_results:
                outs, out_ds = [outs], [out_ds]
        for v, o, d in zip(eqn.outvars, outs, out_ds):
            env[v] = (o, d)
    return [env[v][0] for v in jaxpr.outvars], [env[v][1] for v in jaxpr.outvars]


class _Inherit(threading.local):
    def __init__(self):
        self.stack = []


_inherit = _Inherit()


def _nested_collectives(params) -> bool:
    for v in params.values():
        for j in (v if isinstance(v, (tuple, list)) else (v,)):
            if isinstance(j, Jaxpr) and has_collective(j):
                return True
    return False


def _inherited_axis(axis_size):
    """The axis (name, size[, nproc]) a control-flow batch rule's vmap inherits from the named vmap
    evaluating it."""
    st = _inherit.stack
    if st and st[-1] is not None and st[-1][1] == axis_size:
        return st[-1]
    return None


def _as_array(x):
    return x if isinstance(x, ArrayBase) else canonical_array(x)


def _check_axes_spec(spec, what):
    for a in tree_flatten(spec, is_leaf=lambda x: x is None)[0]:
        if a is not None and not isinstance(a, int):
            raise ValueError(f"vmap: {what} must be an int, None, or a pytree of them; got {a!r}")


def vmap(fun: Callable, in_axes=0, out_axes=0, axis_name=None, axis_size: int | None = None,
         spmd_axis_name=None):
    """Vectorise `fun`: map it over an axis of its arguments without a Python loop.

    The batched function runs each primitive once on the whole batch (each primitive card has a batching
    rule), so `vmap(f)(xs)` equals stacking `f(x)` for every `x` in `xs`, and composes with grad and jit
    (`vmap(grad(loss))` gives per-example gradients).

    Args:
        fun: a function of arrays (pytrees of arrays).
        in_axes: which axis of each argument is mapped: an int (all arguments), None (not mapped:
            broadcast), or a tuple/pytree of them matching the positional arguments. Keyword arguments are
            always mapped over axis 0.
        out_axes: where the mapped axis goes in the outputs (int, None for an output that does not depend
            on the mapped axis, or a pytree of them).
        axis_name: a name for the mapped axis that collectives (`lax.psum`, `lax.pmean`, ...) inside `fun`
            can refer to.
        axis_size: the batch size, needed only when no argument is mapped.
        spmd_axis_name: accepted for JAX compatibility; no effect on funcgrad's single device.

    Returns:
        The batched function.

    Raises:
        ValueError: the mapped axes of the arguments have different sizes, or an axis spec is invalid.

    Differences from JAX:
        `funcgrad.vmap` is also `torch.vmap`: called with Tensors, or with torch's keywords (`in_dims`,
        `out_dims`, `randomness`, `chunk_size`), it behaves as `torch.func.vmap`.

    Examples:
        >>> import funcgrad as jax, funcgrad.numpy as jnp
        >>> jax.vmap(jnp.dot)(jnp.ones((3, 2)), jnp.ones((3, 2)))
        Array([2., 2., 2.], dtype=float32)
        >>> jax.vmap(lambda x, y: x * y, in_axes=(0, None))(jnp.arange(3.0), 2.0)
        Array([0., 2., 4.], dtype=float32)
    """
    _check_axes_spec(in_axes, "in_axes")
    _check_axes_spec(out_axes, "out_axes")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)

    def batched(*args, **kwargs):
        if kwargs:
            # Keyword arguments are batched along axis 0, as JAX does.
            return vmap(lambda a, k: fun(*a, **k), in_axes=(in_axes, 0), out_axes=out_axes,
                        axis_size=axis_size, axis_name=axis_name)(args, kwargs)
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(f"vmap: in_axes has {len(in_axes)} entries but the function was called with "
                             f"{len(args)} positional arguments (at {user_location(2)})")
        leaves, in_tree = tree_flatten(args)
        # NumPy arguments enter the JAX face: canonical for the x64 mode (float64 -> float32 with x64 off)
        leaves = [canonical_array(x) if isinstance(x, (np.ndarray, np.generic)) else x for x in leaves]
        spec = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
        try:
            axes = broadcast_prefix(spec, args, "vmap in_axes")
        except ValueError as e:
            raise ValueError(f"vmap: in_axes {in_axes!r} does not match the argument structure: {e}") from None
        norm_axes = []
        for i, (x, a) in enumerate(zip(leaves, axes)):
            if a is None:
                norm_axes.append(None)
                continue
            nd = get_aval(x).ndim
            if not -nd <= a < nd:
                raise ValueError(f"vmap: in_axes {a} is out of range for argument {i} of shape "
                                 f"{get_aval(x).shape} (rank {nd}); use in_axes=None for arguments "
                                 "that are not batched")
            norm_axes.append(a % nd)
        size = _axis_size(leaves, norm_axes, axis_size)
        if axis_name is not None:
            axis = (axis_name, size, claim_processes(axis_name))
        else:
            axis = _inherited_axis(size)
        batched_idx = [i for i, a in enumerate(norm_axes) if a is not None]
        store = []

        def flat_fun(*batched_leaves):
            full = list(leaves)
            for i, b in zip(batched_idx, batched_leaves):
                full[i] = b
            out = fun(*tree_unflatten(in_tree, full))
            out_leaves, out_tree = tree_flatten(out)
            store.append(out_tree)
            return out_leaves

        in_avals = []
        for i in batched_idx:
            av = get_aval(leaves[i])
            a = norm_axes[i]
            in_avals.append(ShapedArray(av.shape[:a] + av.shape[a + 1:], av.dtype, av.weak_type))
        _inherit.stack.append(None)  # vmaps inside this one do not inherit
        try:
            jaxpr = trace_to_jaxpr(flat_fun, in_avals, "vmap", axis)
        finally:
            _inherit.stack.pop()
        out_tree = store[-1]
        bargs = [leaves[i] if isinstance(leaves[i], ArrayBase) else canonical_array(leaves[i])
                 for i in batched_idx]
        outs, out_dims = batch_jaxpr_eval(jaxpr, bargs, [norm_axes[i] for i in batched_idx], axis)
        try:
            o_axes = broadcast_prefix(out_axes, tree_unflatten(out_tree, outs), "vmap out_axes")
        except ValueError as e:
            raise ValueError(f"vmap: out_axes {out_axes!r} does not match the output structure: {e}") from None
        results = [_place(o, d, oa, size) for o, d, oa in zip(outs, out_dims, o_axes)]
        return tree_unflatten(out_tree, results)

    batched.__name__ = f"vmap({getattr(fun, '__name__', 'fun')})"
    batched.__wrapped__ = fun
    return batched


def _axis_size(leaves, axes, axis_size):
    sizes = {}
    for i, (x, a) in enumerate(zip(leaves, axes)):
        if a is None:
            continue
        sizes.setdefault(get_aval(x).shape[a], []).append(i)
    if len(sizes) > 1:
        detail = "; ".join(f"size {s} for argument(s) {idx}" for s, idx in sizes.items())
        raise ValueError(f"vmap got inconsistent sizes for the mapped axis: {detail}")
    if sizes:
        size = next(iter(sizes))
        if axis_size is not None and axis_size != size:
            raise ValueError(f"vmap: axis_size={axis_size} but the mapped arguments have size {size}")
        return size
    if axis_size is None:
        raise ValueError("vmap must have at least one non-None value in in_axes, or be given axis_size")
    return axis_size


def _place(x, d, out_axis, size):
    if out_axis is None:
        if d is not None:
            raise ValueError("vmap: out_axes=None requires the output not to depend on the mapped axis")
        return x
    nd = x.ndim + (1 if d is None else 0)
    if not -nd <= out_axis < nd:
        raise ValueError(f"vmap: out_axes {out_axis} is out of range for an output of rank {nd}")
    out_axis %= nd
    if d is None:
        return broadcast_in_dim(x, tuple(x.shape[:out_axis]) + (size,) + tuple(x.shape[out_axis:]),
                                tuple(i for i in range(nd) if i != out_axis))
    return move_axis(x, d, out_axis)
