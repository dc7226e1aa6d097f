"""LU factorisation, torch's top-level and torch.linalg's: lu_factor / lu_factor_ex, linalg.lu, lu_unpack,
linalg.lu_solve, and the legacy torch.lu / torch.lu_solve.

Pivots are chosen on the host from the values (partial pivoting) and the factorisation of the permuted matrix is
then computed by differentiable elimination, so gradients come from the recorded ops."""
from __future__ import annotations

import warnings

import numpy as np

from . import _jnp as jnp
from .._src.core.array import Array
from .ops import diagonals, products
from .ops._common import _out
from . import return_types as _rt
from ._creation import empty, eye
from ._tensor import _wrap
from ._dispatch import _apply1
from .linalg import _bcast_batch, _tri

_lu_unpack_t = _rt.lu_unpack
_lu_factor_t = _rt.linalg_lu_factor
_lu_factor_ex_t = _rt.linalg_lu_factor_ex
_lu_t = _rt.linalg_lu


def _host_pivots(h: np.ndarray):
    """LAPACK-style row pivots (1-based, per step) and the row permutation of partial pivoting on host values
    h (..., m, n)."""
    m, n = h.shape[-2], h.shape[-1]
    k = min(m, n)
    batch = h.shape[:-2]
    a = np.array(h, dtype=np.complex128 if h.dtype.kind == "c" else np.float64).reshape((-1, m, n))
    piv = np.zeros((a.shape[0], k), np.int32)
    perm = np.tile(np.arange(m), (a.shape[0], 1))
    for b in range(a.shape[0]):
        x = a[b]
        for j in range(k):
            p = j + int(np.argmax(np.abs(x[j:, j])))
            piv[b, j] = p + 1
            if p != j:
                x[[j, p]] = x[[p, j]]
                perm[b, [j, p]] = perm[b, [p, j]]
            if x[j, j] != 0:
                x[j + 1:, j] /= x[j, j]
                x[j + 1:, j + 1:] -= np.outer(x[j + 1:, j], x[j, j + 1:])
    return piv.reshape(batch + (k,)), perm.reshape(batch + (m,))


def _lu_nopivot(a, k):
    """Doolittle elimination of Array a (..., m, n) without pivoting: the packed LU (unit L below)."""
    m = a.shape[-2]
    for j in range(k):
        piv = a[..., j:j + 1, j:j + 1]
        # a zero pivot (after partial pivoting the column below is zero too) leaves the column as it is
        piv = jnp.where(piv == 0, jnp.ones_like(piv), piv)
        col = a[..., j + 1:, j:j + 1] / piv
        a = a.at[..., j + 1:, j:j + 1].set(col)
        if j + 1 < m:
            a = a.at[..., j + 1:, j + 1:].add(-(col * a[..., j:j + 1, j + 1:]))
    return a


def _lu_packed(A):
    h = A._host()
    k = min(A.shape[-2], A.shape[-1])
    piv, perm = _host_pivots(h)
    LU = _apply1("LinalgLuFactor", lambda a: _lu_nopivot(_permute_rows(a, perm), k), A)
    return LU, _wrap(Array(piv)), perm


def _permute_rows(a, perm):
    """Rows of a (..., m, n) reordered by perm (..., m) (an Array gather, so differentiable)."""
    idx = np.broadcast_to(perm[..., :, None], perm.shape + (a.shape[-1],)).astype(np.int64)
    return jnp.take_along_axis(a, Array(np.ascontiguousarray(idx)), axis=-2)


