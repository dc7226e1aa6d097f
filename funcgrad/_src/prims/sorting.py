"""Sorting primitives: sort (several operands ordered by the leading `num_keys` of them, along one
dimension, as jax.lax.sort) and top_k (the k largest entries along the last axis and their indices).

Ordering is NumPy's: ascending, NaN last, ties kept in their original order (the implementation is
always stable, so is_stable=False gives the stable result too). Several keys compare
lexicographically, the first key most significant.

Derivatives go through the permutation: sorting the keys together with an iota gives it, the jvp
gathers each operand's tangent with it (`take_along`) and the vjp scatter-adds cotangents back
(`scatter_add_along`). Both are linear in the tangent, so higher orders work (and are zero beyond
the first, as the permutation is locally constant).
"""
from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from ._util import batch_size, check_dtype, type_error, value_error
from .shape import move_axis, to_front
from .indexing import gather_p, scatter_p
from .shape import broadcasted_iota, concatenate, expand_dims, full

# --- gathers along one axis -----------------------------------------------------------------------


def _rows(idx, axis: int):
    """Full coordinate rows (shape idx.shape + (ndim,)) addressing x[..., idx, ...] along `axis`."""
    cols = [idx if d == axis else broadcasted_iota(idx.dtype, idx.shape, d) for d in range(idx.ndim)]
    return concatenate([expand_dims(c, (idx.ndim,)) for c in cols], idx.ndim)


def take_along(x, idx, axis: int):
    """out[..., j, ...] = x[..., idx[..., j, ...], ...] along `axis` (idx may differ from x in size
    along `axis` only; indices must be in range)."""
    return gather_p.bind(x, _rows(idx, axis), axes=tuple(range(x.ndim)))


def scatter_add_along(g, idx, axis: int, shape):
    """The transpose of take_along: zeros of `shape` with g[..., j, ...] added at idx[..., j, ...]."""
    return scatter_p.bind(full(shape, 0, g.dtype), _rows(idx, axis), g, axes=tuple(range(len(shape))),
                          mode="add")


# --- sort -----------------------------------------------------------------------------------------

def _sort_rule(*ops: ShapedArray, dimension, is_stable, num_keys):
    if not ops:
        value_error("sort", "needs at least one operand")
    x0 = ops[0]
    for x in ops[1:]:
        if x.shape != x0.shape:
            type_error("sort", "operands must have equal shapes, got " + ", ".join(a.str_short() for a in ops))
    if not isinstance(num_keys, int) or not 1 <= num_keys <= len(ops):
        value_error("sort", f"num_keys must be between 1 and the number of operands ({len(ops)}), "
                            f"got {num_keys!r}")
    if not isinstance(dimension, int) or not 0 <= dimension < x0.ndim:
        value_error("sort", f"dimension {dimension!r} out of range for operands {x0.str_short()} "
                            "(sorting needs rank >= 1)")
    for k in ops[:num_keys]:
        check_dtype("sort", k, "bifc")
    weak = all(x.weak_type for x in ops)
    return [ShapedArray(x.shape, x.dtype, weak) for x in ops]


def _sort_impl(xp):
    def f(*ops, dimension, is_stable, num_keys):
        if not 0 <= dimension < ops[0].ndim or any(o.shape != ops[0].shape for o in ops) or \
                not 1 <= num_keys <= len(ops):
            raise ValueError("bad operands")  # the caller reports it with the shape rule's message
        if len(ops) == 1:
            return [xp.sort(ops[0], axis=dimension, kind="stable")]
        if num_keys == 1:
            perm = xp.argsort(ops[0], axis=dimension, kind="stable")
        elif xp is np:  # lexsort's last key is the most significant
            perm = np.lexsort(ops[num_keys - 1::-1], axis=dimension)
        else:  # stable sorts from the least significant key up (CuPy's lexsort takes no axis)
            perm = xp.argsort(ops[num_keys - 1], axis=dimension, kind="stable")
            for k in ops[num_keys - 2::-1]:
                step = xp.argsort(xp.take_along_axis(k, perm, axis=dimension), axis=dimension, kind="stable")
                perm = xp.take_along_axis(perm, step, axis=dimension)
        return [xp.take_along_axis(o, perm, axis=dimension) for o in ops]
    return f


def permutation(keys, dimension: int, num_keys: int):
    """The indices that sort `keys` (stably, lexicographically) along `dimension`."""
    iota = broadcasted_iota(dtypes.int64, keys[0].shape, dimension)
    return sort_p.bind(*keys, iota, dimension=dimension, is_stable=True, num_keys=num_keys)[-1]


