"""funcgrad.scipy.linalg: SciPy's linalg names over funcgrad's decompositions (differentiable, batchable
over leading axes, jittable): cholesky, cho_factor, cho_solve, solve_triangular, solve, lu, lu_factor,
lu_solve, qr, svd, eigh, inv, det, expm, block_diag, toeplitz, and the special-matrix constructors of
_linalg_constructors (circulant, companion, convolution_matrix, dft, fiedler, hadamard, hankel, helmert,
hilbert, invhilbert, invpascal, leslie, pascal).

SciPy's defaults are kept where they differ from NumPy's (cholesky returns the upper factor unless
lower=True; lu returns (p, l, u) with a = p l u). overwrite_*/check_finite are accepted and ignored.
"""
from __future__ import annotations

from .. import numpy as jnp
from .._src.core.trace import concrete_value
from ..numpy import linalg as _la
from .._src.prims import linalg_decomp as _ld
from .._src.prims import qr as _ld_qr
from .._src.prims.lu import lu as _lu
from ._linalg_constructors import (circulant, companion, convolution_matrix, dft, fiedler, hadamard,  # noqa: F401
                                   hankel, helmert, hilbert, invhilbert, invpascal, leslie, pascal)

__all__ = ["cholesky", "cho_factor", "cho_solve", "solve_triangular", "solve", "lu", "lu_factor", "lu_solve",
           "qr", "svd", "eigh", "inv", "det", "expm", "block_diag", "toeplitz", "lstsq", "pinv", "polar",
           "circulant", "companion", "convolution_matrix", "dft", "fiedler", "hadamard", "hankel", "helmert",
           "hilbert", "invhilbert", "invpascal", "leslie", "pascal", "expm_frechet", "solve_sylvester"]


