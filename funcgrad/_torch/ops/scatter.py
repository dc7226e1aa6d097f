"""torch's out-of-place writes: the *_scatter family (diagonal, select, slice, as_strided), put,
masked_scatter and index_reduce. Each returns a copy of the input with some entries replaced, as one recorded
`.at[...]` update, so gradients flow to both the input (outside the written entries) and the source."""
from __future__ import annotations

import numpy as np

from .. import _jnp as jnp
from ..._src.core.array import Array
from . import indexing
from ._common import _bshape, _cast
from .._tensor import _dim, _wrap
from .._dispatch import _apply
from .._errors import _legacy
from ._common import _host_int


# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods_ops
METHODS = ("diagonal_scatter", "select_scatter", "slice_scatter", "as_strided_scatter", "masked_scatter", "put",
           "index_reduce")
INPLACE = ("masked_scatter", "put", "index_reduce")

__all__ = ["diagonal_scatter", "select_scatter", "slice_scatter", "as_strided_scatter", "put", "masked_scatter",
           "index_reduce"]


# --- writes into copies: the *_scatter family, put, masked_scatter, index_reduce ---------------------------

def _embed(name, input, src, positions):
    """A copy of input with the entries at flat `positions` (shaped like the view) replaced by src."""
    if tuple(src.shape) != positions.shape:
        raise RuntimeError(f"{name}: expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(positions.shape)}")
    dt = input._np_dtype()
    flat = positions.reshape(-1)
    shape = tuple(input.shape)
    return _apply(name.capitalize().replace("_", ""),
                  lambda a, s: jnp.ravel(a).at[flat].set(jnp.ravel(_cast(s, dt))).reshape(shape),
                  (input, src))


def _iota(input):
    return np.arange(input.numel(), dtype=np.int64).reshape(tuple(input.shape))


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    return _embed("diagonal_scatter", input, src, np.diagonal(_iota(input), offset, _dim(dim1, input.ndim),
                                                              _dim(dim2, input.ndim)))


def select_scatter(input, src, dim, index):
    d = _dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select_scatter(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    return _embed("select_scatter", input, src, np.take(_iota(input), index, axis=d))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    d = _dim(dim, input.ndim)
    key = (slice(None),) * d + (slice(start, end, step),)
    return _embed("slice_scatter", input, src, _iota(input)[key])


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    it = _iota(input).reshape(-1)
    pos = np.lib.stride_tricks.as_strided(it[(storage_offset or 0):], tuple(size),
                                          tuple(s * it.itemsize for s in stride))
    return _embed("as_strided_scatter", input, src, np.array(pos))


def put(input, index, source, accumulate=False):
    """A copy of input with source written (or added) at the flat indices `index`."""
    if input._np_dtype() != source._np_dtype():
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_legacy(input._np_dtype())} and source.dtype = {_legacy(source._np_dtype())}")
    idx = _host_int(index, "put").reshape(-1)
    n = input.numel()
    if idx.size and (idx.max() >= n or idx.min() < -n):
        bad = idx[(idx >= n) | (idx < -n)][0]
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    if source.numel() != idx.size:
        raise RuntimeError(f"put_(): Expected source and index to have the same number of elements, but got source "
                           f"with {source.numel()} elements and index with {idx.size} elements")
    idx = np.where(idx < 0, idx + n, idx)
    dt = input._np_dtype()
    shape = tuple(input.shape)

    def fn(a, s):
        f = jnp.ravel(a).at[idx]
        s = jnp.ravel(_cast(s, dt))
        return (f.add(s) if accumulate else f.set(s)).reshape(shape)
    return _apply("Put", fn, (input, source))


def masked_scatter(input, mask, source):
    """A copy of input whose entries where mask is True take source's elements in order."""
    _bshape(tuple(mask.shape), tuple(input.shape))  # (torch's first check)
    if mask._np_dtype() != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_legacy(mask._np_dtype())}")
    if input._np_dtype() != source._np_dtype():
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got "
                           f"{_legacy(input._np_dtype())} and {_legacy(source._np_dtype())}")
    shape = _bshape(tuple(input.shape), tuple(mask.shape))
    m = np.broadcast_to(mask._host(), shape).reshape(-1)
    pos = np.nonzero(m)[0]
    if pos.size > source.numel():
        raise RuntimeError("masked_scatter: expected source to have at least as many elements as ones in mask")
    x = input.expand(*shape) if tuple(input.shape) != shape else input

    def fn(a, s):
        return jnp.ravel(a).at[pos].set(jnp.ravel(s)[:pos.size]).reshape(shape)
    return _apply("MaskedScatter", fn, (x, source))


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """Reduce source's slices into input's slices at `index` along dim (prod, mean, amax, amin)."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    d = _dim(dim, input.ndim)
    idx = _host_int(index, "index_reduce").reshape(-1)
    if source.ndim and source.shape[d] != idx.size:
        raise RuntimeError("index_reduce_(): Number of indices (" + str(idx.size) + ") should be equal to "
                           "source.size(dim) (" + str(source.shape[d]) + ")")
    shape = [1] * source.ndim
    shape[d] = idx.size
    full = np.broadcast_to(idx.reshape(shape), tuple(source.shape)).copy()
    return indexing.scatter_reduce(input, d, _wrap(Array(full)), source, reduce, include_self=include_self)
