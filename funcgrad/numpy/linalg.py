"""funcgrad.numpy.linalg: numpy.linalg's API over funcgrad's primitives, usable under grad, vmap and jit.

    import funcgrad.numpy.linalg as la
    x = la.solve(a, b); sign, logdet = la.slogdet(a); w, v = la.eigh(a)

Semantics are NumPy's (stacks of matrices `(..., M, N)`, NumPy's argument names, result namedtuples,
numpy.linalg.LinAlgError for non-positive-definite / non-square input), with these
differences, all deliberate:

- Integer and bool input is computed in the default float dtype (float32, or float64 with x64
  enabled) where NumPy uses float64; float32 / complex64 input stays in its precision, as in NumPy.
  float16 raises TypeError, as in NumPy.
- cholesky and eigh use the symmetric (Hermitian) part (a + a^H) / 2 of their input, as JAX does,
  rather than one triangle (NumPy); the two agree on symmetric input. Pass symmetrize_input=False to
  read one triangle only (eigh's UPLO, cholesky's upper).
- svd(hermitian=True) computes the general SVD (the result agrees up to the signs of singular vectors).
- lstsq returns its rank as an integer array. Under jit or vmap, where the rank is not known while
  tracing, the residuals are always computed (shape (K,)), as JAX does; eagerly and under grad they
  follow NumPy (empty unless the rank is N and M > N).
- `out=` is not supported (arrays are immutable).

Derivatives: see funcgrad._src.prims.linalg_decomp for the rules and their degenerate cases
(repeated eigenvalues / singular values give inf or NaN derivatives of eigenvectors / singular
vectors, as in JAX). pinv (and so lstsq) carries its own derivative rule (Golub & Pereyra 1973),
which needs no distinct singular values. det's derivative is the adjugate, exact at singular matrices
too (to second order); slogdet's is inf / NaN there.
- solve and inv of an exactly singular matrix give inf / NaN, as JAX (NumPy raises LinAlgError).
"""
from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np
from numpy.linalg import LinAlgError

from .._src.core import dtypes
from .._src.core.array import ArrayBase
from .._src.core.errors import ConcretizationError, IncompatibleShapesError, user_location
from .._src.prims import elementwise as ew
from .._src.prims import linalg_decomp as ld
from .._src.prims import det as ld_det
from .._src.prims import eigen as ld_eigen
from .._src.prims import qr as ld_qr
from .._src.prims import svd as ld_svd
from .._src.prims.linalg_decomp import _real_dtype
from .._src.prims import shape as sh
from .._src.prims.linalg import dot_general
from .._src.interpreters.custom import custom_jvp
from . import _manipulation as _m
from . import _products as _p
from . import _reductions as _r
from . import _ufuncs as _u
from ._promote import asarray_any, broadcast_shapes, broadcast_to, normalize_index, promote_dtypes

__all__ = ["LinAlgError", "cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "lstsq",
           "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "multi_dot", "norm",
           "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "tensorinv",
           "tensorsolve", "trace", "vecdot", "vector_norm",
           "EigResult", "EighResult", "QRResult", "SlogdetResult", "SVDResult"]

_LINALG_DTYPES = (dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)


class EighResult(NamedTuple):
    eigenvalues: ArrayBase
    eigenvectors: ArrayBase


class QRResult(NamedTuple):
    Q: ArrayBase
    R: ArrayBase


class SlogdetResult(NamedTuple):
    sign: ArrayBase
    logabsdet: ArrayBase


class SVDResult(NamedTuple):
    U: ArrayBase
    S: ArrayBase
    Vh: ArrayBase


# --- argument helpers -----------------------------------------------------------------------------

def _inexact(a, op: str):
    """a as an array linalg accepts: integers and bools become the default float dtype."""
    x = asarray_any(a)
    if not dtypes.is_inexact(x.dtype):
        return ew.convert_element_type(x, dtypes.to_inexact(x.dtype, x.weak_type), x.weak_type)
    if x.dtype not in _LINALG_DTYPES:
        raise TypeError(f"{op}: array type {x.dtype} is unsupported in linalg; convert to float32 or "
                        f"float64 first (at {user_location(3)})")
    return x


class _MatrixShapeError(LinAlgError, TypeError):
    """An operand that is not a (square) matrix: NumPy's LinAlgError (a ValueError), and the TypeError JAX raises
    for most (svd and qr of a vector, cholesky and eigh of a non-square matrix)."""


def _assert_2d(x, op: str):
    if x.ndim < 2:
        raise _MatrixShapeError(f"{op}: {x.ndim}-dimensional array given. Array must be at least "
                                f"two-dimensional (at {user_location(3)})")


def _assert_square(x, op: str):
    _assert_2d(x, op)
    if x.shape[-1] != x.shape[-2]:
        raise _MatrixShapeError(f"{op}: Last 2 dimensions of the array must be square, got shape "
                                f"{tuple(x.shape)} (at {user_location(3)})")


