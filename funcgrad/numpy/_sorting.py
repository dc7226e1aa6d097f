"""Sorting, searching, set operations, scans, differences and selection with NumPy semantics.

Everything here is built on the sort / cumulative / gather / scatter primitives, so it works under
grad (sorted values, cumulative sums and products, takes and selections are differentiable), vmap and
jit. Functions whose output size depends on the data (unique, nonzero, flatnonzero, argwhere, extract,
compress) need concrete input, or a static `size=` (with `fill_value=` for the padding) as in JAX.

Documented differences from NumPy (the JAX conventions):
- `partition` / `argpartition` sort fully: the result is a valid partition (NumPy leaves the order
  inside each part unspecified) with both parts sorted.
- `take` and `take_along_axis` default to mode="fill": out-of-bounds indices (outside [-n, n)) give
  `fill_value` (NaN for inexact dtypes, the minimum of signed integers, the maximum of unsigned ones,
  True for bools) instead of raising. mode="raise" raises IndexError like NumPy on concrete indices;
  "clip" and "wrap" are NumPy's.
- `put_along_axis` returns a new array and requires inplace=False; out-of-bounds indices are dropped.
- Sorting is always stable (kind= is accepted and ignored); `descending=True` is supported as in JAX.
"""
from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np

from .._src.core import dtypes
from .._src.core.array import ArrayBase
from .._src.core.errors import ConcretizationError, InvalidIndexTypeError, user_location
from .._src.core.trace import concrete_value
from .._src.prims import cumulative as cum
from .._src.prims import elementwise as ew
from ..lax._elementwise import convert_element_type as _xla_convert
from .._src.prims import reduction as red
from .._src.prims import shape as sh
from .._src.prims.indexing import gather_p, scatter_p
from .._src.prims.sorting import sort_p, take_along
from ._manipulation import concatenate
from ._promote import (asarray_any, broadcast_shapes, broadcast_to, is_python_scalar, normalize_index,
                       promote_args, result_dtype, scalar_array)
from ._reductions import _sum_dtype, normalize_axis
from ._ufuncs import logical_not, subtract, where

INDEX = dtypes.int64
_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


# --- small helpers --------------------------------------------------------------------------------

def _flat(x):
    return sh.reshape(x, (x.size,))


def _iota(shape, dim=0, dtype=INDEX):
    return sh.broadcasted_iota(dtype, tuple(shape), dim)


def _const(shape, value, dtype):
    return sh.full(tuple(shape), value, dtype)


def _ix(x, dtype=None):
    """An index result in JAX's dtype: the default int of the x64 mode (int32 with x64 off), or `dtype`
    where JAX fixes one (searchsorted, argpartition: int32). Indices are computed in int64 inside."""
    dt = dtype or dtypes.defaults.int_
    return x if x.dtype == dt else ew.convert_element_type(x, dt)


def _isnan(x):
    if not dtypes.is_inexact(x.dtype):
        return _const(x.shape, False, dtypes.bool_)
    return ew.ne(x, x)


def _truthy(x):
    """x as bool (non-zero is True, as NumPy's bool conversion)."""
    return x if x.dtype == dtypes.bool_ else ew.ne(x, ew.zeros_like(x))


def _and(a, b):
    return ew.select(a, b, a)


def _or(a, b):
    return ew.select(a, a, b)


def _not(a):
    return ew.eq(a, _const(a.shape, False, dtypes.bool_))


def _host(x, op: str, hint: str):
    """The concrete NumPy value of x, or a ConcretizationError naming `op` and what to do instead."""
    c = concrete_value(x)
    if c is None:
        raise ConcretizationError(
            f"{op}: the size of the result depends on the values of a traced array, so it must be known "
            f"here (at {user_location(3)}); {hint}")
    return np.asarray(c)


def _sort_along(ops, axis: int, num_keys: int = 1):
    """The operands sorted together by their first num_keys along `axis` (stable, NaN last)."""
    return sort_p.bind(*ops, dimension=axis, is_stable=True, num_keys=num_keys)


class _NonIntegerIndicesError(InvalidIndexTypeError, ValueError):
    """Indices that are not integers: NumPy's IndexError, and what JAX raises (TypeError for take_along_axis,
    ValueError for take)."""


def _index_operand(indices, op: str):
    idx = asarray_any(indices)
    if not dtypes.is_integer(idx.dtype):
        raise _NonIntegerIndicesError(f"{op}: indices must be integers, got dtype {idx.dtype} (at {user_location(3)})")
    return idx if idx.dtype == INDEX else ew.convert_element_type(idx, INDEX)


def _axis_or_flat(x, axis, op: str):
    """(x, axis) with axis=None meaning the flattened array along axis 0."""
    if axis is None:
        return _flat(x), 0
    return x, normalize_index(axis, x.ndim, op)


# --- sort, argsort, lexsort, partition ------------------------------------------------------------

def _check_kind(kind, order, op):
    if order is not None:
        raise NotImplementedError(f"{op}: order= (structured arrays) is not supported")
    if kind not in _KINDS:
        raise ValueError(f"{op}: kind must be one of {_KINDS[1:]}, got {kind!r}")


