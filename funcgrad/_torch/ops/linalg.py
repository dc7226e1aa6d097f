"""torch's top-level linear algebra (torch.linalg is funcgrad/_torch/linalg.py): the legacy names (det,
logdet, slogdet, inverse, pinverse, matrix_power, cholesky, cholesky_solve, cholesky_inverse, triangular_solve, qr,
svd with V; solve, lstsq, eig and symeig raise torch's removal error, matrix_rank its deprecation), the fused
products addbmm, addr and chain_matmul, the norms frobenius_norm, nuclear_norm and renorm, and the randomised
low-rank SVD and PCA (svd_lowrank, pca_lowrank). All compose recorded funcgrad ops, so their gradients come from
the primitives."""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..._src.prims import linalg_decomp as _ld
from .. import _creation as _C, _dtype as D, _jnp
from . import arithmetic, comparison, products as _products, reductions, selection, unary, views
from ._common import _cast, _out
from .. import linalg as LA
from .. import return_types as _rt
from .._argcheck import check_same_dtype
from .._creation import eye, zeros
from .._dtype import float16, float32, float64
from .._tensor import Tensor, _dim
from .._dispatch import _apply, _apply1
from ..linalg import _bcast_batch, _tri, matrix_exp, _multi_dot_dtypes

_svd_t = _rt.svd
_slogdet_t = _rt.slogdet
_tri_t = _rt.triangular_solve
_qr_t = _rt.qr


def _removed(name: str, new: str):
    def fn(*args, **kwargs):
        raise RuntimeError(f"This function was deprecated since version 1.9 and is now removed. `torch.{name}` is "
                           f"deprecated in favor of `torch.linalg.{new}`.")
    fn.__name__ = fn.__qualname__ = name
    return fn


solve = _removed("solve", "solve")
lstsq = _removed("lstsq", "lstsq")
eig = _removed("eig", "eig")
symeig = _removed("symeig", "eigh")


def det(input):
    return LA.det(input)


def logdet(input):
    """log(det(input)): NaN for a negative determinant, -inf for a zero one."""
    sign, logabs = LA.slogdet(input)
    return selection.where(comparison.lt(sign, 0), _C.full_like(logabs, math.nan), logabs) if not input.is_complex() else \
        arithmetic.add(logabs, unary.log(sign))


def slogdet(input):
    s, l_ = LA.slogdet(input)
    return _slogdet_t(s, l_)


def inverse(input, *, out=None):
    return _out(LA.inv(input), out)


def pinverse(input, rcond=1e-15):
    return LA.pinv(input, rtol=rcond)


def matrix_power(input, n):
    return LA.matrix_power(input, n)


def cholesky(input, upper=False, *, out=None):
    warnings.warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future "
                  "PyTorch release.", UserWarning, stacklevel=2)
    return _out(LA.cholesky(input, upper=upper), out)


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
    return _out(_apply("CholeskySolve", lambda l, b: _ld.cholesky_solve(l, b, lower=not upper, convention="torch"),
                         (L, B)), out)


def cholesky_inverse(L, upper=False, *, out=None):
    """The inverse of A = L L^H (or U^H U) from its Cholesky factor."""
    if L.ndim < 2 or L.shape[-1] != L.shape[-2]:
        raise RuntimeError("cholesky_inverse: A must be batches of square matrices")
    _raise_if_zero_diagonal(L)
    I_ = eye(L.shape[-1], dtype=L.dtype).expand(*L.shape)
    return _out(cholesky_solve(I_, L, upper), out)


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
        return _svd_t(zeros(*input.shape[:-2], m, m, dtype=input.dtype), s,
                      zeros(*input.shape[:-2], n, n, dtype=input.dtype))
    u, s, vh = LA.svd(input, full_matrices=not some)
    return _svd_t(u, s, vh.mH)


def matrix_rank(*args, **kwargs):
    raise RuntimeError("This function was deprecated since version 1.9 and is now removed.\nPlease use the "
                       "`torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was renamed in "
                       "`torch.linalg.matrix_rank()` to 'hermitian'.")


