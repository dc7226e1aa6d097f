"""funcgrad.scipy.optimize.minimize(method="BFGS") against scipy.optimize.minimize's minima, under jit
and vmap, with args, and its OptimizeResults fields."""
import numpy as np
import pytest
import scipy.optimize as sopt

import funcgrad as jax
import funcgrad.numpy as jnp
from funcgrad.scipy.optimize import OptimizeResults, minimize


@pytest.fixture(autouse=True)
def x64():
    jax.config.update("enable_x64", True)
    yield
    jax.config.update("enable_x64", False)


def rosen(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


@pytest.mark.parametrize("x0", [[-1.2, 1.0], [-1.2, 1.0, 0.5, 2.0], [3.0, -2.0, 0.0, 1.0, 4.0]])
def test_rosenbrock(x0):
    r = minimize(rosen, jnp.array(x0), method="BFGS")
    assert isinstance(r, OptimizeResults)
    ref = sopt.minimize(sopt.rosen, np.array(x0), method="BFGS", jac=sopt.rosen_der)
    # a minimum at least as good as SciPy's (from [-1.2, 1, 0.5, 2] SciPy stops in a local minimum)
    assert float(r.fun) <= ref.fun + 1e-10
    np.testing.assert_allclose(r.fun, sopt.rosen(np.asarray(r.x)), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(r.jac, sopt.rosen_der(np.asarray(r.x)), atol=1e-9)
    assert bool(r.success) and int(r.status) == 0
    assert float(r.fun) < 1e-10 and np.max(np.abs(np.asarray(r.jac))) < 1e-5
    assert int(r.nit) > 0 and int(r.nfev) >= int(r.nit) and r.hess_inv.shape == (len(x0), len(x0))


def test_quadratic_args_jit_vmap():
    A = np.array([[3.0, 0.5], [0.5, 1.0]])
    b = np.array([1.0, -2.0])

    def f(x, A, b):
        return 0.5 * x @ A @ x - b @ x
    exact = np.linalg.solve(A, b)
    r = minimize(f, jnp.zeros(2), args=(jnp.asarray(A), jnp.asarray(b)), method="bfgs")
    np.testing.assert_allclose(r.x, exact, atol=1e-6)
    H = np.asarray(r.hess_inv)  # the inverse-Hessian estimate stays symmetric positive definite
    np.testing.assert_allclose(H, H.T, atol=1e-12)
    assert np.all(np.linalg.eigvalsh(H) > 0)
    rj = jax.jit(lambda x0: minimize(f, x0, (jnp.asarray(A), jnp.asarray(b)), method="BFGS"))(jnp.ones(2))
    np.testing.assert_allclose(rj.x, exact, atol=1e-6)
    starts = jnp.array([[0.0, 0.0], [5.0, -3.0], [-2.0, 7.0]])
    rv = jax.vmap(lambda x0: minimize(f, x0, (jnp.asarray(A), jnp.asarray(b)), method="BFGS").x)(starts)
    np.testing.assert_allclose(rv, np.broadcast_to(exact, (3, 2)), atol=1e-6)


def test_options_and_errors():
    r = minimize(rosen, jnp.array([-1.2, 1.0]), method="BFGS", options={"maxiter": 3})
    assert int(r.status) == 1 and not bool(r.success) and int(r.nit) == 3
    r = minimize(rosen, jnp.array([1.0, 1.0]), method="BFGS")
    assert bool(r.success) and int(r.nit) == 0
    with pytest.raises(ValueError, match="BFGS"):
        minimize(rosen, jnp.zeros(2), method="Nelder-Mead")
    with pytest.raises(TypeError, match="unknown options"):
        minimize(rosen, jnp.zeros(2), method="BFGS", options={"foo": 1})
    with pytest.raises(ValueError, match="one-dimensional"):
        minimize(rosen, jnp.zeros((2, 2)), method="BFGS")
