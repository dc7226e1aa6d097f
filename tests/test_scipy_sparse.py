"""funcgrad.scipy.sparse.linalg.cg against numpy.linalg.solve, with matrices and functions, a
preconditioner, jit, vmap, and implicit gradients against explicit formulas."""
import numpy as np
import pytest

import funcgrad as jax
import funcgrad.numpy as jnp
from funcgrad.scipy.sparse.linalg import cg

RNG = np.random.default_rng(0)
_M = RNG.normal(size=(6, 6))
A = _M @ _M.T + 6 * np.eye(6)
B = RNG.normal(size=6)
X = np.linalg.solve(A, B)


@pytest.fixture(autouse=True)
def x64():
    jax.config.update("enable_x64", True)
    yield
    jax.config.update("enable_x64", False)


def test_solution_forms():
    np.testing.assert_allclose(cg(A, B, tol=1e-12)[0], X, atol=1e-10)
    assert cg(A, B)[1] is None
    np.testing.assert_allclose(cg(lambda v: jnp.asarray(A) @ v, B, tol=1e-12)[0], X, atol=1e-10)
    np.testing.assert_allclose(cg(A, B, tol=1e-12, M=np.diag(1 / np.diag(A)))[0], X, atol=1e-10)
    np.testing.assert_allclose(cg(A, B, x0=np.ones(6), tol=1e-12)[0], X, atol=1e-10)
    x_jit = jax.jit(lambda a, b: cg(lambda v: a @ v, b, tol=1e-12)[0])(jnp.asarray(A), jnp.asarray(B))
    np.testing.assert_allclose(x_jit, X, atol=1e-10)
    bs = RNG.normal(size=(3, 6))
    np.testing.assert_allclose(jax.vmap(lambda b: cg(A, b, tol=1e-12)[0])(bs), np.linalg.solve(A, bs.T).T,
                               atol=1e-10)
    # maxiter bounds the work: one step is not enough for a 6x6 system
    assert np.abs(np.asarray(cg(A, B, maxiter=1)[0]) - X).max() > 1e-6
    with pytest.raises(ValueError, match="square"):
        cg(np.ones((2, 3)), np.ones(2))


def test_implicit_gradients():
    g = jax.grad(lambda b: jnp.sum(cg(A, b, tol=1e-12)[0] ** 2))(jnp.asarray(B))
    np.testing.assert_allclose(g, 2 * np.linalg.solve(A.T, X), atol=1e-10)
    gA = jax.grad(lambda a: jnp.sum(cg(a, B, tol=1e-12)[0] ** 2))(jnp.asarray(A))
    lam = np.linalg.solve(A.T, 2 * X)
    np.testing.assert_allclose(gA, -np.outer(lam, X), atol=1e-10)  # d/dA of |A^-1 b|^2
    gs = jax.grad(lambda s: jnp.sum(cg(lambda v: s * (jnp.asarray(A) @ v), B, tol=1e-12)[0]))(2.0)
    np.testing.assert_allclose(gs, -np.sum(X) / 4, rtol=1e-9)  # x(s) = A^-1 b / s