def _beta_alpha(input, prod, beta, alpha):
    r = prod if alpha == 1 else arithmetic.mul(prod, alpha)
    if beta == 0:  # input is ignored (NaN in it does not propagate) but still broadcasts and promotes
        return arithmetic.add(r, _C.zeros_like(input))
    return arithmetic.add(input if beta == 1 else arithmetic.mul(input, beta), r)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * sum_b batch1[b] @ batch2[b]."""
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if batch1.ndim != 3 else "batch2 must be a 3D tensor")
    if isinstance(input, Tensor):
        check_same_dtype("self and mat2 must have the same dtype, but got {0} and {1}", input, batch2)
    check_same_dtype("mat1 and mat2 must have the same dtype, but got {0} and {1}", batch1, batch2)
    if _products._one_node(input, beta, alpha, batch1, batch2) and batch1.shape[0] == batch2.shape[0] and \
            batch1.shape[2] == batch2.shape[1]:
        _expands(input, (batch1.shape[1], batch2.shape[2]))
        return _out(_products._scaled_product("Addbmm", _ADDBMM_DN, input, batch1, batch2, beta, alpha), out)
    return _out(_beta_alpha(input, _products.bmm(batch1, batch2).sum(0), beta, alpha), out)


_ADDBMM_DN = (((0, 2), (0, 1)), ((), ()))  # (the batch and the inner dimension contracted together)


def _expands(input, shape):
    """torch's error where input does not expand to the result's shape (addbmm, addr): expand's, whose check
    runs from the last dimension."""
    s = tuple(input.shape)
    off = len(shape) - len(s)
    if off < 0:
        views.expand(input.detach(), shape)  # (its error for too many dimensions)
    for i in range(len(s) - 1, -1, -1):
        if s[i] not in (1, shape[i + off]):
            raise RuntimeError(f"The expanded size of the tensor ({shape[i + off]}) must match the existing size "
                               f"({s[i]}) at non-singleton dimension {i + off}.  Target sizes: {list(shape)}.  "
                               f"Tensor sizes: {list(s)}")


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * outer(vec1, vec2)."""
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.ndim}-D" if vec1.ndim != 1
                           else f"addr: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    if _products._one_node(input, beta, alpha, vec1, vec2):  # one node, torch's AddrBackward0
        _expands(input, (vec1.shape[0], vec2.shape[0]))

        def fn(c, a, b):  # (torch's kernel: beta * input + alpha * vec1 * vec2)
            r = _jnp.outer(a * alpha if alpha != 1 else a, b)
            return r if beta == 0 else (c * beta if beta != 1 else c) + r
        return _out(_apply("Addr", fn, (input, vec1, vec2)), out)
    return _out(_beta_alpha(input, _products.outer(vec1, vec2), beta, alpha), out)


def renorm(input, p, dim, maxnorm, *, out=None):
    """Each slice input.select(dim, i) whose p-norm exceeds maxnorm is scaled to norm maxnorm: ONE node, torch's
    RenormBackward0, whose derivative runs through the norm (as torch's renorm_backward). The norms of float16
    / bfloat16 input accumulate in float32, as torch's; the scale factor is rounded to input's real dtype."""
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    d = _dim(dim, input.ndim)
    dt = input._np_dtype()
    if D.kind(dt) not in "fc":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{reductions._legacy_int(dt)}")
    acc = np.dtype(np.float32) if dt.itemsize == 2 else dt
    rdt = dt if dt.kind != "c" else np.dtype(np.float32 if dt == np.complex64 else np.float64)
    norm = reductions._vector_norm(p, tuple(i for i in range(input.ndim) if i != d), True)

    def fn(a):
        n = norm(a if acc is dt else _cast(a, acc))
        factor = _jnp.where(n > maxnorm, maxnorm / (n + 1e-7), 1.0)
        return a * (factor if factor.dtype == rdt else _cast(factor, rdt))
    return _out(_apply1("Renorm", fn, input), out)


