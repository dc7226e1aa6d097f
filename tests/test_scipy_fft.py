"""funcgrad.scipy.fft (type-2 dct/idct/dctn/idctn) against scipy.fft, gradients, jit."""
import numpy as np
import pytest
import scipy.fft as sf

import funcgrad
import funcgrad.numpy as jnp
import funcgrad.scipy.fft as ff
from funcgrad.testing import check_grads

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def x64():
    funcgrad.config.update("enable_x64", True)
    yield
    funcgrad.config.update("enable_x64", False)


@pytest.mark.parametrize("N", [1, 2, 5, 8])
@pytest.mark.parametrize("norm", [None, "ortho"])
def test_1d_against_scipy(N, norm):
    x = RNG.normal(size=(3, N))
    np.testing.assert_allclose(ff.dct(x, norm=norm), sf.dct(x, norm=norm), atol=1e-13)
    np.testing.assert_allclose(ff.idct(x, norm=norm), sf.idct(x, norm=norm), atol=1e-13)
    np.testing.assert_allclose(ff.idct(ff.dct(x, norm=norm), norm=norm), x, atol=1e-13)
    np.testing.assert_allclose(ff.dct(x.T, axis=0, norm=norm), sf.dct(x.T, axis=0, norm=norm), atol=1e-13)


def test_nd_sizes_and_errors():
    x = RNG.normal(size=(4, 5, 6))
    np.testing.assert_allclose(ff.dctn(x), sf.dctn(x), atol=1e-12)
    np.testing.assert_allclose(ff.idctn(x, norm="ortho", axes=(0, 2)), sf.idctn(x, norm="ortho", axes=(0, 2)),
                               atol=1e-13)
    np.testing.assert_allclose(ff.dctn(x, s=(3, 8), axes=(0, 2)), sf.dctn(x, s=(3, 8), axes=(0, 2)), atol=1e-12)
    np.testing.assert_allclose(ff.dct(x, n=3, axis=1), sf.dct(x, n=3, axis=1), atol=1e-13)
    np.testing.assert_allclose(ff.dct(x, n=8, axis=0), sf.dct(x, n=8, axis=0), atol=1e-13)
    np.testing.assert_allclose(ff.dct(np.arange(4)), sf.dct(np.arange(4.0)), atol=1e-13)
    with pytest.raises(NotImplementedError):
        ff.dct(x, type=1)
    with pytest.raises(ValueError):
        ff.dct(x, norm="forward-ish")


def test_gradient_and_jit():
    x = jnp.asarray(RNG.normal(size=(2, 5)))
    check_grads(lambda v: ff.dct(v, norm="ortho"), (x,), order=2)
    check_grads(lambda v: ff.idctn(v), (x,), order=1)
    np.testing.assert_allclose(funcgrad.jit(ff.dctn)(x), sf.dctn(np.asarray(x)), atol=1e-12)
