"""funcgrad.scipy.linalg and funcgrad.lax.linalg against SciPy / NumPy (float64), gradients by finite
differences, and vmap/jit agreement; the matrix constructors (circulant, hankel, pascal, dft, ...),
expm_frechet and solve_sylvester."""
import numpy as np
import pytest
import scipy.linalg as sl

import funcgrad
import funcgrad.numpy as jnp
import funcgrad.scipy.linalg as fl
from funcgrad import lax
from funcgrad._src.core import dtypes
from funcgrad.testing import check_grads

RNG = np.random.default_rng(0)
A = RNG.normal(size=(4, 4))
SPD = A @ A.T + 4 * np.eye(4)
B = RNG.normal(size=(4, 2))


@pytest.fixture(autouse=True)
def x64():
    funcgrad.config.update("enable_x64", True)
    yield
    funcgrad.config.update("enable_x64", False)


def close(got, expected, tol=1e-12):
    np.testing.assert_allclose(np.asarray(got), expected, rtol=tol, atol=tol)


def test_factorizations_match_scipy():
    close(fl.cholesky(SPD), sl.cholesky(SPD))
    close(fl.cholesky(SPD, lower=True), sl.cholesky(SPD, lower=True))
    c = fl.cho_factor(SPD, lower=True)
    close(fl.cho_solve(c, B), sl.cho_solve(sl.cho_factor(SPD, lower=True), B))
    close(fl.cho_solve(fl.cho_factor(SPD), B[:, 0]), sl.cho_solve(sl.cho_factor(SPD), B[:, 0]))
    for shape in [(4, 4), (3, 5), (5, 3)]:
        m = RNG.normal(size=shape)
        for got, exp in zip(fl.lu(m), sl.lu(m)):
            close(got, exp)
        pl, u = fl.lu(m, permute_l=True)
        close(pl @ u, m)
    lu_, piv = fl.lu_factor(A)
    lu2, piv2 = sl.lu_factor(A)
    close(lu_, lu2)
    assert np.asarray(piv).tolist() == piv2.tolist()
    for trans in (0, 1, 2):
        close(fl.lu_solve((lu_, piv), B, trans=trans), sl.lu_solve((lu2, piv2), B, trans=trans))
    q, r = fl.qr(RNG.normal(size=(5, 3)))
    assert q.shape == (5, 5) and r.shape == (5, 3)
    q, r = fl.qr(A, mode="economic")
    close(q @ r, A)
    (r_only,) = fl.qr(A, mode="r")
    close(np.abs(np.asarray(r_only)), np.abs(sl.qr(A, mode="r")[0]))
    u, s, vh = fl.svd(A)
    close(s, sl.svd(A, compute_uv=False))
    close((u * s) @ vh, A)
    w, v = fl.eigh(SPD)
    close(w, sl.eigh(SPD)[0])
    close(v @ np.diag(np.asarray(w)) @ np.asarray(v).T, SPD, 1e-11)
    close(fl.inv(A), sl.inv(A), 1e-11)
    close(fl.det(A), sl.det(A))


def test_solves_match_scipy():
    T = np.triu(A) + 3 * np.eye(4)
    for trans in (0, 1, 2, "N", "T", "C"):
        close(fl.solve_triangular(T, B, trans=trans), sl.solve_triangular(T, B, trans=trans))
    close(fl.solve_triangular(T.T, B[:, 0], lower=True, unit_diagonal=True),
          sl.solve_triangular(T.T, B[:, 0], lower=True, unit_diagonal=True))
    close(fl.solve(A, B), sl.solve(A, B), 1e-11)
    close(fl.solve(SPD, B, assume_a="pos"), sl.solve(SPD, B, assume_a="pos"))
    close(fl.solve(A, B, transposed=True), sl.solve(A, B, transposed=True), 1e-11)
    with pytest.raises(ValueError, match="trans"):
        fl.solve_triangular(T, B, trans=3)


