"""Sparse COO tensors, as far as graph-network code uses them: `torch.sparse_coo_tensor`, `x.to_sparse()`,
`indices()/values()/_nnz()/coalesce()/to_dense()`, and products `sparse @ dense` (`mm`, `matmul`, `spmm`,
`torch.sparse.mm`) that give dense results.

A funcgrad sparse tensor is an ordinary (dense, strided) Tensor holding the dense equivalent of the COO data
(duplicate entries summed, as torch sums them when it densifies or coalesces), tagged with its COO
`indices` (int64, sparse_dim x nnz) and `values` in `__dict__["_coo"]`. It reports `layout ==
torch.sparse_coo` and `is_sparse`; products with it are computed densely, so their values (and gradients to
the dense operand, and to `values` when those require grad) are torch's. Operations other than the ones
above return strided tensors where torch would keep the sparse layout (e.g. `sparse * 2`, `sparse.sum(1)`).
"""
from __future__ import annotations

import re

import numpy as np

from . import _creation as C
from . import _dtype as D
from ._formats import sparse_coo, strided
from .ops import indexing, products as _products
from ._tensor import Tensor

__all__ = ["sparse_coo_tensor", "spmm"]


def _coo(t):
    return t.__dict__.get("_coo") if isinstance(t, Tensor) else None


def _tag(dense: Tensor, indices: Tensor, values: Tensor, coalesced: bool) -> Tensor:
    dense.__dict__["_coo"] = (indices, values, bool(coalesced))
    return dense


