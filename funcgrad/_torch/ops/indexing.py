"""Indexing by index tensors: index_select, gather, take, take_along_dim, the scatter family (scatter,
scatter_add, scatter_reduce) and index_add/copy/fill/put, nonzero and argwhere."""
from __future__ import annotations

import numpy as np

from .. import _jnp as jnp, _dtype as D
from ..._src.core.array import Array
from ..._src.prims import elementwise as ew
from ..._src.prims.indexing import gather_p as _gather_p
from .._argcheck import check_same_dtype as _check_same_dtype
from .._errors import _legacy
from .._index import _convert_index
from .._tensor import Tensor, _dim, _make, _wrap
from .._dispatch import _apply, _apply1, _apply_prim2
from ._common import _as_tensor, _cast, _is_scalar, _range, _with_out


def _idx_arr(index, op=None):
    """An index tensor's values: a host array, or the traced Array itself under funcgrad.func transforms
    (then the host-side bounds checks are skipped). op: the name of a function taking an index tensor
    argument (gather, index_select, ...), for which torch reports a non-integer index as a RuntimeError."""
    if op is not None and isinstance(index, Tensor) and index._np_dtype().kind not in "iu":
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")
    if isinstance(index, Tensor) and index._v is None:
        v = index._a
        if np.dtype(v.dtype).kind not in "iu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return v
    v = index._host() if isinstance(index, Tensor) else np.asarray(index)
    if v.dtype.kind not in "iu":
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return v


@_with_out()
def index_select(input, dim, index):
    d = _dim(dim, input.ndim)
    if isinstance(index, Tensor) and index.ndim > 1:  # (before its dtype, as torch)
        raise IndexError("index_select(): Index is supposed to be a vector")
    idx = _idx_arr(index, "index_select")
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    n = input.shape[d] if input.ndim else 1
    if idx.size and isinstance(idx, np.ndarray) and (idx.min() < 0 or idx.max() >= n):
        if d != 1:
            raise IndexError("index out of range in self")
        bad = int(idx[(idx < 0) | (idx >= n)][0])  # (torch's dim-1 kernel: its message and a RuntimeError)
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={n}")
    idx = idx.reshape(-1)
    return _apply1("IndexSelect", lambda a: jnp.take(a, idx, axis=d) if a.ndim else a, input)


def _gather_index(shape_idx, d, idx):
    grids = list(np.indices(shape_idx, sparse=True))
    grids[d] = idx
    return tuple(grids)


_GRIDS: dict = {}  # (shape, out shape) -> each position's coordinates, (out shape) + (len(shape),), int64
_ALL_AXES: dict = {}  # ndim -> gather's params addressing every axis


def _gather_along(name, input, idx, d, out_shape=None):
    """input gathered along dim d at the host index array idx (in range; out_shape, default idx.shape: the
    shape idx and the result are read in, of idx's size): one bind of the gather primitive at the coordinate
    rows (each position's own coordinates, idx's in column d), so one recorded node, `name` (torch's
    GatherBackward0, MaxBackward0, ...), whose backward is gather's rule (a scatter-add into zeros)."""
    shape = idx.shape
    out_shape = shape if out_shape is None else out_shape
    nd = len(shape)
    base = _GRIDS.get((shape, out_shape))
    if base is None:
        if len(_GRIDS) > 1024:
            _GRIDS.clear()
        base = _GRIDS[(shape, out_shape)] = np.stack(np.indices(shape, np.int64), -1).reshape(out_shape + (nd,))
    rows = base.copy()
    rows[..., d] = idx.reshape(out_shape)
    params = _ALL_AXES.get(nd)
    if params is None:
        params = _ALL_AXES[nd] = {"axes": tuple(_range(nd))}
    return _apply_prim2(name, _gather_p, lambda a, r: _gather_p.bind(a, r, **params), input, _make(rows), params)


def _as_vectors(input, index):
    """torch reads a 0-d tensor or a 0-d index in gather/scatter as one element: both as 1-d tensors."""
    t = index if isinstance(index, Tensor) else _make(np.array(index))
    return input.reshape(-1), t.reshape(-1)