@pytest.mark.parametrize("scale", [0.1, 1.0, 8.0])
def test_expm_matches_scipy_eager_and_jit(scale):
    m = A * scale
    exp = sl.expm(m)
    close(fl.expm(m), exp, 1e-12 * max(1, np.abs(exp).max()))
    close(funcgrad.jit(fl.expm)(m), exp, 1e-12 * max(1, np.abs(exp).max()))
    stack = np.stack([m, m / 3])
    close(funcgrad.vmap(fl.expm)(stack)[1], sl.expm(m / 3), 1e-12 * max(1, np.abs(exp).max()))


def test_block_diag_and_toeplitz():
    arrs = (np.ones((1, 2)), 3.0, np.arange(4.0).reshape(2, 2))
    close(fl.block_diag(*arrs), sl.block_diag(*arrs))
    close(fl.toeplitz([1.0, 2.0, 3.0], [1.0, 4.0, 5.0, 6.0]), sl.toeplitz([1.0, 2.0, 3.0], [1.0, 4.0, 5.0, 6.0]))
    close(fl.toeplitz([1.0, 2.0]), sl.toeplitz([1.0, 2.0]))


def test_gradients():
    check_grads(lambda m: fl.expm(m), (jnp.asarray(A * 0.5),), order=1)
    check_grads(lambda m: fl.lu(m)[1], (jnp.asarray(A),), order=2)
    check_grads(lambda m: fl.lu(m)[2], (jnp.asarray(A),), order=1)
    check_grads(lambda m, b: fl.lu_solve(fl.lu_factor(m), b), (jnp.asarray(A), jnp.asarray(B)), order=1)
    check_grads(lambda m, b: fl.cho_solve(fl.cho_factor(m @ m.T + 4 * jnp.eye(4)), b),
                (jnp.asarray(A), jnp.asarray(B)), order=1)
    check_grads(lambda t, b: fl.solve_triangular(t, b, trans=1), (jnp.asarray(np.triu(A) + 3 * np.eye(4)),
                                                                   jnp.asarray(B)), order=2)


def test_lax_linalg():
    v, w = lax.linalg.eigh(SPD)
    close(w, np.linalg.eigh(SPD)[0])
    q, r = lax.linalg.qr(RNG.normal(size=(5, 3)))
    assert q.shape == (5, 5)
    q, r = lax.linalg.qr(A, full_matrices=False)
    close(q @ r, A)
    u, s, vh = lax.linalg.svd(A, full_matrices=False)
    close((u * s) @ vh, A)
    close(lax.linalg.svd(A, compute_uv=False), np.linalg.svd(A, compute_uv=False))
    close(lax.linalg.cholesky(SPD), np.linalg.cholesky(SPD))
    lu_, piv, perm = lax.linalg.lu(A)
    L = np.tril(np.asarray(lu_), -1) + np.eye(4)
    close(L @ np.triu(np.asarray(lu_)), A[np.asarray(perm)])
    assert np.asarray(lax.linalg.lu_pivots_to_permutation(piv, 4)).tolist() == np.asarray(perm).tolist()
    x = lax.linalg.triangular_solve(np.triu(A) + 3 * np.eye(4), B.T, left_side=False, lower=False)
    close(x @ (np.triu(A) + 3 * np.eye(4)), B.T)
    batch = RNG.normal(size=(3, 4, 4))
    out = funcgrad.vmap(lambda m: lax.linalg.lu(m)[0])(batch)
    close(out[2], np.asarray(lax.linalg.lu(batch[2])[0]))


def test_lstsq_pinv_trapezoid_entropy():
    import scipy.integrate as si
    import scipy.stats as sst
    import funcgrad.scipy as fsp
    a, b = RNG.normal(size=(5, 3)), RNG.normal(size=5)
    close(fl.lstsq(a, b)[0], sl.lstsq(a, b)[0])
    close(fl.pinv(a), sl.pinv(a))
    close(fl.pinv(a, rtol=0.5), sl.pinv(a, rtol=0.5))
    y, x = RNG.normal(size=(3, 5)), np.sort(RNG.uniform(size=5))
    close(fsp.integrate.trapezoid(y, x), si.trapezoid(y, x))
    close(fsp.integrate.trapezoid(y, dx=0.5, axis=0), si.trapezoid(y, dx=0.5, axis=0))
    p, q = np.array([0.2, 0.3, 0.5, 0.0]), np.array([0.1, 0.1, 0.4, 0.4])
    close(fsp.stats.entropy(p), sst.entropy(p))
    close(fsp.stats.entropy(p * 3, q, base=2), sst.entropy(p * 3, q, base=2))


