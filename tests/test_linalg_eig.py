"""General eigendecomposition (eig / eigvals on the numpy, lax and torch faces), further
jax.scipy.linalg functions and matrix constructors, and a few scipy.special / numpy additions."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as jnp
from funcgrad import lax
from funcgrad._src.core import dtypes
from funcgrad.testing import check_grads

RNG = np.random.default_rng(0)
A4 = RNG.standard_normal((4, 4))              # real, with a complex-conjugate eigenvalue pair
C4 = A4 + 1j * RNG.standard_normal((4, 4))    # complex
B34 = RNG.standard_normal((3, 4, 4))


def _eigvec(a):
    return lax.linalg.eig(a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)


# --- eig / eigvals: values ------------------------------------------------------------------------

@pytest.mark.parametrize("a", [A4, C4, A4.astype(np.float32)], ids=["f64", "c128", "f32"])
def test_eig_values_and_dtype(a):
    w, v = jnp.linalg.eig(a)
    assert w.dtype == v.dtype == (np.complex64 if a.dtype == np.float32 else np.complex128)
    w, v = np.asarray(w), np.asarray(v)
    tol = 1e-4 if a.dtype == np.float32 else 1e-10
    np.testing.assert_allclose(a @ v, v * w[None, :], atol=tol)
    np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1.0, atol=tol)
    np.testing.assert_allclose(np.sort_complex(w), np.sort_complex(np.linalg.eigvals(a)), atol=tol)
    np.testing.assert_allclose(np.asarray(jnp.linalg.eigvals(a)), w, atol=tol)


def test_eig_integer_input_and_errors():
    w = jnp.linalg.eigvals(np.array([[2, 0], [0, 3]]))
    assert np.iscomplexobj(np.asarray(w))
    np.testing.assert_allclose(np.sort(np.asarray(w).real), [2.0, 3.0])
    with pytest.raises(np.linalg.LinAlgError):
        jnp.linalg.eig(np.ones((2, 3)))
    with pytest.raises(np.linalg.LinAlgError):
        jnp.linalg.eigvals(np.ones(3))


def test_lax_eig_left_and_right():
    w, vl, vr = lax.linalg.eig(A4)
    w, vl, vr = map(np.asarray, (w, vl, vr))
    np.testing.assert_allclose(A4 @ vr, vr * w, atol=1e-10)
    np.testing.assert_allclose(vl.conj().T @ A4, w[:, None] * vl.conj().T, atol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(vl, axis=0), 1.0, atol=1e-12)
    assert len(lax.linalg.eig(A4, compute_left_eigenvectors=False, compute_right_eigenvectors=False)) == 1


def test_eig_jit_and_vmap():
    w, v = funcgrad.jit(jnp.linalg.eig)(A4)
    w0, v0 = jnp.linalg.eig(A4)
    np.testing.assert_allclose(np.asarray(w), np.asarray(w0), atol=1e-12)
    np.testing.assert_allclose(np.asarray(v), np.asarray(v0), atol=1e-12)
    wb, vb = funcgrad.vmap(jnp.linalg.eig)(B34)
    for i in range(3):
        wi, vi = jnp.linalg.eig(B34[i])
        np.testing.assert_allclose(np.asarray(wb[i]), np.asarray(wi), atol=1e-12)
        np.testing.assert_allclose(np.asarray(vb[i]), np.asarray(vi), atol=1e-12)
    g = funcgrad.vmap(funcgrad.grad(lambda a: jnp.linalg.eigvals(a).real.sum()))(B34)
    np.testing.assert_allclose(np.asarray(g), np.broadcast_to(np.eye(4), (3, 4, 4)), atol=1e-10)


# --- eig / eigvals: derivatives -------------------------------------------------------------------

@pytest.mark.parametrize("a", [A4, C4], ids=["real", "complex"])
def test_eigvals_grads(a):
    check_grads(jnp.linalg.eigvals, (a,), order=2)


@pytest.mark.parametrize("a", [A4, C4], ids=["real", "complex"])
def test_eigvector_grads(a):
    check_grads(_eigvec, (a,), order=2)


def test_eig_left_vector_grads():
    check_grads(lambda a: lax.linalg.eig(a, enable_eigvec_derivs=True)[1], (A4,), order=1)


def test_eigenvalue_derivative_formula():
    # d(sum w) = tr(dA): the gradient of the real part of the eigenvalue sum is the identity
    g = funcgrad.grad(lambda a: jnp.linalg.eigvals(a).real.sum())(A4)
    np.testing.assert_allclose(np.asarray(g), np.eye(4), atol=1e-10)
    # repeated eigenvalues of a diagonalisable matrix: the reverse-mode eigenvalue derivative is finite
    g = funcgrad.grad(lambda a: jnp.abs(jnp.linalg.eigvals(a)).sum())(np.diag([1.0, 1.0, 2.0]))
    assert np.all(np.isfinite(np.asarray(g)))


def test_eig_vector_derivatives_need_opt_in():
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        funcgrad.grad(lambda a: jnp.linalg.eig(a)[1].real.sum())(A4)
    with pytest.raises(NotImplementedError):
        funcgrad.jvp(lambda a: jnp.linalg.eig(a)[0], (A4,), (A4,))


def test_eig_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    da = RNG.standard_normal((4, 4))
    for a in (A4, C4):
        _, (dw, dv) = funcgrad.jvp(_eigvec, (a,), (da.astype(a.dtype),))
        _, (jdw, jdv) = jax.jvp(
            lambda x: jax.lax.linalg.eig(x, compute_left_eigenvectors=False, enable_eigvec_derivs=True),
            (a,), (da.astype(a.dtype),))
        np.testing.assert_allclose(np.asarray(dw), np.asarray(jdw), atol=1e-9)
        np.testing.assert_allclose(np.asarray(dv), np.asarray(jdv), atol=1e-9)


# --- the torch face -------------------------------------------------------------------------------

def _torch_eig_run(torch, x, rng):
    A = torch.tensor(x, requires_grad=True)
    w, v = torch.linalg.eig(A)
    W = torch.tensor(rng.standard_normal((4, 4)))
    loss = (w.real * torch.arange(4.0)).sum() + (w.imag ** 2).sum() + ((v.abs() ** 2) * W).sum()
    loss.backward()
    g1 = A.grad.numpy().copy()
    A.grad = None
    torch.linalg.eigvals(A).abs().sum().backward()
    g2 = A.grad.numpy().copy()
    w, v = torch.linalg.eig(A)
    with pytest.raises(RuntimeError, match="e\\^\\{i phi\\}"):
        v.real.sum().backward()
    return [w.detach().numpy(), g1, g2]


@pytest.mark.parametrize("x", [A4, C4], ids=["real", "complex"])
def test_torch_eig_backward_matches_torch(x):
    torch = pytest.importorskip("torch")
    ours = _torch_eig_run(funcgrad, x, np.random.default_rng(5))
    ref = _torch_eig_run(torch, x, np.random.default_rng(5))
    for o, r in zip(ours, ref):
        assert o.dtype == r.dtype
        np.testing.assert_allclose(o, r, atol=1e-8)


# --- jax.scipy.linalg matrix constructors ---------------------------------------------------------

import funcgrad.scipy.linalg as fsl  # noqa: E402

V3 = np.array([1.0, -2.0, 3.5])
V4 = np.array([4.0, 5.0, -6.0, 7.0])


def _scipy_cases():
    sl = pytest.importorskip("scipy.linalg")
    cases = [(fsl.circulant(V4), sl.circulant(V4)), (fsl.hankel(V3), sl.hankel(V3)),
             (fsl.hankel(V3, V4), sl.hankel(V3, V4)), (fsl.companion(V4), sl.companion(V4)),
             (fsl.fiedler(V3), sl.fiedler(V3)), (fsl.leslie(V4, V3), sl.leslie(V4, V3)),
             (fsl.hadamard(8), sl.hadamard(8)), (fsl.dft(5, "sqrtn"), sl.dft(5, "sqrtn")), (fsl.dft(4), sl.dft(4)),
             (fsl.dft(3, "n"), sl.dft(3, "n"))]
    for n in (1, 2, 5):
        cases += [(fsl.hilbert(n), sl.hilbert(n)), (fsl.invhilbert(n), sl.invhilbert(n)),
                  (fsl.helmert(n), sl.helmert(n)), (fsl.helmert(n, full=True), sl.helmert(n, full=True))]
        for kind in ("symmetric", "lower", "upper"):
            cases += [(fsl.pascal(n, kind), sl.pascal(n, kind)), (fsl.invpascal(n, kind), sl.invpascal(n, kind))]
    for a in (V3, V4):
        for n in (1, 2, 3, 6):
            for mode in ("full", "same", "valid"):
                cases.append((fsl.convolution_matrix(a, n, mode), sl.convolution_matrix(a, n, mode)))
    return cases


def test_constructors_match_scipy():
    for got, ref in _scipy_cases():
        assert got.shape == ref.shape
        np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-5, atol=1e-6)


def test_constructor_defaults_and_errors():
    # the default float/complex of the mode (this module runs with x64 on), as jax.scipy.linalg's
    assert fsl.hilbert(3).dtype == dtypes.defaults.float_ and fsl.dft(3).dtype == dtypes.defaults.complex_
    assert fsl.hadamard(4, np.float32).dtype == np.float32
    np.testing.assert_allclose(np.asarray(fsl.pascal(4)) @ np.asarray(fsl.invpascal(4)), np.eye(4), atol=1e-4)
    with pytest.raises(ValueError):
        fsl.hadamard(6)
    with pytest.raises(ValueError):
        fsl.pascal(3, "sideways")
    with pytest.raises(ValueError):
        fsl.convolution_matrix(V3, 2, "middle")
    with pytest.raises(ValueError):
        fsl.leslie(V4, V4)
    with pytest.raises(TypeError):
        fsl.hilbert(3.0)


def test_constructors_batch_and_differentiate():
    b = RNG.standard_normal((2, 4))
    for f in (fsl.circulant, fsl.companion, fsl.fiedler):
        got = f(b)
        for i in range(2):
            np.testing.assert_allclose(np.asarray(got[i]), np.asarray(f(b[i])), atol=1e-12)
        np.testing.assert_allclose(np.asarray(funcgrad.vmap(f)(b)), np.asarray(got), atol=1e-12)
        np.testing.assert_allclose(np.asarray(funcgrad.jit(f)(b)), np.asarray(got), atol=1e-12)
    check_grads(fsl.circulant, (V4,), order=2)
    check_grads(fsl.companion, (V4,), order=2)
    check_grads(lambda c, r: fsl.hankel(c, r), (V3, V4), order=2)
    check_grads(lambda a: fsl.convolution_matrix(a, 3, "same"), (V4,), order=2)
    check_grads(fsl.leslie, (V4, V3), order=2)
    # the constructor really builds what it claims: roots of the polynomial are the companion's eigenvalues
    np.testing.assert_allclose(np.sort_complex(np.asarray(jnp.linalg.eigvals(fsl.companion(V4)))),
                               np.sort_complex(np.roots(V4)), atol=1e-10)
    x = RNG.standard_normal(5)
    np.testing.assert_allclose(np.asarray(fsl.convolution_matrix(V4, 5)) @ x, np.convolve(V4, x), atol=1e-12)


# --- expm_frechet, solve_sylvester -----------------------------------------------------------------

M3, E3 = RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3))
N2, C32 = RNG.standard_normal((2, 2)), RNG.standard_normal((3, 2))


def test_expm_frechet_values_and_grads():
    sl = pytest.importorskip("scipy.linalg")
    ex, fr = fsl.expm_frechet(M3, E3)
    ex0, fr0 = sl.expm_frechet(M3, E3)
    np.testing.assert_allclose(np.asarray(ex), ex0, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(fr), fr0, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(fsl.expm_frechet(M3, E3, compute_expm=False)), fr0, rtol=1e-10)
    # it is the directional derivative of expm
    _, t = funcgrad.jvp(fsl.expm, (M3,), (E3,))
    np.testing.assert_allclose(np.asarray(fr), np.asarray(t), rtol=1e-8, atol=1e-10)
    b = RNG.standard_normal((2, 3, 3))
    got = funcgrad.vmap(lambda a: fsl.expm_frechet(a, E3, compute_expm=False))(b)
    for i in range(2):
        np.testing.assert_allclose(np.asarray(got[i]), sl.expm_frechet(b[i], E3)[1], rtol=1e-9, atol=1e-12)
    check_grads(lambda a, e: fsl.expm_frechet(a, e, compute_expm=False), (M3, E3), order=1)
    with pytest.raises(ValueError):
        fsl.expm_frechet(M3, N2)


def test_solve_sylvester_values_and_grads():
    sl = pytest.importorskip("scipy.linalg")
    x = fsl.solve_sylvester(M3, N2, C32)
    np.testing.assert_allclose(np.asarray(x), sl.solve_sylvester(M3, N2, C32), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(M3 @ np.asarray(x) + np.asarray(x) @ N2, C32, atol=1e-10)
    np.testing.assert_allclose(np.asarray(funcgrad.jit(fsl.solve_sylvester)(M3, N2, C32)), np.asarray(x),
                               atol=1e-12)
    check_grads(fsl.solve_sylvester, (M3, N2, C32), order=2)
    with pytest.raises(ValueError):
        fsl.solve_sylvester(M3, N2, C32.T)


def test_roots_polydiv_polymul_trim_as_numpy():
    rng = np.random.default_rng(5)
    for deg in (1, 2, 5, 8):
        p = rng.standard_normal(deg + 1)
        got = np.sort_complex(np.asarray(jnp.roots(jnp.asarray(p))))
        np.testing.assert_allclose(got, np.sort_complex(np.roots(p).astype(complex)), rtol=1e-8, atol=1e-10)
    got = np.sort_complex(np.asarray(jnp.roots(jnp.asarray([0.0, 0.0, 1.0, -3.0, 2.0, 0.0]))))
    np.testing.assert_allclose(got, [0, 1, 2], atol=1e-12)  # leading zeros stripped, trailing zero a root
    assert jnp.roots(jnp.asarray([1.0, 0.0, 1.0])).dtype == np.complex128  # float64 coefficients (JAX)
    assert jnp.roots(jnp.asarray([4.0])).shape == (0,)
    u, v = np.array([5.0, 7.0, 9.0, -2.0]), np.array([4.0, 1.0])
    q, r = jnp.polydiv(jnp.asarray(u), jnp.asarray(v))
    nq, nr = np.polydiv(u, v)
    np.testing.assert_allclose(np.asarray(q), nq, rtol=1e-12)
    assert r.shape == u.shape  # JAX keeps the dividend's length; the leading entries are (near) zero
    np.testing.assert_allclose(np.asarray(r)[-nr.size:], nr, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(r)[:-nr.size], 0, atol=1e-12)
    q2, r2 = jnp.polydiv(jnp.asarray(u), jnp.asarray(v), trim_leading_zeros=True)
    np.testing.assert_allclose(np.asarray(r2), nr, rtol=1e-12)
    jq, jr = funcgrad.jit(jnp.polydiv)(jnp.asarray(u), jnp.asarray(v))
    np.testing.assert_allclose(np.asarray(jq), nq, rtol=1e-12)
    g = funcgrad.grad(lambda a: jnp.sum(jnp.polydiv(a, jnp.asarray(v))[0]))(jnp.asarray(u))
    eps = 1e-6
    fd = [(np.polydiv(u + eps * e, v)[0].sum() - np.polydiv(u - eps * e, v)[0].sum()) / (2 * eps) for e in np.eye(4)]
    np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(np.asarray(jnp.polymul(jnp.asarray([0.0, 2.0, 1.0]), jnp.asarray([1.0, 3.0]),
                                                      trim_leading_zeros=True)), [2.0, 7.0, 3.0])
    with pytest.raises(TypeError, match="concrete"):
        funcgrad.jit(lambda a: jnp.roots(a))(jnp.asarray(u))
    np.testing.assert_allclose(np.sort_complex(np.asarray(funcgrad.jit(lambda a: jnp.roots(a, strip_zeros=False))(
        jnp.asarray(u)))), np.sort_complex(np.roots(u).astype(complex)), rtol=1e-8)


def test_eig_of_a_non_finite_matrix_is_nan_not_an_error():
    x = np.stack([np.array([[np.nan, 1.0], [0.0, 1.0]]), np.array([[2.0, 0.0], [0.0, 3.0]])])
    w, v = jnp.linalg.eig(jnp.asarray(x))
    w, v = np.asarray(w), np.asarray(v)
    assert np.isnan(w[0].real).all() and np.isnan(w[0].imag).all() and np.isnan(v[0].real).all()
    np.testing.assert_allclose(np.sort(w[1].real), [2.0, 3.0])  # the finite matrix of the batch is unaffected
    assert np.isnan(np.asarray(jnp.linalg.eigvals(jnp.asarray(x[0])))).all()
