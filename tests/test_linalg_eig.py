"""General eigendecomposition (eig / eigvals on the numpy, lax and torch faces): values, dtypes, errors,
jit/vmap, derivatives (eigenvector derivatives opt-in), non-finite input, against NumPy, torch and JAX."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as jnp
from funcgrad import lax
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


def test_eig_of_a_non_finite_matrix_is_nan_not_an_error():
    x = np.stack([np.array([[np.nan, 1.0], [0.0, 1.0]]), np.array([[2.0, 0.0], [0.0, 3.0]])])
    w, v = jnp.linalg.eig(jnp.asarray(x))
    w, v = np.asarray(w), np.asarray(v)
    assert np.isnan(w[0].real).all() and np.isnan(w[0].imag).all() and np.isnan(v[0].real).all()
    np.testing.assert_allclose(np.sort(w[1].real), [2.0, 3.0])  # the finite matrix of the batch is unaffected
    assert np.isnan(np.asarray(jnp.linalg.eigvals(jnp.asarray(x[0])))).all()
