"""funcgrad.scipy.signal against scipy.signal for every mode, ranks 1-3, real and complex, and the
gradient of a convolution by finite differences."""

import numpy as np
import pytest
import scipy.signal as ssig

import funcgrad
import funcgrad.numpy as jnp
import funcgrad.scipy.signal as fsig
from funcgrad.testing import check_grads

RNG = np.random.default_rng(0)
SHAPES = [((7,), (3,)), ((3,), (7,)), ((5, 6), (2, 3)), ((2, 3), (4, 4)), ((4, 3, 5), (2, 2, 3))]


@pytest.mark.parametrize("fn", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("s1,s2", SHAPES)
@pytest.mark.parametrize("kind", ["real", "complex"])
def test_nd_against_scipy(fn, mode, s1, s2, kind):
    a, b = RNG.normal(size=s1), RNG.normal(size=s2)
    if kind == "complex":
        a, b = a + 1j * RNG.normal(size=s1), b + 1j * RNG.normal(size=s2)
    valid_ok = all(n >= m for n, m in zip(s1, s2)) or all(m >= n for n, m in zip(s1, s2))
    if mode == "valid" and not valid_ok:
        with pytest.raises(ValueError):
            getattr(fsig, fn)(a, b, mode)
        return
    exp = getattr(ssig, fn)(a, b, mode=mode, method="direct")
    got = getattr(fsig, fn)(a, b, mode)
    assert got.shape == exp.shape
    np.testing.assert_allclose(np.asarray(got), exp, rtol=1e-10, atol=1e-10)


def test_2d_and_errors():
    for s1, s2 in [((6, 5), (3, 2)), ((6, 5), (2, 4)), ((3, 4), (5, 6)), ((4, 4), (4, 4))]:
        a, b = RNG.normal(size=s1), RNG.normal(size=s2)
        for mode in ("full", "same", "valid"):
            np.testing.assert_allclose(fsig.convolve2d(a, b, mode), ssig.convolve2d(a, b, mode), atol=1e-10)
            np.testing.assert_allclose(fsig.correlate2d(a, b, mode), ssig.correlate2d(a, b, mode), atol=1e-10)
    a, b = RNG.normal(size=(6, 5)), RNG.normal(size=(3, 2))
    with pytest.raises(NotImplementedError):
        fsig.convolve2d(a, b, boundary="wrap")
    with pytest.raises(ValueError, match="dimensionality"):
        fsig.convolve(a, b[0])
    with pytest.raises(ValueError, match="mode"):
        fsig.convolve(a, b, "circular")
    np.testing.assert_array_equal(fsig.convolve(np.array([1, 2, 3]), np.array([0, 1])), [0, 1, 2, 3])


def test_gradient_and_jit():
    funcgrad.config.update("enable_x64", True)
    try:
        a, b = jnp.asarray(RNG.normal(size=(5, 4))), jnp.asarray(RNG.normal(size=(2, 3)))
        check_grads(lambda x, y: fsig.convolve(x, y, "same"), (a, b), order=2)
        np.testing.assert_allclose(funcgrad.jit(lambda x, y: fsig.correlate(x, y))(a, b),
                                   ssig.correlate(np.asarray(a), np.asarray(b)), atol=1e-12)
    finally:
        funcgrad.config.update("enable_x64", False)




def test_integer_and_bool_inputs_convolve_in_floats_as_jax():
    """jax.scipy.signal promotes its inputs to inexact (int32, int8, bool -> float32 with x64 off), where
    scipy keeps integers. Was: int32 / int8 / int64 results."""
    jax = pytest.importorskip("jax")
    import jax.scipy.signal as jsig
    a, b = np.arange(4), np.arange(3)
    A, B = np.arange(12).reshape(3, 4), np.ones((2, 2), int)
    prev = jax.config.jax_enable_x64
    try:
        for x64 in (False, True):
            jax.config.update("jax_enable_x64", x64)
            with funcgrad.enable_x64(x64):
                for fn, x, y in [("convolve", a, b), ("correlate", a, b), ("convolve2d", A, B), ("correlate2d", A, B),
                                 ("convolve", a > 1, b > 0), ("convolve", a.astype(np.int8), b.astype(np.int8))]:
                    ours, theirs = getattr(fsig, fn)(x, y), getattr(jsig, fn)(x, y)
                    assert ours.dtype == theirs.dtype, (fn, x64, ours.dtype, theirs.dtype)
                    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    finally:
        jax.config.update("jax_enable_x64", prev)