@_with_out()
def gather(input, dim, index, *, sparse_grad=False):
    d = _dim(dim, input.ndim)
    idx = _idx_arr(index, "gather")
    if (idx.ndim == 0 or input.ndim == 0) and idx.ndim <= 1 and input.ndim <= 1:
        vin, vidx = _as_vectors(input, index)
        return gather(vin, 0, vidx).reshape(tuple(idx.shape))
    if idx.ndim != input.ndim and not (idx.ndim <= 1 and input.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for i in _range(idx.ndim):
        if i != d and idx.shape[i] > input.shape[i]:
            raise RuntimeError(f"Size does not match at dimension {i} expected index {list(idx.shape)} to be no "
                               f"larger than self {list(input.shape)} apart from dimension {d}")
    n = input.shape[d] if input.ndim else 1
    if idx.size and isinstance(idx, np.ndarray) and (idx.min() < 0 or idx.max() >= n):
        bad = int(idx.min()) if idx.min() < 0 else int(idx.max())
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    if input._v is not None and isinstance(idx, np.ndarray) and idx.size and input.numel():
        return _gather_along("Gather", input, idx, d)
    full = _gather_index(idx.shape, d, idx)
    return _apply1("Gather", lambda a: a[full], input)


def take_along_dim(input, indices, dim=None):
    idx = _idx_arr(indices)
    if dim is None:
        return _apply1("TakeAlongDim", lambda a: jnp.take_along_axis(jnp.ravel(a), idx.reshape(-1), axis=0), input)
    d = _dim(dim, input.ndim)
    return _apply1("TakeAlongDim", lambda a: jnp.take_along_axis(a, idx, axis=d), input)


def take(input, index):
    if isinstance(index, Tensor) and index._np_dtype() != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {_legacy(index._np_dtype())}")
    idx = _idx_arr(index)
    if isinstance(idx, np.ndarray) and idx.size:  # (jnp's read would clamp, as JAX's: torch raises)
        n = input.numel()
        bad = idx[(idx >= n) | (idx < -n)]
        if bad.size:
            raise IndexError(f"out of range: tried to access index {bad.flat[0]} on a tensor of {n} elements.")
    return _apply1("Take", lambda a: jnp.ravel(a)[idx], input)


def _scatter_fn(d, idx, reduce, dt):
    full = _gather_index(idx.shape, d, idx)

    def fn(a, src):
        src = _cast(src, dt)
        if src.shape != idx.shape:
            src = src[tuple(slice(0, s) for s in idx.shape)]
        if reduce is None:
            return a.at[full].set(src)
        if reduce in ("add", "sum"):
            return a.at[full].add(src)
        if reduce in ("multiply", "prod"):
            return a.at[full].mul(src)
        if reduce == "amax":
            return a.at[full].max(src)
        if reduce == "amin":
            return a.at[full].min(src)
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    return fn


def _src(src, value, shape, dt):
    if src is None:
        src = value
    if isinstance(src, Tensor):
        return src
    return _wrap(Array(np.full(shape, src, dt)))


def _check_index_bounds(idx, d, n, exc=RuntimeError, prefix=""):
    """torch's scatter/index_add/index_copy refuse indices outside [0, n) (negative ones too)."""
    if idx.size and isinstance(idx, np.ndarray) and (idx.min() < 0 or idx.max() >= n):
        bad = int(idx.reshape(-1)[((idx < 0) | (idx >= n)).reshape(-1)][0])  # (the first, as torch's loop meets it)
        raise exc(f"{prefix}index {bad} is out of bounds for dimension {d} with size {n}")


def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    d = _dim(dim, input.ndim)
    idx = _idx_arr(index, "scatter")
    if (idx.ndim == 0 or input.ndim == 0) and idx.ndim <= 1 and input.ndim <= 1:
        vin, vidx = _as_vectors(input, index)
        if isinstance(src, Tensor):
            src = src.reshape(-1)
        return scatter(vin, 0, vidx, src, value, reduce=reduce).reshape(tuple(input.shape))
    if isinstance(src, Tensor):
        _check_same_dtype("scatter(): Expected self.dtype to be equal to src.dtype", input, src)
    _scatter_shape_check(input, d, idx, src)
    n = input.shape[d] if input.ndim else 1
    _check_index_bounds(idx, d, n)
    s = _src(src, value, idx.shape, input._np_dtype())
    # (torch's nodes: ScatterBackward0 for a tensor src, 1 for a value; scatter_add's ScatterAddBackward0)
    name = ("ScatterAdd" if reduce == "add" else "Scatter") if isinstance(src, Tensor) else "Scatter1"
    return _apply(name, _scatter_fn(d, idx, reduce, input._np_dtype()), (input, s))


def _scatter_shape_check(input, d, idx, src) -> None:
    """torch's scatter_shape_check: index has self's (and src's) number of dimensions and is no larger than src,
    nor than self apart from dim."""
    if idx.ndim != input.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if not isinstance(src, Tensor):
        return
    if max(src.ndim, 1) != max(idx.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if idx.size and any(idx.shape[i] > src.shape[i] or i != d and idx.shape[i] > input.shape[i]
                        for i in range(idx.ndim)):
        raise RuntimeError(f"Expected index {list(idx.shape)} to be no larger than self {list(input.shape)} apart "
                           f"from dimension {d} and to be no larger size than src {list(src.shape)}")


def scatter_add(input, dim, index, src):
    return scatter(input, dim, index, src, reduce="add")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """Reduce src's values into input at index along dim (sum, prod, mean, amax, amin); include_self=False
    leaves input's own values out of the reduction wherever something is scattered."""
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    _check_same_dtype("scatter(): Expected self.dtype to be equal to src.dtype", input, src)
    d = _dim(dim, input.ndim)
    idx = _idx_arr(index)
    _check_index_bounds(idx, d, input.shape[d] if input.ndim else 1)
    dt = input._np_dtype()
    if include_self and reduce != "mean":
        return _apply("ScatterReduce", _scatter_fn(d, idx, reduce, dt), (input, src))
    full = _gather_index(idx.shape, d, idx)
    counts = np.zeros(tuple(input.shape), np.int64)
    np.add.at(counts, full, 1)
    hit = counts > 0
    if reduce == "mean":
        denom = np.maximum(counts + (1 if include_self else 0), 1)
        ident = 0
    elif reduce in ("amax", "amin"):
        big = np.inf if D.kind(dt) == "f" else (np.iinfo(dt).max if dt.kind in "iu" else True)
        ident = -big if reduce == "amax" and D.kind(dt) == "f" else (
            (np.iinfo(dt).min if dt.kind in "iu" else False) if reduce == "amax" else big)
    else:
        ident = 1 if reduce == "prod" else 0
    op = {"mean": "sum"}.get(reduce, reduce)
    scat = _scatter_fn(d, idx, op, dt)
    hit_a = Array(hit)

    def fn(a, s):
        base = a if include_self else ew.select(hit_a, jnp.full(a.shape, ident, a.dtype), a)
        r = scat(base, s)
        if reduce in ("amax", "amin") and D.kind(dt) == "f":
            # torch's backward splits a tie among the src values equal to the result and self where it equals
            # the result, left out or not (then its share goes nowhere): there the result itself, its gradient
            # stopped, joins the reduction in self's place (so the value, its zero's sign included, stays)
            tie = ew.bitwise_and(hit_a, ew.eq(a, r))
            r = scat(ew.select(tie, ew.stop_gradient(r), base), s)
        if reduce != "mean":
            return r
        if D.kind(dt) == "f" or dt.kind == "c":
            return r / Array(denom.astype(dt))
        return jnp.floor_divide(r, Array(denom.astype(dt)))
    return _apply("ScatterReduce", fn, (input, src))


def index_add(input, dim, index, source, *, alpha=1):
    _check_same_dtype("index_add_(): self ({0}) and source ({1}) must have the same scalar type", input, source)
    d = _dim(dim, input.ndim)
    idx = _idx_arr(index).reshape(-1)
    if source.ndim and idx.size != source.shape[d if d < source.ndim else -1]:
        raise RuntimeError(f"index_add_(): Number of indices ({idx.size}) should be equal to source.size(dim): "
                           f"({source.shape[d if d < source.ndim else -1]}), for dim: {d}")
    if input.ndim and source.ndim and (source.ndim != input.ndim or any(
            a != b for i, (a, b) in enumerate(zip(input.shape, source.shape)) if i != d)):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(input.shape)} source.shape = {list(source.shape)}")
    n = input.shape[d] if input.ndim else 1
    if input.ndim > 1 and alpha == 1 and d in (0, input.ndim - 1):  # (torch's scatter_add path)
        _check_index_bounds(idx, d, n)
    elif idx.size and isinstance(idx, np.ndarray) and (idx.min() < 0 or idx.max() >= n):
        raise IndexError("index out of range in self")  # (torch's loop over the index, alpha != 1 or a middle dim)
    if alpha != 1:
        source = source * alpha
    dt = input._np_dtype()
    key = (slice(None),) * d + (idx,)
    return _apply("IndexAdd", lambda a, s: a.at[key].add(_cast(s, dt)), (input, source))


def index_copy(input, dim, index, source):
    d = _dim(dim, input.ndim)
    _index_copy_checks(input, d, index, source)
    idx = _idx_arr(index).reshape(-1)
    _check_index_bounds(idx, d, input.shape[d] if input.ndim else 1, IndexError, "index_copy_(): ")
    dt = input._np_dtype()
    key = (slice(None),) * d + (idx,)
    return _apply("IndexCopy", lambda a, s: a.at[key].set(_cast(s, dt)), (input, source))


def _index_copy_checks(input, d, index, source) -> None:
    """torch's index_copy_ checks, in its order (IndexError where it uses TORCH_CHECK_INDEX)."""
    if index.ndim >= 2:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    k = index.numel()
    if source.ndim == 0 and k != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element (got {k})")
    if source.ndim != input.ndim and source.ndim and input.ndim:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their dimensionality must "
                         f"match. Source dimensionality ({source.ndim}), destination dimensionality ({input.ndim})")
    if index._np_dtype() != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {_legacy(index._np_dtype())}")
    _check_same_dtype("index_copy_(): self and source expected to have the same dtype, but got (self) {0} and "
                      "(source) {1}", input, source)
    dst = [s for i, s in enumerate(input.shape) if i != d]
    src = [s for i, s in enumerate(source.shape) if i != d]
    if dst != src:
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
                           f"shape: {' '.join(map(str, dst))} at dimension {d} and source slice shape: "
                           f"{' '.join(map(str, src))} at dimension 0.")
    if source.ndim and k != source.shape[d]:
        raise IndexError(f"index_copy_(): Number of indices ({k}) should be equal to source.size(dim) "
                         f"({source.shape[d]})")


