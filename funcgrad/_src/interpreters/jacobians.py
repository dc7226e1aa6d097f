"""Jacobians and Hessians: vmap of vjp (reverse) or of jvp (forward) over a standard basis."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..core import dtypes
from ..core.array import get_aval, to_array, canonical_array
from ..core.tree_util import tree_flatten, tree_unflatten
from ..prims.shape import reshape, transpose, slice as lslice
from .ad import _diff_args, jvp, vjp
from .batching import vmap


def _basis(avals):
    """For leaves with these avals, a list of basis leaves of shape (total,) + leaf shape."""
    sizes = [int(np.prod(a.shape, dtype=np.int64)) for a in avals]
    total = sum(sizes)
    out, off = [], 0
    for a, n in zip(avals, sizes):
        rows = np.zeros((total, n), dtype=a.dtype)
        rows[off:off + n] = np.eye(n, dtype=a.dtype)
        out.append(to_array(rows.reshape((total,) + tuple(a.shape)), copy=False))
        off += n
    return out, sizes


def _blocks(x, sizes, axis_first: bool):
    """Split the leading axis of x into consecutive blocks of the given sizes."""
    out, off = [], 0
    for n in sizes:
        start = [0] * x.ndim
        limit = list(x.shape)
        start[0], limit[0] = off, off + n
        out.append(lslice(x, start, limit))
        off += n
    return out


def _check_outputs(leaves, name, holomorphic):
    """As JAX: reverse mode needs real outputs unless holomorphic; holomorphic needs complex ones."""
    for o in leaves:
        dt = get_aval(o).dtype
        if holomorphic and not dtypes.is_complex(dt):
            raise TypeError(f"{name} with holomorphic=True requires complex outputs, got {dt}")
        if not holomorphic and name == "jacrev" and dtypes.is_complex(dt):
            raise TypeError(f"jacrev requires real-valued outputs, got {dt}; for a holomorphic function "
                            "pass holomorphic=True, or split the output into real and imaginary parts")


def jacrev(fun: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False, allow_int: bool = False):
    """The Jacobian of `fun` by reverse mode: one vjp per output element, batched with vmap.

    Cheaper than `jacfwd` when the output has fewer elements than the input (a wide Jacobian).
    `funcgrad.jacobian` is this function, as in JAX.

    Args:
        fun: a function of arrays (pytrees of arrays) with real outputs (complex with `holomorphic`).
        argnums: the positional argument(s) to differentiate: an int or a tuple of ints.
        has_aux: `fun` returns `(output, aux)`; the result is then `(jacobian, aux)`.
        holomorphic: `fun` is holomorphic in complex inputs.
        allow_int: allow integer inputs (their blocks are float0).

    Returns:
        A function returning the Jacobian: for an output of shape `out` and an input of shape `in`, an
        array of shape `out + in`; pytrees of outputs and inputs give the nested pytree, outputs outside.

    Examples:
        >>> import funcgrad as jax, funcgrad.numpy as jnp
        >>> jax.jacrev(lambda x: jnp.sum(x) * x)(jnp.array([1.0, 2.0]))
        Array([[4., 1.],
               [2., 5.]], dtype=float32)
    """
    def jac(*args, **kwargs):
        single, diff, f = _diff_args(fun, args, kwargs, argnums, "jacrev", holomorphic, allow_int)
        res = vjp(f, *diff, has_aux=has_aux)
        out, pullback = res[0], res[1]
        out_leaves, out_tree = tree_flatten(out)
        _check_outputs(out_leaves, "jacrev", holomorphic)
        in_leaves, in_tree = tree_flatten(diff)
        basis, sizes = _basis([get_aval(o) for o in out_leaves])
        cts = vmap(pullback)(tree_unflatten(out_tree, basis))
        ct_leaves = tree_flatten(cts)[0]
        per_in = [_blocks(c, sizes, True) for c in ct_leaves]  # [in leaf][out leaf]
        jac_leaves = []
        for i, o in enumerate(out_leaves):
            row = [reshape(per_in[j][i], tuple(get_aval(o).shape) + tuple(get_aval(x).shape))
                   for j, x in enumerate(in_leaves)]
            tree = tree_unflatten(in_tree, row)
            jac_leaves.append(tree[0] if single else tree)
        result = tree_unflatten(out_tree, jac_leaves)
        return (result, res[2]) if has_aux else result
    jac.__name__ = f"jacrev({getattr(fun, '__name__', 'fun')})"
    return jac


def jacfwd(fun: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """The Jacobian of `fun` by forward mode: one jvp per input element, batched with vmap.

    Cheaper than `jacrev` when the input has fewer elements than the output (a tall Jacobian).

    Args:
        fun: a function of arrays (pytrees of arrays).
        argnums: the positional argument(s) to differentiate: an int or a tuple of ints.
        has_aux: `fun` returns `(output, aux)`; the result is then `(jacobian, aux)`.
        holomorphic: `fun` is holomorphic in complex inputs.

    Returns:
        A function returning the Jacobian, of shape `out + in` for each (output, input) leaf pair.

    Examples:
        >>> import funcgrad as jax, funcgrad.numpy as jnp
        >>> jax.jacfwd(lambda x: x ** 2)(jnp.array([1.0, 2.0]))
        Array([[2., 0.],
               [0., 4.]], dtype=float32)
    """
    def jac(*args, **kwargs):
        single, diff, f = _diff_args(fun, args, kwargs, argnums, "jacfwd", holomorphic, False)
        in_leaves, in_tree = tree_flatten(diff)
        in_leaves = [canonical_array(x) if not hasattr(x, "aval") else x for x in in_leaves]
        diff = tree_unflatten(in_tree, in_leaves)
        basis, sizes = _basis([get_aval(x) for x in in_leaves])

        def push(*t_leaves):
            tangents = tree_unflatten(in_tree, list(t_leaves))
            return jvp(f, diff, tangents, has_aux=has_aux)[1]

        t_outs = vmap(push)(*basis)
        t_leaves, out_tree = tree_flatten(t_outs)
        if holomorphic:
            _check_outputs(t_leaves, "jacfwd", holomorphic)
        jac_leaves = []
        for t in t_leaves:
            o_shape = tuple(t.shape[1:])
            row = []
            for blk, x in zip(_blocks(t, sizes, True), in_leaves):
                in_shape = tuple(get_aval(x).shape)
                b = reshape(blk, in_shape + o_shape)
                nd_in, nd_out = len(in_shape), len(o_shape)
                perm = tuple(range(nd_in, nd_in + nd_out)) + tuple(range(nd_in))
                row.append(transpose(b, perm))
            tree = tree_unflatten(in_tree, row)
            jac_leaves.append(tree[0] if single else tree)
        result = tree_unflatten(out_tree, jac_leaves)
        if has_aux:  # aux computed inside vmap would be batched, so evaluate it once more unbatched
            return result, f(*diff)[1]
        return result
    jac.__name__ = f"jacfwd({getattr(fun, '__name__', 'fun')})"
    return jac


def hessian(fun: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """The Hessian of a scalar-valued `fun`: `jacfwd(jacrev(fun))`, forward-over-reverse as in JAX.

    Args:
        fun: a function with a real scalar output.
        argnums: the positional argument(s) to differentiate: an int or a tuple of ints (then a nested
            tuple of blocks).
        has_aux: `fun` returns `(output, aux)`; the result is then `(hessian, aux)`.
        holomorphic: `fun` is holomorphic in complex inputs.

    Returns:
        A function returning the matrix of second derivatives, of shape `in + in` for an input of shape `in`.
        For a Hessian-vector product alone, `jvp(grad(f), (x,), (v,))[1]` costs one gradient, not n.

    Examples:
        >>> import funcgrad as jax, funcgrad.numpy as jnp
        >>> jax.hessian(lambda x: jnp.sum(x ** 3))(jnp.array([1.0, 2.0]))
        Array([[ 6.,  0.],
               [ 0., 12.]], dtype=float32)
    """
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)