def _sort_jvp(primals, tangents, ans, *, dimension, is_stable, num_keys):
    perm = permutation(primals[:num_keys], dimension, num_keys)
    return [None if t is None else take_along(t, perm, dimension) for t in tangents]


def _sort_vjp(cts, ans, args, needs, *, dimension, is_stable, num_keys):
    perm = None
    out = []
    for g, need, x in zip(cts, needs, args):
        if g is None or not need:
            out.append(None)
            continue
        if perm is None:
            perm = permutation(args[:num_keys], dimension, num_keys)
        out.append(scatter_add_along(g, perm, dimension, x.shape))
    return out


def _sort_batch(args, dims, *, dimension, is_stable, num_keys):
    n = batch_size(args, dims)
    outs = sort_p.bind(*[to_front(a, d, n) for a, d in zip(args, dims)], dimension=dimension + 1,
                       is_stable=is_stable, num_keys=num_keys)
    return outs, [0] * len(outs)


sort_p = Primitive("sort", impl=_sort_impl, abstract_eval=_sort_rule, jvp_full=_sort_jvp,
                   vjp_full=_sort_vjp, batch=_sort_batch, multiple_results=True)


# --- top_k ----------------------------------------------------------------------------------------

def _top_k_rule(x: ShapedArray, *, k):
    check_dtype("top_k", x, "bif")
    if x.ndim < 1:
        type_error("top_k", f"operand must have at least one dimension, got {x.str_short()}")
    if not isinstance(k, int) or not 0 <= k <= x.shape[-1]:
        value_error("top_k", f"k must be between 0 and the size of the last axis ({x.shape[-1]}) of "
                             f"{x.str_short()}, got {k!r}")
    shape = tuple(x.shape[:-1]) + (k,)
    return [ShapedArray(shape, x.dtype, False), ShapedArray(shape, dtypes.int32, False)]


def _top_k_impl(xp):
    def f(x, *, k):
        if x.ndim < 1 or not 0 <= k <= x.shape[-1]:
            raise ValueError("bad operand")  # the caller reports it with the shape rule's message
        n = x.shape[-1]
        # Descending, ties in index order: a stable ascending sort of the reversed axis, read backwards.
        order = xp.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1]
        idx = (n - 1 - order[..., :k]).astype(dtypes.int32)
        return [xp.take_along_axis(x, idx, axis=-1), idx]
    return f


def _top_k_jvp(primals, tangents, ans, *, k):
    t, = tangents
    return [take_along(t, ans[1], primals[0].ndim - 1), None]


def _top_k_vjp(cts, ans, args, needs, *, k):
    g = cts[0]
    if g is None or not needs[0]:
        return [None]
    x = args[0]
    return [scatter_add_along(g, ans[1], x.ndim - 1, x.shape)]


def _top_k_batch(args, dims, *, k):
    outs = top_k_p.bind(move_axis(args[0], dims[0], 0), k=k)
    return outs, [0, 0]


top_k_p = Primitive("top_k", impl=_top_k_impl, abstract_eval=_top_k_rule, jvp_full=_top_k_jvp,
                    vjp_full=_top_k_vjp, batch=_top_k_batch, multiple_results=True,
                    weak_type=lambda w, params: False)


# --- lax-style functions --------------------------------------------------------------------------

def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """Sort along `dimension`, as jax.lax.sort: an array gives an array; a sequence of arrays is
    sorted together by its first `num_keys` members (lexicographically) and gives a tuple."""
    single = not isinstance(operand, (list, tuple))
    ops = [operand] if single else list(operand)
    if not ops:
        raise ValueError("sort: needs at least one operand")
    nd = ops[0].ndim
    dim = int(dimension)
    dim = dim % nd if nd and -nd <= dim < nd else dim
    outs = sort_p.bind(*ops, dimension=dim, is_stable=bool(is_stable), num_keys=int(num_keys))
    return outs[0] if single else tuple(outs)


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    """(sorted keys, values in the same order), as jax.lax.sort_key_val."""
    return sort((keys, values), dimension, is_stable, 1)


def top_k(operand, k: int):
    """(values, indices) of the k largest entries along the last axis, in descending order (ties:
    lower index first), as jax.lax.top_k (indices are int32, as JAX gives in either x64 mode)."""
    return tuple(top_k_p.bind(operand, k=int(k)))
