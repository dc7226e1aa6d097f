"""torch's legacy top-level linear algebra (det, inverse, cholesky_solve, lu, triangular_solve, svd with V,
...) and the torch.linalg functions beyond the core set (matrix_exp, lu_factor, lu_solve, solve_triangular,
multi_dot, vecdot, ...).

All are compositions of recorded funcgrad ops (linalg primitives, matmul, triangular_solve), so their
gradients come from the primitives. LU pivots are chosen on the host from the values (partial pivoting) and
the factorisation of the permuted matrix is then computed by differentiable elimination.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from . import _jnp as jnp
from .._src.core.array import Array
from .._src.prims import linalg_decomp as _ld
from . import _dtype as D
from . import _creation as _C
from . import _ops as O
from . import linalg as LA
from ._argcheck import DtypeName, check_same_dtype
from ._tensor import Tensor, _apply, _apply1, _wrap

from . import return_types as _rt  # noqa: E402
_svd_t, _slogdet_t, _tri_t, _lu_unpack_t = _rt.svd, _rt.slogdet, _rt.triangular_solve, _rt.lu_unpack
_lu_factor_t, _lu_factor_ex_t, _lu_t, _qr_t = _rt.linalg_lu_factor, _rt.linalg_lu_factor_ex, _rt.linalg_lu, _rt.qr
_lstsq_t, _ex_t, _chol_ex_t, _solve_ex_t = (_rt.linalg_lstsq, _rt.linalg_inv_ex, _rt.linalg_cholesky_ex,
                                            _rt.linalg_solve_ex)


def _removed(name: str, new: str):
    def fn(*args, **kwargs):
        raise RuntimeError(f"This function was deprecated since version 1.9 and is now removed. `torch.{name}` is "
                           f"deprecated in favor of `torch.linalg.{new}`.")
    fn.__name__ = name
    return fn


solve = _removed("solve", "solve")
lstsq = _removed("lstsq", "lstsq")
eig = _removed("eig", "eig")
symeig = _removed("symeig", "eigh")


# --- legacy names -----------------------------------------------------------------------------------------

def det(input):
    return LA.det(input)


def logdet(input):
    """log(det(input)): NaN for a negative determinant, -inf for a zero one."""
    sign, logabs = LA.slogdet(input)
    return O.where(O.lt(sign, 0), _C.full_like(logabs, math.nan), logabs) if not input.is_complex() else \
        O.add(logabs, O.log(sign))


def slogdet(input):
    s, l_ = LA.slogdet(input)
    return _slogdet_t(s, l_)


def inverse(input, *, out=None):
    return O._out(LA.inv(input), out)


def pinverse(input, rcond=1e-15):
    return LA.pinv(input, rtol=rcond)


def matrix_power(input, n):
    return LA.matrix_power(input, n)


def cholesky(input, upper=False, *, out=None):
    warnings.warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future "
                  "PyTorch release.", UserWarning, stacklevel=2)
    return O._out(LA.cholesky(input, upper=upper), out)


def _tri(A, B, *, lower, left=True, transpose=False, unit=False):
    return _apply("TriangularSolve", lambda a, b: _ld.triangular_solve(
        a, b, left_side=left, lower=lower, transpose_a=transpose, conjugate_a=transpose and a.dtype.kind == "c",
        unit_diagonal=unit), (A, B))


def _bcast_batch(A, B):
    """A and B with their batch dimensions (all but the last two) broadcast together."""
    batch = O._bshape(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    if tuple(A.shape[:-2]) != batch:
        A = A.expand(*batch, *A.shape[-2:])
    if tuple(B.shape[:-2]) != batch:
        B = B.expand(*batch, *B.shape[-2:])
    return A, B


def cholesky_solve(B, L, upper=False, *, out=None):
    """X with A X = B where A = L L^H (or U^H U when upper)."""
    if B.ndim < 2 or L.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {B.ndim} dimensions instead"
                           if B.ndim < 2 else f"u should have at least 2 dimensions, but has {L.ndim} dimensions "
                           "instead")
    if B._np_dtype() != L._np_dtype():
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {B.dtype} and A of type "
                           f"{L.dtype} instead.")
    L, B = _bcast_batch(L, B)
    # torch's derivative treats the factor as a whole matrix (A = L L^H with both triangles of L): the card's
    # "torch" convention, in forward and reverse mode alike
    return O._out(_apply("CholeskySolve", lambda l, b: _ld.cholesky_solve(l, b, lower=not upper, convention="torch"),
                         (L, B)), out)


def cholesky_inverse(L, upper=False, *, out=None):
    """The inverse of A = L L^H (or U^H U) from its Cholesky factor."""
    if L.ndim < 2 or L.shape[-1] != L.shape[-2]:
        raise RuntimeError("cholesky_inverse: A must be batches of square matrices")
    _raise_if_zero_diagonal(L)
    from ._creation import eye
    I_ = eye(L.shape[-1], dtype=L.dtype).expand(*L.shape)
    return O._out(cholesky_solve(I_, L, upper), out)


def _raise_if_zero_diagonal(L):
    """torch's cholesky_inverse (LAPACK potri) raises at a zero on the factor's diagonal, where cholesky_solve
    gives inf / NaN; traced values (funcgrad.func transforms) pass."""
    try:
        h = L._host()
    except Exception:  # noqa: BLE001 - a tracer: no value to look at
        return
    diag = np.diagonal(h, axis1=-2, axis2=-1).reshape(-1, h.shape[-1])
    for b, row in enumerate(diag):
        zero = np.nonzero(row == 0)[0]
        if zero.size:
            where = f"(Batch element {b}): " if L.ndim > 2 else ""
            raise LA.LinAlgError(f"cholesky_inverse: {where}The diagonal element {zero[0] + 1} is zero, the inversion "
                                 "could not be completed because the input matrix is singular.")


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """(X, A.clone()) with op(A) X = b for triangular A (op: transpose if asked)."""
    warnings.warn("torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be removed "
                  "in a future PyTorch release.", UserWarning, stacklevel=2)
    if b.ndim < 2 or A.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, but it has "
                           f"{b.ndim} dimensions instead" if b.ndim < 2 else
                           f"torch.triangular_solve: Expected A to have at least 2 dimensions, but it has {A.ndim} "
                           "dimensions instead")
    A2, b2 = _bcast_batch(A, b)
    x = _tri(A2, b2, lower=not upper, transpose=transpose, unit=unitriangular)
    return _tri_t(x, A2.clone())


def qr(input, some=True, *, out=None):
    q, r = LA.qr(input, mode="reduced" if some else "complete")
    return _qr_t(q, r)


def svd(input, some=True, compute_uv=True, *, out=None):
    """(U, S, V) with input = U diag(S) V^H (V, not V^H); compute_uv=False gives zero U and V."""
    if not compute_uv:
        s = LA.svdvals(input)
        m, n = input.shape[-2], input.shape[-1]
        from ._creation import zeros
        return _svd_t(zeros(*input.shape[:-2], m, m, dtype=input.dtype), s,
                      zeros(*input.shape[:-2], n, n, dtype=input.dtype))
    u, s, vh = LA.svd(input, full_matrices=not some)
    return _svd_t(u, s, vh.mH)


# --- matrix exponential -------------------------------------------------------------------------------------

_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
           10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.)


def matrix_exp(A):
    """exp(A) by scaling and squaring with the degree-13 Pade approximant (Higham 2005)."""
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_exp: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.ndim >= 2 else 1} by {A.shape[-1] if A.ndim else 1} matrices")
    if A._np_dtype().kind not in "fc":
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as input. Got "
                           f"{A.dtype}")
    n = A.shape[-1]
    if n == 0 or A.numel() == 0:
        return A.clone()
    h = A._host()
    norm1 = float(np.max(np.abs(h).sum(-2))) if h.size else 0.0
    theta = 5.371920351148152
    s = max(0, int(math.ceil(math.log2(norm1 / theta)))) if norm1 > theta else 0
    X = A / (2.0 ** s) if s else A
    from ._creation import eye
    I_ = eye(n, dtype=A.dtype).expand(*A.shape)
    b = _PADE13
    X2 = O.matmul(X, X)
    X4 = O.matmul(X2, X2)
    X6 = O.matmul(X4, X2)
    U = O.matmul(X, O.matmul(X6, X6 * b[13] + X4 * b[11] + X2 * b[9]) + X6 * b[7] + X4 * b[5] + X2 * b[3]
                 + I_ * b[1])
    V = O.matmul(X6, X6 * b[12] + X4 * b[10] + X2 * b[8]) + X6 * b[6] + X4 * b[4] + X2 * b[2] + I_ * b[0]
    R = LA.solve(V - U, V + U)
    for _ in range(s):
        R = O.matmul(R, R)
    return R


# --- LU ----------------------------------------------------------------------------------------------------

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
    from ._creation import eye
    L = O.tril(LU[..., :, :k], -1) + eye(m, k, dtype=LU.dtype)
    U = O.triu(LU[..., :k, :])
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
    from ._creation import empty
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
        return O.matmul(P, z)
    y = _tri(L, O.matmul(P.mT, B2), lower=True, unit=True)
    return _tri(U, y, lower=False)


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """torch.lu_solve (legacy argument order): X with A X = b."""
    warnings.warn("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future "
                  "PyTorch release.", UserWarning, stacklevel=2)
    return O._out(linalg_lu_solve(LU_data, LU_pivots, b), out)


# --- the rest of torch.linalg -----------------------------------------------------------------------------

def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """X with A X = B (or X A = B when left=False) for triangular A."""
    if not left:
        return _tri(A.mT, B.mT, lower=upper, unit=unitriangular).mT if not A.is_complex() else \
            solve_triangular(A.mH, B.mH, upper=not upper, unitriangular=unitriangular).mH
    A2, B2 = _bcast_batch(A, B)
    return O._out(_tri(A2, B2, lower=not upper, unit=unitriangular), out)


def multi_dot_dtypes(tensors) -> None:
    """torch's multi_dot (and chain_matmul) want one dtype for the whole chain."""
    d = tensors[0]._np_dtype()
    for i, t in enumerate(tensors):
        if t._np_dtype() != d:
            raise RuntimeError("multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{DtypeName(d):c} and tensor {i} {DtypeName(t._np_dtype()):c}")