def _densify(indices: Tensor, values: Tensor, size) -> Tensor:
    out = C.zeros(tuple(size), dtype=values.dtype)
    if indices.shape[1] == 0:
        return out
    idx = tuple(indices[d] for d in range(indices.shape[0]))
    return indexing.index_put(out, idx, values, accumulate=True)


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor from `indices` (sparse_dim x nnz integers) and `values` (nnz entries)."""
    if not isinstance(indices, Tensor):
        indices = C.tensor(np.asarray(indices))
    if not isinstance(values, Tensor):
        values = C.tensor(values, dtype=dtype)
    if indices.dtype.is_floating_point or indices.dtype.is_complex or indices.dtype == D.bool_:
        raise RuntimeError(f"indices must be an int64 tensor")
    indices = indices.long()
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.ndim != 1:
        raise RuntimeError("funcgrad's sparse tensors hold scalar values (hybrid sparse/dense tensors are not "
                           f"supported); got values of shape {list(values.shape)}")
    if indices.shape[1] != values.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {indices.shape[1]}, "
                           f"nnz from values: {values.shape[0]}")
    if dtype is not None:
        values = values.to(dtype)
    nd = indices.shape[0]
    if size is None:
        size = [int(m) + 1 for m in indices.amax(1).tolist()] if indices.shape[1] else [0] * nd
    size = [int(s) for s in size]
    if len(size) != nd:
        raise RuntimeError(f"number of dimensions must be sparse_dim ({nd}) + dense_dim (0), but got {len(size)}")
    if indices.shape[1]:
        lo, hi = indices.amin(1).tolist(), indices.amax(1).tolist()
        for d in range(nd):
            if lo[d] < 0:
                raise RuntimeError(f"found negative index {lo[d]} for dim {d}")
            if hi[d] >= size[d]:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found "
                                   f"index {hi[d]}")
    coalesced = bool(is_coalesced) if is_coalesced is not None else indices.shape[1] <= 1
    dense = _densify(indices, values, size)
    if requires_grad:
        dense.requires_grad_(True)
    return _tag(dense, indices, values, coalesced)


def _to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    from ._formats import sparse_coo
    if layout is not None and layout is not sparse_coo:
        raise NotImplementedError(f"to_sparse: funcgrad has only the sparse_coo layout, not {layout}")
    if (sparse_dim is not None and sparse_dim != self.ndim) or dense_dim:
        raise NotImplementedError("to_sparse: hybrid sparse/dense tensors are not supported (sparse_dim must be "
                                  "the tensor's dimension)")
    if _coo(self) is not None:
        return self
    host = np.asarray(self.detach()._host())
    nz = np.nonzero(host)
    indices = C.tensor(np.stack(nz).astype(np.int64).reshape(self.ndim, -1))
    values = self[tuple(C.tensor(i.astype(np.int64)) for i in nz)] if self.ndim else self.reshape(1)[host.reshape(1) != 0]
    return _tag(self.clone(), indices, values, True)


def _need(self, name):
    c = _coo(self)
    if c is None:
        raise RuntimeError(f"{name}(): Could not run on a strided tensor (only sparse tensors have it)")
    return c


def _coalesce(self):
    indices, values, coalesced = _need(self, "coalesce")
    if coalesced:
        return self
    host = np.asarray(indices._host())
    flat = np.ravel_multi_index(tuple(host), tuple(self.shape)) if host.shape[1] else host[0]
    uniq, inv = np.unique(flat, return_inverse=True)
    new_idx = C.tensor(np.stack(np.unravel_index(uniq, tuple(self.shape))).astype(np.int64).reshape(self.ndim, -1))
    new_vals = C.zeros((len(uniq),), dtype=values.dtype).index_add(0, C.tensor(inv.astype(np.int64)), values)
    return _tag(self.clone(), new_idx, new_vals, True)


def _indices(self):
    return _need(self, "indices")[0]


def _values(self):
    return _need(self, "values")[1]


def _coalesced_part(self, part: str):
    """indices() / values(): as _indices/_values, but refused on an uncoalesced tensor (torch's message)."""
    indices, values, coalesced = _need(self, part)
    if not coalesced:
        raise RuntimeError(f"Cannot get {part} on an uncoalesced tensor, please call .coalesce() first")
    return indices if part == "indices" else values


def _checked_indices(self):
    return _coalesced_part(self, "indices")


def _checked_values(self):
    return _coalesced_part(self, "values")


def _to_dense(self, dtype=None, *, masked_grad=None):
    if _coo(self) is None:
        return self if dtype is None else self.to(dtype)
    out = self.clone() if self.requires_grad or self.grad_fn is not None else self.detach().clone()
    return out if dtype is None else out.to(dtype)


def _sparse_repr(self):
    indices, values, _ = _coo(self)
    pad = " " * len("tensor(indices=")
    ind = repr(indices).replace("\n", "\n" + pad)
    val = re.sub(r",\s*dtype=torch\.\w+\)$", ")", repr(values)).replace("\n", "\n" + " " * len("       values="))
    extra = ""
    if self.dtype not in (D.get_default_dtype(), D.int64, D.bool_):
        extra = f", dtype={self.dtype}"
    return (f"tensor(indices={ind},\n       values={val},\n       size={tuple(self.shape)}, nnz={values.shape[0]}"
            f"{extra}, layout=torch.sparse_coo)")


def spmm(input, mat2):
    """torch.spmm: a (sparse or dense) matrix times a dense matrix, as a dense matrix."""
    return _products.mm(input, mat2)


def methods() -> dict:
    """Tensor's sparse COO attributes (name -> method or property), installed by _methods.install."""
    m = {}
    m["is_sparse"] = property(lambda self: _coo(self) is not None)
    m["layout"] = property(lambda self: sparse_coo if _coo(self) is not None else strided)
    m["to_sparse"] = _to_sparse
    m["to_sparse_coo"] = lambda self: _to_sparse(self)
    m["to_dense"] = _to_dense
    m["coalesce"] = _coalesce
    m["is_coalesced"] = lambda self: _need(self, "is_coalesced")[2]
    m["_indices"] = _indices
    m["_values"] = _values
    m["indices"] = _checked_indices
    m["values"] = _checked_values
    m["_nnz"] = lambda self: _need(self, "_nnz")[1].shape[0]
    m["sparse_dim"] = lambda self: self.ndim if _coo(self) is not None else 0
    m["dense_dim"] = lambda self: 0 if _coo(self) is not None else self.ndim
    base_repr = Tensor.__repr__
    m["__repr__"] = lambda self: _sparse_repr(self) if _coo(self) is not None else base_repr(self)
    return m
