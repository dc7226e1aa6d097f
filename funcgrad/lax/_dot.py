"""lax's products: dot_general (the card), dot, batch_matmul and the grouped ragged_dot, all composed of
dot_general."""
from __future__ import annotations

from .._src.core import dtypes
from .._src.core.array import ArrayBase, canonical_array
from .._src.prims import elementwise as _ew
from .._src.prims import shape as _sh
from .._src.prims.cumulative import cumsum
from .._src.prims import linalg as _la
from ._types import canonicalize_precision

__all__ = ["batch_matmul", "dot", "dot_general", "ragged_dot"]


def _arr(x):
    return x if isinstance(x, ArrayBase) else canonical_array(x)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None, *, out_sharding=None):
    """The generalised tensor contraction (the dot_general card): dimension_numbers = ((lhs_contract,
    rhs_contract), (lhs_batch, rhs_batch)); precision is checked as JAX checks it (NumPy computes at full
    precision), preferred_element_type sets the result dtype."""
    if precision is not None:  # (the torch face's linear calls this on its hot path)
        canonicalize_precision(precision)
    return _la.dot_general(lhs, rhs, dimension_numbers, preferred_element_type)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Vector/matrix products: contract the last axis of lhs with the first of rhs (ranks 1-2)."""
    canonicalize_precision(precision)
    return _la.dot_general(lhs, rhs, (((lhs.ndim - 1,), (0,)), ((), ())), preferred_element_type)


def batch_matmul(lhs, rhs, precision=None):
    """Batched matrix product of (..., m, k) and (..., k, n) with equal batch dimensions."""
    canonicalize_precision(precision)
    lhs, rhs = _arr(lhs), _arr(rhs)
    if lhs.ndim < 2 or lhs.ndim != rhs.ndim:
        raise ValueError(f"batch_matmul: operands must have equal rank >= 2, got shapes {lhs.shape} and {rhs.shape}")
    if lhs.shape[:-2] != rhs.shape[:-2] or lhs.shape[-1] != rhs.shape[-2]:
        raise TypeError(f"batch_matmul: incompatible shapes {lhs.shape} and {rhs.shape}")
    nd = lhs.ndim
    batch = tuple(range(nd - 2))
    return _la.dot_general(lhs, rhs, (((nd - 1,), (nd - 2,)), (batch, batch)))


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None, group_offset=None,
               out_sharding=None):
    """Grouped matrix product (jax.lax.ragged_dot): the rows of lhs (m, k) fall in consecutive groups of
    group_sizes (g,) rows, and the rows of group i are multiplied by rhs[i] (k, n); rows after the last
    group give zeros. Differentiable in lhs and rhs."""
    canonicalize_precision(precision)
    if group_offset is not None:
        raise NotImplementedError("ragged_dot: group_offset is not supported")
    lhs, rhs, group_sizes = _arr(lhs), _arr(rhs), _arr(group_sizes)
    if lhs.ndim != 2 or rhs.ndim != 3 or group_sizes.ndim != 1 or rhs.shape[0] != group_sizes.shape[0] \
            or lhs.shape[1] != rhs.shape[1]:
        raise TypeError(f"ragged_dot: expected lhs (m, k), rhs (g, k, n) and group_sizes (g,), got "
                        f"{tuple(lhs.shape)}, {tuple(rhs.shape)} and {tuple(group_sizes.shape)}")
    if not dtypes.is_integer(group_sizes.dtype):
        raise TypeError(f"ragged_dot: group_sizes must be integers, got {group_sizes.dtype}")
    m, g = lhs.shape[0], group_sizes.shape[0]
    ends = _sh.broadcast_in_dim(cumsum(group_sizes, 0), (m, g), (1,))
    starts = _ew.sub(ends, _sh.broadcast_in_dim(group_sizes, (m, g), (1,)))
    rows = _sh.broadcasted_iota(group_sizes.dtype, (m, g), 0)
    member = _ew.bitwise_and(_ew.ge(rows, starts), _ew.lt(rows, ends))  # (m, g): row r is in group i
    dt, _ = dtypes.result_type((lhs.dtype, lhs.weak_type), (rhs.dtype, rhs.weak_type))
    lhs, rhs = (v if v.dtype == dt else _ew.convert_element_type(v, dt, False) for v in (lhs, rhs))
    per_group = _la.dot_general(lhs, rhs, (((1,), (1,)), ((), ())))  # (m, g, n): every row times every rhs[i]
    out = _la.dot_general(_ew.convert_element_type(member, dt, False), per_group, (((1,), (1,)), ((0,), (0,))))
    return out if preferred_element_type is None else out.astype(preferred_element_type)
