"""LU decomposition with partial pivoting, as jax.lax.linalg.lu: `a[perm] = L U`.

`lu(a)` for a (..., m, n) float or complex returns (lu, pivots, permutation): `lu` packs the unit lower
triangular L (strictly below the diagonal) and upper triangular U (on and above it), `pivots[i]` is the
row swapped with row i at step i (LAPACK's getrf, 0-based), and `permutation` the resulting row order
(int32). The kernel is Gaussian elimination choosing the largest pivot in each column, vectorised over
the batch, in LAPACK's order for matrices up to 16 x 16 (see _getf2: so a singular matrix gets LAPACK's exact
zero pivot, where JAX's solves give inf / NaN); a zero pivot column is skipped (U has a zero on its diagonal).

Derivatives (square matrices; funcgrad operations, so they nest and batch): with P the permutation
matrix and X = L^-1 P dA U^-1, dL = L tril(X, -1) and dU = triu(X) U, so d(lu) = L tril(X, -1) + triu(X) U.
Its transpose (under the bilinear pairing <a, b> = Re sum(a b) used throughout) is
dA* = P^T L^-T (tril(L^T g, -1) + triu(g U^T)) U^-T. pivots and permutation are integers: no derivative.
"""
from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import elementwise as ew
from .linalg_decomp import _T, _check_matrix, _eye, _front_batch, _mm, _tril, _triu, triangular_solve
from .shape import broadcast_in_dim, broadcasted_iota


def _lu_rule(a: ShapedArray):
    _check_matrix("lu", a)
    if not (dtypes.is_float(a.dtype) or dtypes.is_complex(a.dtype)):
        raise TypeError(f"lu: expected a float or complex matrix, got {a.str_short()}")
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    return [ShapedArray(a.shape, a.dtype), ShapedArray(batch + (min(m, n),), dtypes.int32),
            ShapedArray(batch + (m,), dtypes.int32)]


_CROUT_MAX = 8  # up to this min(m, n), _getf2 (OpenBLAS runs getf2 up to 16; beyond 4 the rounding rarely matches)


def _lu_impl(xp):
    def lu(a):
        shape = a.shape
        m, n = shape[-2:]
        k = min(m, n)
        x = xp.array(a, copy=True).reshape((-1, m, n))
        nb = x.shape[0]
        pivots = xp.zeros((nb, k), dtype=np.int32)
        perm = xp.broadcast_to(xp.arange(m, dtype=np.int32), (nb, m)).copy()
        with np.errstate(all="ignore"):
            (_getf2 if k <= _CROUT_MAX else _right_looking)(xp, x, pivots, perm)
        return [x.reshape(shape), pivots.reshape(shape[:-2] + (k,)), perm.reshape(shape[:-2] + (m,))]
    return lu


def _swap_rows(xp, x, pivots, perm, j):
    """Step j's partial pivot: the largest |x[i, j]| for i >= j (the first on ties) swapped into row j."""
    p = j + xp.argmax(xp.abs(x[:, j:, j]), axis=1)
    pivots[:, j] = p
    if x.shape[0] == 1:  # one matrix: plain indexing (the eager hot path)
        q = int(p[0])
        if q != j:
            x[0, [j, q]] = x[0, [q, j]]
            perm[0, [j, q]] = perm[0, [q, j]]
        return
    rows = xp.arange(x.shape[0])
    rj, rp = x[rows, j].copy(), x[rows, p].copy()
    x[rows, j], x[rows, p] = rp, rj
    pj, pp = perm[rows, j].copy(), perm[rows, p].copy()
    perm[rows, j], perm[rows, p] = pp, pj


def _scale_column(xp, x, j):
    """L's column j: the entries below the pivot times 1 / pivot, as LAPACK (a division where the pivot is
    below the smallest normal number, whose reciprocal overflows); a zero pivot leaves the column as it is."""
    tiny = np.finfo(x.real.dtype).tiny
    if x.shape[0] == 1:
        piv = x[0, j, j]
        if piv != 0:
            if abs(piv) >= tiny:
                x[0, j + 1:, j] *= 1 / piv
            else:
                x[0, j + 1:, j] /= piv
        return
    piv = x[:, j, j, None]
    col = x[:, j + 1:, j]
    safe = xp.where(piv != 0, piv, 1)
    scaled = xp.where(xp.abs(piv) < tiny, col / safe, col * (1 / safe))
    x[:, j + 1:, j] = xp.where(piv != 0, scaled, col)


