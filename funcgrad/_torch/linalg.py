"""funcgrad.linalg (torch.linalg) on tensors: norms (vector, matrix incl. 'nuc' and 2/-2, Frobenius) and
the common decompositions and solvers, each one recorded op over funcgrad.numpy.linalg (so autograd uses
the primitives' rules)."""
from __future__ import annotations

import functools

import math

import numpy as np

from . import _jnp as jnp
from .._src.core.array import Array
from .._src.prims import elementwise as ew
from .._src.prims import linalg_decomp as _ld
from .._src.interpreters import custom_vjp
from .._src.prims.lu import lu as _lu_card
from .._src.prims.svd import _svd_vjp, svd as _svd_card
from . import _creation as _C
from . import _dtype as D
from .ops import (arithmetic as _arithmetic, diagonals as _diagonals, join_split as _join_split,
                  products as _products, reductions as _reductions, selection as _selection, views as _views)
from .ops._common import _bshape, _out
from ._argcheck import DtypeName, check_same_dtype as _check_same_dtype
from .ops.reductions import _safe_sqrt
from ._tensor import _dim, _wrap
from ._dispatch import _apply, _apply1
from ._errors import _legacy

_LEGACY = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}



def _writes_out(fn):
    """fn with torch's out= written: the result (or each of a tuple's) copied into out, whose dtype must be the
    result's; the call returns out."""
    @functools.wraps(fn)
    def op(*args, out=None, **kwargs):
        return _out(fn(*args, **kwargs), out, True)
    return op

def _float_check(x, op: str):
    dt = x._np_dtype()
    if dt.kind not in "fc":
        raise RuntimeError(f"linalg.{op}: Expected a floating point or complex tensor as input. Got "
                           f"{_LEGACY.get(dt.name, dt.name)}")


def _pair(dim, nd: int, op: str):
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        got = " ".join(str(d) for d in (dim if isinstance(dim, (tuple, list)) else [dim]))
        raise RuntimeError(f"linalg.{op}: dim must be a 2-tuple. Got {got}")
    d0, d1 = _dim(dim[0], nd), _dim(dim[1], nd)
    if d0 == d1:
        raise RuntimeError(f"linalg.{op}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def _matrix_norm_arr(a, ord, d0, d1, keepdim):  # noqa: A002
    """A matrix norm of Array a over dims (d0, d1)."""
    m = jnp.moveaxis(a, (d0, d1), (-2, -1))
    if ord == "fro":
        r = _safe_sqrt(jnp.sum(ew.real(a * ew.conj(a)) if a.dtype.kind == "c" else a * a, axis=(d0, d1)))
        return jnp.expand_dims(r, tuple(sorted((d0, d1)))) if keepdim else r
    if ord in ("nuc", 2, -2):
        sv = jnp.linalg.svd(m, compute_uv=False)
        r = jnp.sum(sv, axis=-1) if ord == "nuc" else (jnp.max(sv, axis=-1) if ord == 2 else jnp.min(sv, axis=-1))
    elif ord in (1, -1, math.inf, -math.inf):
        ax = -2 if ord in (1, -1) else -1  # 1: max column sum (over rows), inf: max row sum
        s = jnp.sum(ew.abs(m, "torch"), axis=ax)
        r = jnp.max(s, axis=-1) if ord > 0 else jnp.min(s, axis=-1)
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    return jnp.expand_dims(r, tuple(sorted((d0, d1)))) if keepdim else r


def _norm_dtype(x, dtype, name):
    """x in the dtype= of a norm: a complex input needs a complex dtype, as torch."""
    if dtype is None:
        return x
    xc, dc = x._np_dtype().kind == "c", D.to_np(dtype).kind == "c"
    if xc != dc:
        raise RuntimeError(f"linalg.{name}: dtype should be {'complex' if xc else 'real'} for "
                           f"{'complex' if xc else 'real'} inputs, but got {_legacy(D.to_np(dtype))}")
    return x.to(dtype)


@_writes_out
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """Frobenius, nuclear ('nuc'), spectral (2, -2) or induced (1, -1, inf, -inf) norm over two dims."""
    if ord in ("nuc", 2, -2) and (A._np_dtype() == np.float16 or str(A.dtype) == "torch.bfloat16"):
        raise RuntimeError(f"linalg.matrix_norm: Low precision dtypes not supported. Got {_legacy(A._np_dtype())}")
    A = _norm_dtype(A, dtype, "matrix_norm")
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    _float_check(A, "matrix_norm")
    d0, d1 = _pair(dim, A.ndim, "matrix_norm")
    # (torch's nodes: the Frobenius norm is a vector norm, the nuclear one a sum of singular values)
    name = "LinalgVectorNorm" if ord == "fro" else "Sum1" if ord == "nuc" else "LinalgMatrixNorm"
    return _apply1(name, lambda a: _matrix_norm_arr(a, ord, d0, d1, keepdim), A)


@_writes_out
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """The ord-norm of x's entries (over dim, or all of them)."""
    _float_check(x, "vector_norm")
    x = _norm_dtype(x, dtype, "vector_norm")
    if ord in ("fro", "nuc"):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got {ord}")
    return _reductions.norm(x, p=float(ord) if ord not in (2,) else 2, dim=dim, keepdim=keepdim)


@_writes_out
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """torch.linalg.norm: a vector norm for 1-d input or int dim, a matrix norm for 2-d input or a 2-tuple dim;
    ord=None is the 2-norm of all entries."""
    if dim is not None and not isinstance(dim, (tuple, list)):
        dim = (dim,)
    if ord is None:
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if isinstance(ord, str) and A.ndim < 2:
            return matrix_norm(A, ord)
        if A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                               f"{A.ndim}D.")
        dim = tuple(range(A.ndim))
    if len(dim) == 2:
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got {ord}")
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)