def test_polar_vq_zscore_sem():
    import scipy.cluster.vq as svq
    import scipy.stats as sst
    import funcgrad.scipy as fsp
    for side in ("right", "left"):
        u, p = fl.polar(A, side=side)
        u2, p2 = sl.polar(A, side=side)
        close(u, u2, 1e-11)
        close(p, p2, 1e-11)
    obs, book = RNG.normal(size=(10, 3)), RNG.normal(size=(4, 3))
    codes, dist = fsp.cluster.vq.vq(obs, book)
    c2, d2 = svq.vq(obs, book)
    assert np.asarray(codes).tolist() == c2.tolist()
    close(dist, d2)
    x = RNG.normal(size=(6, 3))
    close(fsp.stats.zscore(x), sst.zscore(x))
    close(fsp.stats.zscore(x, axis=1, ddof=1), sst.zscore(x, axis=1, ddof=1))
    close(fsp.stats.sem(x), sst.sem(x))
    close(fsp.stats.sem(x, axis=None, ddof=0), sst.sem(x, axis=None, ddof=0))


def test_lax_tridiagonal_solve():
    from funcgrad.testing import check_grads
    m = 6
    dl, du = RNG.normal(size=(2, m)), RNG.normal(size=(2, m))
    d = 4 + RNG.uniform(size=(2, m))
    b = RNG.normal(size=(2, m, 3))
    x = lax.linalg.tridiagonal_solve(dl, d, du, b)
    for i in range(2):
        T = np.diag(d[i]) + np.diag(dl[i, 1:], -1) + np.diag(du[i, :-1], 1)
        close(np.asarray(x)[i], np.linalg.solve(T, b[i]))
    check_grads(lambda *a: lax.linalg.tridiagonal_solve(*a), tuple(jnp.asarray(v) for v in (dl, d, du, b)), order=1)
    with pytest.raises(ValueError, match="diagonals"):
        lax.linalg.tridiagonal_solve(dl, d, du[:, :-1], b)


# --- jax.scipy.linalg matrix constructors ---------------------------------------------------------

V3 = np.array([1.0, -2.0, 3.5])
V4 = np.array([4.0, 5.0, -6.0, 7.0])


def _scipy_cases():
    sl = pytest.importorskip("scipy.linalg")
    cases = [(fl.circulant(V4), sl.circulant(V4)), (fl.hankel(V3), sl.hankel(V3)),
             (fl.hankel(V3, V4), sl.hankel(V3, V4)), (fl.companion(V4), sl.companion(V4)),
             (fl.fiedler(V3), sl.fiedler(V3)), (fl.leslie(V4, V3), sl.leslie(V4, V3)),
             (fl.hadamard(8), sl.hadamard(8)), (fl.dft(5, "sqrtn"), sl.dft(5, "sqrtn")), (fl.dft(4), sl.dft(4)),
             (fl.dft(3, "n"), sl.dft(3, "n"))]
    for n in (1, 2, 5):
        cases += [(fl.hilbert(n), sl.hilbert(n)), (fl.invhilbert(n), sl.invhilbert(n)),
                  (fl.helmert(n), sl.helmert(n)), (fl.helmert(n, full=True), sl.helmert(n, full=True))]
        for kind in ("symmetric", "lower", "upper"):
            cases += [(fl.pascal(n, kind), sl.pascal(n, kind)), (fl.invpascal(n, kind), sl.invpascal(n, kind))]
    for a in (V3, V4):
        for n in (1, 2, 3, 6):
            for mode in ("full", "same", "valid"):
                cases.append((fl.convolution_matrix(a, n, mode), sl.convolution_matrix(a, n, mode)))
    return cases


def test_constructors_match_scipy():
    for got, ref in _scipy_cases():
        assert got.shape == ref.shape
        np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-5, atol=1e-6)


