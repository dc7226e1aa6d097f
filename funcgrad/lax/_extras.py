"""More of jax.lax: reduce (with recognised monoids), broadcast, index_in_dim, slice_in_dim, collapse,
batch_matmul, reduce_precision, optimization_barrier."""
from __future__ import annotations

import enum
import operator

import numpy as np

from ..core import dtypes
from ..core.array import ArrayBase, to_array, canonical_array
from ..core.tree_util import tree_flatten, tree_leaves, tree_map, tree_unflatten
from ..primitives import elementwise as ew
from ..primitives import shape as sh
from ..primitives.cumulative import reduce_and, reduce_or
from ..primitives.linalg import dot_general
from ..primitives.reduction import reduce_max, reduce_min, reduce_prod, reduce_sum

__all__ = ["reduce", "broadcast", "index_in_dim", "slice_in_dim", "collapse", "batch_matmul",
           "reduce_precision", "optimization_barrier", "Precision", "select_n", "dynamic_update_index_in_dim",
           "split", "approx_max_k", "approx_min_k", "reduce_xor"]


def _arr(x):
    return x if isinstance(x, ArrayBase) else canonical_array(x)


def _monoid(computation, dtype) -> str | None:
    """The name of the single primitive `computation(x, y)` applies to two scalars, if any."""
    from ..transforms.jit import make_jaxpr
    z = sh.full((), 0, dtype)
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
        init = ew.convert_element_type(init, x.dtype, False) if init.dtype != x.dtype else init
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
        out.append(computation(r, sh.broadcast_in_dim(init, r.shape, ())))
    return tree_unflatten(tree, out)


def broadcast(operand, sizes):
    """Add leading dimensions `sizes` to operand."""
    x = _arr(operand)
    sizes = tuple(operator.index(s) for s in sizes)
    return sh.broadcast_in_dim(x, sizes + tuple(x.shape), tuple(range(len(sizes), len(sizes) + x.ndim)))


def slice_in_dim(operand, start_index, limit_index, stride: int = 1, axis: int = 0):
    """operand[start:limit:stride] along `axis` (None start/limit: the ends; negatives count from the end)."""
    x = _arr(operand)
    axis = operator.index(axis) % x.ndim
    n = x.shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = n if limit_index is None else operator.index(limit_index)
    start = start + n if start < 0 else start
    limit = limit + n if limit < 0 else limit
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return sh.slice(x, tuple(starts), tuple(limits), tuple(strides))


def index_in_dim(operand, index, axis: int = 0, keepdims: bool = True):
    """operand[index] along `axis` (a static int), keeping that axis (size 1) unless keepdims=False."""
    x = _arr(operand)
    axis = operator.index(axis) % x.ndim
    n = x.shape[axis]
    i = operator.index(index)
    if not -n <= i < n:
        raise IndexError(f"index_in_dim: index {i} is out of bounds for axis {axis} with size {n}")
    i %= n
    out = slice_in_dim(x, i, i + 1, 1, axis)
    return out if keepdims else sh.squeeze(out, (axis,))


def collapse(operand, start_dimension: int, stop_dimension: int | None = None):
    """Merge dimensions start_dimension..stop_dimension-1 into one."""
    x = _arr(operand)
    start = operator.index(start_dimension) % max(x.ndim, 1)
    stop = x.ndim if stop_dimension is None else operator.index(stop_dimension)
    stop = stop + x.ndim if stop < 0 else stop
    if not 0 <= start <= stop <= x.ndim:
        raise ValueError(f"collapse: invalid dimensions [{start_dimension}, {stop_dimension}) for rank {x.ndim}")
    merged = int(np.prod(x.shape[start:stop], dtype=np.int64))
    return sh.reshape(x, tuple(x.shape[:start]) + (merged,) + tuple(x.shape[stop:]))