def sort(a, axis=-1, kind=None, order=None, *, stable=True, descending=False):
    """Sorted copy of an array along `axis` (None: flattened), as numpy.sort; NaN sort last.

    Always stable. descending=True (as in JAX) reverses the order, so NaN come first."""
    _check_kind(kind, order, "sort")
    x, ax = _axis_or_flat(asarray_any(a), axis, "sort")
    if descending:
        return sh.rev(_sort_along([sh.rev(x, (ax,))], ax)[0], (ax,))
    return _sort_along([x], ax)[0]


def argsort(a, axis=-1, kind=None, order=None, *, stable=True, descending=False):
    """Indices that sort an array along `axis` (None: flattened), as jnp.argsort (stable; JAX's index
    dtype: int32 with x64 off, int64 with it on).

    With descending=True (JAX's option) equal elements still keep their original order."""
    _check_kind(kind, order, "argsort")
    x = asarray_any(a)
    x, ax = _axis_or_flat(x, axis, "argsort")
    iota = _iota(x.shape, ax)
    if not descending:
        return _ix(_sort_along([x, iota], ax)[1])
    # A stable ascending sort of the reversed axis, read backwards: descending with ties in order.
    n = x.shape[ax]
    rev_iota = ew.sub(_const(x.shape, n - 1, INDEX), iota)
    return _ix(sh.rev(_sort_along([sh.rev(x, (ax,)), rev_iota], ax)[1], (ax,)))


def lexsort(keys, axis=-1):
    """Indices sorting by several keys, the LAST key most significant, as numpy.lexsort (stable)."""
    if isinstance(keys, ArrayBase) or isinstance(keys, np.ndarray):
        keys = [keys[i] for i in range(keys.shape[0])] if keys.ndim > 0 else [keys]
    ks = [asarray_any(k) for k in keys]
    if not ks:
        raise TypeError("lexsort: need sequence of keys with len > 0")
    shape = ks[0].shape
    if any(k.shape != shape for k in ks):
        raise ValueError(f"lexsort: all keys need to be the same shape, got {[tuple(k.shape) for k in ks]}")
    if len(shape) == 0:
        return _ix(_const((), 0, INDEX))
    ax = normalize_index(axis, len(shape), "lexsort")
    return _ix(_sort_along(ks[::-1] + [_iota(shape, ax)], ax, num_keys=len(ks))[-1])


def _check_kth(kth, n, op):
    ks = np.atleast_1d(np.asarray(kth))
    if ks.dtype.kind not in "iu":
        raise TypeError(f"{op}: kth must be an integer or a sequence of integers, got {kth!r}")
    for k in ks:
        if not -n <= int(k) < n:
            raise ValueError(f"{op}: kth(={int(k)}) out of bounds ({n})")


def _no_complex_partition(x, op):
    if x.dtype == dtypes.bool_:  # (jnp.partition negates its operand: bool is refused)
        raise TypeError(f"{op}: bool input is not supported, as jnp.{op} (neg does not accept bool); convert it "
                        "with .astype(int) first")
    if dtypes.is_complex(x.dtype):
        raise NotImplementedError(f"{op}: complex input ({x.dtype}) is not supported, as jnp.{op}; sort it "
                                  "(numpy's order: real part first) or partition its real part")


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """An array whose kth element along `axis` is where sorting would put it, smaller ones before and
    larger ones after, as numpy.partition. funcgrad sorts fully, so both parts come out sorted."""
    x, ax = _axis_or_flat(asarray_any(a), axis, "partition")
    _no_complex_partition(x, "partition")
    _check_kth(kth, x.shape[ax], "partition")
    return sort(x, ax, order=order)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """Indices that partition an array (see `partition`: here they fully sort it), as numpy.argpartition."""
    x = asarray_any(a)
    x, ax = _axis_or_flat(x, axis, "argpartition")
    _no_complex_partition(x, "argpartition")
    _check_kth(kth, x.shape[ax], "argpartition")
    return _ix(argsort(x, ax, order=order), dtypes.int32)  # int32 in either mode, as jnp.argpartition


# --- searchsorted ---------------------------------------------------------------------------------

def _less(x, y):
    """x < y in NumPy's sort order (NaN largest)."""
    lt = ew.lt(x, y)
    if not dtypes.is_inexact(x.dtype):
        return lt
    return _or(lt, _and(_isnan(y), _not(_isnan(x))))


def _less_equal(x, y):
    """x <= y in NumPy's sort order (NaN largest, equal to itself)."""
    le = ew.le(x, y)
    if not dtypes.is_inexact(x.dtype):
        return le
    return _or(le, _isnan(y))


