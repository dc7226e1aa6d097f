"""lax.conv_transpose: with transpose_kernel=True it is the input-gradient of the forward convolution
(checked through funcgrad.vjp and against torch's conv_transpose2d), in NCHW and NHWC layouts."""
import numpy as np
import pytest

import funcgrad as jax
import funcgrad.numpy as jnp
from funcgrad import lax

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def x64():
    jax.config.update("enable_x64", True)
    yield
    jax.config.update("enable_x64", False)


@pytest.mark.parametrize("n,k,s", [(5, 3, 2), (4, 2, 3), (6, 3, 1), (5, 4, 2)])
@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_is_the_gradient_of_the_forward_conv(n, k, s, padding):
    w = RNG.normal(size=(4, 3, k, k))  # OIHW: 3 -> 4 features
    ct = RNG.normal(size=(2, 4, n, n))
    got = np.asarray(lax.conv_transpose(jnp.asarray(ct), jnp.asarray(w), (s, s), padding, transpose_kernel=True))
    size = n * s + (max(k - s, 0) if padding == "VALID" else 0)
    assert got.shape == (2, 3, size, size)

    def fwd(z):
        return lax.conv_general_dilated(z, jnp.asarray(w), (s, s), padding)
    z = jnp.zeros((2, 3, size, size))
    if fwd(z).shape[-1] == n:  # the forward conv maps this size back to n
        ref = np.asarray(jax.vjp(fwd, z)[1](jnp.asarray(ct))[0])
        np.testing.assert_allclose(got, ref, atol=1e-12)
    if padding == "VALID":
        t = torch.nn.functional.conv_transpose2d(torch.tensor(ct), torch.tensor(w), stride=s).numpy()
        np.testing.assert_allclose(got[..., :t.shape[-2], :t.shape[-1]], t, atol=1e-12)
        assert not np.any(got[..., t.shape[-2]:, :]) and not np.any(got[..., :, t.shape[-1]:])


def test_nhwc_layout_and_untransposed_kernel():
    x = RNG.normal(size=(1, 5, 5, 2))
    w = RNG.normal(size=(3, 3, 2, 4))  # HWIO
    dn = ("NHWC", "HWIO", "NHWC")
    out = lax.conv_transpose(jnp.asarray(x), jnp.asarray(w), (2, 2), "SAME", dimension_numbers=dn)
    assert out.shape == (1, 10, 10, 4)
    # without transpose_kernel: a stride-1 convolution of the stride-dilated input, padded k + s - 2 = 3
    # in all for 'SAME', ceil(3 / 2) = 2 of it before (k - 1 = 2 is not below s = 2)
    ref = lax.conv_general_dilated(jnp.asarray(x), jnp.asarray(w), (1, 1), [(2, 1), (2, 1)], lhs_dilation=(2, 2),
                                   dimension_numbers=dn)
    np.testing.assert_allclose(out, ref, atol=1e-12)
    with pytest.raises(ValueError, match="padding"):
        lax.conv_transpose(jnp.asarray(x), jnp.asarray(w), (2, 2), "FULL", dimension_numbers=dn)
