"""funcgrad.scipy.ndimage.map_coordinates against scipy.ndimage for every mode and order, gradients."""
import numpy as np
import pytest
import scipy.ndimage as nd

import funcgrad
import funcgrad.numpy as jnp
from funcgrad.scipy.ndimage import map_coordinates
from funcgrad.testing import check_grads

RNG = np.random.default_rng(0)
IMG = RNG.normal(size=(5, 7))
COORDS = [RNG.uniform(-2, 7, 20), RNG.uniform(-3, 9, 20)]
SCIPY_MODE = {"constant": "grid-constant", "nearest": "nearest", "wrap": "grid-wrap", "mirror": "mirror",
              "reflect": "reflect"}


@pytest.fixture(autouse=True)
def x64():
    funcgrad.config.update("enable_x64", True)
    yield
    funcgrad.config.update("enable_x64", False)


@pytest.mark.parametrize("mode", sorted(SCIPY_MODE))
@pytest.mark.parametrize("order", [0, 1])
def test_against_scipy(mode, order):
    got = map_coordinates(IMG, COORDS, order, mode=mode, cval=1.5)
    exp = nd.map_coordinates(IMG, COORDS, order=order, mode=SCIPY_MODE[mode], cval=1.5)
    np.testing.assert_allclose(np.asarray(got), exp, atol=1e-13)


def test_3d_shapes_and_errors():
    vol = RNG.normal(size=(3, 4, 5))
    c = [RNG.uniform(0, 2, (2, 3)), RNG.uniform(0, 3, (2, 3)), RNG.uniform(0, 4, (2, 3))]
    got = map_coordinates(vol, c, 1, mode="nearest")
    assert got.shape == (2, 3)
    np.testing.assert_allclose(got, nd.map_coordinates(vol, c, order=1, mode="nearest"), atol=1e-13)
    with pytest.raises(ValueError, match="length"):
        map_coordinates(IMG, COORDS[:1], 1)
    with pytest.raises(NotImplementedError):
        map_coordinates(IMG, COORDS, 3)


def test_gradients_and_jit():
    c = [jnp.asarray(RNG.uniform(0.1, 3.9, 6)), jnp.asarray(RNG.uniform(0.1, 5.9, 6))]
    check_grads(lambda img, a, b: map_coordinates(img, [a, b], 1), (jnp.asarray(IMG), *c), order=1)
    np.testing.assert_allclose(funcgrad.jit(lambda img: map_coordinates(img, COORDS, 1, mode="wrap"))(IMG),
                               nd.map_coordinates(IMG, COORDS, order=1, mode="grid-wrap"), atol=1e-13)