def _take_1d(a, idx):
    return gather_p.bind(a, sh.expand_dims(idx, (idx.ndim,)), axes=(0,))


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Indices where the values v would be inserted into the sorted 1-D array a to keep it sorted,
    as jnp.searchsorted (int32 in either x64 mode, as JAX; NaN sort last). method: "scan" (a binary search, log2(len(a))
    gathers) or "compare_all" (compares every pair; faster for short a)."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError("searchsorted: method argument must be one of ['compare_all', 'scan', 'scan_unrolled', "
                         f"'sort'], got {method!r}")
    method = {"scan_unrolled": "scan", "sort": "compare_all"}.get(method, method)  # (the same indices)
    arr = asarray_any(a)
    if arr.ndim != 1:
        raise ValueError(f"searchsorted: a must be 1-D, got shape {tuple(arr.shape)}")
    if sorter is not None:
        arr = _take_1d(arr, _index_operand(sorter, "searchsorted"))
    arr, val = promote_args("searchsorted", arr, v)
    val = asarray_any(val) if is_python_scalar(val) else val
    cmp = _less if side == "left" else _less_equal
    n = arr.shape[0]
    if n == 0:
        return _ix(_const(val.shape, 0, INDEX), dtypes.int32)
    if method == "compare_all":
        hit = cmp(broadcast_to(arr, tuple(val.shape) + (n,)),
                  sh.broadcast_in_dim(val, tuple(val.shape) + (n,), tuple(range(val.ndim))))
        return _ix(red.reduce_sum(ew.convert_element_type(hit, INDEX), (val.ndim,)), dtypes.int32)
    lo, hi = _const(val.shape, 0, INDEX), _const(val.shape, n, INDEX)
    two, one = _const(val.shape, 2, INDEX), _const(val.shape, 1, INDEX)
    last = _const(val.shape, n - 1, INDEX)
    for _ in range(n.bit_length()):
        mid = ew.div(ew.add(lo, hi), two)
        go_right = _and(cmp(_take_1d(arr, ew.min(mid, last)), val), ew.lt(lo, hi))
        lo = ew.select(go_right, ew.add(mid, one), lo)
        hi = ew.select(go_right, hi, mid)
    return _ix(lo, dtypes.int32)


# --- nonzero and friends --------------------------------------------------------------------------

def _flat_nonzero_positions(mask, size: int, fill: int):
    """int64 (size,): the flat positions of True entries of the 1-D bool `mask`, in order, padded
    with `fill` (truncated when there are more than `size`)."""
    n = mask.shape[0]
    rank = cum.cumsum(ew.convert_element_type(mask, INDEX), 0)  # 1-based rank among the Trues
    target = ew.select(mask, ew.sub(rank, _const((n,), 1, INDEX)), _const((n,), size, INDEX))
    out = _const((size,), fill, INDEX)
    return scatter_p.bind(out, sh.expand_dims(target, (1,)), _iota((n,)), axes=(0,), mode="set")


def _static_size(size, mask, op):
    if size is not None:
        size = operator.index(size)
        if size < 0:
            raise ValueError(f"{op}: size must be non-negative, got {size}")
        return size
    h = _host(mask, op, "pass a static size= (and fill_value=) to use it under jit or vmap")
    return int(np.count_nonzero(h))


def nonzero(a, *, size=None, fill_value=None):
    """Indices of the non-zero elements, one array per dimension (JAX's index dtype), as jnp.nonzero.

    The input must be concrete unless a static `size` is given: then exactly `size` indices are
    returned, truncated or padded with `fill_value` (default 0; a scalar or one per dimension)."""
    x = asarray_any(a)
    if x.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use atleast_1d(scalar).nonzero() "
                         "instead.")
    mask = _flat(_truthy(x))
    n = _static_size(size, mask, "nonzero")
    flat = _flat_nonzero_positions(mask, n, 0) if mask.shape[0] else _const((n,), 0, INDEX)
    coords = []
    rem = flat
    for d in range(x.ndim):
        stride = math.prod(x.shape[d + 1:])
        if stride == 0 or x.size == 0:
            coords.append(_const((n,), 0, INDEX))
            continue
        q = ew.div(rem, _const((n,), stride, INDEX))
        rem = ew.sub(rem, ew.mul(q, _const((n,), stride, INDEX)))
        coords.append(q)
    if fill_value is not None and size is not None and x.size:  # (zero-size input: zeros, as JAX)
        fills = fill_value if isinstance(fill_value, (tuple, list)) else (fill_value,) * x.ndim
        if len(fills) != x.ndim:
            raise ValueError(f"nonzero: fill_value must be a scalar or a tuple of length {x.ndim}")
        valid = _valid_prefix(mask, n)
        coords = [ew.select(valid, c, _const((n,), int(f), INDEX)) for c, f in zip(coords, fills)]
    return tuple(_ix(c) for c in coords)


def _valid_prefix(mask, n: int):
    """bool (n,): entry i is one of the mask's True positions (i < number of Trues)."""
    count = red.reduce_sum(ew.convert_element_type(mask, INDEX), (0,))
    return ew.lt(_iota((n,)), sh.broadcast_in_dim(count, (n,), ()))