# --- decompositions and solvers ----------------------------------------------------------------------

from .return_types import (linalg_eigh as _eigh_t, linalg_qr as _qr_t,  # noqa: E402
                           linalg_slogdet as _slogdet_t, linalg_svd as _svd_t)
from .return_types import (linalg_cholesky_ex as _chol_ex_t, linalg_inv_ex as _inv_ex_t,  # noqa: E402
                           linalg_lstsq as _lstsq_t, linalg_solve_ex as _solve_ex_t)


def _square(A, op: str):
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{op}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.ndim >= 2 else 1} by {A.shape[-1] if A.ndim else 1} matrices")
    _float_check(A, op)


@_writes_out
def det(A, *, out=None):
    """The determinant; its gradient is the adjugate, also at singular A (torch's SVD formula, which torch uses
    under create_graph and torch.func; torch's first-order eager backward gives 0 at an exactly singular A)."""
    _square(A, "det")
    return _apply1("LinalgDet", jnp.linalg.det, A)


class LinAlgError(RuntimeError, np.linalg.LinAlgError):
    """torch.linalg.LinAlgError: a RuntimeError (as in torch) that is also NumPy's LinAlgError."""


def _torch_linalg_error(fn):
    """Re-raise NumPy's LinAlgError (singular or non-definite input) as torch's RuntimeError subclass."""
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except LinAlgError:
            raise
        except np.linalg.LinAlgError as e:
            raise LinAlgError(str(e)) from None
    wrapper.__name__, wrapper.__doc__, wrapper.__qualname__ = fn.__name__, fn.__doc__, fn.__qualname__
    return wrapper


def _raise_if_singular(A, result, op: str):
    """torch raises where A has an exact zero pivot in its LU; the JAX-face solve gives inf / NaN there. Only
    a non-finite result from finite A is looked at (the LU is then factored again); traced values pass."""
    try:
        r = result._host()
    except Exception:  # noqa: BLE001 - a tracer of a funcgrad.func transform: no value to look at
        return result
    if np.isfinite(r).all():
        return result
    a = A._host()
    if not np.isfinite(a).all():
        return result
    packed = np.asarray(_lu_card(Array(np.ascontiguousarray(a)))[0])
    diag = np.diagonal(packed, axis1=-2, axis2=-1).reshape(-1, a.shape[-1])
    for b, row in enumerate(diag):
        zero = np.nonzero(row == 0)[0]
        if zero.size:
            where = f"(Batch element {b}): " if A.ndim > 2 else ""
            if op == "inv":
                raise LinAlgError(f"linalg.inv: {where}The diagonal element {zero[0] + 1} is zero, the inversion "
                                  "could not be completed because the input matrix is singular.")
            raise LinAlgError(f"torch.linalg.solve: {where}The solver failed because the input matrix is singular.")
    return result


@_torch_linalg_error
@_writes_out
def inv(A, *, out=None):
    """The inverse of each square matrix of A; singular input raises linalg.LinAlgError."""
    _square(A, "inv")
    return _raise_if_singular(A, _apply1("LinalgInvEx", jnp.linalg.inv, A), "inv")


