"""Complex gradients at the Tensor face follow torch's convention (the gradient of |z|^2 is 2z), checked against
real PyTorch (first and second order, real inputs through complex ops); funcgrad.grad keeps JAX's (2 conj(z))."""
import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)
Z = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
W = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))

COMPLEX = {
    "abs2": lambda t, z: (z.abs() ** 2).sum(),
    "mul_real": lambda t, z: (z * t.tensor(W)).real.sum(),
    "exp_imag": lambda t, z: z.exp().imag.sum(),
    "real_imag": lambda t, z: (z.real * 2 - z.imag * z.real).sum(),
    "matmul_abs": lambda t, z: (z @ z.T.conj()).abs().sum(),
    "mul_abs": lambda t, z: (z * z).abs().sum(),
}


@pytest.mark.parametrize("name", list(COMPLEX))
def test_complex_grad_follows_torch(name):
    res = []
    for lib in (fg, torch):
        z = lib.tensor(Z, requires_grad=True)
        COMPLEX[name](lib, z).backward()
        res.append(np.asarray(z.grad))
    np.testing.assert_allclose(res[0], res[1], rtol=1e-5, atol=1e-6)


def test_complex_abs_square_example_and_create_graph():
    z = fg.tensor([1 + 2j], requires_grad=True)
    (z.abs() ** 2).sum().backward()
    np.testing.assert_allclose(np.asarray(z.grad), [2 + 4j])
    res = []
    for lib in (fg, torch):
        z = lib.tensor([1 + 2j, -0.5 + 0.25j], requires_grad=True)
        (g,) = lib.autograd.grad((z * z).abs().sum(), z, create_graph=True)
        g.abs().sum().backward()
        res.append((np.asarray(g.detach()), np.asarray(z.grad)))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-5)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-5)


def test_real_input_through_complex_ops():
    res = []
    for lib in (fg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x * lib.tensor([1 + 1j, 2 - 1j])).abs().sum().backward()
        res.append(np.asarray(x.grad))
    np.testing.assert_allclose(res[0], res[1], rtol=1e-6)


def test_functional_grad_keeps_jax_convention():
    import funcgrad.numpy as jnp
    g = fg.grad(lambda z: jnp.abs(z) ** 2)(jnp.asarray(1 + 2j, dtype=np.complex64))
    np.testing.assert_allclose(np.asarray(g), 2 - 4j)