def flatnonzero(a, *, size=None, fill_value=None):
    """Indices of the non-zero elements of the flattened array, as numpy.flatnonzero."""
    return nonzero(_flat(asarray_any(a)), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """Indices of the non-zero elements as an (N, ndim) array (JAX's index dtype), as jnp.argwhere."""
    x = asarray_any(a)
    if x.ndim == 0:
        n = 1 if size is None and bool(_host(_truthy(x), "argwhere", "pass size=")) else (size or 0)
        return _ix(_const((n, 0), 0, INDEX))
    cols = nonzero(x, size=size, fill_value=fill_value)
    return sh.concatenate([sh.expand_dims(c, (1,)) for c in cols], 1)


def count_nonzero(a, axis=None, *, keepdims=False):
    """Number of non-zero values along `axis` (JAX's default int), as jnp.count_nonzero."""
    x = asarray_any(a)
    axes = normalize_axis(axis, x.ndim, "count_nonzero")
    r = _ix(red.reduce_sum(ew.convert_element_type(_truthy(x), INDEX), axes))
    return sh.expand_dims(r, axes) if keepdims and axes else r


# --- unique ---------------------------------------------------------------------------------------

class UniqueAllResult(NamedTuple):
    values: ArrayBase
    indices: ArrayBase
    inverse_indices: ArrayBase
    counts: ArrayBase


class UniqueCountsResult(NamedTuple):
    values: ArrayBase
    counts: ArrayBase


class UniqueInverseResult(NamedTuple):
    values: ArrayBase
    inverse_indices: ArrayBase


def _unique_core(rows, equal_nan: bool, size, fill_value):
    """Unique rows of a 2-D (n, m) array, sorted lexicographically (m = 1 for scalars).

    Returns (values (size, m), first indices, inverse (n,), counts), padded to `size` entries:
    values with the smallest row (or fill_value), indices with the smallest row's, counts with 0."""
    n, m = rows.shape
    cols = [sh.reshape(sh.slice(rows, (0, j), (n, j + 1)), (n,)) for j in range(m)]
    outs = _sort_along(cols + [_iota((n,))], 0, num_keys=m) if m else [_iota((n,))]
    scols, perm = outs[:m], outs[m]
    differs = None if m else _const((n - 1,), False, dtypes.bool_)  # zero-size slices: all equal, as JAX
    for c in scols:
        a, b = sh.slice(c, (1,), (n,)), sh.slice(c, (0,), (n - 1,))
        d = ew.ne(a, b)
        if equal_nan and dtypes.is_inexact(c.dtype):
            d = _and(d, _not(_and(_isnan(a), _isnan(b))))
        differs = d if differs is None else _or(differs, d)
    is_first = sh.concatenate([_const((1,), True, dtypes.bool_), differs], 0) if n > 1 else \
        _const((n,), True, dtypes.bool_)
    k = _static_size(size, is_first, "unique")
    group = ew.sub(cum.cumsum(ew.convert_element_type(is_first, INDEX), 0), _const((n,), 1, INDEX))
    first_pos = _flat_nonzero_positions(is_first, k, 0)
    srows = sh.concatenate([sh.expand_dims(c, (1,)) for c in scols], 1) if m else rows
    values = gather_p.bind(srows, sh.expand_dims(first_pos, (1,)), axes=(0,))
    if fill_value is not None and size is not None:
        valid = sh.broadcast_in_dim(_valid_prefix(is_first, k), (k, m), (0,))
        fill = _fill_array(fill_value, values.dtype, (k, m))
        values = ew.select(valid, values, fill)
    indices = _take_1d(perm, first_pos)
    inverse = scatter_p.bind(_const((n,), 0, INDEX), sh.expand_dims(perm, (1,)), group, axes=(0,), mode="set")
    counts = scatter_p.bind(_const((k,), 0, INDEX), sh.expand_dims(group, (1,)), _const((n,), 1, INDEX),
                            axes=(0,), mode="add")
    return values, indices, inverse, counts


def _fill_array(fill_value, dtype, shape):
    if isinstance(fill_value, int) and is_python_scalar(fill_value) and dtypes.is_integer(dtype):
        f = scalar_array(fill_value, dtype, False)  # in dtype directly (uint64's max exceeds int64)
    else:
        f = asarray_any(fill_value)
    return broadcast_to(ew.convert_element_type(f, dtype), shape)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, size=None, fill_value=None, sorted=True):  # noqa: A002 - NumPy name
    """Sorted unique elements (or unique slices along `axis`), as numpy.unique, optionally with the
    first index of each, the inverse (reconstructing ar) and the counts.

    The input must be concrete unless a static `size` is given (as in JAX): then `size` entries are
    returned, truncated or padded (values with `fill_value`, default the smallest value; indices with
    the smallest value's index; counts with 0). The unique values are differentiable only with a static
    `size`, as in JAX: without it jnp.unique reads the input's concrete value (core.concrete_or_error), so
    jax.grad through it (and through union1d / intersect1d / setdiff1d / setxor1d) is zero."""
    x = asarray_any(ar)
    if size is None and dtypes.is_inexact(x.dtype):
        x = ew.stop_gradient(x)
    if axis is None:
        shape_in = tuple(x.shape)
        rows = sh.reshape(x, (x.size, 1))
        moved = None
    else:
        ax = normalize_index(axis, x.ndim, "unique")
        moved = sh.transpose(x, [ax] + [d for d in range(x.ndim) if d != ax])
        rows = sh.reshape(moved, (moved.shape[0], math.prod(moved.shape[1:])))
    n = rows.shape[0]
    if n == 0:
        k = 0 if size is None else operator.index(size)
        vshape = (k,) if moved is None else (k,) + tuple(moved.shape[1:])
        values = _fill_array(0 if fill_value is None else fill_value, x.dtype, vshape)
        if moved is not None:
            values = sh.transpose(values, _inverse_perm([ax] + [d for d in range(x.ndim) if d != ax]))
        indices = counts = _const((k,), 0, INDEX)
        inverse = _const(shape_in if axis is None else (0,), 0, INDEX)
    else:
        values, indices, inverse, counts = _unique_core(rows, equal_nan and axis is None, size, fill_value)
        k = values.shape[0]
        if moved is None:
            values = sh.reshape(values, (k,))
            inverse = sh.reshape(inverse, shape_in)
        else:
            values = sh.reshape(values, (k,) + tuple(moved.shape[1:]))
            values = sh.transpose(values, _inverse_perm([ax] + [d for d in range(x.ndim) if d != ax]))
    extra = [_ix(r) for r, want in ((indices, return_index), (inverse, return_inverse), (counts, return_counts))
             if want]
    return (values, *extra) if extra else values