@_writes_out
def slogdet(A, *, out=None):
    """(sign, log|det|) of each square matrix, finite where det would overflow."""
    _square(A, "slogdet")
    sign, logabs = _apply("LinalgSlogdet", lambda a: list(jnp.linalg.slogdet(a)), (A,))
    return _slogdet_t(sign, logabs)


@_torch_linalg_error
@_writes_out
def solve(A, B, *, left=True, out=None):
    """X with A X = B (X A = B if left=False) for square invertible A, broadcast over batches."""
    _square(A, "solve")
    if A._np_dtype() != B._np_dtype():
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{_legacy(A._np_dtype())} and B of type {_legacy(B._np_dtype())} instead")
    if not left:  # X A = B: A^T X^T = B^T
        if B.ndim < 2:
            raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not supported for "
                               "left=False. In this case linalg.solve is equivalent to B / A.squeeze(-1)")
        return solve(A.mT, B.mT).mT
    vec = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    n = A.shape[-1]
    if (B.shape[-1] if vec else B.shape[-2] if B.ndim >= 2 else -1) != n:
        desc = "x".join(str(d) for d in B.shape[-2:]) if not vec else str(B.shape[-1])
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B ({n}x{n} and "
                           f"{desc})")
    if vec:
        r = _apply("LinalgSolveEx", lambda a, b: jnp.linalg.solve(a, b[..., None])[..., 0], (A, B))
    else:
        r = _apply("LinalgSolveEx", jnp.linalg.solve, (A, B))
    return _raise_if_singular(A, r, "solve")


@_torch_linalg_error
@_writes_out
def cholesky(A, *, upper=False, out=None):
    """The Cholesky factor L of Hermitian positive-definite A (A = L L^H; U with A = U^H U if upper)."""
    _square(A, "cholesky")
    try:
        return _apply1("LinalgCholeskyEx", lambda a: jnp.linalg._cholesky(a, upper=upper, convention="torch"), A)
    except (LinAlgError, np.linalg.LinAlgError):
        info = _cholesky_info(A._host()).reshape(-1)
        b = int(np.argmax(info != 0))
        where = f"(Batch element {b}): " if A.ndim > 2 else ""
        raise LinAlgError(f"linalg.cholesky: {where}The factorization could not be completed because the input is "
                          f"not positive-definite (the leading minor of order {info[b]} is not positive-definite)."
                          ) from None


def _at_least_2d(A, op):
    if A.ndim < 2:
        raise RuntimeError(f"linalg.{op}: The input tensor A must have at least 2 dimensions.")


@_writes_out
def qr(A, mode="reduced", *, out=None):
    """(Q, R) with A = Q R; mode 'reduced', 'complete' or 'r' (Q empty)."""
    _at_least_2d(A, "qr")
    if mode == "r":  # (R alone: torch's Q is then an empty tensor)
        r = _apply1("LinalgQr", lambda a: jnp.linalg.qr(a, mode="r"), A)
        return _qr_t(_C.empty(0, dtype=A.dtype), r)
    q, r = _apply("LinalgQr", lambda a: list(jnp.linalg.qr(a, mode=mode)), (A,))
    return _qr_t(q, r)


def _from_triangle(a, UPLO):
    """torch's eigh reads only the UPLO triangle of A (the JAX face symmetrises (A + A^H)/2): the value is the
    Hermitian matrix of that triangle, while derivatives flow through the whole A as torch's do."""
    t = jnp.tril(a) if UPLO.upper() == "L" else jnp.triu(a)
    h = t + jnp.conj(jnp.swapaxes(t, -1, -2)) - jnp.real(jnp.eye(a.shape[-1], dtype=a.dtype)) * t
    return a + ew.stop_gradient(h - a)


@_writes_out
def eigh(A, UPLO="L", *, out=None):
    """(eigenvalues ascending, eigenvectors) of Hermitian A, reading the UPLO triangle."""
    _square(A, "eigh")
    w, v = _apply("LinalgEigh", lambda a: list(jnp.linalg.eigh(_from_triangle(a, UPLO), UPLO=UPLO)), (A,))
    return _eigh_t(w, v)