def index_fill(input, dim, index, value):
    d = _dim(dim, input.ndim)
    if isinstance(index, Tensor):
        if index.ndim > 1:
            raise RuntimeError("Index has to be a vector/scalar")
        if index._np_dtype() != np.int64:
            raise IndexError("index_fill_(): Expected dtype int64 for index.")
    idx = _idx_arr(index).reshape(-1)
    dt = input._np_dtype()
    key = (slice(None),) * d + (idx,)
    if isinstance(value, Tensor):
        return _apply("IndexFill", lambda a, v: a.at[key].set(_cast(v, dt)), (input, value))
    s = Array(np.asarray(D.checked_scalar(value, dt)))  # (c10's checked_convert: torch's overflow errors)
    return _apply1("IndexFill", lambda a: a.at[key].set(s), input)


def _check_put_bounds(input, indices) -> None:
    """torch's IndexError for an out-of-range integer index of index_put (the update would drop it silently),
    over the leading integer index tensors (a mask or None shifts the dimensions: the checks stop there)."""
    for d, t in enumerate(indices):
        if not isinstance(t, Tensor) or t._v is None or t._np_dtype().kind not in "iu" or d >= input.ndim:
            return
        v, n = t._host(), input.shape[d]
        bad = v[(v >= n) | (v < -n)]
        if bad.size:
            raise IndexError(f"index {bad.flat[0]} is out of bounds for dimension {d} with size {n}")