def _inverse_perm(perm):
    return [int(i) for i in np.argsort(perm)]


def unique_values(x, /, *, size=None, fill_value=None):
    """Unique values (sorted; NaN are all kept, as the Array API asks), as numpy.unique_values."""
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


def unique_counts(x, /, *, size=None, fill_value=None):
    """(values, counts), as numpy.unique_counts (NaN counted separately)."""
    v, c = unique(x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value)
    return UniqueCountsResult(v, c)


def unique_inverse(x, /, *, size=None, fill_value=None):
    """(values, inverse_indices of x's shape), as numpy.unique_inverse."""
    v, inv = unique(x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value)
    return UniqueInverseResult(v, inv)


def unique_all(x, /, *, size=None, fill_value=None):
    """(values, indices, inverse_indices, counts), as numpy.unique_all."""
    v, i, inv, c = unique(x, return_index=True, return_inverse=True, return_counts=True, equal_nan=False,
                          size=size, fill_value=fill_value)
    return UniqueAllResult(v, i, inv, c)


# --- cumulative sums and products -----------------------------------------------------------------

def _cumulative(op, lax_fn, bool_fn, nan_identity=None, upcast=False):
    def f(a, axis=None, dtype=None, out=None):
        if out is not None:
            raise TypeError(f"{op}: out= is not supported: funcgrad arrays are immutable")
        x = asarray_any(a)
        if x.weak_type:  # as in JAX, the result is strongly typed
            x = ew.convert_element_type(x, x.dtype, False)
        x, ax = _axis_or_flat(x, axis, op)  # (a 0-d array has no axis 0, as in JAX; axis=None flattens it)
        if nan_identity is not None and dtypes.is_inexact(x.dtype):
            x = ew.select(_isnan(x), _const(x.shape, nan_identity, x.dtype), x)
        dt = _sum_dtype(x, dtype) if upcast or dtype is not None else \
            dtypes.defaults.int_ if x.dtype == dtypes.bool_ else None  # (as JAX: only bools widen)
        if dt is not None:
            x = _xla_convert(x, dt, x.weak_type)  # (float to int: XLA's saturating conversion)
        if x.dtype == dtypes.bool_:  # dtype=bool: logical or / and
            return bool_fn(x, ax)
        return lax_fn(x, ax)
    f.__name__ = f.__qualname__ = op
    return f


cumsum = _cumulative("cumsum", cum.cumsum, cum.cummax)
cumsum.__doc__ = ("Cumulative sum along `axis` (None: flattened), as jnp.cumsum; bools accumulate in "
                  "the default int, integers in their own dtype (as JAX).")
cumprod = _cumulative("cumprod", cum.cumprod, cum.cummin)
cumprod.__doc__ = ("Cumulative product along `axis` (None: flattened), as numpy.cumprod; its derivative "
                   "is exact where x has zeros.")
nancumsum = _cumulative("nancumsum", cum.cumsum, cum.cummax, 0)
nancumsum.__doc__ = "Cumulative sum treating NaN as zero, as numpy.nancumsum."
nancumprod = _cumulative("nancumprod", cum.cumprod, cum.cummin, 1)
nancumprod.__doc__ = "Cumulative product treating NaN as one, as numpy.nancumprod."


def _cumulative_api(op, fn, identity):
    def f(x, /, *, axis=None, dtype=None, include_initial=False):
        a = asarray_any(x)
        if axis is None:
            if a.ndim > 1:
                raise ValueError(f"{op}: axis must be specified for multi-dimensional arrays")
            axis = 0
        if a.ndim == 0:
            raise ValueError(f"{op}: the input must have at least one dimension")
        r = fn(a, axis=axis, dtype=dtype)
        if include_initial:
            ax = normalize_index(axis, a.ndim, op)
            shape = list(r.shape)
            shape[ax] = 1
            r = sh.concatenate([_const(shape, identity, r.dtype), r], ax)
        return r
    f.__name__ = f.__qualname__ = op
    f.__doc__ = f"numpy.{op} (Array API): {fn.__name__} with include_initial= and axis required for ndim > 1."
    return f


cumulative_sum = _cumulative_api("cumulative_sum", _cumulative("cumsum", cum.cumsum, cum.cummax, upcast=True), 0)
cumulative_prod = _cumulative_api("cumulative_prod", cumprod, 1)


# --- differences ----------------------------------------------------------------------------------