def _matrix(a, op: str, square: bool = False):
    x = _inexact(a, op)
    (_assert_square if square else _assert_2d)(x, op)
    return x


def _conj(x):
    """Complex conjugate: conj(z) = 2 re(z) - z (exact); the identity on real input."""
    if not dtypes.is_complex(x.dtype):
        return x
    re = ew.convert_element_type(ew.convert_element_type(x, _real_dtype(x.dtype)), x.dtype)
    return ew.sub(ew.add(re, re), x)


def _abs2(x):
    """|x|^2 in x's real dtype."""
    if dtypes.is_complex(x.dtype):
        return ew.convert_element_type(ew.mul(_conj(x), x), _real_dtype(x.dtype))
    return ew.mul(x, x)


def _mT(x):
    return _m.swapaxes(x, -1, -2)


def _H(x):
    return _conj(_mT(x))


def _eye_like(x):
    """Identity matrices broadcast to x's shape (..., n, n) and dtype."""
    n = x.shape[-1]
    eye = ew.convert_element_type(ew.eq(sh.broadcasted_iota(dtypes.int32, (n, n), 0),
                                        sh.broadcasted_iota(dtypes.int32, (n, n), 1)), x.dtype)
    return broadcast_to(eye, x.shape)


def _from_triangle(x, lower: bool):
    """The Hermitian matrix whose lower (or upper) triangle is x's."""
    t = ld._tril(x) if lower else ld._triu(x)
    strict = ld._tril(x, -1) if lower else ld._triu(x, 1)
    return ew.add(t, _H(strict))


def _concrete_int(x):
    """int(x) when x's value is known (eagerly, under grad), else None (under jit or vmap)."""
    try:
        return int(x)
    except ConcretizationError:
        return None


# --- factorisations -------------------------------------------------------------------------------

def cholesky(a, /, *, upper: bool = False, symmetrize_input: bool = True):
    """Cholesky factor of Hermitian positive-definite matrices: lower L with a = L L^H (upper: L^H).

    A matrix that is not positive definite gives NaN entries, as JAX (NumPy raises LinAlgError). Uses
    (a + a^H) / 2 unless symmetrize_input is False, when only the lower (upper) triangle of a is read.

    >>> la.cholesky(jnp.array([[4.0, 2.0], [2.0, 2.0]]))   # [[2, 0], [1, 1]]
    """
    return _cholesky(a, upper=upper, symmetrize_input=symmetrize_input)


def _cholesky(a, *, upper: bool = False, symmetrize_input: bool = True, convention: str = "jax"):
    """cholesky with the card's failure convention: "jax" (NaN) or "torch" (LinAlgError; the torch face's)."""
    x = _matrix(a, "cholesky", square=True)
    factor = ld.cholesky(x, convention=convention, symmetrize=bool(symmetrize_input))  # (the lower triangle: JAX's)
    return _H(factor) if upper else factor


def eigh(a, UPLO: str = "L", *, symmetrize_input: bool = True):
    """Eigenvalues (ascending) and eigenvectors (columns) of Hermitian matrices: EighResult(w, v).

    Uses (a + a^H) / 2, as JAX; with symmetrize_input=False only the UPLO triangle is read, as NumPy.
    Eigenvector derivatives are inf / NaN where eigenvalues repeat (see the eigh primitive)."""
    uplo = str(UPLO).upper()
    if uplo not in ("L", "U"):
        raise ValueError("eigh: UPLO argument must be 'L' or 'U'")
    x = _matrix(a, "eigh", square=True)
    if not symmetrize_input:
        x = _from_triangle(x, lower=uplo == "L")
    w, v = ld_eigen.eigh(x)
    return EighResult(w, v)


class EigResult(NamedTuple):
    eigenvalues: ArrayBase
    eigenvectors: ArrayBase


def eig(a):
    """EigResult(w, v): eigenvalues and right eigenvectors (columns, unit norm) of general square matrices,
    always complex (complex64 for 32-bit input, complex128 for 64-bit), as jax.numpy.linalg.eig.

    As in JAX, differentiating it raises NotImplementedError (eigenvector derivatives are only valid for
    distinct eigenvalues): use eigvals for differentiable eigenvalues, or
    funcgrad.lax.linalg.eig(..., enable_eigvec_derivs=True) to opt in to eigenvector derivatives."""
    x = _matrix(a, "eig", square=True)
    w, v = ld_eigen.eig(x, vectors=True, eigvec_derivs=False)
    return EigResult(w, v)


def eigvals(a):
    """The eigenvalues (complex) of general square matrices; differentiable (dw = diag(V^-1 dA V))."""
    x = _matrix(a, "eigvals", square=True)
    return ld_eigen.eig(x, vectors=False)[0]


