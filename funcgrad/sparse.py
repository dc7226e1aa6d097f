"""torch.sparse: products and sums of the sparse COO tensors of funcgrad._torch._sparse (dense results for
products, as torch gives for sparse @ dense)."""
from __future__ import annotations

from ._torch.ops import products as _products
from ._torch._sparse import sparse_coo_tensor  # noqa: F401

__all__ = ["mm", "addmm", "sum", "sparse_coo_tensor"]


def mm(mat1, mat2, reduce=None):
    """mat1 @ mat2 for a sparse mat1 and a dense (or sparse) mat2."""
    if reduce not in (None, "sum"):
        raise NotImplementedError(f"torch.sparse.mm: reduce={reduce!r} is not supported")
    return _products.mm(mat1, mat2)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """beta * mat + alpha * (mat1 @ mat2) for a sparse mat1 (a dense result, as torch.sparse.addmm)."""
    return _products.addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


def sum(input, dim=None, dtype=None):  # noqa: A001 - torch's name
    """The sum over all (dim=None: a dense scalar) or the given sparse dims (a sparse tensor)."""
    if dim is None:
        return input.to_dense().sum(dtype=dtype)
    out = input.to_dense().sum(dim, dtype=dtype)
    return out.to_sparse() if out.ndim else out
