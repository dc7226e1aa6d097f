"""lax's reductions, cumulative reductions and sorting: the cards under their lax names, lax.reduce
(with a recognised monoid), reduce_xor and approx_max_k / approx_min_k."""
from __future__ import annotations

import operator

import numpy as np

from .._src.core import dtypes
from .._src.core.array import ArrayBase, canonical_array
from .._src.core.tree_util import tree_flatten, tree_unflatten
from .._src.prims import elementwise as _ew
from .._src.prims import shape as _sh
from .._src.prims import cumulative as _cum
from .._src.prims.cumulative import cumlogsumexp, cumprod, cumsum, reduce_and, reduce_or
from .._src.prims.reduction import argmax, argmin, reduce_max, reduce_min, reduce_prod, reduce_sum
from .._src.prims.sorting import sort, sort_key_val, top_k
from .._src.prims.windowed import reduce_window
from .._src.interpreters.jit import make_jaxpr

__all__ = ["approx_max_k", "approx_min_k", "argmax", "argmin", "cumlogsumexp", "cummax", "cummin", "cumprod",
           "cumsum", "reduce", "reduce_and", "reduce_max", "reduce_min", "reduce_or", "reduce_prod",
           "reduce_sum", "reduce_window", "reduce_xor", "sort", "sort_key_val", "top_k"]


def _arr(x):
    return x if isinstance(x, ArrayBase) else canonical_array(x)


def _no_bool(name, fn):
    def f(operand, axis: int = 0, reverse: bool = False):
        x = _arr(operand)
        if x.dtype == dtypes.bool_:  # (funcgrad.numpy's cumsum of bools uses the card itself)
            raise TypeError(f"{name} does not accept dtype bool. Accepted dtypes are subtypes of number.")
        return fn(x, axis, reverse=reverse)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"The running {name[3:]}imum along axis (reverse=True: from the end), as jax.lax.{name} (not bool)."
    return f


cummax = _no_bool("cummax", _cum.cummax)
cummin = _no_bool("cummin", _cum.cummin)


def _monoid(computation, dtype) -> str | None:
    """The name of the single primitive `computation(x, y)` applies to two scalars, if any."""
    z = _sh.full((), 0, dtype)
    try:
        jaxpr = make_jaxpr(computation)(z, z)
    except Exception:
        return None
    eqns = [e for e in jaxpr.eqns if e.prim.name not in ("convert_element_type",)]
    if len(eqns) != 1 or len(jaxpr.outvars) != 1 or set(eqns[0].invars) != set(jaxpr.invars) \
            or eqns[0].outvars[0] is not jaxpr.outvars[0]:
        return None
    return eqns[0].prim.name


_REDUCERS = {"add": reduce_sum, "mul": reduce_prod, "max": reduce_max, "min": reduce_min}


def reduce(operands, init_values, computation, dimensions):
    """Reduce `operands` over `dimensions` with the monoid `computation` starting from `init_values`.

    The computation must be one of add, mul, max, min, and (bitwise_and) or or (bitwise_or), given
    as a function of two scalars (lax.add, jnp.maximum, operator.mul, a lambda applying one of them,
    ...); anything else raises NotImplementedError. Pytrees of operands reduce leafwise with the same
    computation."""
    ops, tree = tree_flatten(operands)
    inits, init_tree = tree_flatten(init_values)
    if tree != init_tree:
        raise TypeError(f"lax.reduce: operands {tree} and init_values {init_tree} must have the same structure")
    dims = tuple(operator.index(d) for d in dimensions)
    out = []
    for x, init in zip(ops, inits):
        x = _arr(x)
        init = _arr(init)
        if init.shape != ():
            raise TypeError(f"lax.reduce: init values must be scalars, got shape {init.shape}")
        if any(not 0 <= d < x.ndim for d in dims) or len(set(dims)) != len(dims):
            raise ValueError(f"lax.reduce: dimensions {dims} are invalid for an operand of rank {x.ndim}")
        name = _monoid(computation, x.dtype)
        init = _ew.convert_element_type(init, x.dtype, False) if init.dtype != x.dtype else init
        if name in _REDUCERS:
            r = _REDUCERS[name](x, dims)
        elif name in ("and", "or") and (x.dtype == np.bool_ or dtypes.is_integer(x.dtype)):
            if x.dtype != np.bool_:
                raise NotImplementedError("lax.reduce: bitwise and/or reductions of integers are not supported")
            r = (reduce_and if name == "and" else reduce_or)(x, dims)
        else:
            raise NotImplementedError(
                f"lax.reduce: the computation {getattr(computation, '__name__', computation)!r} is not a "
                "recognised monoid (add, mul, max, min, and, or); general reductions are not supported")
        out.append(computation(r, _sh.broadcast_in_dim(init, r.shape, ())))
    return tree_unflatten(tree, out)


def reduce_xor(operand, axes):
    """The exclusive or over `axes` of a bool array (the parity of the number of True entries)."""
    x = _arr(operand)
    if x.dtype != np.bool_:
        raise NotImplementedError("reduce_xor: only bool operands are supported")
    counts = reduce_sum(_ew.convert_element_type(x, np.int64, False), tuple(axes))
    return _ew.ne(_ew.rem(counts, _sh.full(counts.shape, 2, counts.dtype)), _sh.full(counts.shape, 0, counts.dtype))


def _approx_k(operand, k, reduction_dimension, largest):
    x = _arr(operand)
    d = operator.index(reduction_dimension) % x.ndim
    moved = _sh.transpose(x, tuple(i for i in range(x.ndim) if i != d) + (d,)) if d != x.ndim - 1 else x
    vals, idx = top_k(moved if largest else _ew.neg(moved), k)
    if not largest:
        vals = _ew.neg(vals)
    if d != x.ndim - 1:
        perm = list(range(x.ndim - 1))
        perm.insert(d, x.ndim - 1)
        vals, idx = _sh.transpose(vals, tuple(perm)), _sh.transpose(idx, tuple(perm))
    return vals, idx


def approx_max_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
    """(values, indices) of the k largest along a dimension (exact here: recall 1)."""
    return _approx_k(operand, k, reduction_dimension, True)


def approx_min_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
    """(values, indices) of the k smallest along a dimension (exact here: recall 1)."""
    return _approx_k(operand, k, reduction_dimension, False)