def _check_lu_input(A, op):
    if A.ndim < 2:
        raise RuntimeError(f"torch.linalg.{op}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if A._np_dtype().kind not in "fc":
        raise RuntimeError(f"linalg.{op}: Expected a floating point or complex tensor as input. Got {A.dtype}")


def lu_factor(A, *, pivot=True, out=None):
    """(LU, pivots): the packed LU factorisation with partial pivoting (pivots 1-based, int32)."""
    _check_lu_input(A, "lu_factor")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    LU, piv, _ = _lu_packed(A)
    d = np.diagonal(LU._host(), axis1=-2, axis2=-1).reshape(-1, min(A.shape[-2:]))
    for b, row in enumerate(d):
        zero = np.nonzero(row == 0)[0]
        if zero.size:
            where = f"(Batch element {b}): " if A.ndim > 2 else ""
            raise RuntimeError(f"torch.linalg.lu_factor: {where}U[{zero[0] + 1},{zero[0] + 1}] is zero and using it on "
                               "lu_solve would result in a division by zero. If you still want to perform the "
                               "factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return _lu_factor_t(LU, piv)


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """(LU, pivots, info): info is 0, or (1-based) the first zero on U's diagonal, per matrix."""
    _check_lu_input(A, "lu_factor_ex")
    if check_errors:
        lu_factor(A, pivot=pivot)
    LU, piv, _ = _lu_packed(A)
    d = np.abs(np.diagonal(LU._host(), axis1=-2, axis2=-1))
    zero = d == 0
    info = np.where(zero.any(-1), np.argmax(zero, -1) + 1, 0).astype(np.int32)
    return _lu_factor_ex_t(LU, piv, _wrap(Array(np.asarray(info))))


def _unpack(LU, perm_or_piv, from_pivots: bool):
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    L = diagonals.tril(LU[..., :, :k], -1) + eye(m, k, dtype=LU.dtype)
    U = diagonals.triu(LU[..., :k, :])
    if from_pivots:
        piv = perm_or_piv._host().astype(np.int64) - 1
        perm = np.tile(np.arange(m), piv.shape[:-1] + (1,))
        for j in range(piv.shape[-1]):
            p = piv[..., j]
            a = np.take_along_axis(perm, np.full(p.shape + (1,), j), -1)[..., 0]
            b = np.take_along_axis(perm, p[..., None], -1)[..., 0]
            np.put_along_axis(perm, np.full(p.shape + (1,), j), b[..., None], -1)
            np.put_along_axis(perm, p[..., None], a[..., None], -1)
    else:
        perm = perm_or_piv
    P = np.zeros(perm.shape + (m,), LU._np_dtype())
    np.put_along_axis(P, perm[..., :, None], 1, -1)  # P_rows[i, perm[i]] = 1: (P^T A) rows
    return _wrap(Array(np.ascontiguousarray(np.swapaxes(P, -1, -2)))), L, U


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """(P, L, U) from a packed LU and its pivots, with A = P L U."""
    P, L, U = _unpack(LU_data, LU_pivots, True)
    return _lu_unpack_t(P if unpack_pivots else empty(0), L if unpack_data else empty(0),
                        U if unpack_data else empty(0))


def linalg_lu(A, *, pivot=True, out=None):
    """(P, L, U) with A = P L U (partial pivoting)."""
    _check_lu_input(A, "lu")
    LU, _, perm = _lu_packed(A)
    P, L, U = _unpack(LU, perm, False)
    return _lu_t(P, L, U)


def lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu (deprecated): (A_LU, pivots) or (A_LU, pivots, infos)."""
    warnings.warn("torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will "
                  "be removed in a future PyTorch release.", UserWarning, stacklevel=2)
    r = lu_factor_ex(A, pivot=pivot)
    return (r.LU, r.pivots, r.info) if get_infos else (r.LU, r.pivots)


def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """X with A X = B (or X A = B when left=False; A^H when adjoint) for A given by lu_factor."""
    P, L, U = _unpack(LU, pivots, True)
    if not left:  # X A = B  <=>  A^H X^H = B^H
        Xh = linalg_lu_solve(LU, pivots, B.mH, left=True, adjoint=not adjoint)
        return Xh.mH
    L, B2 = _bcast_batch(L, B)
    U, _ = _bcast_batch(U, B)
    P, _ = _bcast_batch(P, B)
    if adjoint:  # A^H = U^H L^H P^T: U^H y = B, L^H z = y, X = P z
        y = _tri(U, B2, lower=False, transpose=True)
        z = _tri(L, y, lower=True, transpose=True, unit=True)
        return products.matmul(P, z)
    y = _tri(L, products.matmul(P.mT, B2), lower=True, unit=True)
    return _tri(U, y, lower=False)


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """torch.lu_solve (legacy argument order): X with A X = b."""
    warnings.warn("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future "
                  "PyTorch release.", UserWarning, stacklevel=2)
    return _out(linalg_lu_solve(LU_data, LU_pivots, b), out)



# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods_ops
METHODS = ("lu_solve",)
INPLACE = ()

__all__ = ["lu", "lu_solve", "lu_unpack"]

# torch.linalg's names for the functions here (installed on funcgrad._torch.linalg by the package)
LINALG = {"lu_factor": lu_factor, "lu_factor_ex": lu_factor_ex, "lu": linalg_lu, "lu_solve": linalg_lu_solve}