def eigvalsh(a, UPLO: str = "L", *, symmetrize_input: bool = True):
    """Eigenvalues (ascending) of Hermitian matrices; their gradients are finite even where they repeat."""
    return eigh(a, UPLO, symmetrize_input=symmetrize_input).eigenvalues


def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False):
    """Singular value decomposition a = U diag(S) Vh, S descending: SVDResult(U, S, Vh), or S alone.

    As in NumPy, full_matrices=True (the default) gives square U and Vh; derivatives of U and Vh
    need full_matrices=False for non-square input. `hermitian` is accepted for compatibility; the
    general SVD is computed."""
    x = _matrix(a, "svd")
    if not compute_uv:
        return ld_svd.svd(x, full_matrices=False, compute_uv=False)[0]
    u, s, vh = ld_svd.svd(x, full_matrices=full_matrices, compute_uv=True)
    return SVDResult(u, s, vh)


def svdvals(x, /):
    """Singular values (descending) of stacks of matrices, as numpy.linalg.svdvals."""
    return svd(x, compute_uv=False)


def qr(a, mode: str = "reduced"):
    """QR decomposition: QRResult(Q, R) for mode 'reduced' (or 'full', its old name) or 'complete', R alone
    for mode 'r', and for mode 'raw' LAPACK's Householder form as JAX returns it: QRResult(h, taus) with h
    the geqrf result transposed (..., N, M), as numpy.linalg.qr's (no derivative, as JAX's)."""
    if mode not in ("reduced", "complete", "r", "raw", "full"):
        raise ValueError(f"qr: Unrecognized mode '{mode}'")
    x = _matrix(a, "qr")
    if mode == "raw":
        h, taus = ld_qr.geqrf(x)
        return QRResult(_m.swapaxes(h, -1, -2), taus)
    q, r = ld_qr.qr(x, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


# --- solves, inverses, determinants ---------------------------------------------------------------

def solve(a, b):
    """x with a @ x = b, as numpy.linalg.solve: b is (M,) or a stack (..., M, K) broadcast against a.

    An exactly singular a gives inf / NaN, as in JAX.

    Examples:
        >>> import funcgrad.numpy as jnp
        >>> jnp.linalg.solve(jnp.array([[3., 1.], [1., 2.]]), jnp.array([9., 8.]))
        Array([2., 3.], dtype=float32)
    """
    x = _matrix(a, "solve", square=True)
    y = _inexact(b, "solve")
    x, y = promote_dtypes(x, y)
    vec = y.ndim == 1
    if vec:
        y = sh.expand_dims(y, (1,))
    if y.ndim < 2:
        raise ValueError("solve: b must be at least one-dimensional")
    batch = broadcast_shapes(x.shape[:-2], y.shape[:-2], op="solve")
    if y.shape[-2] != x.shape[-1]:
        raise ValueError(f"solve: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                         f"signature (m,m),(m,n)->(m,n) (size {y.shape[-2]} is different from "
                         f"{x.shape[-1]}): a has shape {tuple(x.shape)}, b has shape "
                         f"{tuple(asarray_any(b).shape)} (at {user_location(2)})")
    x = broadcast_to(x, batch + tuple(x.shape[-2:]))
    out = ld.solve(x, broadcast_to(y, batch + tuple(y.shape[-2:])))
    return sh.squeeze(out, (out.ndim - 1,)) if vec else out


def inv(a):
    """Inverse of square matrices (a solve with the identity); inf / NaN for exactly singular ones, as JAX."""
    x = _matrix(a, "inv", square=True)
    return ld.solve(x, _eye_like(x))


def det(a):
    """Determinant of square matrices; its derivative is the adjugate (exact for singular a too)."""
    return ld_det.det(_matrix(a, "det", square=True))


def slogdet(a):
    """SlogdetResult(sign, logabsdet) with det = sign * exp(logabsdet); sign 0 and -inf for singular a."""
    sign, logabsdet = ld_det.slogdet(_matrix(a, "slogdet", square=True))
    return SlogdetResult(sign, logabsdet)


def _pinv_fun(a, rcond, hermitian):
    u, s, vh = ld_svd.svd(a, full_matrices=False)
    cutoff = _u.multiply(_m.expand_dims(rcond, -1), _r.max(s, axis=-1, keepdims=True))
    large = _u.greater(s, cutoff)
    one = sh.full(s.shape, 1, s.dtype)
    s_inv = ew.select(large, ew.div(one, ew.select(large, s, one)), ew.zeros_like(s))
    return _p.matmul(_u.multiply(_H(vh), _m.expand_dims(s_inv, -2)), _H(u))


_pinv = custom_jvp(_pinv_fun, nondiff_argnums=(1, 2))


@_pinv.defjvp
def _pinv_jvp(rcond, hermitian, primals, tangents):
    # Golub & Pereyra (1973): dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P.
    a, = primals
    da, = tangents
    p = _pinv(a, rcond, hermitian)
    mm = _p.matmul
    s = mm(mm(p, _H(p)), _H(da))
    t = mm(mm(_H(da), _H(p)), p)
    dp = mm(mm(ew.neg(p), da), p)
    dp = ew.add(dp, ew.sub(s, mm(mm(s, a), p)))
    dp = ew.add(dp, ew.sub(t, mm(mm(p, a), t)))
    return p, dp


def pinv(a, rcond=None, hermitian: bool = False, *, rtol=None):
    """Moore-Penrose pseudo-inverse by SVD, singular values <= rcond * max(s) dropped, as numpy.linalg.pinv.
    Without rcond or rtol the cut-off is max(M, N) * eps, as in JAX and the Array API (NumPy: 1e-15).

    Its derivative (Golub & Pereyra) does not involve the SVD's, so it stays finite for repeated
    singular values; it assumes the rank does not change under the perturbation."""
    x = _matrix(a, "pinv")
    if rcond is None:
        rcond = max(x.shape[-2:]) * np.finfo(_real_dtype(x.dtype)).eps if rtol is None else rtol
    elif rtol is not None:
        raise ValueError("pinv: `rtol` and `rcond` can't be both set.")
    m, n = x.shape[-2:]
    if m == 0 or n == 0:
        return sh.full(tuple(x.shape[:-2]) + (n, m), 0, x.dtype)
    if not isinstance(rcond, ArrayBase):
        rcond = asarray_any(np.asarray(rcond, dtype=_real_dtype(x.dtype)))
    rcond = ew.convert_element_type(rcond, _real_dtype(x.dtype))
    return _pinv(x, rcond, bool(hermitian))


def lstsq(a, b, rcond=None, *, numpy_resid: bool = False):
    """Least-squares solution of a @ x = b: (x, residuals, rank, s), as jax.numpy.linalg.lstsq.

    a is (M, N), b is (M,) or (M, K); singular values <= rcond * max(s) count as zero (default
    rcond: eps * max(M, N)). x = V diag(1 / s) U^H b over the kept singular values, as JAX computes it, so
    its derivatives are JAX's (those of the SVD: NaN where zero singular values repeat). The residuals
    |b - a x|^2 have shape (K,) ((1,) for a vector b) always, as JAX's; numpy_resid=True gives NumPy's
    instead: empty where rank < N or M <= N (eager only, where the rank is known)."""
    x = _inexact(a, "lstsq")
    y = _inexact(b, "lstsq")
    x, y = promote_dtypes(x, y)
    is_1d = y.ndim == 1
    if is_1d:
        y = sh.expand_dims(y, (1,))
    for arr in (x, y):
        if arr.ndim != 2:
            raise LinAlgError(f"lstsq: {arr.ndim}-dimensional array given. Array must be two-dimensional "
                              f"(at {user_location(2)})")
    m, n = x.shape
    if y.shape[0] != m:
        raise LinAlgError(f"lstsq: Incompatible dimensions: a has shape {tuple(x.shape)}, b has shape "
                          f"{tuple(asarray_any(b).shape)} (at {user_location(2)})")
    real = _real_dtype(x.dtype)
    if rcond is None:
        rcond = float(np.finfo(real).eps) * max(m, n)
    elif rcond < 0:  # LAPACK's convention, kept by NumPy: machine precision
        rcond = float(np.finfo(real).eps)
    if min(m, n) == 0:
        s = svdvals(x)
        sol = sh.full((n, y.shape[1]), 0, x.dtype)
        rank = sh.full((), 0, dtypes.defaults.int_)
    else:
        # As JAX: x = V diag(s_inv) U^H b from the reduced SVD, the singular values below rcond * s_max
        # masked out, so its derivatives are the SVD's (those of the truncated pseudo-inverse's solution)
        u, s, vh = ld_svd.svd(x, full_matrices=False)
        zero = ew.zeros_like(s)
        cutoff = sh.broadcast_in_dim(ew.mul(sh.full((), rcond, real), _r.max(s)), s.shape, ())
        mask = _u.logical_and(ew.gt(s, zero), ew.ge(s, cutoff))
        one = sh.full(s.shape, 1, real)
        s_inv = ew.select(mask, ew.div(one, ew.select(mask, s, one)), zero)
        uhb = _p.matmul(_H(u), y)
        sol = _p.matmul(_H(vh), _u.multiply(_m.expand_dims(ew.convert_element_type(s_inv, x.dtype), -1), uhb))
        rank = _r.sum(mask)
    known = _concrete_int(rank) if numpy_resid else None
    if numpy_resid and known is None:
        raise ConcretizationError("lstsq: numpy_resid=True needs the rank's value, unknown under jit (as JAX); "
                                  "use numpy_resid=False (residuals of shape (K,) always)")
    if numpy_resid and (known != n or m <= n):
        resid = sh.full((0,), 0, real)
    else:
        resid = _r.sum(_abs2(ew.sub(y, _p.matmul(x, sol))), axis=0)
    if is_1d:
        sol = sh.squeeze(sol, (1,))
    return sol, resid, rank, s


def matrix_power(a, n):
    """a raised to the integer power n (n < 0 inverts first), by repeated squaring, as NumPy."""
    x = asarray_any(a)
    _assert_square(x, "matrix_power")
    try:
        n = operator.index(n)
    except TypeError as e:
        raise TypeError("matrix_power: exponent must be an integer") from e
    if n == 0:
        return _eye_like(x)
    if n < 0:
        x = inv(x)
        n = -n
    if n == 1:
        return x
    mm = _p.matmul
    if n == 2:
        return mm(x, x)
    if n == 3:
        return mm(mm(x, x), x)
    z = result = None
    while n > 0:
        z = x if z is None else mm(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else mm(result, z)
    return result


def matrix_rank(A, tol=None, hermitian: bool = False, *, rtol=None):
    """Number of singular values above tol (default max(s) * max(M, N) * eps), as an integer array."""
    if rtol is not None and tol is not None:
        raise ValueError("matrix_rank: `tol` and `rtol` can't be both set.")
    x = asarray_any(A)
    if x.ndim < 2:
        return ew.convert_element_type(_r.sum(ew.ne(x, ew.zeros_like(x))) > 0, dtypes.defaults.int_)
    if min(x.shape[-2:]) == 0:
        return sh.full(tuple(x.shape[:-2]), 0, dtypes.defaults.int_)
    s = svdvals(_inexact(x, "matrix_rank"))
    real = s.dtype
    if tol is None:
        if rtol is None:
            rtol = max(x.shape[-2:]) * np.finfo(real).eps
        rt = ew.convert_element_type(asarray_any(rtol), real)
        tol_arr = _u.multiply(_r.max(s, axis=-1, keepdims=True), _m.expand_dims(rt, -1))
    else:
        tol_arr = _m.expand_dims(ew.convert_element_type(asarray_any(tol), real), -1)
    return _r.sum(_u.greater(s, tol_arr), axis=-1)


def cond(x, p=None):
    """Condition number in the norm p (None / 2: s_max / s_min; -2: s_min / s_max; else |x| |x^-1|).

    Singular input gives inf, as in NumPy, except that for p None / 2 the ratio is returned as it is, as
    JAX's (jnp.linalg.cond returns s[0] / s[-1] before its NaN-to-inf fix-up): NaN for a zero matrix."""
    a = _matrix(x, "cond")
    if a.shape[-1] == 0 or a.shape[-2] == 0:
        raise LinAlgError("cond is not defined on empty arrays")
    with np.errstate(all="ignore"):  # as NumPy: 0 / 0 and x / 0 become NaN / inf, fixed up below
        return _cond(a, p)


def _cond(a, p):
    if p is None or p in (2, -2):
        s = svdvals(a)
        first = sh.squeeze(sh.slice(s, (0,) * s.ndim, tuple(s.shape[:-1]) + (1,)), (s.ndim - 1,))
        last = sh.squeeze(sh.slice(s, (0,) * (s.ndim - 1) + (s.shape[-1] - 1,), s.shape), (s.ndim - 1,))
        if p != -2:
            return _u.divide(first, last)
        r = _u.divide(last, first)
    else:
        _assert_square(a, "cond")
        try:
            r = _u.multiply(norm(a, p, axis=(-2, -1)), norm(inv(a), p, axis=(-2, -1)))
        except LinAlgError:  # some matrix is singular (eager only): NumPy gives inf for it
            if a.ndim == 2:
                return sh.full((), np.inf, _real_dtype(a.dtype))
            return _m.stack([_cond(a[i], p) for i in range(a.shape[0])])
    # NaN (from 0 / 0 or inf / inf) means infinitely ill-conditioned, unless a itself holds NaN.
    a_nan = _u.greater(_r.sum(ew.ne(a, a), axis=(-2, -1)), 0)
    fix = ew.select(a_nan, sh.full(r.shape, False, dtypes.bool_), ew.ne(r, r))
    return ew.select(fix, sh.full(r.shape, np.inf, r.dtype), r)


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) = b, as numpy.linalg.tensorsolve."""
    x = _inexact(a, "tensorsolve")
    y = _inexact(b, "tensorsolve")
    an = x.ndim
    if axes is not None:
        allaxes = list(range(an))
        for k in axes:
            allaxes.remove(k)
            allaxes.insert(an, k)
        x = _m.transpose(x, allaxes)
    oldshape = tuple(x.shape[-(an - y.ndim):])
    prod = math.prod(oldshape)
    if x.size != prod ** 2:
        raise LinAlgError("tensorsolve: Input arrays must satisfy the requirement "
                          "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    res = solve(_m.reshape(x, (prod, prod)), _m.reshape(y, (-1,)))
    return _m.reshape(res, oldshape)


def tensorinv(a, ind: int = 2):
    """The inverse of an N-d array with respect to tensordot over its first `ind` axes, as NumPy."""
    x = asarray_any(a)
    if ind <= 0:
        raise ValueError("tensorinv: Invalid ind argument.")
    invshape = tuple(x.shape[ind:]) + tuple(x.shape[:ind])
    prod = math.prod(x.shape[ind:])
    ia = inv(_m.reshape(x, (prod, -1)))
    return _m.reshape(ia, invshape)


# --- norms ----------------------------------------------------------------------------------------

def _float_input(x):
    """x for a norm: integers and bools in JAX's to_inexact_dtype (float32 up to 32 bits, else the default)."""
    x = asarray_any(x)
    if not dtypes.is_inexact(x.dtype):
        x = ew.convert_element_type(x, dtypes.to_inexact(x.dtype, x.weak_type), x.weak_type)
    return x


def _sqrt_sum_abs2(x, axis, keepdims=False):
    return _u.sqrt(_r.sum(_abs2(x), axis=axis, keepdims=keepdims))


def _svd_norm(x, row_axis, col_axis, reduce):
    y = _m.moveaxis(x, (row_axis, col_axis), (-2, -1))
    return reduce(svdvals(y), axis=-1)


def norm(x, ord=None, axis=None, keepdims: bool = False):  # noqa: A002 - NumPy name
    """Matrix or vector norm, as numpy.linalg.norm.

    Vectors (axis an int, or x 1-D): ord None/2 (Euclidean), inf, -inf, 0 (count of non-zeros), 1, -1,
    other p: sum(|x|^p)^(1/p). Matrices (axis a pair, or x 2-D): None/'fro', 'nuc', inf, -inf, 1, -1,
    2 (largest singular value), -2 (smallest). axis=None with ord=None is the 2-norm of x.ravel()."""
    x = _float_input(x)
    if axis is None:
        nd = x.ndim
        if ord is None or (isinstance(ord, str) and ord in ("f", "fro") and nd == 2) or \
                (not isinstance(ord, str) and ord == 2 and nd == 1):
            r = _sqrt_sum_abs2(x, None)
            return _m.reshape(r, (1,) * nd) if keepdims else r
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = (operator.index(axis),)
        except TypeError as e:
            raise TypeError("norm: 'axis' must be None, an integer or a tuple of integers") from e
    is_str = isinstance(ord, str)
    if len(axis) == 1:
        if is_str:
            raise ValueError(f"norm: Invalid norm order '{ord}' for vectors")
        ax = normalize_index(axis[0], x.ndim, "norm")
        if ord == np.inf:
            return _r.max(_u.abs(x), axis=ax, keepdims=keepdims)
        if ord == -np.inf:
            return _r.min(_u.abs(x), axis=ax, keepdims=keepdims)
        if ord == 0:
            nz = ew.convert_element_type(ew.ne(x, ew.zeros_like(x)), _real_dtype(x.dtype))
            return _r.sum(nz, axis=ax, keepdims=keepdims)
        if ord == 1:
            return _r.sum(_u.abs(x), axis=ax, keepdims=keepdims)
        if ord is None or ord == 2:
            return _sqrt_sum_abs2(x, ax, keepdims)
        absx = _u.abs(x)
        return _u.power(_r.sum(_u.power(absx, ord), axis=ax, keepdims=keepdims), 1.0 / ord)
    if len(axis) == 2:
        row_axis = normalize_index(axis[0], x.ndim, "norm")
        col_axis = normalize_index(axis[1], x.ndim, "norm")
        if row_axis == col_axis:
            raise ValueError("norm: Duplicate axes given.")
        if not is_str and ord == 2:
            ret = _svd_norm(x, row_axis, col_axis, _r.max)
        elif not is_str and ord == -2:
            ret = _svd_norm(x, row_axis, col_axis, _r.min)
        elif not is_str and ord in (1, -1):
            c = col_axis - 1 if col_axis > row_axis else col_axis
            ret = (_r.max if ord == 1 else _r.min)(_r.sum(_u.abs(x), axis=row_axis), axis=c)
        elif not is_str and ord in (np.inf, -np.inf):
            rw = row_axis - 1 if row_axis > col_axis else row_axis
            ret = (_r.max if ord == np.inf else _r.min)(_r.sum(_u.abs(x), axis=col_axis), axis=rw)
        elif ord is None or (is_str and ord in ("fro", "f")):
            ret = _sqrt_sum_abs2(x, (row_axis, col_axis))
        elif is_str and ord == "nuc":
            ret = _svd_norm(x, row_axis, col_axis, _r.sum)
        else:
            raise ValueError(f"norm: Invalid norm order {ord!r} for matrices.")
        if keepdims:
            shape = list(x.shape)
            shape[row_axis] = shape[col_axis] = 1
            ret = _m.reshape(ret, tuple(shape))
        return ret
    raise ValueError("norm: Improper number of dimensions to norm.")


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2):  # noqa: A002
    """Vector norm over one axis, several axes (flattened together) or all (axis=None), Array API style
    (integers and bools in the default float, as jnp.linalg.vector_norm; norm uses to_inexact_dtype)."""
    x = asarray_any(x)
    if not dtypes.is_inexact(x.dtype):
        x = ew.convert_element_type(x, dtypes.defaults.float_, x.weak_type)
    shape = list(x.shape)
    if axis is None:
        y, ax = _m.reshape(x, (-1,)), 0
    elif isinstance(axis, tuple):
        axes = tuple(normalize_index(a, x.ndim, "vector_norm") for a in axis)
        rest = tuple(i for i in range(x.ndim) if i not in axes)
        y = _m.reshape(_m.transpose(x, axes + rest),
                       (math.prod(x.shape[i] for i in axes),) + tuple(x.shape[i] for i in rest))
        ax = 0
    else:
        y, ax = x, axis
    res = norm(y, ord=ord, axis=ax)
    if keepdims:
        axes = range(len(shape)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
        for i in axes:
            shape[normalize_index(i, len(shape), "vector_norm")] = 1
        res = _m.reshape(res, tuple(shape))
    return res


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro"):  # noqa: A002
    """Matrix norm over the last two axes, Array API style."""
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


# --- products and Array API helpers ---------------------------------------------------------------

matmul = _p.matmul


def matrix_transpose(x, /):
    """Swap the last two axes of a stack of matrices."""
    a = asarray_any(x)
    if a.ndim < 2:
        raise ValueError(f"matrix_transpose: input array must be at least 2-dimensional, got shape {a.shape}")
    return _mT(a)


def outer(x1, x2, /):
    """Outer product of two vectors (1-D only, as numpy.linalg.outer)."""
    a, b = asarray_any(x1), asarray_any(x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"outer: Input arrays must be one-dimensional, but they are x1.ndim={a.ndim} and "
                         f"x2.ndim={b.ndim}.")
    return _u.multiply(sh.expand_dims(a, (1,)), sh.expand_dims(b, (0,)))


def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
    """sum(conj(x1) * x2) over `axis` (of each input), broadcasting the other axes; JAX's precision= is
    checked, preferred_element_type sets the result dtype (as jnp.vecdot's)."""
    pet = _p._product_options(precision, preferred_element_type)
    a, b = asarray_any(x1), asarray_any(x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("vecdot: inputs must be at least one-dimensional")
    a = _m.moveaxis(a, normalize_index(axis, a.ndim, "vecdot"), -1)
    b = _m.moveaxis(b, normalize_index(axis, b.ndim, "vecdot"), -1)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"vecdot: the contracted axis has size {a.shape[-1]} in x1 but {b.shape[-1]} in x2")
    if pet is not None:
        return _p.vecdot(a, b, preferred_element_type=pet)
    p = _u.multiply(_conj(a), b)
    return _r.sum(p, axis=-1, dtype=p.dtype)  # (the operands' dtype: sum alone widens small integers)


def diagonal(x, /, *, offset: int = 0):
    """The diagonal (offset k: above for k > 0) over the last two axes: shape (..., L)."""
    a = asarray_any(x)
    if a.ndim < 2:
        raise ValueError(f"diagonal: input array must be at least 2-dimensional, got shape {a.shape}")
    m, n = a.shape[-2:]
    k = operator.index(offset)
    r0, c0 = (0, k) if k >= 0 else (-k, 0)
    size = max(0, min(m - r0, n - c0))
    nd = a.ndim
    sq = sh.slice(a, (0,) * (nd - 2) + (r0, c0), tuple(a.shape[:-2]) + (r0 + size, c0 + size))
    return ld._diag(sq)


def trace(x, /, *, offset: int = 0, dtype=None):
    """Sum of the diagonal over the last two axes (NumPy's summation dtype rules)."""
    return _r.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def cross(x1, x2, /, *, axis: int = -1):
    """Cross product of 3-vectors along `axis`, broadcasting the other axes."""
    a, b = asarray_any(x1), asarray_any(x2)
    for v in (a, b):
        if v.ndim == 0:
            raise ValueError("cross: inputs must be at least one-dimensional")
    ax_a = normalize_index(axis, a.ndim, "cross")
    ax_b = normalize_index(axis, b.ndim, "cross")
    if a.shape[ax_a] != 3 or b.shape[ax_b] != 3:
        raise ValueError(f"cross: Both input arrays must be (arrays of) 3-dimensional vectors, but they are "
                         f"{a.shape[ax_a]} and {b.shape[ax_b]} dimensional instead.")
    a, b = promote_dtypes(_m.moveaxis(a, ax_a, -1), _m.moveaxis(b, ax_b, -1))
    shape = broadcast_shapes(a.shape, b.shape, op="cross")
    a, b = broadcast_to(a, shape), broadcast_to(b, shape)

    def comp(v, i):
        nd = v.ndim
        return sh.squeeze(sh.slice(v, (0,) * (nd - 1) + (i,), tuple(v.shape[:-1]) + (i + 1,)), (nd - 1,))

    a0, a1, a2 = (comp(a, i) for i in range(3))
    b0, b1, b2 = (comp(b, i) for i in range(3))
    mul, sub = _u.multiply, _u.subtract
    c = _m.stack([sub(mul(a1, b2), mul(a2, b1)), sub(mul(a2, b0), mul(a0, b2)),
                  sub(mul(a0, b1), mul(a1, b0))], axis=-1)
    return _m.moveaxis(c, -1, normalize_index(axis, c.ndim, "cross"))


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    """Sum products over the last `axes` axes of x1 and the first of x2 (or the given axis pairs); JAX's
    precision= is checked, preferred_element_type sets the result dtype."""
    pet = _p._product_options(precision, preferred_element_type)
    a, b = promote_dtypes(asarray_any(x1), asarray_any(x2))
    if isinstance(axes, (int, np.integer)):
        k = int(axes)
        if k < 0 or k > min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: axes={k} out of range for shapes {a.shape} and {b.shape}")
        ax_a, ax_b = tuple(range(a.ndim - k, a.ndim)), tuple(range(k))
    else:
        ax_a, ax_b = axes
        ax_a = (ax_a,) if isinstance(ax_a, (int, np.integer)) else tuple(ax_a)
        ax_b = (ax_b,) if isinstance(ax_b, (int, np.integer)) else tuple(ax_b)
        if len(ax_a) != len(ax_b):
            raise ValueError("tensordot: shape-mismatch for sum (axes lists differ in length)")
        ax_a = tuple(normalize_index(i, a.ndim, "tensordot") for i in ax_a)
        ax_b = tuple(normalize_index(i, b.ndim, "tensordot") for i in ax_b)
    for i, j in zip(ax_a, ax_b):
        if a.shape[i] != b.shape[j]:
            raise IncompatibleShapesError(f"tensordot: shape-mismatch for sum: shapes {a.shape} and {b.shape}, "
                                          f"axes {ax_a} and {ax_b} (NumPy's ValueError, JAX's TypeError)")
    return dot_general(a, b, ((ax_a, ax_b), ((), ())), pet)


def _chain_order(shapes):
    """numpy.linalg.multi_dot's dynamic programme: s[i][j] splits the product of matrices i..j."""
    n = len(shapes)
    p = [shapes[0][0]] + [s[1] for s in shapes]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain_product(arrays, split, i, j):
    if i == j:
        return arrays[i]
    k = split[i][j]
    return _p.matmul(_chain_product(arrays, split, i, k), _chain_product(arrays, split, k + 1, j))


def multi_dot(arrays, *, out=None):
    """Product of two or more matrices in the cheapest order (the first / last may be vectors), as NumPy."""
    if out is not None:
        raise TypeError("multi_dot: out= is not supported: funcgrad arrays are immutable")
    xs = [asarray_any(a) for a in arrays]
    if len(xs) < 2:
        raise ValueError("multi_dot: Expecting at least two arrays.")
    if len(xs) == 2:
        return _p.dot(xs[0], xs[1])
    first_1d, last_1d = xs[0].ndim == 1, xs[-1].ndim == 1
    if first_1d:
        xs[0] = sh.expand_dims(xs[0], (0,))
    if last_1d:
        xs[-1] = sh.expand_dims(xs[-1], (1,))
    for x in xs:
        if x.ndim != 2:
            raise LinAlgError(f"multi_dot: {x.ndim}-dimensional array given. Array must be two-dimensional")
    for x, y in zip(xs, xs[1:]):
        if x.shape[1] != y.shape[0]:
            raise ValueError(f"multi_dot: shapes {tuple(x.shape)} and {tuple(y.shape)} not aligned")
    result = _chain_product(xs, _chain_order([tuple(x.shape) for x in xs]), 0, len(xs) - 1)
    if first_1d and last_1d:
        return sh.reshape(result, ())
    if first_1d or last_1d:
        return _m.reshape(result, (-1,))
    return result


def __getattr__(name):
    if hasattr(np.linalg, name):
        raise AttributeError(f"funcgrad.numpy.linalg has no function {name!r} yet "
                             f"(numpy.linalg.{name} exists)")
    raise AttributeError(f"module 'funcgrad.numpy.linalg' has no attribute {name!r}")