def diff(a, n=1, axis=-1, prepend=None, append=None):
    """n-th discrete difference along `axis`, with optional values prepended/appended, as numpy.diff
    (bools: not_equal; integers keep their dtype and wrap around)."""
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: order must be non-negative but got {n}")
    x = asarray_any(a)
    if x.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = normalize_index(axis, x.ndim, "diff")
    if n == 0:
        return x
    pieces = []
    for v in (prepend, append):
        if v is None:
            pieces.append(None)
            continue
        # As jax.numpy, a Python scalar here is weakly typed: int8 data with prepend=0 stays int8 (NumPy: int64).
        va = scalar_array(v, dtypes.python_scalar_dtype(v), not isinstance(v, bool)) if is_python_scalar(v) \
            else asarray_any(v)
        if va.ndim == 0:
            shape = list(x.shape)
            shape[ax] = 1
            va = broadcast_to(va, shape)
        pieces.append(va)
    if pieces != [None, None]:
        x = concatenate([p for p in (pieces[0], x, pieces[1]) if p is not None], ax)
    for _ in range(n):
        m = x.shape[ax]
        if m == 0:
            break
        lo = [0] * x.ndim
        hi = list(x.shape)
        hi[ax] = m - 1
        first = sh.slice(x, lo, hi)
        lo[ax], hi[ax] = 1, m
        second = sh.slice(x, lo, hi)
        x = ew.ne(second, first) if x.dtype == dtypes.bool_ else ew.sub(second, first)
    return x


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences between consecutive elements of the flattened array, with optional values before
    and after, as numpy.ediff1d (to_begin / to_end must cast to ary's dtype under 'same_kind')."""
    x = _flat(asarray_any(ary))
    d = subtract(sh.slice(x, (1,), (x.size,)), sh.slice(x, (0,), (x.size - 1,))) if x.size else x
    parts = []
    for v, name in ((to_begin, "to_begin"), (to_end, "to_end")):
        if v is None:
            parts.append(None)
            continue
        va = _flat(asarray_any(v))
        if not np.can_cast(va.dtype, x.dtype, casting="same_kind"):
            raise TypeError(f"ediff1d: dtype of `{name}` must be compatible with input `ary` under the "
                            "`same_kind` rule.")
        parts.append(ew.convert_element_type(va, d.dtype))
    pieces = ([parts[0]] if parts[0] is not None else []) + [d] + ([parts[1]] if parts[1] is not None else [])
    return sh.concatenate(pieces, 0) if len(pieces) > 1 else d


# --- take, take_along_axis, put_along_axis --------------------------------------------------------

_TAKE_MODES = (None, "fill", "clip", "wrap", "raise")


def _default_fill(dtype):
    """JAX's value for out-of-bounds reads under mode='fill' (take, take_along_axis, x.at[...].get):
    NaN, True, or the most negative signed / the largest unsigned integer."""
    if dtypes.is_inexact(dtype):
        return np.nan
    if dtype == dtypes.bool_:
        return True
    info = np.iinfo(dtype)
    return int(info.min) if dtype.kind == "i" else int(info.max)


def _resolve_indices(idx, n: int, mode, op: str):
    """(indices in [0, n), bool mask of valid entries or None) under NumPy/JAX index `mode`."""
    mode = "fill" if mode is None else mode
    if mode not in _TAKE_MODES:
        raise ValueError(f"{op}: mode must be one of {_TAKE_MODES}, got {mode!r}")
    shape = idx.shape
    zero, nn = _const(shape, 0, INDEX), _const(shape, n, INDEX)
    if mode == "raise":
        h = _host(idx, op, "mode='raise' checks the indices, so they must be concrete; use mode='fill' "
                           "or 'clip' under jit or vmap")
        if h.size and (h.min() < -n or h.max() >= n):
            bad = int(h[(h < -n) | (h >= n)].flat[0])
            raise IndexError(f"{op}: index {bad} is out of bounds for axis with size {n}")
        mode = "fill"
    if n == 0:
        return zero, (_const(shape, False, dtypes.bool_) if mode == "fill" else None)
    if mode == "clip":
        return ew.min(ew.max(idx, zero), _const(shape, n - 1, INDEX)), None
    if mode == "wrap":
        r = ew.sub(idx, ew.mul(ew.div(idx, nn), nn))  # truncated remainder, then into [0, n)
        return ew.select(ew.lt(r, zero), ew.add(r, nn), r), None
    valid = _and(ew.ge(idx, ew.neg(nn)), ew.lt(idx, nn))
    wrapped = ew.select(ew.lt(idx, zero), ew.add(idx, nn), idx)
    return ew.min(ew.max(wrapped, zero), _const(shape, n - 1, INDEX)), valid


def _fill_invalid(out, valid, fill_value, batch_dims):
    """out with entries whose index was invalid replaced by the fill value."""
    if valid is None:
        return out
    fv = _default_fill(out.dtype) if fill_value is None else fill_value
    mask = sh.broadcast_in_dim(valid, out.shape, batch_dims)
    return ew.select(mask, out, _fill_array(fv, out.dtype, out.shape))


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False, indices_are_sorted=False,
         fill_value=None):
    """Elements of `a` at `indices` along `axis` (None: flattened), as numpy.take.

    mode (JAX's default "fill"): out-of-bounds indices give fill_value; "clip" and "wrap" are NumPy's;
    "raise" checks concrete indices and raises IndexError as NumPy."""
    if out is not None:
        raise TypeError("take: out= is not supported: funcgrad arrays are immutable")
    x, ax = _axis_or_flat(asarray_any(a), axis, "take")
    idx = _index_operand(indices, "take")
    if x.shape[ax] == 0 and idx.size:
        raise IndexError(f"take: cannot take {idx.size} elements from an empty axis (axis {ax} of shape "
                         f"{tuple(x.shape)}), in any mode (as jax.numpy.take)")
    pos, valid = _resolve_indices(idx, x.shape[ax], mode, "take")
    g = gather_p.bind(x, sh.expand_dims(pos, (pos.ndim,)), axes=(ax,))  # idx.shape + rest
    k = idx.ndim
    g = _fill_invalid(g, valid, fill_value, tuple(range(k)))
    perm = list(range(k, k + ax)) + list(range(k)) + list(range(k + ax, g.ndim))
    return sh.transpose(g, perm)