def batch_matmul(lhs, rhs, precision=None):
    """Batched matrix product of (..., m, k) and (..., k, n) with equal batch dimensions."""
    lhs, rhs = _arr(lhs), _arr(rhs)
    if lhs.ndim < 2 or lhs.ndim != rhs.ndim:
        raise ValueError(f"batch_matmul: operands must have equal rank >= 2, got shapes {lhs.shape} and {rhs.shape}")
    if lhs.shape[:-2] != rhs.shape[:-2] or lhs.shape[-1] != rhs.shape[-2]:
        raise TypeError(f"batch_matmul: incompatible shapes {lhs.shape} and {rhs.shape}")
    nd = lhs.ndim
    batch = tuple(range(nd - 2))
    return dot_general(lhs, rhs, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _round_bits(x, exponent_bits: int, mantissa_bits: int):
    """x rounded (to nearest, ties to even) to a float with the given exponent and mantissa widths,
    computed on the host bits of x's dtype (float16/32/64). Overflow gives inf, values below the
    smallest normal of the narrower format keep its subnormal spacing."""
    info = np.finfo(x.dtype)
    m_src = info.nmant
    e_src = int(np.log2(info.maxexp)) + 1  # exponent field width
    if mantissa_bits >= m_src and exponent_bits >= e_src:
        return x
    mantissa_bits = min(mantissa_bits, m_src)
    exponent_bits = min(exponent_bits, e_src)
    a = np.asarray(x, dtype=x.dtype)
    with np.errstate(all="ignore"):
        # spacing of the target format near |a|: 2^(e - mantissa_bits), e clamped at the target's emin
        emax = 2 ** (exponent_bits - 1) - 1
        emin = 1 - emax
        e = np.floor(np.log2(np.abs(a).astype(np.float64)))
        e = np.where(np.isfinite(e), np.maximum(e, emin), emin)
        q = np.ldexp(1.0, (e - mantissa_bits).astype(np.int64))
        r = (np.round(a.astype(np.float64) / q) * q)
        largest = (2 - 2.0 ** -mantissa_bits) * 2.0 ** emax
        r = np.where(np.abs(r) > largest, np.copysign(np.inf, a), r)
        r = np.where(np.isfinite(a), r, a)
    return r.astype(x.dtype)


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
    """Round a float array to a narrower floating-point format (e.g. (8, 7): bfloat16, (5, 10): float16),
    keeping its dtype. Differentiates as the identity (JAX rounds the tangent as well; the two differ
    only by that rounding)."""
    x = _arr(operand)
    if not dtypes.is_float(x.dtype):
        raise TypeError(f"reduce_precision: expected a floating array, got {x.dtype}")
    eb, mb = operator.index(exponent_bits), operator.index(mantissa_bits)
    if eb < 1 or mb < 0:
        raise ValueError(f"reduce_precision: exponent_bits must be >= 1 and mantissa_bits >= 0, got {eb}, {mb}")
    rounded = _rp_host(ew.stop_gradient(x), eb, mb)
    return ew.add(x, ew.stop_gradient(ew.sub(rounded, x)))


def _rp_host(x, eb, mb):
    """The rounding, staged as a host callback (it runs at call time under jit)."""
    from .._jax_api import _PureCallback
    from ..core.aval import ShapedArray
    from ..primitives.callbacks import pure_callback_p
    tree = tree_flatten(((x,), {}))[1]
    cb = _PureCallback(lambda v: _round_bits(v, eb, mb), tree, tree_flatten(x)[1])
    return pure_callback_p.bind(x, callback=cb, result_avals=(ShapedArray(x.shape, x.dtype),),
                                vmap_method="expand_dims")[0]


def optimization_barrier(operand):
    """The identity on a pytree (JAX uses it to stop the compiler moving work across it)."""
    return tree_map(lambda v: v, operand)


def with_sharding_constraint(x, shardings):
    """x unchanged: on one device every sharding is satisfied (a sharding over several devices raises)."""
    from ..sharding import Sharding
    for s in tree_leaves(shardings, is_leaf=lambda v: isinstance(v, Sharding)):
        if isinstance(s, Sharding):
            s.single_device("with_sharding_constraint")
    return tree_map(lambda v: v, x)


class Precision(enum.Enum):
    """Matmul precision hints (accepted by the precision= arguments; NumPy computes at full precision
    whatever the hint)."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    def __str__(self) -> str:
        return self.name


def select_n(which, *cases):
    """cases[which] elementwise: `which` is bool (two cases) or an integer array of indices."""
    if not cases:
        raise ValueError("select_n: at least one case is required")
    which = _arr(which)
    cases = [_arr(c) for c in cases]
    for c in cases[1:]:
        if c.shape != cases[0].shape or c.dtype != cases[0].dtype:
            raise TypeError(f"select_n: cases must have one shape and dtype, got "
                            f"{[(c.shape, str(c.dtype)) for c in cases]}")
    if which.shape not in ((), cases[0].shape):
        raise TypeError(f"select_n: which has shape {which.shape}; expected () or {cases[0].shape}")
    if which.dtype == np.bool_:
        if len(cases) > 2:
            raise TypeError("select_n: a boolean `which` selects between at most two cases")
        which = ew.convert_element_type(which, np.int32, False)
    which = sh.broadcast_in_dim(which, cases[0].shape, ()) if which.shape == () and cases[0].shape else which
    out = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        out = ew.select(ew.eq(which, sh.full(which.shape, i, which.dtype)), cases[i], out)
    return out


def dynamic_update_index_in_dim(operand, update, index, axis: int):
    """operand with `update` written at run-time `index` along `axis` (update may lack that axis)."""
    from ..primitives.dynamic_slicing import dynamic_update_slice_in_dim
    operand, update = _arr(operand), _arr(update)
    axis = operator.index(axis) % operand.ndim
    if update.ndim == operand.ndim - 1:
        update = sh.expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis)


def split(operand, sizes, axis: int = 0):
    """operand cut into consecutive pieces of the given sizes along `axis` (they must sum to its size)."""
    x = _arr(operand)
    axis = operator.index(axis) % x.ndim
    sizes = [operator.index(n) for n in sizes]
    if sum(sizes) != x.shape[axis] or any(n < 0 for n in sizes):
        raise ValueError(f"split: sizes {sizes} must be non-negative and sum to the size {x.shape[axis]} of "
                         f"axis {axis}")
    out, start = [], 0
    for n in sizes:
        out.append(slice_in_dim(x, start, start + n, 1, axis))
        start += n
    return out


def _approx_k(operand, k, reduction_dimension, largest):
    from ..primitives.sorting import top_k
    x = _arr(operand)
    d = operator.index(reduction_dimension) % x.ndim
    moved = sh.transpose(x, tuple(i for i in range(x.ndim) if i != d) + (d,)) if d != x.ndim - 1 else x
    vals, idx = top_k(moved if largest else ew.neg(moved), k)
    if not largest:
        vals = ew.neg(vals)
    if d != x.ndim - 1:
        perm = list(range(x.ndim - 1))
        perm.insert(d, x.ndim - 1)
        vals, idx = sh.transpose(vals, tuple(perm)), sh.transpose(idx, tuple(perm))
    return vals, idx


def approx_max_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
    """(values, indices) of the k largest along a dimension (exact here: recall 1)."""
    return _approx_k(operand, k, reduction_dimension, True)


def approx_min_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
    """(values, indices) of the k smallest along a dimension (exact here: recall 1)."""
    return _approx_k(operand, k, reduction_dimension, False)


def reduce_xor(operand, axes):
    """The exclusive or over `axes` of a bool array (the parity of the number of True entries)."""
    x = _arr(operand)
    if x.dtype != np.bool_:
        raise NotImplementedError("reduce_xor: only bool operands are supported")
    counts = reduce_sum(ew.convert_element_type(x, np.int64, False), tuple(axes))
    return ew.ne(ew.rem(counts, sh.full(counts.shape, 2, counts.dtype)), sh.full(counts.shape, 0, counts.dtype))