def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices (first may be 1-D, last may be 1-D), left to right."""
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        if (i in (0, len(tensors) - 1) and t.ndim not in (1, 2)) or (0 < i < len(tensors) - 1 and t.ndim != 2):
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D" if 0 < i < len(tensors) - 1
                               else f"multi_dot(): the {'first' if i == 0 else 'last'} tensor must be 1D or 2D but "
                               f"got {t.ndim}D")
    multi_dot_dtypes(tensors)
    r = tensors[0]
    for t in tensors[1:]:
        r = O.matmul(r, t)
    return O._out(r, out)


def vecdot(x, y, *, dim=-1, out=None):
    """sum(conj(x) * y) along dim (broadcast)."""
    check_same_dtype("linalg.vecdot: Expected x and y to have the same dtype, but found x of type {0} and y of type "
                     "{1} instead", x, y)
    return O._out(O.sum(O.mul(x.conj() if x.is_complex() else x, y), dim), out)


def vander(x, *, N=None):
    """Columns x**0, x**1, ..., x**(N-1) (increasing powers; batched over leading dims)."""
    if x.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    n = x.shape[-1] if N is None else N
    if n < 2:
        raise RuntimeError("N must be greater than 1.")
    from ._creation import ones
    dt = x._np_dtype()
    xx = x if dt.kind in "fc" else x.to(D.int64)
    cols = O.cat([ones(*x.shape, 1, dtype=xx.dtype), xx.unsqueeze(-1).expand(*x.shape, n - 1)], -1)
    return O.cumprod(cols, -1)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return O.diagonal(A, offset, dim1, dim2)


def matmul(input, other, *, out=None):
    return O.matmul(input, other, out=out)


def inv_ex(A, *, check_errors=False, out=None):
    try:
        r = LA.inv(A)
        info = 0
    except Exception:
        if check_errors:
            raise
        r = _C.full_like(A, math.nan)
        info = 1
    return _ex_t(r, _wrap(Array(np.full(A.shape[:-2], info, np.int32))))


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    try:
        r = LA.cholesky(A, upper=upper)
        info = 0
    except Exception:
        if check_errors:
            raise
        r = _C.full_like(A, math.nan)
        info = 1
    return _chol_ex_t(r, _wrap(Array(np.full(A.shape[:-2], info, np.int32))))


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    try:
        r = LA.solve(A, B, left=left)
        info = 0
    except Exception:
        if check_errors:
            raise
        r = _C.full_like(B, math.nan)
        info = 1
    return _solve_ex_t(r, _wrap(Array(np.full(A.shape[:-2], info, np.int32))))


def linalg_lstsq(A, B, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values) of min ||A X - B|| (solution = pinv(A) B); as torch's default
    'gelsy' driver, residuals and singular_values are empty."""
    if A.ndim < 2:
        raise RuntimeError(f"torch.linalg.lstsq: input must have at least 2 dimensions.")
    vec = B.ndim == A.ndim - 1
    Bm = B.unsqueeze(-1) if vec else B
    X = O.matmul(LA.pinv(A), Bm)
    from ._creation import empty
    sol = X.squeeze(-1) if vec else X
    # torch's default CPU driver ('gelsy') reports the rank but neither residuals nor singular values
    rank = _wrap(Array(np.asarray(np.linalg.matrix_rank(A._host()), np.int64)))
    return _lstsq_t(sol, empty(0, dtype=A.dtype), rank, empty(0, dtype=A.dtype))