def index_put(input, indices, values, accumulate=False):
    _check_put_bounds(input, indices)
    key = _convert_index(tuple(indices))
    dt = input._np_dtype()
    if isinstance(values, Tensor):
        _check_same_dtype("Index put requires the source and destination dtypes match, got {0} for the destination "
                          "and {1} for the source.", input, values)
    values = _as_tensor(values) if not _is_scalar(values) else _wrap(Array(np.array(values, dt)))
    if accumulate:
        return _apply("IndexPut", lambda a, v: a.at[key].add(_cast(v, dt)), (input, values))
    return _apply("IndexPut", lambda a, v: a.at[key].set(_cast(v, dt)), (input, values))


def nonzero(input, *, as_tuple=False):
    v = input._host()
    nz = np.nonzero(v) if v.ndim else np.nonzero(v.reshape(1))
    if as_tuple:
        return tuple(_wrap(Array(np.ascontiguousarray(i, dtype=np.int64))) for i in nz)
    if not v.ndim:  # a 0-d input: one row per nonzero (0 or 1), with no columns
        return _wrap(Array(np.zeros((len(nz[0]), 0), np.int64)))
    return _wrap(Array(np.ascontiguousarray(np.stack(nz, axis=1), dtype=np.int64)))


def argwhere(input):
    return nonzero(input)


# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods
METHODS = ("index_select", "gather", "take_along_dim", "take", "scatter", "scatter_add", "scatter_reduce",
           "index_add", "index_copy", "index_fill", "index_put", "nonzero", "argwhere")
INPLACE = ("scatter", "scatter_add", "scatter_reduce", "index_add", "index_copy", "index_fill", "index_put")

__all__ = ["argwhere", "gather", "index_add", "index_copy", "index_fill", "index_put", "index_select", "nonzero",
           "scatter", "scatter_add", "scatter_reduce", "take", "take_along_dim"]
