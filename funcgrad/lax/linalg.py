"""funcgrad.lax.linalg: JAX's lax.linalg decompositions, with JAX's signatures and result orders
(eigh returns (v, w); qr defaults to full_matrices=True; lu returns (lu, pivots, permutation))."""
from __future__ import annotations

import numpy as np

from .. import numpy as jnp  # (lax.linalg's wrappers are built on funcgrad.numpy.linalg's checks and shapes)
from ..numpy import linalg as _la
from .._src.prims import linalg_decomp as _ld
from .._src.prims import eigen as _ld_eigen
from .._src.prims import qr as _ld_qr
from .._src.control.scan import scan
from .._src.prims.lu import lu as _lu

__all__ = ["cholesky", "eig", "eigh", "qr", "svd", "triangular_solve", "lu", "lu_pivots_to_permutation",
           "tridiagonal_solve"]


def cholesky(x, *, symmetrize_input: bool = True):
    """The lower Cholesky factor of Hermitian positive-definite matrices (..., n, n)."""
    return _la.cholesky(x, symmetrize_input=symmetrize_input)


def eig(x, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True,
        enable_eigvec_derivs: bool = False, implementation=None, use_magma=None):
    """[w, vl, vr] (the eigenvector entries as requested): eigenvalues and left / right eigenvectors of
    general square matrices, complex, as jax.lax.linalg.eig.

    vr is LAPACK's (unit norm, real largest-magnitude component); vl is computed as the columns of V^-H
    (u_j^H A = w_j u_j^H), normalised the same way, so for real eigenvectors its sign may differ from
    LAPACK's. Eigenvector derivatives need enable_eigvec_derivs=True (as in JAX) and distinct eigenvalues."""
    a = _la._matrix(x, "eig", square=True)
    if not (compute_left_eigenvectors or compute_right_eigenvectors):
        return [_ld_eigen.eig(a, vectors=False)[0]]
    w, vr = _ld_eigen.eig(a, vectors=True, eigvec_derivs=bool(enable_eigvec_derivs))
    out = [w]
    if compute_left_eigenvectors:
        out.append(_left_eigenvectors(vr))
    if compute_right_eigenvectors:
        out.append(vr)
    return out


def _left_eigenvectors(vr):
    u = jnp.conj(jnp.swapaxes(jnp.linalg.inv(vr), -1, -2))
    u = u / jnp.linalg.norm(u, axis=-2, keepdims=True)
    k = jnp.argmax(jnp.abs(u), axis=-2, keepdims=True)
    big = jnp.take_along_axis(u, k, axis=-2)
    return u * (jnp.conj(big) / jnp.abs(big))


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True, sort_eigenvalues: bool = True,
         subset_by_index=None):
    """(v, w): eigenvectors (columns) and ascending eigenvalues of Hermitian matrices."""
    if subset_by_index is not None:
        raise NotImplementedError("lax.linalg.eigh: subset_by_index is not supported")
    w, v = _la.eigh(x, "L" if lower else "U", symmetrize_input=symmetrize_input)
    return v, w


def qr(x, *, pivoting: bool = False, full_matrices: bool = True, use_magma=None):
    """(q, r) with x = q r; full_matrices=True gives square q (JAX's default)."""
    if pivoting:
        raise NotImplementedError("lax.linalg.qr: pivoting=True is not supported")
    q, r = _ld_qr.qr(_la._matrix(x, "qr"), full_matrices=bool(full_matrices))
    return q, r


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None, algorithm=None):
    """(u, s, vh) with x = u diag(s) vh and s descending, or s alone when compute_uv=False."""
    if subset_by_index is not None:
        raise NotImplementedError("lax.linalg.svd: subset_by_index is not supported")
    out = _la.svd(x, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False, transpose_a: bool = False,
                     conjugate_a: bool = False, unit_diagonal: bool = False):
    """Solve op(a) x = b (left_side) or x op(a) = b for triangular a (JAX's signature and defaults)."""
    return _ld.triangular_solve(a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
                                conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)


def lu(x):
    """(lu, pivots, permutation): partial-pivoting LU with x[..., permutation, :] = L U."""
    return tuple(_lu(_la._inexact(x, "lu")))


def lu_pivots_to_permutation(pivots, permutation_size: int):
    """The row permutation produced by applying LAPACK-style pivots (row i swapped with pivots[i])."""
    piv = np.asarray(pivots)
    batch = piv.shape[:-1]
    perm = np.broadcast_to(np.arange(permutation_size, dtype=np.int32), batch + (permutation_size,)).copy()
    flat_perm = perm.reshape(-1, permutation_size)
    flat_piv = piv.reshape(-1, piv.shape[-1])
    for b in range(flat_perm.shape[0]):
        for i, p in enumerate(flat_piv[b]):
            flat_perm[b, [i, p]] = flat_perm[b, [p, i]]
    return jnp.asarray(flat_perm.reshape(perm.shape))


def tridiagonal_solve(dl, d, du, b):
    """x with T x = b for tridiagonal T given by its lower (dl, dl[..., 0] ignored), main (d) and upper
    (du, du[..., -1] ignored) diagonals of shape (..., m); b is (..., m, n). The Thomas algorithm, a
    scan (so it batches and differentiates), without pivoting: meant for diagonally dominant or
    positive-definite T."""
    dl, d, du, b = (jnp.asarray(v) for v in (dl, d, du, b))
    if not (dl.shape == d.shape == du.shape) or b.ndim != d.ndim + 1 or b.shape[:-1] != d.shape:
        raise ValueError(f"tridiagonal_solve: diagonals must share a shape (..., m) and b be (..., m, n); got "
                         f"{dl.shape}, {d.shape}, {du.shape} and {b.shape}")
    dt = jnp.result_type(dl, d, du, b)
    mv = [jnp.moveaxis(v.astype(dt), -1, 0) for v in (dl, d, du)]
    bb = jnp.moveaxis(b.astype(dt), -2, 0)  # (m, ..., n)
    dl_, d_, du_ = (v[..., None] for v in mv)

    def forward(carry, row):
        c_prev, y_prev = carry
        l, dd, u, rhs = row
        denom = dd - l * c_prev
        c = u / denom
        y = (rhs - l * y_prev) / denom
        return (c, y), (c, y)
    zero_c = jnp.zeros_like(d_[0])
    zero_y = jnp.zeros_like(bb[0])
    first_l = dl_.at[0].set(0)
    _, (cs, ys) = scan(forward, (zero_c, zero_y), (first_l, d_, du_, bb))

    def backward(x_next, row):
        c, y = row
        x = y - c * x_next
        return x, x
    _, xs = scan(backward, jnp.zeros_like(ys[0]), (cs, ys), reverse=True)
    return jnp.moveaxis(xs, 0, -2)
