"""lax.custom_root and lax.custom_linear_solve: values, and implicit gradients against explicit formulas
(with traced values closed over by f/matvec and by the solvers)."""
import numpy as np
import pytest

import funcgrad as jax
import funcgrad.numpy as jnp
from funcgrad import lax

RNG = np.random.default_rng(0)
A = RNG.normal(size=(4, 4)) + 4 * np.eye(4)  # not symmetric
B = RNG.normal(size=4)
X = np.linalg.solve(A, B)


@pytest.fixture(autouse=True)
def x64():
    jax.config.update("enable_x64", True)
    yield
    jax.config.update("enable_x64", False)


def _newton(f, x0):
    return lax.fori_loop(0, 40, lambda i, x: x - f(x) / jax.grad(f)(x), x0)


def test_custom_root_scalar():
    def cube_root(a):
        return lax.custom_root(lambda x: x ** 3 - a, 1.0, _newton, lambda g, y: y / g(1.0))
    np.testing.assert_allclose(cube_root(5.0), 5.0 ** (1 / 3), rtol=1e-12)
    np.testing.assert_allclose(jax.grad(cube_root)(5.0), 5.0 ** (-2 / 3) / 3, rtol=1e-10)
    np.testing.assert_allclose(jax.jit(jax.grad(cube_root))(5.0), 5.0 ** (-2 / 3) / 3, rtol=1e-10)


def _linear(a, b, symmetric):
    return lax.custom_linear_solve(
        lambda x: a @ x, b, lambda mv, r: jnp.linalg.solve(a, r),
        transpose_solve=None if symmetric else (lambda vm, r: jnp.linalg.solve(a.T, r)), symmetric=symmetric)


def test_custom_linear_solve_nonsymmetric():
    a, b = jnp.asarray(A), jnp.asarray(B)
    np.testing.assert_allclose(_linear(a, b, False), X, atol=1e-12)
    g = jax.grad(lambda v: jnp.sum(_linear(a, v, False) ** 2))(b)
    np.testing.assert_allclose(g, 2 * np.linalg.solve(A.T, X), atol=1e-12)
    gA = jax.grad(lambda m: jnp.sum(_linear(m, b, False) ** 2))(a)
    np.testing.assert_allclose(gA, -np.outer(np.linalg.solve(A.T, 2 * X), X), atol=1e-12)


def test_custom_linear_solve_symmetric_and_errors():
    S = A @ A.T
    s, b = jnp.asarray(S), jnp.asarray(B)
    xs = np.linalg.solve(S, B)
    gS = jax.grad(lambda m: jnp.sum(_linear(m, b, True)))(s)
    np.testing.assert_allclose(gS, -np.outer(np.linalg.solve(S, np.ones(4)), xs), atol=1e-12)
    with pytest.raises(TypeError, match="transpose_solve"):
        jax.grad(lambda v: jnp.sum(lax.custom_linear_solve(lambda x: s @ x, v,
                                                           lambda mv, r: jnp.linalg.solve(s, r))))(b)