def cholesky(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """The Cholesky factor: upper U with a = U^H U (SciPy's default), or lower L with a = L L^H, read from
    that triangle of a only (as SciPy and JAX; JAX's derivative, the tangent taken as it is)."""
    x = jnp.asarray(a)
    if lower:
        return _la.cholesky(x, symmetrize_input=False)
    return jnp.conj(jnp.swapaxes(_la.cholesky(jnp.conj(jnp.swapaxes(x, -1, -2)), symmetrize_input=False), -1, -2))


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """(c, lower): the triangular Cholesky factor and which triangle it is, for cho_solve."""
    return cholesky(a, lower=lower), lower


def _as_matrix_rhs(b):
    b = jnp.asarray(b)
    return (b[..., None], True) if b.ndim == 1 else (b, False)


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """x with a x = b, given cho_factor(a)."""
    c, lower = c_and_lower
    c = jnp.asarray(c)
    rhs, vec = _as_matrix_rhs(b)
    c, rhs = _la.promote_dtypes(_la._inexact(c, "cho_solve"), _la._inexact(rhs, "cho_solve"))
    # a = L L^H: solve L y = b, then L^H x = y (with c = L^H = U when upper)
    y = _ld.triangular_solve(c, rhs, left_side=True, lower=lower, transpose_a=not lower, conjugate_a=not lower)
    x = _ld.triangular_solve(c, y, left_side=True, lower=lower, transpose_a=lower, conjugate_a=lower)
    return x[..., 0] if vec else x


def solve_triangular(a, b, trans=0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, debug=None, check_finite: bool = True):
    """x with op(a) x = b for triangular a; trans 0/'N' (a), 1/'T' (a^T), 2/'C' (a^H)."""
    modes = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
             2: (True, True), "C": (True, True)}
    if trans not in modes:
        raise ValueError(f"solve_triangular: invalid trans {trans!r}; expected 0, 1, 2, 'N', 'T' or 'C'")
    transpose_a, conjugate_a = modes[trans]
    rhs, vec = _as_matrix_rhs(b)
    a, rhs = _la.promote_dtypes(_la._inexact(a, "solve_triangular"), _la._inexact(rhs, "solve_triangular"))
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or rhs.shape[-2] != a.shape[-1]:
        raise ValueError(f"solve_triangular: shapes {tuple(a.shape)} and {tuple(jnp.shape(b))} are incompatible")
    x = _ld.triangular_solve(a, rhs, left_side=True, lower=lower, transpose_a=transpose_a,
                             conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    return x[..., 0] if vec else x


def solve(a, b, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen", transposed: bool = False):
    """x with a x = b; assume_a 'pos' uses a Cholesky solve, 'sym'/'her'/'gen' a general one."""
    if assume_a not in ("gen", "sym", "her", "pos", "general", "symmetric", "hermitian", "positive definite"):
        raise ValueError(f"solve: unknown assume_a {assume_a!r}")
    if transposed:
        a = jnp.swapaxes(jnp.asarray(a), -1, -2)
    if assume_a in ("pos", "positive definite"):
        return cho_solve(cho_factor(a, lower=True), b)
    return _la.solve(a, b)


def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """(lu, piv): L and U packed in one matrix, and the LAPACK pivots (row i swapped with piv[i])."""
    lu_, piv, _ = _lu(_la._inexact(a, "lu_factor"))
    return lu_, piv


def _perm_from_pivots(piv, m):
    """The row order after swapping row i with row piv[i] for i = 0, 1, ... (traceable)."""
    perm = jnp.arange(m)
    idx = jnp.arange(m)
    for i in range(piv.shape[-1]):
        p = piv[i]
        at_i, at_p = perm[i], perm[p]
        perm = jnp.where(idx == i, at_p, jnp.where(idx == p, at_i, perm))
    return perm


def lu_solve(lu_and_piv, b, trans: int = 0, overwrite_b: bool = False, check_finite: bool = True):
    """x with a x = b (trans 0), a^T x = b (1) or a^H x = b (2), given lu_factor(a)."""
    lu_, piv = lu_and_piv
    lu_ = jnp.asarray(lu_)
    m = lu_.shape[-1]
    perm = _perm_from_pivots(jnp.asarray(piv), m) if lu_.ndim == 2 else None
    if perm is None:
        raise NotImplementedError("lu_solve: batched factorizations are not supported; use vmap")
    rhs, vec = _as_matrix_rhs(b)
    lu_, rhs = _la.promote_dtypes(_la._inexact(lu_, "lu_solve"), _la._inexact(rhs, "lu_solve"))
    if trans == 0:
        y = _ld.triangular_solve(lu_, rhs[perm], left_side=True, lower=True, unit_diagonal=True)
        x = _ld.triangular_solve(lu_, y, left_side=True, lower=False)
    elif trans in (1, 2):
        conj = trans == 2
        y = _ld.triangular_solve(lu_, rhs, left_side=True, lower=False, transpose_a=True, conjugate_a=conj)
        z = _ld.triangular_solve(lu_, y, left_side=True, lower=True, unit_diagonal=True, transpose_a=True,
                                 conjugate_a=conj)
        inv = jnp.argsort(perm)
        x = z[inv]
    else:
        raise ValueError(f"lu_solve: invalid trans {trans!r}; expected 0, 1 or 2")
    return x[..., 0] if vec else x


def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """(p, l, u) with a = p l u (l unit lower triangular, m x k; u upper, k x n; k = min(m, n)), or
    (p l, u) when permute_l."""
    a = _la._inexact(a, "lu")
    lu_, _, perm = _lu(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    eye = jnp.eye(m, k, dtype=lu_.dtype)
    l_ = jnp.tril(lu_[..., :, :k], -1) + eye
    u = jnp.triu(lu_[..., :k, :])
    p = jnp.swapaxes(jnp.asarray(perm[..., :, None] == jnp.arange(m), dtype=lu_.dtype), -1, -2)
    if permute_l:
        return p @ l_, u
    return p, l_, u


def qr(a, overwrite_a: bool = False, lwork=None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True):
    """(q, r) for mode 'full' (square q) or 'economic'; (r,) for mode 'r'."""
    if pivoting:
        raise NotImplementedError("qr: pivoting=True is not supported")
    if mode not in ("full", "economic", "r"):
        raise ValueError(f"qr: unknown mode {mode!r}; expected 'full', 'economic' or 'r'")
    q, r = _ld_qr.qr(_la._matrix(a, "qr"), full_matrices=mode == "full")
    return (r,) if mode == "r" else (q, r)


def svd(a, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd"):
    """(u, s, vh) with a = u diag(s) vh, s descending; s alone when compute_uv=False."""
    out = _la.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def eigh(a, b=None, lower: bool = True, eigvals_only: bool = False, overwrite_a: bool = False,
         overwrite_b: bool = False, type: int = 1, check_finite: bool = True, subset_by_index=None,  # noqa: A002
         subset_by_value=None, driver=None):
    """(w, v): ascending eigenvalues and eigenvectors of a Hermitian matrix (w alone if eigvals_only)."""
    if b is not None:
        raise NotImplementedError("eigh: the generalized problem (b given) is not supported")
    if subset_by_index is not None or subset_by_value is not None:
        raise NotImplementedError("eigh: eigenvalue subsets are not supported")
    w, v = _la.eigh(a, "L" if lower else "U", symmetrize_input=False)
    return w if eigvals_only else (w, v)


def inv(a, overwrite_a: bool = False, check_finite: bool = True):
    """The inverse of a square matrix (batched over leading dimensions), as jax.scipy.linalg.inv; overwrite_a and
    check_finite are accepted and ignored, as in JAX."""
    return _la.inv(a)


def det(a, overwrite_a: bool = False, check_finite: bool = True):
    """The determinant of a square matrix (batched over leading dimensions), as jax.scipy.linalg.det; overwrite_a
    and check_finite are accepted and ignored, as in JAX."""
    return _la.det(a)


# Pade(13) coefficients for exp (Higham 2005, "The scaling and squaring method for the matrix
# exponential revisited"), and the 1-norm bound below which no scaling is needed.
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def expm(A, *, upper_triangular: bool = False, max_squarings: int = 16):
    """The matrix exponential by scaling and squaring with a degree-13 Pade approximant
    (differentiable through the matmuls and the solve). Under jit the number of squarings is chosen
    at run time among 0..max_squarings."""
    A = _la._inexact(A, "expm")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"expm: expected a square matrix, got shape {tuple(A.shape)}")
    norm = jnp.max(jnp.sum(jnp.abs(A), axis=-2), axis=-1)
    s_arr = jnp.clip(jnp.ceil(jnp.log2(jnp.maximum(norm, 1e-300) / _THETA13)), 0, max_squarings)
    As = A / (2.0 ** s_arr)[..., None, None]
    b = _PADE13
    eye = jnp.broadcast_to(jnp.eye(A.shape[-1], dtype=A.dtype), A.shape)
    A2 = As @ As
    A4 = A2 @ A2
    A6 = A4 @ A2
    U = As @ (A6 @ (b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * eye)
    V = A6 @ (b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * eye
    R = _la.solve(V - U, V + U)
    conc = concrete_value(jnp.max(s_arr))  # known eagerly and under grad: square only as often as needed
    for i in range(max_squarings if conc is None else int(conc)):
        R = jnp.where((s_arr > i)[..., None, None], R @ R, R)
    return R


def lstsq(a, b, cond=None, overwrite_a: bool = False, overwrite_b: bool = False, check_finite: bool = True,
          lapack_driver=None):
    """(x, residues, rank, s): the least-squares solution of a x = b, as scipy.linalg.lstsq."""
    x, res, rank, s = _la.lstsq(a, b, rcond=cond)
    return x, res, rank, s


def pinv(a, *, atol=None, rtol=None, check_finite: bool = True):
    """The Moore-Penrose pseudo-inverse (singular values below max(atol, rtol * s_max) dropped)."""
    a = _la._inexact(a, "pinv")
    if atol is None and rtol is None:
        return _la.pinv(a)
    u, s, vh = _la.svd(a, full_matrices=False)
    cut = max(atol or 0.0, 0.0)
    tol = jnp.maximum(cut, (rtol if rtol is not None else 0.0) * jnp.max(s, axis=-1, keepdims=True))
    s_inv = jnp.where(s > tol, 1 / jnp.where(s > tol, s, 1), 0)
    return jnp.swapaxes(vh, -1, -2) @ (s_inv[..., None] * jnp.swapaxes(u, -1, -2))


def polar(a, side: str = "right", *, method: str = "svd", eps=None, maxiter: int = 50):
    """(u, p): a = u p (side 'right') or a = p u ('left') with u unitary and p Hermitian positive
    semi-definite, from the SVD (method 'svd'; JAX's 'qdwh' is accepted and computed the same way)."""
    if side not in ("right", "left"):
        raise ValueError(f"polar: side must be 'right' or 'left', got {side!r}")
    if method not in ("svd", "qdwh"):
        raise ValueError(f"polar: method must be 'svd' or 'qdwh', got {method!r}")
    u_, s, vh = _la.svd(_la._matrix(a, "polar"), full_matrices=False)
    unitary = u_ @ vh
    if side == "right":
        p = (jnp.conj(jnp.swapaxes(vh, -1, -2)) * s[..., None, :]) @ vh
    else:
        p = (u_ * s[..., None, :]) @ jnp.conj(jnp.swapaxes(u_, -1, -2))
    return unitary, p


def block_diag(*arrs):
    """A block-diagonal matrix from 0-, 1- or 2-d arrays (a 1-d array is one row)."""
    if not arrs:
        return jnp.zeros((1, 0))
    mats = []
    for a in arrs:
        a = jnp.asarray(a)
        if a.ndim > 2:
            raise ValueError(f"block_diag: arguments must have at most 2 dimensions, got shape {a.shape}")
        mats.append(jnp.reshape(a, (1, -1)) if a.ndim < 2 else a)
    dt = jnp.result_type(*mats)
    rows = sum(m.shape[0] for m in mats)
    cols = sum(m.shape[1] for m in mats)
    out = jnp.zeros((rows, cols), dt)
    r = c = 0
    for m in mats:
        out = out.at[r:r + m.shape[0], c:c + m.shape[1]].set(m.astype(dt))
        r, c = r + m.shape[0], c + m.shape[1]
    return out


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column c and first row r (r defaults to conj(c))."""
    c = jnp.ravel(jnp.asarray(c))
    r = jnp.conj(c) if r is None else jnp.ravel(jnp.asarray(r))
    vals = jnp.concatenate([c[::-1], r[1:]])
    i = jnp.arange(c.shape[0])[:, None]
    j = jnp.arange(r.shape[0])[None, :]
    return vals[c.shape[0] - 1 - i + j]



def expm_frechet(A, E, *, method=None, compute_expm: bool = True):
    """(expm(A), L(A, E)) or L(A, E) alone: the Frechet derivative of the matrix exponential at A in the
    direction E, read off the block exponential expm([[A, E], [0, A]]) = [[expm A, L], [0, expm A]]
    (Higham, "Functions of Matrices", Thm 3.6); differentiable through expm. Batched over leading axes."""
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"expm_frechet: unknown method {method!r}")
    A, E = _la._inexact(A, "expm_frechet"), _la._inexact(E, "expm_frechet")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"expm_frechet: expected A to be a square matrix, got shape {tuple(A.shape)}")
    if A.shape != E.shape:
        raise ValueError(f"expm_frechet: expected A and E to be the same shape, got {tuple(A.shape)} and "
                         f"{tuple(E.shape)}")
    dt = jnp.result_type(A, E)
    A, E = A.astype(dt), E.astype(dt)
    n = A.shape[-1]
    top = jnp.concatenate([A, E], axis=-1)
    bottom = jnp.concatenate([jnp.zeros_like(A), A], axis=-1)
    big = expm(jnp.concatenate([top, bottom], axis=-2))
    frechet = big[..., :n, n:]
    return (big[..., :n, :n], frechet) if compute_expm else frechet


def solve_sylvester(A, B, C, *, method: str = "schur", tol: float = 1e-8):
    """X with A X + X B = C, by the Kronecker form (kron(A, I) + kron(I, B^T)) vec(X) = vec(C) (row-major
    vec) and one solve: differentiable in A, B and C, O((m n)^3) work, meant for small matrices. A singular
    system (A and -B sharing an eigenvalue) raises LinAlgError. method and tol are accepted for JAX
    compatibility."""
    if method not in ("schur", "eigen"):
        raise ValueError(f"solve_sylvester: method must be 'schur' or 'eigen', got {method!r}")
    A, B, C = (_la._inexact(x, "solve_sylvester") for x in (A, B, C))
    dt = jnp.result_type(A, B, C)
    A, B, C = A.astype(dt), B.astype(dt), C.astype(dt)
    if A.ndim != 2 or B.ndim != 2 or C.ndim != 2:
        raise ValueError("solve_sylvester: A, B and C must be two-dimensional")
    m, n = C.shape
    if A.shape != (m, m) or B.shape != (n, n):
        raise ValueError(f"solve_sylvester: shapes do not fit: A {tuple(A.shape)} (must be {(m, m)}), "
                         f"B {tuple(B.shape)} (must be {(n, n)}), C {tuple(C.shape)}")
    k = jnp.kron(A, jnp.eye(n, dtype=dt)) + jnp.kron(jnp.eye(m, dtype=dt), B.T)
    return jnp.linalg.solve(k, C.reshape(m * n)).reshape(m, n)
