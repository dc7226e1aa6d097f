"""LU decomposition with partial pivoting, as jax.lax.linalg.lu: `a[perm] = L U`.

`lu(a)` for a (..., m, n) float or complex returns (lu, pivots, permutation): `lu` packs the unit lower
triangular L (strictly below the diagonal) and upper triangular U (on and above it), `pivots[i]` is the
row swapped with row i at step i (LAPACK's getrf, 0-based), and `permutation` the resulting row order
(int32). The kernel is Doolittle elimination choosing the largest pivot in each column, vectorised over
the batch; a zero pivot column is skipped (the matrix is singular, U has a zero on its diagonal).

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


def _lu_impl(xp):
    def lu(a):
        shape = a.shape
        m, n = shape[-2:]
        k = min(m, n)
        x = xp.array(a, copy=True).reshape((-1, m, n))
        nb = x.shape[0]
        rows = xp.arange(nb)
        pivots = xp.zeros((nb, k), dtype=np.int32)
        perm = xp.broadcast_to(xp.arange(m, dtype=np.int32), (nb, m)).copy()
        with np.errstate(all="ignore"):
            for j in range(k):
                p = j + xp.argmax(xp.abs(x[:, j:, j]), axis=1)
                pivots[:, j] = p
                rj, rp = x[rows, j].copy(), x[rows, p].copy()
                x[rows, j], x[rows, p] = rp, rj
                pj, pp = perm[rows, j].copy(), perm[rows, p].copy()
                perm[rows, j], perm[rows, p] = pp, pj
                piv = x[:, j, j]
                nz = piv != 0
                safe = xp.where(nz, piv, 1)
                col = xp.where(nz[:, None], x[:, j + 1:, j] / safe[:, None], 0)
                x[:, j + 1:, j] = xp.where(nz[:, None], col, x[:, j + 1:, j])
                x[:, j + 1:, j + 1:] -= col[:, :, None] * x[:, j, None, j + 1:]
        return [x.reshape(shape), pivots.reshape(shape[:-2] + (k,)), perm.reshape(shape[:-2] + (m,))]
    return lu


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
