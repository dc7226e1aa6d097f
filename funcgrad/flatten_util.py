"""funcgrad.flatten_util: ravel_pytree, as jax.flatten_util."""
from __future__ import annotations

from .tree_util import tree_flatten, tree_unflatten

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree):
    """(flat, unravel): every leaf raveled and concatenated into one 1-D array (of the leaves' promoted
    dtype), and the function mapping such a vector back to the pytree, each leaf in its own shape and
    dtype. Differentiable both ways, usable under jit and vmap.

    Examples:
        >>> import funcgrad.numpy as jnp
        >>> from funcgrad.flatten_util import ravel_pytree
        >>> flat, unravel = ravel_pytree({"w": jnp.ones((2, 2)), "b": jnp.zeros(2)})
        >>> flat
        Array([0., 0., 1., 1., 1., 1.], dtype=float32)
        >>> unravel(flat)["w"].shape
        (2, 2)
    """
    from . import numpy as jnp
    leaves, treedef = tree_flatten(pytree)
    leaves = [jnp.asarray(x) for x in leaves]
    shapes = [tuple(x.shape) for x in leaves]
    dts = [x.dtype for x in leaves]
    sizes = [x.size for x in leaves]
    if not leaves:
        flat = jnp.zeros((0,), jnp.float32)
    else:
        flat = jnp.concatenate([jnp.ravel(x) for x in leaves]) if len(leaves) > 1 else jnp.ravel(leaves[0])
    total = sum(sizes)
    out_dtype = flat.dtype

    def unravel(vec):
        vec = jnp.asarray(vec)
        if tuple(vec.shape) != (total,):
            raise ValueError(f"unravel: expected a vector of shape ({total},), got {tuple(vec.shape)}")
        if vec.dtype != out_dtype:
            raise TypeError(f"unravel: expected a vector of dtype {out_dtype} (the raveled pytree's), got "
                            f"{vec.dtype}; cast it first")
        parts, start = [], 0
        for shape, dt, n in zip(shapes, dts, sizes):
            parts.append(vec[start:start + n].reshape(shape).astype(dt))
            start += n
        return tree_unflatten(treedef, parts)

    return flat, unravel