def cond(A, p=None, *, out=None):
    """The condition number of A in the p-norm (2-norm by default: the ratio of extreme singular values)."""
    if p in (None, 2, -2):
        s = LA.svdvals(A)
        r = O.div(s[..., 0], s[..., -1]) if p != -2 else O.div(s[..., -1], s[..., 0])
        return r
    return O.mul(LA.matrix_norm(A, p), LA.matrix_norm(LA.inv(A), p))


def tensorinv(A, ind=2, *, out=None):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    out_shape = tuple(A.shape[ind:]) + tuple(A.shape[:ind])
    rows = int(np.prod(A.shape[:ind]))
    return LA.inv(A.reshape(rows, -1)).reshape(*out_shape)


def tensorsolve(A, B, dims=None, *, out=None):
    if dims is not None:
        nd = A.ndim
        dims = [d % nd for d in dims]
        A = O.movedim(A, dims, list(range(nd - len(dims), nd)))
    rest = A.shape[B.ndim:]
    rows = int(np.prod(B.shape)) if B.ndim else 1
    x = LA.solve(A.reshape(rows, -1), B.reshape(-1))
    return x.reshape(*rest)


LINALG_EXTRA = {
    "matrix_exp": matrix_exp, "lu_factor": lu_factor, "lu_factor_ex": lu_factor_ex, "lu": linalg_lu,
    "lu_solve": linalg_lu_solve, "solve_triangular": solve_triangular, "multi_dot": multi_dot,
    "vecdot": vecdot, "vander": vander, "diagonal": diagonal, "matmul": matmul, "inv_ex": inv_ex,
    "cholesky_ex": cholesky_ex, "solve_ex": solve_ex, "lstsq": linalg_lstsq, "cond": cond, "tensorinv": tensorinv,
    "tensorsolve": tensorsolve,
}

