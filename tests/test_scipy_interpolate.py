"""funcgrad.scipy.interpolate.RegularGridInterpolator against SciPy's, as a pytree under jit, and its
gradients."""
import numpy as np
import pytest
import scipy.interpolate as si

import funcgrad
import funcgrad.numpy as jnp
from funcgrad.scipy.interpolate import RegularGridInterpolator
from funcgrad.testing import check_grads

RNG = np.random.default_rng(0)
X = np.sort(RNG.uniform(0, 1, 5))
Y = np.sort(RNG.uniform(0, 2, 4))
V = RNG.normal(size=(5, 4))
Q = np.stack([RNG.uniform(-0.1, 1.1, 30), RNG.uniform(-0.2, 2.2, 30)], -1)


@pytest.fixture(autouse=True)
def x64():
    funcgrad.config.update("enable_x64", True)
    yield
    funcgrad.config.update("enable_x64", False)


@pytest.mark.parametrize("method", ["linear", "nearest"])
@pytest.mark.parametrize("fill_value", [np.nan, None, 0.5])
def test_against_scipy(method, fill_value):
    got = np.asarray(RegularGridInterpolator((X, Y), V, method=method, fill_value=fill_value)(Q))
    exp = si.RegularGridInterpolator((X, Y), V, method=method, bounds_error=False, fill_value=fill_value)(Q)
    np.testing.assert_allclose(got, exp, atol=1e-13, equal_nan=True)


def test_trailing_value_dims_batch_shape_and_errors():
    v3 = RNG.normal(size=(5, 4, 2))
    q = Q[:6].reshape(2, 3, 2)
    got = RegularGridInterpolator((X, Y), v3)(q)
    exp = si.RegularGridInterpolator((X, Y), v3, bounds_error=False)(q)
    assert got.shape == (2, 3, 2)
    np.testing.assert_allclose(np.asarray(got), exp, atol=1e-13, equal_nan=True)
    interp = RegularGridInterpolator((X, Y), V, method="nearest")
    np.testing.assert_allclose(interp(Q[:4], method="linear"),
                               si.RegularGridInterpolator((X, Y), V, bounds_error=False)(Q[:4]), atol=1e-13,
                               equal_nan=True)
    with pytest.raises(ValueError, match="points in dimension"):
        RegularGridInterpolator((X, Y[:3]), V)
    with pytest.raises(ValueError, match="dimension"):
        interp(np.ones((3, 3)))
    with pytest.raises(ValueError):
        RegularGridInterpolator((X, Y), V, method="cubic")


def test_pytree_jit_and_gradients():
    interp = RegularGridInterpolator((X, Y), V)
    inside = jnp.asarray(np.stack([RNG.uniform(X[0], X[-1], 4), RNG.uniform(Y[0], Y[-1], 4)], -1))
    assert not np.isnan(np.asarray(interp(inside))).any()
    np.testing.assert_allclose(funcgrad.jit(lambda f, q: f(q))(interp, inside), interp(inside), atol=1e-14)
    check_grads(lambda v: RegularGridInterpolator((X, Y), v)(inside), (jnp.asarray(V),), order=2)
    check_grads(lambda q: interp(q), (inside,), order=1)
