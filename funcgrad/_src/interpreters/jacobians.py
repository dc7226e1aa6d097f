"""Jacobians and Hessians: vmap of vjp (reverse) or of jvp (forward) over a standard basis."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..core import dtypes
from ..core.array import get_aval, to_array, canonical_array
from ..core.tree_util import tree_flatten, tree_unflatten
from ..prims.shape import reshape, transpose, slice as lslice
from .ad import _check_argnums, _check_grad_input, jvp, vjp
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


def _partial(fun, args, nums, kwargs):
    def f(*d):
        full = list(args)
        for i, v in zip(nums, d):
            full[i] = v
        return fun(*full, **kwargs)
    return f


def jacrev(fun: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False, allow_int: bool = False):
    """The Jacobian of fun by reverse mode: one vjp per output element, batched with vmap."""
    def jac(*args, **kwargs):
        single, nums = _check_argnums(argnums, len(args), "jacrev")
        diff = tuple(args[i] for i in nums)
        for leaf in tree_flatten(diff)[0]:
            _check_grad_input(leaf, "jacrev", holomorphic, allow_int)
        res = vjp(_partial(fun, args, nums, kwargs), *diff, has_aux=has_aux)
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
    """The Jacobian of fun by forward mode: one jvp per input element, batched with vmap."""
    def jac(*args, **kwargs):
        single, nums = _check_argnums(argnums, len(args), "jacfwd")
        diff = tuple(args[i] for i in nums)
        for leaf in tree_flatten(diff)[0]:
            _check_grad_input(leaf, "jacfwd", holomorphic, False)
        in_leaves, in_tree = tree_flatten(diff)
        in_leaves = [canonical_array(x) if not hasattr(x, "aval") else x for x in in_leaves]
        diff = tree_unflatten(in_tree, in_leaves)
        basis, sizes = _basis([get_aval(x) for x in in_leaves])
        f = _partial(fun, args, nums, kwargs)

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
    """The Hessian of scalar fun: jacfwd of jacrev."""
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)