def chain_matmul(*matrices, out=None):
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                  "multiple parameters.", UserWarning, stacklevel=2)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    _multi_dot_dtypes(matrices)
    r = matrices[0]
    for m in matrices[1:]:
        r = _products.mm(r, m)
    return r if len(matrices) > 1 else r.clone()


def frobenius_norm(input, dim=(-2, -1), keepdim=False, *, out=None):
    return reductions.norm(input, "fro", dim=list(dim) if isinstance(dim, (tuple, list)) else dim, keepdim=keepdim)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    return LA.matrix_norm(input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim)



def _approximate_basis(A, q: int, niter: int, M=None):
    """Halko et al.'s randomised range finder (their algorithm 4.4): an orthonormal Q of q columns whose span
    approximates the range of A - M, refined by niter power iterations. It draws its test matrix with torch.randn
    of A's floating dtype, as torch does, so a seeded call draws the same numbers."""
    dtype = A.dtype if A.is_complex() or A.dtype in (float16, float32, float64) else float32
    R = _C.randn(A.shape[-1], q, dtype=dtype)
    X = _products.matmul(A, R)
    if M is not None:
        X = X - _products.matmul(M, R)
    Q = LA.qr(X).Q
    for _ in range(niter):
        X = _products.matmul(A.mH, Q)
        if M is not None:
            X = X - _products.matmul(M.mH, Q)
        Q = LA.qr(X).Q
        X = _products.matmul(A, Q)
        if M is not None:
            X = X - _products.matmul(M, Q)
        Q = LA.qr(X).Q
    return Q


def _svd_lowrank(A, q: int, niter: int, M=None):
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:  # the range finder works on the tall orientation
        A = A.mH
        M = None if M is None else M.mH
    Q = _approximate_basis(A, q, niter, M)
    B = _products.matmul(Q.mH, A)
    if M is not None:
        B = B - _products.matmul(Q.mH, M)
    U, S, Vh = LA.svd(B, full_matrices=False)
    U, V = _products.matmul(Q, U), Vh.mH
    return (V, S, U) if m < n else (U, S, V)


def svd_lowrank(A, q: int | None = 6, niter: int | None = 2, M=None):
    """An approximate rank-q SVD (U, S, V) of A - M (A of shape (*, m, n)), with A ≈ U diag(S) V^H, by randomised
    subspace iteration (Halko, Martinsson and Tropp 2009, algorithm 5.1), as torch.svd_lowrank.

    Examples:
        >>> import funcgrad as torch
        >>> U, S, V = torch.svd_lowrank(torch.randn(100, 20) @ torch.randn(20, 50), q=20)
        >>> U.shape, S.shape, V.shape
        (torch.Size([100, 20]), torch.Size([20]), torch.Size([50, 20]))
    """
    return _svd_lowrank(A, 6 if q is None else q, 2 if niter is None else niter, M)


def pca_lowrank(A, q: int | None = None, center: bool = True, niter: int = 2):
    """The principal components of A (*, m, n) by svd_lowrank: (U, S, V) with V's columns the principal
    directions; q defaults to min(6, m, n); center subtracts the column means first, as torch.pca_lowrank."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if center:
        A = A - A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank(A, q, niter, None)


# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods_ops
METHODS = ("addbmm", "addr", "renorm", "cholesky", "cholesky_inverse", "cholesky_solve", "det", "logdet", "slogdet",
           "inverse", "pinverse", "matrix_exp", "matrix_power", "qr", "svd", "triangular_solve")
INPLACE = ("addbmm", "addr", "renorm")

__all__ = ["det", "logdet", "slogdet", "inverse", "pinverse", "matrix_power", "matrix_exp", "cholesky",
           "cholesky_solve", "cholesky_inverse", "triangular_solve", "qr", "svd", "solve", "lstsq", "matrix_rank",
           "addbmm", "addr", "chain_matmul", "frobenius_norm", "nuclear_norm", "renorm", "svd_lowrank", "pca_lowrank"]