@_writes_out
def eigvalsh(A, UPLO="L", *, out=None):
    """The eigenvalues of Hermitian A in ascending order, reading the UPLO triangle."""
    _square(A, "eigvalsh")
    return _apply1("LinalgEigvalsh", lambda a: jnp.linalg.eigvalsh(_from_triangle(a, UPLO), UPLO=UPLO), A)


@_writes_out
def svd(A, full_matrices=True, *, driver=None, out=None):
    """(U, S, Vh) with A = U diag(S) Vh, S descending (torch.svd returns V instead of Vh)."""
    _at_least_2d(A, "svd")
    m, n = A.shape[-2:]
    if full_matrices and m != n:
        u, s, vh = _apply("LinalgSvd", _full_svd(min(m, n)), (A,))
        return _svd_t(u, s, vh)
    u, s, vh = _apply("LinalgSvd", lambda a: list(jnp.linalg.svd(a, full_matrices=full_matrices)), (A,))
    return _svd_t(u, s, vh)


def _full_svd(k: int):
    """The full_matrices=True SVD of a non-square matrix, differentiable as torch's: its backward narrows U, Vh
    and their cotangents to the first k = min(m, n) columns / rows and takes the reduced SVD's rule (the card's
    refuses: the extra columns are not unique)."""
    @custom_vjp
    def full(a):
        return list(_svd_card(a, full_matrices=True))

    def fwd(a):
        u, s, vh = _svd_card(a, full_matrices=True)
        return [u, s, vh], (a, u, s, vh)

    def bwd(res, cts):
        a, u, s, vh = res
        gu, gs, gvh = cts
        reduced = [u[..., :, :k], s, vh[..., :k, :]]
        return tuple(_svd_vjp([gu[..., :, :k], gs, gvh[..., :k, :]], reduced, [a], [True],
                              full_matrices=False, compute_uv=True))
    full.defvjp(fwd, bwd)
    full.records_on_a_tape = True  # (traced, so that the custom rule is recorded: eagerly it is the forward)
    return full


@_writes_out
def svdvals(A, *, driver=None, out=None):
    """The singular values of A, descending."""
    _at_least_2d(A, "svd")
    return _apply1("LinalgSvdvals", lambda a: jnp.linalg.svd(a, compute_uv=False), A)


@_writes_out
def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The Moore-Penrose pseudo-inverse, singular values below max(atol, rtol * the largest) taken as zero."""
    return _apply1("LinalgPinv", lambda a: jnp.linalg.pinv(a, hermitian=hermitian), A)


@_writes_out
def matrix_power(A, n, *, out=None):
    """A^n for an integer n by repeated squaring (n < 0 inverts first; n = 0 gives the identity)."""
    _square(A, "matrix_power")
    return _apply1("LinalgMatrixPower", lambda a: jnp.linalg.matrix_power(a, int(n)), A)


@_writes_out
def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The number of singular values above max(atol, rtol * the largest one)."""
    return _wrap(jnp.linalg.matrix_rank(A._arr(), hermitian=hermitian).astype(np.int64))


@_writes_out
def cross(input, other, *, dim=-1, out=None):
    """The cross product of 3-vectors along dim, broadcast over the other dimensions."""
    return _products.cross(input, other, dim=dim)


def _tri(A, B, *, lower, left=True, transpose=False, unit=False):
    return _apply("TriangularSolve", lambda a, b: _ld.triangular_solve(
        a, b, left_side=left, lower=lower, transpose_a=transpose, conjugate_a=transpose and a.dtype.kind == "c",
        unit_diagonal=unit), (A, B))