def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None):
    """Values of arr at `indices` along `axis`, matching them elementwise elsewhere (broadcasting),
    as numpy.take_along_axis (axis defaults to -1, as in NumPy 2.3 and the Array API); axis=None uses
    the flattened array. Out-of-bounds: see `take`."""
    x = asarray_any(arr)
    idx = _index_operand(indices, "take_along_axis")
    if axis is None:
        if idx.ndim != 1:
            raise ValueError("take_along_axis: when axis=None, `indices` must have a single dimension.")
        x, ax = _flat(x), 0
    else:
        if idx.ndim != x.ndim:
            raise ValueError("take_along_axis: `indices` and `arr` must have the same number of dimensions, "
                             f"got {idx.ndim} and {x.ndim}")
        ax = normalize_index(axis, x.ndim, "take_along_axis")
    shape = list(broadcast_shapes(*[tuple(1 if d == ax else s for d, s in enumerate(t.shape)) for t in (x, idx)],
                                  op="take_along_axis"))
    xs, is_ = list(shape), list(shape)
    xs[ax], is_[ax] = x.shape[ax], idx.shape[ax]
    x, idx = broadcast_to(x, xs), broadcast_to(idx, is_)
    if mode == "clip":  # (as jax.numpy: a negative index counts from the end before clipping, unlike take's)
        n = _const(idx.shape, x.shape[ax], idx.dtype)
        idx = ew.select(ew.lt(idx, _const(idx.shape, 0, idx.dtype)), ew.add(idx, n), idx)
    elif mode == "promise_in_bounds":  # (jax.numpy clamps such indices, with no wrapping)
        mode = "clip"
    pos, valid = _resolve_indices(idx, x.shape[ax], mode, "take_along_axis")
    out = take_along(x, pos, ax) if x.shape[ax] else _const(idx.shape, 0, x.dtype)
    return _fill_invalid(out, valid, fill_value, tuple(range(out.ndim)))


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """arr with `values` written at `indices` along `axis`, as numpy.put_along_axis, but returning a new
    array: funcgrad arrays are immutable, so inplace=False is required (as in JAX). Negative indices
    count from the end; out-of-bounds ones are dropped. Repeated indices: the last write wins."""
    if inplace:
        raise ValueError("put_along_axis: funcgrad arrays are immutable and cannot be modified in place; "
                         "pass inplace=False to get the updated array instead")
    x = asarray_any(arr)
    idx = _index_operand(indices, "put_along_axis")
    if axis is None:
        if idx.ndim != 1:
            raise ValueError("put_along_axis: when axis=None, `indices` must have a single dimension.")
        shape_in, x, ax = tuple(x.shape), _flat(x), 0
    else:
        shape_in = None
        if idx.ndim != x.ndim:
            raise ValueError("put_along_axis: `indices` and `arr` must have the same number of dimensions")
        ax = normalize_index(axis, x.ndim, "put_along_axis")
    grid = list(x.shape)
    grid[ax] = idx.shape[ax]
    idx = broadcast_to(idx, grid)
    n = x.shape[ax]
    nn = _const(idx.shape, n, INDEX)
    idx = ew.select(ew.lt(idx, _const(idx.shape, 0, INDEX)), ew.add(idx, nn), idx)
    vals = asarray_any(values)
    vals = broadcast_to(ew.convert_element_type(vals, x.dtype, x.weak_type), grid)
    cols = [idx if d == ax else _iota(grid, d) for d in range(x.ndim)]
    rows = sh.concatenate([sh.expand_dims(c, (x.ndim,)) for c in cols], x.ndim)
    out = scatter_p.bind(x, rows, vals, axes=tuple(range(x.ndim)), mode="set")
    return out if shape_in is None else sh.reshape(out, shape_in)


# --- selection ------------------------------------------------------------------------------------

def select(condlist, choicelist, default=0):
    """Elements from choicelist where the first true condition of condlist holds, else default, as
    numpy.select (conditions must be bool arrays; everything broadcasts)."""
    conds, choices = list(condlist), list(choicelist)
    if len(conds) != len(choices):
        raise ValueError("select: list of cases must be same length as list of conditions")
    if not conds:
        raise ValueError("select with an empty condition list is not possible")
    conds = [asarray_any(c) for c in conds]
    for i, c in enumerate(conds):
        if c.dtype != dtypes.bool_:
            raise TypeError(f"select: invalid entry {i} in condlist: should be boolean ndarray")
    choices = [c if is_python_scalar(c) else asarray_any(c) for c in choices]
    everything = promote_args("select", *choices, default)
    out = everything[-1]
    for c, v in zip(reversed(conds), reversed(everything[:-1])):
        out = where(c, v, out)
    shape = broadcast_shapes(*[tuple(getattr(v, "shape", ())) for v in everything + conds], op="select")
    return broadcast_to(asarray_any(out), shape)