__all__ = ["orgqr", "det", "logdet", "slogdet", "inverse", "pinverse", "matrix_power", "matrix_exp", "cholesky",
           "cholesky_solve", "cholesky_inverse", "triangular_solve", "qr", "svd", "lu", "lu_solve", "lu_unpack",
           "solve", "lstsq"]


# --- general eigendecomposition (the eig primitive: LAPACK geev on the host, differentiable) -------------------

_eig_t = _rt.linalg_eig

_EIG_PHASE = ("linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by "
              "e^{i phi}. The specified loss function depends on this quantity, so it is ill-defined.")


def _eig_gauge_hook(V):
    """torch's check: a loss may not depend on the eigenvectors' phases, i.e. Im(diag(V^H gV)) == 0
    (within torch's tolerance). Only a check: the gradient itself comes from the eig primitive's rule."""
    def hook(g):
        v, gv = V.detach()._host(), g.detach()._host()
        phase = np.imag(np.sum(np.conj(v) * gv, axis=-2))
        if not np.allclose(phase, 0.0, rtol=1e-2, atol=1e-2):
            raise RuntimeError(_EIG_PHASE)
    return hook


def linalg_eig(A, *, out=None):
    """(eigenvalues, eigenvectors) of square matrices, complex (as torch.linalg.eig); eigenvectors have unit
    norm. Differentiable through the eig primitive (distinct eigenvalues needed for the eigenvector part);
    as in torch, backward raises RuntimeError when the loss depends on the eigenvectors' phases."""
    from .linalg import _square
    _square(A, "eig")
    w, v = _apply("LinalgEig", lambda a: _ld.eig(a, vectors=True, eigvec_derivs=True), (A,))
    if v.requires_grad:
        v.register_hook(_eig_gauge_hook(v))
    return _eig_t(w, v)


