"""Cases for the matrix factorisations and solves (funcgrad/_src/prims/linalg_decomp.py).

Each case is `case(draw) -> (args, params)` (see README.md). Inputs are float64 stacks of small
matrices (sides 1..4, up to two leading batch dimensions) that are well conditioned whatever values
Hypothesis draws: matrices are built as U diag(s) V^T from orthogonal factors (Cayley transforms of
drawn skew-symmetric matrices, so any draw is orthogonal) and drawn spectra kept apart, so that
- cholesky gets symmetric positive-definite input (eigenvalues in [1, 3]);
- eigh gets eigenvalues at least 0.375 apart, svd singular values at least 0.375 apart and >= 1;
- solve, det and slogdet get singular values in [0.5, 2] (either sign of det);
- adjugate gets distinct singular values, the smallest one 0 in half the draws (singular input);
- triangular_solve and cholesky_solve get a diagonal with |a_ii| in [1, 2] and garbage in the unread
  triangle;
- qr gets full-rank input (for M < N, a well-conditioned leading M x M block);
- eig gets non-normal matrices with distinct real eigenvalues (see eig_case).
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from funcgrad.testing.strategies import singular_matrices, special_points

from ._special import Special

F64 = np.dtype(np.float64)


def _values(draw, shape, lo=-1.0, hi=1.0):
    return draw(hnp.arrays(F64, tuple(shape), elements=st.floats(lo, hi, allow_nan=False, width=64)))


def _batch(draw):
    return tuple(draw(st.lists(st.integers(1, 3), max_size=2)))


def _orthogonal(draw, batch, n):
    """Orthogonal (..., n, n): the Cayley transform (I - K)(I + K)^-1 of a skew-symmetric K.

    K is a fixed generic matrix plus a drawn one, so that no draw (all zeros, say) gives a structured
    matrix (diagonal, or with zero entries) where LAPACK's choice of signs for singular vectors,
    eigenvectors or Householder reflections jumps, which finite differences would see."""
    base = np.random.default_rng(n).uniform(-1.0, 1.0, (n, n))
    m = base + 0.5 * _values(draw, batch + (n, n))
    k = m - np.swapaxes(m, -1, -2)
    eye = np.eye(n)
    return np.swapaxes(np.linalg.solve(np.swapaxes(eye + k, -1, -2), np.swapaxes(eye - k, -1, -2)), -1, -2)


def _spread(draw, batch, k, lo, gap):
    """(..., k) values >= lo, pairwise at least 0.75 * gap apart, in a drawn order."""
    order = np.array(draw(st.permutations(range(k))), dtype=F64)
    return lo + order * gap + _values(draw, batch + (k,), 0.0, gap / 4)


def _with_spectrum(draw, batch, m, n, s):
    u = _orthogonal(draw, batch, m)[..., :, :s.shape[-1]]
    v = _orthogonal(draw, batch, n)[..., :, :s.shape[-1]]
    return (u * s[..., None, :]) @ np.swapaxes(v, -1, -2)


def _side(draw):
    return draw(st.integers(1, 4))


def cholesky_case(draw):
    batch, n = _batch(draw), _side(draw)
    q = _orthogonal(draw, batch, n)
    w = _values(draw, batch + (n,), 1.0, 3.0)
    return [(q * w[..., None, :]) @ np.swapaxes(q, -1, -2)], {}


def eigh_case(draw):
    batch, n = _batch(draw), _side(draw)
    q = _orthogonal(draw, batch, n)
    w = _spread(draw, batch, n, -0.9, 0.5)  # |w| >= 0.1: a singular matrix is a structured point
    return [(q * w[..., None, :]) @ np.swapaxes(q, -1, -2)], {}


def _nonsingular(draw, batch, n):
    s = _values(draw, batch + (n,), 0.5, 2.0)
    a = _with_spectrum(draw, batch, n, n, s)
    if draw(st.booleans()):  # flip the sign of the determinant
        a = a * np.where(np.arange(n) == 0, -1.0, 1.0)[:, None]
    return a


def solve_case(draw):
    batch, n, k = _batch(draw), _side(draw), draw(st.integers(1, 3))
    return [_nonsingular(draw, batch, n), _values(draw, batch + (n, k), -2.0, 2.0)], {}


def det_case(draw):
    return [_nonsingular(draw, _batch(draw), _side(draw))], {}


def adjugate_case(draw):
    """Singular values at least 0.375 apart (the second-order check differentiates the SVD), the smallest
    one 0 in about half the draws: a singular matrix, where the adjugate is defined without division."""
    batch, n = _batch(draw), _side(draw)
    s = _spread(draw, batch, n, 0.5, 0.5)
    if draw(st.booleans()):
        s = np.where(s == s.min(axis=-1, keepdims=True), 0.0, s)
    a = _with_spectrum(draw, batch, n, n, s)
    if draw(st.booleans()):
        a = a * np.where(np.arange(n) == 0, -1.0, 1.0)[:, None]
    return [a], {}


def triangular_solve_case(draw):
    batch, m, k = _batch(draw), _side(draw), draw(st.integers(1, 3))
    params = {"left_side": draw(st.booleans()), "lower": draw(st.booleans()),
              "transpose_a": draw(st.booleans()), "conjugate_a": draw(st.booleans()),
              "unit_diagonal": draw(st.booleans())}
    a = _values(draw, batch + (m, m), -0.5, 0.5)  # the unread triangle keeps these values
    diag = _values(draw, batch + (m,), 1.0, 2.0) * np.where(_values(draw, batch + (m,)) < 0, -1.0, 1.0)
    a = a + (diag[..., None] - np.diagonal(a, axis1=-2, axis2=-1)[..., None]) * np.eye(m)
    b = _values(draw, batch + ((m, k) if params["left_side"] else (k, m)), -2.0, 2.0)
    return [a, b], params


def cholesky_solve_case(draw):
    """A Cholesky factor: its triangle with |diagonal| in [1, 2] (either sign: A = T T^H is positive definite
    all the same), garbage in the other triangle; the "jax" convention (the function's own derivative: the
    "torch" one differentiates along the unread triangle too, which finite differences cannot see, so
    tests/test_linalg.py checks it against torch and closed forms)."""
    args, _ = triangular_solve_case(draw)
    a = args[0]
    m = a.shape[-1]
    b = _values(draw, a.shape[:-2] + (m, draw(st.integers(1, 3))), -2.0, 2.0)
    return [a, b], {"lower": draw(st.booleans()), "convention": "jax"}


def svd_case(draw):
    batch, m, n = _batch(draw), _side(draw), _side(draw)
    k = min(m, n)
    s = _spread(draw, batch, k, 1.0, 0.5)
    full = draw(st.booleans()) if m == n else False  # the full SVD of a non-square matrix has no derivative
    return [_with_spectrum(draw, batch, m, n, s)], {"full_matrices": full, "compute_uv": draw(st.booleans())}


def qr_case(draw):
    batch, m, n = _batch(draw), _side(draw), _side(draw)
    k = min(m, n)
    x = _with_spectrum(draw, batch, m, k, _values(draw, batch + (k,), 1.0, 2.0))
    if n > k:
        x = np.concatenate([x, _values(draw, batch + (m, n - k))], axis=-1)
    full = draw(st.booleans()) if m <= n else False  # complete Q of a tall matrix has no derivative
    return [x], {"full_matrices": full}


def eig_case(draw):
    """Real Schur-form construction Q (diag(w) + N) Q^T: distinct real eigenvalues (at least 0.375
    apart) and non-orthogonal eigenvectors; a fixed generic part keeps |v_ij| free of ties (LAPACK makes
    the largest component of each eigenvector real, which finite differences would see jump)."""
    batch, n = _batch(draw), _side(draw)
    q = _orthogonal(draw, batch, n)
    w = _spread(draw, batch, n, -0.9, 0.5)
    base = np.triu(np.random.default_rng(10 + n).uniform(-0.5, 0.5, (n, n)), 1)
    t = w[..., None] * np.eye(n) + base + 0.1 * np.triu(_values(draw, batch + (n, n)), 1)
    vectors = draw(st.booleans())
    return [q @ t @ np.swapaxes(q, -1, -2)], {"vectors": vectors, "eigvec_derivs": True}


CASES = {
    "eig": eig_case,
    "cholesky": cholesky_case,
    "triangular_solve": triangular_solve_case,
    "cholesky_solve": cholesky_solve_case,
    "solve": solve_case,
    "det": det_case,
    "adjugate": adjugate_case,
    "slogdet": det_case,
    "eigh": eigh_case,
    "svd": svd_case,
    "qr": qr_case,
    "geqrf": lambda draw: (qr_case(draw)[0], {}),
}


# --- special points (see _special.py) -------------------------------------------------------------
# Structured matrices where factorisations meet their special cases: the identity, signed permutation
# matrices (pivoting), diagonal matrices with a repeated entry, and singular matrices of exactly known rank
# (funcgrad.testing.strategies.singular_matrices) where the function is defined there.

def _structured(draw, n, kinds):
    kind = draw(st.sampled_from(kinds))
    if kind == "identity":
        return np.eye(n)
    if kind == "permutation":
        p = np.eye(n)[list(draw(st.permutations(range(n))))]
        return p * np.where(draw(hnp.arrays(np.bool_, (n,))), -1.0, 1.0)[:, None]
    if kind == "repeated":  # diagonal, one value repeated (positive: also symmetric positive definite)
        d = np.array([2.0] * (n - 1) + [draw(st.sampled_from([0.5, 2.0, 5.0]))])
        return np.diag(d[list(draw(st.permutations(range(n))))])
    if kind == "zero":
        return np.zeros((n, n))
    if kind in ("distinct", "distinct_permuted"):  # diagonal with distinct entries, rows permuted
        d = np.diag(np.array([1.0, -2.0, 3.0, 0.5])[:n][list(draw(st.permutations(range(n))))])
        return d if kind == "distinct" else d[list(draw(st.permutations(range(n))))]
    return draw(singular_matrices(n, rank=draw(st.integers(max(0, n - 2), n - 1))))


def _special_square(kinds, with_rhs=False, params=lambda draw: {}):
    def case(draw):
        n = _side(draw)
        a = _structured(draw, n, kinds)
        if not with_rhs:
            return [a], params(draw)
        return [a, draw(special_points(np.float64, (n, draw(st.integers(1, 3)))))], {}
    return case


def _special_triangular(draw):
    args, params = triangular_solve_case(draw)
    a, b = args
    m = a.shape[-1]
    diag = draw(hnp.arrays(np.float64, a.shape[:-1], elements=st.sampled_from([1.0, -1.0, 0.5, 2.0])))
    a = a * (1 - np.eye(m)) + diag[..., None] * np.eye(m)
    return [a, draw(special_points(np.float64, b.shape))], params


def _special_cholesky_solve(draw):
    args, params = cholesky_solve_case(draw)
    a, b = args
    m = a.shape[-1]
    diag = draw(hnp.arrays(np.float64, a.shape[:-1], elements=st.sampled_from([1.0, -1.0, 0.5, 2.0])))
    a = a * (1 - np.eye(m)) + diag[..., None] * np.eye(m)
    return [a, draw(special_points(np.float64, b.shape))], params


_VECTORS_FD = ("LAPACK picks the signs (and, at a repeated value, the basis) of singular vectors and eigenvectors "
               "of structured matrices by rules that jump under perturbation")
SPECIAL = {
    "det": Special(case=_special_square(("identity", "permutation", "repeated", "zero", "singular")),
                   why="structured and singular matrices (det's derivative is the adjugate: defined everywhere)"),
    "adjugate": Special(case=_special_square(("identity", "permutation", "repeated", "zero", "singular")),
                        why="structured and singular matrices (the adjugate is a polynomial)"),
    "slogdet": Special(case=_special_square(("identity", "permutation", "repeated")),
                       why="structured nonsingular matrices (log|det| is -inf at singular ones)"),
    "solve": Special(case=_special_square(("identity", "permutation", "repeated"), with_rhs=True),
                     why="structured nonsingular matrices, special right-hand sides"),
    "triangular_solve": Special(case=_special_triangular, why="diagonals of +-1, 0.5, 2, special right-hand sides"),
    "cholesky_solve": Special(case=_special_cholesky_solve, why="factor diagonals of +-1, 0.5, 2, special "
                              "right-hand sides"),
    "cholesky": Special(case=_special_square(("identity", "repeated")),
                        why="the identity and diagonal matrices with a repeated eigenvalue"),
    # eigenvectors and singular vectors have no derivative at a repeated value: distinct ones only
    "eigh": Special(case=_special_square(("distinct",)), fd=False, why=_VECTORS_FD),
    "svd": Special(case=_special_square(("distinct", "distinct_permuted"), params=lambda draw: {
        "full_matrices": draw(st.booleans()), "compute_uv": draw(st.booleans())}), fd=False, why=_VECTORS_FD),
    "eig": Special(case=_special_square(("distinct",), params=lambda draw: {
        "vectors": draw(st.booleans()), "eigvec_derivs": True}), fd=False, why=_VECTORS_FD),
    "qr": Special(case=_special_square(("identity", "permutation", "distinct_permuted"), params=lambda draw: {
        "full_matrices": draw(st.booleans())}), fd=False, why=_VECTORS_FD),
}