def _getf2(xp, x, pivots, perm):
    """Left-looking (Crout) elimination in the order of LAPACK's getf2 as OpenBLAS runs it, so that the rounding,
    and with it an exactly zero pivot of a singular matrix (JAX's inf / NaN solves), are LAPACK's: column j is
    first solved against the unit lower triangle of the rows above it, row by row, then the rows below subtract
    their products with it, then it is pivoted and scaled."""
    m, n = x.shape[-2:]
    for j in range(n):
        for i in range(1, min(j, m)):
            x[:, i, j] -= (x[:, i, :i] * x[:, :i, j]).sum(-1)
        if j < m:
            if j:
                x[:, j:, j] -= xp.matmul(x[:, j:, :j], x[:, :j, j, None])[..., 0]
            _swap_rows(xp, x, pivots, perm, j)
            _scale_column(xp, x, j)


def _right_looking(xp, x, pivots, perm):
    """Right-looking elimination (a rank-one update of the trailing block per step): larger matrices, where
    LAPACK's blocked getrf rounds in yet another order."""
    for j in range(min(x.shape[-2:])):
        _swap_rows(xp, x, pivots, perm, j)
        _scale_column(xp, x, j)
        x[:, j + 1:, j + 1:] -= x[:, j + 1:, j, None] * x[:, j, None, j + 1:]


def _factors(lu):
    n = lu.shape[-1]
    L = ew.add(_tril(lu, -1), _eye(lu.shape, lu.dtype))
    U = _triu(lu)
    return L, U, n


def _perm_matrix(perm, like):
    """P with P[..., i, perm[i]] = 1, so P @ a = a[perm]."""
    m = like.shape[-2]
    shape = tuple(perm.shape) + (m,)
    cols = broadcasted_iota(dtypes.int32, shape, len(shape) - 1)
    p = broadcast_in_dim(perm, shape, tuple(range(perm.ndim)))
    return ew.convert_element_type(ew.eq(p, cols), like.dtype)


def _square_only(a):
    if a.shape[-1] != a.shape[-2]:
        raise NotImplementedError(f"lu: derivatives are implemented for square matrices, got shape {a.shape}")


def _lu_jvp(primals, tangents, ans):
    (a,), (t,) = primals, tangents
    lu, pivots, perm = ans
    _square_only(a)
    L, U, _ = _factors(lu)
    pt = _mm(_perm_matrix(perm, a), t)
    y = triangular_solve(L, pt, left_side=True, lower=True, unit_diagonal=True)
    x = triangular_solve(U, y, left_side=False, lower=False)
    dlu = ew.add(_mm(L, _tril(x, -1)), _mm(_triu(x), U))
    return [dlu, None, None]


def _lu_vjp(cts, ans, args, needs):
    (a,) = args
    g = cts[0]
    lu, pivots, perm = ans
    if g is None:
        return [None]
    _square_only(a)
    L, U, _ = _factors(lu)
    phi = ew.add(_tril(_mm(_T(L), g), -1), _triu(_mm(g, _T(U))))
    y = triangular_solve(L, phi, left_side=True, lower=True, unit_diagonal=True, transpose_a=True)
    x = triangular_solve(U, y, left_side=False, lower=False, transpose_a=True)
    return [_mm(_T(_perm_matrix(perm, a)), x)]


lu_p = Primitive("lu", impl=_lu_impl, abstract_eval=_lu_rule, jvp_full=_lu_jvp, vjp_full=_lu_vjp,
                 multiple_results=True)
lu_p.batch = _front_batch(lu_p)
lu_p.weak_type_rule = lambda weaks, params: False


def lu(a):
    """(lu, pivots, permutation) with a[..., permutation, :] = L U (see the module docstring)."""
    return lu_p.bind(a)


__all__ = ["lu", "lu_p"]