def linalg_eigvals(A, *, out=None):
    """The eigenvalues of square matrices (complex), differentiable (dw = diag(V^-1 dA V))."""
    from .linalg import _square
    _square(A, "eigvals")
    return _apply1("LinalgEigvals", lambda a: _ld.eig(a, vectors=False)[0], A)


LINALG_EXTRA.update(eig=linalg_eig, eigvals=linalg_eigvals)


def householder_product(A, tau, *, out=None):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H, v_i = (0, ..., 0, 1, A[i+1:, i]) (the Q of
    a geqrf factorisation), composed of differentiable Tensor ops."""
    if A.ndim < 2:
        raise RuntimeError(f"torch.linalg.householder_product: input must have at least 2 dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1]
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if k > n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    from ._creation import eye, ones, zeros
    batch = tuple(A.shape[:-2])
    X = eye(m, n, dtype=A.dtype).expand(*batch, m, n)
    for i in reversed(range(k)):
        v = O.cat([zeros(*batch, i, dtype=A.dtype), ones(*batch, 1, dtype=A.dtype), A[..., i + 1:, i]], -1)
        vh = v.conj() if v.is_complex() else v
        X = X - tau[..., i, None, None] * (v.unsqueeze(-1) * (vh.unsqueeze(-2) @ X))
    return O._out(X, out)


orgqr = householder_product
LINALG_EXTRA.update(householder_product=householder_product)


_geqrf_t = _rt.geqrf


def geqrf(input, *, out=None):
    """LAPACK's QR in Householder form (a, tau): R on and above a's diagonal, the reflectors' vectors below
    (computed on the host; no derivative, as in torch)."""
    if input.ndim < 2:
        raise RuntimeError(f"torch.geqrf: input must have at least 2 dimensions.")
    h = input._host()
    batch = h.shape[:-2]
    flat = h.reshape((-1,) + h.shape[-2:])
    a_out, tau_out = [], []
    for mat in flat:
        raw, tau = np.linalg.qr(mat, mode="raw")
        a_out.append(raw.T)
        tau_out.append(tau)
    a = np.stack(a_out).reshape(h.shape).astype(h.dtype)
    tau = np.stack(tau_out).reshape(batch + (min(h.shape[-2:]),)).astype(h.dtype)
    return _geqrf_t(_wrap(Array(np.ascontiguousarray(a))), _wrap(Array(np.ascontiguousarray(tau))))


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """other multiplied by Q (or Q^H when transpose) of the Householder form (input, tau), from the left or the
    right; differentiable (Q is built by householder_product)."""
    m = input.shape[-2]
    from ._creation import zeros
    sq = input if input.shape[-1] == m else O.cat(
        [input[..., :, :min(m, input.shape[-1])], zeros(*input.shape[:-2], m, max(m - input.shape[-1], 0),
                                                         dtype=input.dtype)], -1)
    Q = householder_product(sq, tau)
    if transpose:
        Q = Q.mH
    return O._out(O.matmul(Q, other) if left else O.matmul(other, Q), out)


__all__ += ["geqrf", "ormqr"]