def test_constructor_defaults_and_errors():
    # the default float/complex of the mode (this module runs with x64 on), as jax.scipy.linalg's
    assert fl.hilbert(3).dtype == dtypes.defaults.float_ and fl.dft(3).dtype == dtypes.defaults.complex_
    assert fl.hadamard(4, np.float32).dtype == np.float32
    np.testing.assert_allclose(np.asarray(fl.pascal(4)) @ np.asarray(fl.invpascal(4)), np.eye(4), atol=1e-4)
    with pytest.raises(ValueError):
        fl.hadamard(6)
    with pytest.raises(ValueError):
        fl.pascal(3, "sideways")
    with pytest.raises(ValueError):
        fl.convolution_matrix(V3, 2, "middle")
    with pytest.raises(ValueError):
        fl.leslie(V4, V4)
    with pytest.raises(TypeError):
        fl.hilbert(3.0)


def test_constructors_batch_and_differentiate():
    b = RNG.standard_normal((2, 4))
    for f in (fl.circulant, fl.companion, fl.fiedler):
        got = f(b)
        for i in range(2):
            np.testing.assert_allclose(np.asarray(got[i]), np.asarray(f(b[i])), atol=1e-12)
        np.testing.assert_allclose(np.asarray(funcgrad.vmap(f)(b)), np.asarray(got), atol=1e-12)
        np.testing.assert_allclose(np.asarray(funcgrad.jit(f)(b)), np.asarray(got), atol=1e-12)
    check_grads(fl.circulant, (V4,), order=2)
    check_grads(fl.companion, (V4,), order=2)
    check_grads(lambda c, r: fl.hankel(c, r), (V3, V4), order=2)
    check_grads(lambda a: fl.convolution_matrix(a, 3, "same"), (V4,), order=2)
    check_grads(fl.leslie, (V4, V3), order=2)
    # the constructor really builds what it claims: roots of the polynomial are the companion's eigenvalues
    np.testing.assert_allclose(np.sort_complex(np.asarray(jnp.linalg.eigvals(fl.companion(V4)))),
                               np.sort_complex(np.roots(V4)), atol=1e-10)
    x = RNG.standard_normal(5)
    np.testing.assert_allclose(np.asarray(fl.convolution_matrix(V4, 5)) @ x, np.convolve(V4, x), atol=1e-12)


# --- expm_frechet, solve_sylvester -----------------------------------------------------------------

M3, E3 = RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3))
N2, C32 = RNG.standard_normal((2, 2)), RNG.standard_normal((3, 2))


def test_expm_frechet_values_and_grads():
    sl = pytest.importorskip("scipy.linalg")
    ex, fr = fl.expm_frechet(M3, E3)
    ex0, fr0 = sl.expm_frechet(M3, E3)
    np.testing.assert_allclose(np.asarray(ex), ex0, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(fr), fr0, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(fl.expm_frechet(M3, E3, compute_expm=False)), fr0, rtol=1e-10)
    # it is the directional derivative of expm
    _, t = funcgrad.jvp(fl.expm, (M3,), (E3,))
    np.testing.assert_allclose(np.asarray(fr), np.asarray(t), rtol=1e-8, atol=1e-10)
    b = RNG.standard_normal((2, 3, 3))
    got = funcgrad.vmap(lambda a: fl.expm_frechet(a, E3, compute_expm=False))(b)
    for i in range(2):
        np.testing.assert_allclose(np.asarray(got[i]), sl.expm_frechet(b[i], E3)[1], rtol=1e-9, atol=1e-12)
    check_grads(lambda a, e: fl.expm_frechet(a, e, compute_expm=False), (M3, E3), order=1)
    with pytest.raises(ValueError):
        fl.expm_frechet(M3, N2)


def test_solve_sylvester_values_and_grads():
    sl = pytest.importorskip("scipy.linalg")
    x = fl.solve_sylvester(M3, N2, C32)
    np.testing.assert_allclose(np.asarray(x), sl.solve_sylvester(M3, N2, C32), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(M3 @ np.asarray(x) + np.asarray(x) @ N2, C32, atol=1e-10)
    np.testing.assert_allclose(np.asarray(funcgrad.jit(fl.solve_sylvester)(M3, N2, C32)), np.asarray(x),
                               atol=1e-12)
    check_grads(fl.solve_sylvester, (M3, N2, C32), order=2)
    with pytest.raises(ValueError):
        fl.solve_sylvester(M3, N2, C32.T)