def _bcast_batch(A, B):
    """A and B with their batch dimensions (all but the last two) broadcast together."""
    batch = _bshape(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    if tuple(A.shape[:-2]) != batch:
        A = A.expand(*batch, *A.shape[-2:])
    if tuple(B.shape[:-2]) != batch:
        B = B.expand(*batch, *B.shape[-2:])
    return A, B


# --- the functions composed from the ones above ------------------------------------------------------

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
        return _apply1("LinalgMatrixExp", lambda a: a, A)  # (empty: a copy, the node still torch's)
    h = A._host()
    norm1 = float(np.max(np.abs(h).sum(-2))) if h.size else 0.0
    theta = 5.371920351148152
    s = max(0, int(math.ceil(math.log2(norm1 / theta)))) if norm1 > theta else 0
    eye = Array(np.broadcast_to(np.eye(n, dtype=A._np_dtype()), tuple(A.shape)))
    b = _PADE13

    def fn(a):  # (one node, torch's LinalgMatrixExpBackward0: the derivative that of these binds)
        X = a / (2.0 ** s) if s else a
        X2 = jnp.matmul(X, X)
        X4 = jnp.matmul(X2, X2)
        X6 = jnp.matmul(X4, X2)
        U = jnp.matmul(X, jnp.matmul(X6, X6 * b[13] + X4 * b[11] + X2 * b[9]) + X6 * b[7] + X4 * b[5] + X2 * b[3]
                       + eye * b[1])
        V = jnp.matmul(X6, X6 * b[12] + X4 * b[10] + X2 * b[8]) + X6 * b[6] + X4 * b[4] + X2 * b[2] + eye * b[0]
        R = jnp.linalg.solve(V - U, V + U)
        for _ in range(s):
            R = jnp.matmul(R, R)
        return R
    return _apply1("LinalgMatrixExp", fn, A)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """X with A X = B (or X A = B when left=False) for triangular A."""
    if not left:
        return _tri(A.mT, B.mT, lower=upper, unit=unitriangular).mT if not A.is_complex() else \
            solve_triangular(A.mH, B.mH, upper=not upper, unitriangular=unitriangular).mH
    A2, B2 = _bcast_batch(A, B)
    return _out(_tri(A2, B2, lower=not upper, unit=unitriangular), out)


def _multi_dot_dtypes(tensors) -> None:
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
    _multi_dot_dtypes(tensors)
    r = tensors[0]
    for t in tensors[1:]:
        r = _products.matmul(r, t)
    return _out(r, out)


def vecdot(x, y, *, dim=-1, out=None):
    """sum(conj(x) * y) along dim (broadcast)."""
    _check_same_dtype("linalg.vecdot: Expected x and y to have the same dtype, but found x of type {0} and y of type "
                     "{1} instead", x, y)
    return _out(_reductions.sum(_arithmetic.mul(x.conj() if x.is_complex() else x, y), dim), out)


def vander(x, *, N=None):
    """Columns x**0, x**1, ..., x**(N-1) (increasing powers; batched over leading dims)."""
    if x.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    n = x.shape[-1] if N is None else N
    if n < 2:
        raise RuntimeError("N must be greater than 1.")
    dt = x._np_dtype()
    xx = x if dt.kind in "fc" else x.to(D.int64)
    cols = _join_split.cat([_C.ones(*x.shape, 1, dtype=xx.dtype), xx.unsqueeze(-1).expand(*x.shape, n - 1)], -1)
    return _reductions.cumprod(cols, -1)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal of each matrix of A (a view), as torch.diagonal with matrix-first defaults."""
    return _diagonals.diagonal(A, offset, dim1, dim2)


def matmul(input, other, *, out=None):
    """The matrix product, as torch.matmul (torch.linalg's alias of it)."""
    return _products.matmul(input, other, out=out)


def _lu_info(a: np.ndarray) -> np.ndarray:
    """LAPACK getrf's info per matrix (torch's for inv_ex / solve_ex): 0, or (1-based) U's first zero pivot."""
    packed = np.asarray(_lu_card(Array(np.ascontiguousarray(a)))[0])
    zero = np.diagonal(packed, axis1=-2, axis2=-1) == 0
    return np.where(zero.any(-1), np.argmax(zero, -1) + 1, 0).astype(np.int32)


def _cholesky_info(a: np.ndarray) -> np.ndarray:
    """LAPACK potrf's info per matrix (torch's for cholesky_ex): 0, or the order of the first leading minor
    that is not positive definite (its pivot, a_jj minus the squares of row j of L so far, is not > 0)."""
    n = a.shape[-1]
    flat = a.reshape(-1, n, n)
    info = np.zeros(flat.shape[0], np.int32)
    for b, m in enumerate(flat):
        try:
            np.linalg.cholesky(m)
            continue
        except np.linalg.LinAlgError:
            pass
        L = np.zeros_like(m)
        for j in range(n):
            d = m[j, j] - np.vdot(L[j, :j], L[j, :j])
            if not (d.real > 0):
                info[b] = j + 1
                break
            L[j, j] = np.sqrt(d.real)
            L[j + 1:, j] = (m[j + 1:, j] - L[j + 1:, :j] @ np.conj(L[j, :j])) / L[j, j]
    return info.reshape(a.shape[:-2])


def _ex(result, compute, A, info_of, check_errors, vector=False):
    """torch.linalg.*_ex: (compute(A), info) with LAPACK's info per matrix (an int32 tensor of A's batch shape);
    a failing matrix's result is NaN (torch's holds what LAPACK left), the others' are computed (from the
    identity in the failing ones' place). check_errors raises torch's error; traced input gets info 0."""
    try:
        a = A._host()
    except Exception:  # noqa: BLE001 - a tracer of a funcgrad.func transform: no value to look at
        a = None
    info = np.zeros(A.shape[:-2], np.int32) if a is None or not a.size else info_of(a)
    if check_errors or not info.any():
        r = compute(A)
    else:
        bad = _wrap(Array(info != 0))
        eye = _C.eye(A.shape[-1], dtype=A.dtype)
        r = compute(_selection.where(bad[..., None, None], eye, A))
        r = r.masked_fill(bad[..., None] if vector else bad[..., None, None], math.nan)
    return result(r, _wrap(Array(info)))


@_writes_out
def inv_ex(A, *, check_errors=False, out=None):
    """(inverse, info): inv without raising; info is getrf's (the first zero pivot, 1-based) per matrix."""
    _square(A, "inv_ex")
    return _ex(_inv_ex_t, inv, A, _lu_info, check_errors)


@_writes_out
def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """(L, info): cholesky without raising; info > 0 is the order of the leading minor that is not positive definite."""
    _square(A, "cholesky_ex")
    return _ex(_chol_ex_t, lambda a: cholesky(a, upper=upper), A, _cholesky_info, check_errors)


@_writes_out
def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """(X, info): solve without raising; info is getrf's (the first zero pivot, 1-based) per matrix."""
    _square(A, "solve_ex")
    vec = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    return _ex(_solve_ex_t, lambda a: solve(a, B, left=left), A, _lu_info, check_errors, vector=vec)


def lstsq(A, B, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values) of min ||A X - B|| (solution = pinv(A) B); as torch's default
    'gelsy' driver, residuals and singular_values are empty."""
    if A.ndim < 2:
        raise RuntimeError(f"torch.linalg.lstsq: input must have at least 2 dimensions.")
    vec = B.ndim == A.ndim - 1
    Bm = B.unsqueeze(-1) if vec else B
    X = _products.matmul(pinv(A), Bm)
    sol = X.squeeze(-1) if vec else X
    # torch's default CPU driver ('gelsy') reports the rank but neither residuals nor singular values
    rank = _wrap(Array(np.asarray(np.linalg.matrix_rank(A._host()), np.int64)))
    return _lstsq_t(sol, _C.empty(0, dtype=A.dtype), rank, _C.empty(0, dtype=A.dtype))


@_writes_out
def cond(A, p=None, *, out=None):
    """The condition number of A in the p-norm (2-norm by default: the ratio of extreme singular values)."""
    if p in (None, 2, -2):
        s = svdvals(A)
        r = _arithmetic.div(s[..., 0], s[..., -1]) if p != -2 else _arithmetic.div(s[..., -1], s[..., 0])
        return r
    return _arithmetic.mul(matrix_norm(A, p), matrix_norm(inv(A), p))


@_writes_out
def tensorinv(A, ind=2, *, out=None):
    """The inverse of A as a map from its last dims to its first ind dims: tensordot(tensorinv(A), A, ind) = I."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    out_shape = tuple(A.shape[ind:]) + tuple(A.shape[:ind])
    rows = int(np.prod(A.shape[:ind]))
    return inv(A.reshape(rows, -1)).reshape(*out_shape)


@_writes_out
def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.ndim) = B (dims of A moved to the end first)."""
    if dims is not None:
        nd = A.ndim
        dims = [d % nd for d in dims]
        A = _views.movedim(A, dims, list(range(nd - len(dims), nd)))
    rest = A.shape[B.ndim:]
    rows = int(np.prod(B.shape)) if B.ndim else 1
    x = solve(A.reshape(rows, -1), B.reshape(-1))
    return x.reshape(*rest)


__all__ = ["norm", "vector_norm", "matrix_norm", "det", "inv", "slogdet", "solve", "cholesky", "qr", "eigh",
           "eigvalsh", "svd", "svdvals", "pinv", "matrix_power", "matrix_rank", "cross", "matrix_exp",
           "solve_triangular", "multi_dot", "vecdot", "vander", "diagonal", "matmul", "inv_ex", "cholesky_ex", "solve_ex",
           "lstsq", "cond", "tensorinv",
           "tensorsolve"]
