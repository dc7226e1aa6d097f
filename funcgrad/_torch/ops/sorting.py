"""Sorting and order statistics: sort, argsort, msort, topk, kthvalue, median, mode, unique,
unique_consecutive; counting (bincount, histc) and searching a sorted sequence (searchsorted, bucketize)."""
from __future__ import annotations

import numpy as np

from .. import _jnp as jnp, _dtype as D, _torch_select, return_types
from ..._src.core.array import Array
from ..._src.prims import elementwise as ew
from .._tensor import Tensor, _dim, _wrap
from .._dispatch import _apply, _apply1, _apply_nograd
from ._common import _bool, _cast, _NPB, _with_out
from .views import clone
from .._errors import _legacy
from .join_split import narrow
from .extrema import _take_at


@_with_out()
def median(input, dim=None, keepdim=False):
    if dim is None and input.numel() == 0:
        return _empty_median(input._np_dtype())
    if dim is not None:
        _dim(dim, input.ndim)
    if input._np_dtype() == _NPB and input.numel():
        raise NotImplementedError("\"median_cpu\" not implemented for 'Bool'")
    if dim is not None and input.ndim == 0:
        return return_types.median(input.clone() if not input._rg else input * 1,
                                   _wrap(Array(np.zeros((), np.int64))))
    if dim is not None and input.shape[_dim(dim, input.ndim)] == 0:
        raise IndexError(f"median(): Expected reduction dim {_dim(dim, input.ndim)} to have non-zero size.")
    if dim is None:
        def fn(a):  # NaN (sorted last) if there is one, as in torch
            flat = jnp.ravel(a)
            f = jnp.sort(flat)
            m = ew.select(ew.ne(f[-1], f[-1]), f[-1], f[(f.shape[0] - 1) // 2])
            if D.kind(a.dtype) != "f":
                return m
            # torch spreads the gradient evenly over the entries equal to the median: the max of those
            # entries has that value, and reduce_max's rule shares ties evenly
            even = jnp.max(jnp.where(ew.eq(flat, m), flat, -np.inf))
            return ew.select(ew.ne(m, m), m, even)
        return _apply1("Median", fn, input)
    d = _dim(dim, input.ndim)
    n = input.shape[d]

    def median_index(a):  # the lower median's index, or the first NaN's where a slice has one
        i = jnp.take(jnp.argsort(a, axis=d, stable=True), np.array([(n - 1) // 2]), axis=d)
        if D.kind(a.dtype) != "f":
            return i
        nan = ew.ne(a, a)
        first_nan = jnp.expand_dims(jnp.argmax(nan, axis=d), d)
        return ew.select(jnp.any(nan, axis=d, keepdims=True), _cast(first_nan, i.dtype), i)
    idx = _apply_nograd(median_index, (input,))
    values = _apply("Median", _take_at(d, keepdim), (input, idx))
    return return_types.median(values, idx if keepdim else idx.squeeze(d))


def _empty_median(dt) -> Tensor:
    """torch's median of no entries: NaN converted to the dtype by the C++ cast (x86: the integer
    indefinite, INT_MIN, for 32 and 64 bits; its low bits, 0, for narrower integers; True for bool)."""
    dt = np.dtype(dt)
    if D.kind(dt) in "fc":
        v = np.array(np.nan, dt)
    elif dt == _NPB:
        v = np.array(True)
    else:
        v = np.array(np.iinfo(dt).min if dt.kind == "i" and dt.itemsize >= 4 else 0, dt)
    return _wrap(Array(v))


@_with_out()
def mode(input, dim=-1, keepdim=False):
    """The smallest most frequent value along dim and an index of it: torch's, whose std::sort decides which
    of the ties (the last one in rows of up to 16) and how NaN (unordered under `<`) is counted."""
    if input.ndim == 0:
        _dim(dim, 0)
        return return_types.mode(clone(input), _wrap(Array(np.zeros((), np.int64))))
    d = _dim(dim, input.ndim)
    if input.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    v = np.moveaxis(input._host(), d, -1)
    flat = v.reshape(-1, v.shape[-1])
    idx = np.empty(flat.shape[0], np.int64)
    nan = np.isnan(flat).any(axis=-1) if flat.dtype.kind == "f" else np.zeros(flat.shape[0], bool)
    for r, row in enumerate(flat):
        vals, counts = np.unique(row, return_counts=True)
        if not nan[r] and (row.size <= 16 or counts.max() == 1):  # insertion sort (stable) / no tie
            m = vals[np.argmax(counts)]  # np.unique sorts, argmax takes the first (smallest) among ties
            idx[r] = np.flatnonzero(row == m)[-1]
        else:  # which tied index (and, with NaN, which value) wins is std::sort's unstable order
            idx[r] = _torch_select.mode_index(row.tolist())
    idx = _wrap(Array(np.expand_dims(idx.reshape(v.shape[:-1]), d)))
    values = _apply("Mode", _take_at(d, keepdim), (input, idx))
    return return_types.mode(values, idx if keepdim else idx.squeeze(d))


@_with_out()
def sort(input, dim=-1, descending=False, stable=False):
    if isinstance(dim, _bool):
        dim, descending = -1, dim
    if input.ndim == 0:
        _dim(dim, 0)
        return return_types.sort(clone(input), _wrap(Array(np.zeros((), np.int64))))
    d = _dim(dim, input.ndim)
    idx = argsort(input, d, descending, stable=stable)
    values = _apply("Sort", lambda a, i: jnp.take_along_axis(a, i, axis=d), (input, idx))
    return return_types.sort(values, idx)


def argsort(input, dim=-1, descending=False, stable=False):
    if input.ndim == 0:
        _dim(dim, 0)
        return _wrap(Array(np.zeros((), np.int64)))
    d = _dim(dim, input.ndim)
    v = input._host()
    if descending:
        # stable descending order, NaN first (as torch)
        key = -v if D.kind(v.dtype) in "fiu" and v.dtype != np.uint8 else None
        if key is None:
            r = np.flip(np.argsort(np.flip(v, d), axis=d, kind="stable"), d)
            r = v.shape[d] - 1 - r
        else:
            r = np.argsort(key, axis=d, kind="stable")
            if D.kind(v.dtype) == "f":  # then the NaNs (keyed NaN, sorted last) to the front, in their order
                r = np.take_along_axis(r, np.argsort(~np.isnan(np.take_along_axis(v, r, d)), axis=d,
                                                     kind="stable"), d)
    else:
        r = np.argsort(v, axis=d, kind="stable")
    if not stable:  # (which of equal values comes first is then std::sort's)
        r = _torch_select.sort_indices_along(v, d, descending, r)
    return _wrap(Array(np.ascontiguousarray(r.astype(np.int64))))


def msort(input):
    return sort(input, 0).values


@_with_out()
def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    d = _dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if k > n or k < 0:
        raise RuntimeError("selected index k out of range")
    idx = argsort(input, d, descending=largest)
    if input.ndim:
        idx = narrow(idx, d, 0, k).contiguous()
        # torch's choice among ties (and its order, unsorted): see _torch_select
        fast = idx._host()
        fixed = _torch_select.topk_indices_along(input._host(), k, d, largest, sorted, fast)
        if fixed is not fast:
            idx = _wrap(Array(np.ascontiguousarray(fixed)))
    values = _apply("Topk", lambda a, i: jnp.take_along_axis(a, i, axis=d) if a.ndim else a, (input, idx))
    return return_types.topk(values, idx)


@_with_out()
def kthvalue(input, k, dim=-1, keepdim=False):
    d = _dim(dim, input.ndim)
    if input.ndim == 0:
        if k != 1:
            raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
        return return_types.kthvalue(clone(input), _wrap(Array(np.zeros((), np.int64))))
    if input.shape[d] == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= input.shape[d]:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    idx = argsort(input, d)
    idx = narrow(idx, d, k - 1, 1).contiguous()
    if input.ndim:  # torch's choice among ties: see _torch_select
        fast = idx._host()
        fixed = _torch_select.kthvalue_indices(input._host(), k, d, fast)
        if fixed is not fast:
            idx = _wrap(Array(np.ascontiguousarray(fixed)))
    values = _apply("Kthvalue", _take_at(d, keepdim), (input, idx))
    return return_types.kthvalue(values, idx if keepdim else idx.squeeze(d))


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    v = input._host()
    if dim is not None and v.shape.count(0) > 1:
        raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot be applied ")
    if dim is not None and v.size == 0 and v.shape[_dim(dim, v.ndim)]:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    res = np.unique(v if dim is None else v, return_inverse=return_inverse, return_counts=return_counts,
                    axis=dim, equal_nan=False)  # (each NaN is its own value, as torch)
    if not (return_inverse or return_counts):
        return _wrap(Array(np.ascontiguousarray(res)))
    out = [_wrap(Array(np.ascontiguousarray(res[0])))]
    k = 1
    if return_inverse:
        # (astype copies C-contiguous and keeps a 0-d input's 0-d inverse: ascontiguousarray makes it 1-d)
        out.append(_wrap(Array(res[k].reshape(v.shape if dim is None else -1).astype(np.int64, order="C"))))
        k += 1
    if return_counts:
        out.append(_wrap(Array(np.ascontiguousarray(res[k].astype(np.int64)))))
    return tuple(out)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    if dim is not None:
        return _unique_consecutive_dim(input, return_inverse, return_counts, _dim(dim, input.ndim))
    v = input._host().reshape(-1)
    if v.size == 0:
        empty = _wrap(Array(np.zeros(0, np.int64)))
        out = (_wrap(Array(v.copy())),) + (_wrap(Array(np.zeros(input.shape, np.int64))),) * return_inverse + \
            (empty,) * return_counts
        return out[0] if len(out) == 1 else out
    keep = np.concatenate([[True], v[1:] != v[:-1]])
    vals = v[keep]
    out = [_wrap(Array(vals.copy()))]
    if return_inverse:
        out.append(_wrap(Array((np.cumsum(keep) - 1).reshape(input.shape).astype(np.int64))))
    if return_counts:
        idx = np.flatnonzero(keep)
        out.append(_wrap(Array(np.diff(np.append(idx, v.size)).astype(np.int64))))
    return out[0] if len(out) == 1 else tuple(out)


def _unique_consecutive_dim(input, return_inverse, return_counts, d):
    """The slices along dim d that differ from the one before (any entry, NaN differing from itself); the
    inverse has one entry per slice, the counts one per run."""
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    zero = [i for i, n in enumerate(input.shape) if n == 0]
    if len(zero) > 1:
        raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot be applied ")
    if zero and zero[0] != d:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    v = np.moveaxis(input._host(), d, 0)
    n = v.shape[0]
    keep = np.ones(n, bool)
    if n > 1:
        flat = v.reshape(n, -1)
        keep[1:] = (flat[1:] != flat[:-1]).any(axis=1)
    vals = np.moveaxis(v[keep], 0, d)
    out = [_wrap(Array(np.ascontiguousarray(vals)))]
    if return_inverse:
        out.append(_wrap(Array((np.cumsum(keep) - 1).astype(np.int64))))
    if return_counts:
        out.append(_wrap(Array(np.diff(np.append(np.flatnonzero(keep), n)).astype(np.int64))))
    return out[0] if len(out) == 1 else tuple(out)


def bincount(input, weights=None, minlength=0):
    if input._np_dtype().kind not in "iu":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_legacy(input._np_dtype())}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    v = input._host()
    if v.ndim != 1 or (v.size and v.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != v.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    w = None if weights is None else weights._host()
    r = np.bincount(v, w, minlength)
    if w is not None:  # float32 weights count in float32, any other weights in float64 (as torch)
        return _wrap(Array(r.astype(np.float32 if w.dtype == np.float32 else np.float64)))
    return _wrap(Array(r.astype(np.int64)))


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None):
    if sorted_sequence._np_dtype() == _NPB and sorted_sequence.numel():
        raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'")
    s = sorted_sequence._host()
    v = values._host() if isinstance(values, Tensor) else np.asarray(values)
    side = side or ("right" if right else "left")
    r = _bisect(s, v, side == "right")
    return _wrap(Array(np.asarray(r, np.int32 if out_int32 else np.int64)))


def _bisect(s, v, right: bool):
    """torch's binary search (cus_lower_bound / cus_upper_bound), vectorised over the values: `start` moves past
    `mid` while not s[mid] >= v (> v for right), so a NaN value lands at the end and a NaN in s acts as small
    (np.searchsorted orders NaN last in s). s is 1-d, or has v's batch dims."""
    n = s.shape[-1]
    lo = np.zeros(np.shape(v), np.int64)
    hi = np.full(np.shape(v), n, np.int64)
    with np.errstate(invalid="ignore"):
        while True:
            active = lo < hi
            if not active.any():
                return lo
            mid = lo + ((hi - lo) >> 1)
            at = np.minimum(mid, n - 1)
            m = s[at] if s.ndim == 1 else np.take_along_axis(s, at, -1)
            go = ~(m > v) if right else ~(m >= v)
            lo = np.where(active & go, mid + 1, lo)
            hi = np.where(active & ~go, mid, hi)


def bucketize(input, boundaries, *, out_int32=False, right=False):
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def histc(input, bins=100, min=0, max=0):  # noqa: A002
    if bins <= 0:
        raise RuntimeError(f"torch.histc: bins must be > 0, but got {bins}")
    if min > max:
        raise RuntimeError(f"torch.histc: max must be larger than min, got min={min}, max={max}")
    v = input._host()
    lo, hi = (v.min(), v.max()) if min == max == 0 and v.size else (min, max)
    if lo == hi:  # torch widens an empty range by 1 on each side
        lo, hi = lo - 1, hi + 1
    f = v[(v >= lo) & (v <= hi)].astype(np.float64)
    # torch's bin of x: floor((x - lo) * bins / (hi - lo)), the top edge in the last bin (not NumPy's edges)
    idx = np.minimum(((f - lo) * bins / (hi - lo)).astype(np.int64), bins - 1)
    return _wrap(Array(np.bincount(idx, minlength=bins).astype(v.dtype)))


# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods
METHODS = ("median", "sort", "argsort", "msort", "topk", "kthvalue", "unique", "unique_consecutive", "bincount",
           "histc", "mode")
INPLACE = ()

__all__ = ["argsort", "bincount", "bucketize", "histc", "kthvalue", "median", "mode", "msort", "searchsorted", "sort",
           "topk", "unique", "unique_consecutive"]