def piecewise(x, condlist, funclist, *args, **kw):
    """`funclist[i](x)` where `condlist[i]` holds (later conditions take precedence), as numpy.piecewise;
    one extra function is the "otherwise" value. Each function is applied to the whole of x (so it
    must be elementwise, as in JAX); constants are allowed. The result has x's dtype."""
    xa = asarray_any(x)
    n2 = len(funclist)
    if is_python_scalar(condlist) or isinstance(condlist, np.generic) or (
            isinstance(condlist, (ArrayBase, np.ndarray)) and condlist.ndim == xa.ndim and xa.ndim > 0) or (
            isinstance(condlist, (list, tuple)) and condlist and
            not isinstance(condlist[0], (list, tuple, np.ndarray, ArrayBase)) and xa.ndim != 0):
        condlist = [condlist]
    conds = [broadcast_to(_truthy(asarray_any(c)), xa.shape) for c in condlist]
    n = len(conds)
    if n == n2 - 1:
        anyc = conds[0]
        for c in conds[1:]:
            anyc = _or(anyc, c)
        conds.append(_not(anyc))
        n += 1
    elif n != n2:
        raise ValueError(f"piecewise: with {n} condition(s), either {n} or {n + 1} functions are expected")
    out = _const(xa.shape, 0, xa.dtype)
    for c, fn in zip(conds, funclist):
        val = fn(xa, *args, **kw) if callable(fn) else fn
        val = asarray_any(val)
        val = broadcast_to(ew.convert_element_type(val, xa.dtype), xa.shape)
        out = where(c, val, out)
    return ew.convert_element_type(out, xa.dtype, xa.weak_type)


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of the flattened arr where the flattened condition is non-zero, as numpy.extract.
    Concrete condition, or a static `size` (padding with fill_value) under jit."""
    x = _flat(asarray_any(arr))
    cond = _flat(_truthy(asarray_any(condition)))
    return _take_where(x, cond, 0, size, fill_value, "extract")


def _take_where(x, cond, ax, size, fill_value, op):
    k = _static_size(size, cond, op)
    pos = _flat_nonzero_positions(cond, k, x.shape[ax]) if cond.shape[0] else _const((k,), x.shape[ax], INDEX)
    if size is None:
        h = np.asarray(concrete_value(pos))
        if h.size and h.max() >= x.shape[ax]:
            raise IndexError(f"{op}: index {int(h.max())} is out of bounds for axis {ax} with size "
                             f"{x.shape[ax]}")
    return take(x, pos, axis=ax, mode="fill", fill_value=fill_value)


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """Slices of `a` along `axis` (None: flattened) where the 1-D condition is true, as numpy.compress.
    A condition shorter than the axis counts as False beyond its end."""
    if out is not None:
        raise TypeError("compress: out= is not supported: funcgrad arrays are immutable")
    cond = _truthy(asarray_any(condition))
    if cond.ndim != 1:
        raise ValueError("compress: condition must be a 1-d array")
    x, ax = _axis_or_flat(asarray_any(a), axis, "compress")
    return _take_where(x, cond, ax, size, fill_value, "compress")


__all__ = ["sort_complex", "argpartition", "argsort", "argwhere", "compress", "count_nonzero", "cumprod", "cumsum",
           "cumulative_prod", "cumulative_sum", "diff", "ediff1d", "extract", "flatnonzero", "lexsort",
           "nancumprod", "nancumsum", "nonzero", "partition", "piecewise", "put_along_axis", "searchsorted",
           "select", "sort", "take", "take_along_axis", "unique", "unique_all", "unique_counts",
           "unique_inverse", "unique_values"]


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Whether each element of `element` occurs in `test_elements` (a bool array of element's shape), as
    numpy.isin and the Array API's isin (NaN is in nothing). By sorting test_elements and a binary
    search, so it is O((n + m) log m) and works under jit and vmap."""
    if kind not in (None, "sort", "table"):
        raise ValueError(f"isin: kind must be None, 'sort' or 'table', got {kind!r}")
    x, t = asarray_any(element), asarray_any(test_elements)
    dt, _ = result_dtype(x, t)
    x, t = ew.convert_element_type(x, dt), ew.convert_element_type(_flat(t), dt)
    if t.shape[0] == 0:
        found = sh.full(tuple(x.shape), False, dtypes.bool_)
    else:
        ts = sort(t)
        pos = searchsorted(ts, x)
        pos = ew.min(pos, sh.full(tuple(x.shape), t.shape[0] - 1, pos.dtype))
        found = ew.eq(take(ts, pos), x)
    return logical_not(found) if invert else found


def sort_complex(a):
    """a sorted (real part first, then imaginary), as a complex array, as numpy.sort_complex."""
    x = asarray_any(a)
    if not dtypes.is_complex(x.dtype):  # as jax.numpy: the dtype promoted with complex64
        x = ew.convert_element_type(x, dtypes.complex128 if x.dtype.itemsize == 8 else dtypes.complex64)
    return sort(x)
