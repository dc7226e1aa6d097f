"""Complex numbers end to end: JAX's differentiation conventions, holomorphic Jacobians, vmap and jit.

The conventions (as in JAX):
- jvp is the (real-)linear pushforward; vjp its transpose under <u, v> = Re(sum(u * v)), with no
  conjugation, so for holomorphic f the vjp of a cotangent c is c * f'(z).
- grad(f)(z) for real-valued f of complex z is that vjp of 1: df/dx - i df/dy (z = x + iy); e.g.
  grad(|z|^2)(3 + 4j) == 6 - 8j.
- grad(f, holomorphic=True)(z) is the complex derivative f'(z); grad of a complex-valued output needs
  holomorphic=True (TypeError otherwise).
"""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as jnp
from funcgrad import grad, hessian, jacfwd, jacrev, jit, jvp, vjp, vmap
from funcgrad.testing import check_grads

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

RNG = np.random.default_rng(7)
Z = np.complex128(0.4 + 0.3j)


def c128(z):
    return jnp.asarray(np.complex128(z))


def wirtinger_grad(f, z, h=1e-6):
    """df/dx - i df/dy by central differences, for real-valued f."""
    z = complex(z)
    fx = (float(f(c128(z + h))) - float(f(c128(z - h)))) / (2 * h)
    fy = (float(f(c128(z + 1j * h))) - float(f(c128(z - 1j * h)))) / (2 * h)
    return fx - 1j * fy


def complex_derivative(f, z, h=1e-6):
    z = complex(z)
    return (complex(f(c128(z + h))) - complex(f(c128(z - h)))) / (2 * h)


# --- grad of real-valued functions of complex inputs ----------------------------------------------

def test_grad_abs_squared_is_conjugate_convention():
    g = grad(lambda z: jnp.abs(z) ** 2)(c128(3 + 4j))
    assert g.dtype == np.complex128
    np.testing.assert_allclose(complex(g), 6 - 8j, rtol=1e-14)
    g64 = grad(lambda z: jnp.abs(z) ** 2)(jnp.asarray(np.complex64(3 + 4j)))
    assert g64.dtype == np.complex64
    np.testing.assert_allclose(complex(g64), 6 - 8j, rtol=1e-6)
    g2 = grad(lambda z: jnp.real(z) ** 2 + jnp.imag(z) ** 2)(c128(3 + 4j))
    np.testing.assert_allclose(complex(g2), 6 - 8j, rtol=1e-14)
    np.testing.assert_allclose(complex(grad(jnp.real)(c128(1 + 1j))), 1.0)
    np.testing.assert_allclose(complex(grad(jnp.imag)(c128(1 + 1j))), -1j)


REAL_VALUED = {
    "abs": lambda z: jnp.abs(z),
    "abs_cubed": lambda z: jnp.abs(z) ** 3,
    "abs_sin": lambda z: jnp.abs(jnp.sin(z)),
    "angle": lambda z: jnp.angle(z),
    "real_exp_conj": lambda z: jnp.real(jnp.exp(z) * jnp.conj(z)),
    "imag_log": lambda z: jnp.imag(jnp.log(z)) * jnp.real(z),
    "mixed": lambda z: jnp.real(z) ** 2 * jnp.imag(z) + jnp.abs(z * z - 1),
    "conj_div": lambda z: jnp.real(jnp.conj(z) / (z + 2)),
    "sqrt_tanh": lambda z: jnp.imag(jnp.sqrt(z) * jnp.tanh(z)),
    "power": lambda z: jnp.abs(z ** 2.5 + jnp.exp2(z)),
}


@pytest.mark.parametrize("name", sorted(REAL_VALUED))
def test_grad_real_valued_matches_wirtinger(name):
    f = REAL_VALUED[name]
    for z in (Z, 1.3 - 0.7j, -0.6 + 1.1j):
        if name in ("imag_log", "power", "sqrt_tanh") and z.real < 0:
            continue
        g = grad(f)(c128(z))
        np.testing.assert_allclose(complex(g), wirtinger_grad(f, z), rtol=1e-7, atol=1e-8)


def test_grad_of_abs_at_zero_is_zero():
    assert complex(grad(jnp.abs)(c128(0j))) == 0
    assert complex(grad(lambda z: jnp.abs(z) + jnp.real(z))(c128(0j))) == 1


def test_complex_from_real_parts():
    lax = funcgrad.lax
    f = lambda x, y: jnp.abs(lax.complex(x, y)) ** 2 + jnp.angle(lax.complex(x, y))
    x, y = jnp.asarray(np.float64(1.5)), jnp.asarray(np.float64(-0.5))
    gx, gy = grad(f, argnums=(0, 1))(x, y)
    r2 = 1.5 ** 2 + 0.5 ** 2
    np.testing.assert_allclose([float(gx), float(gy)], [3.0 + 0.5 / r2, -1.0 + 1.5 / r2], rtol=1e-13)
    check_grads(f, (x, y), order=2)


def test_real_inputs_through_complex_intermediates():
    def f(x):
        z = jnp.exp(1j * x) * (1 + x) + jnp.conj(x * (2 - 1j))
        return jnp.sum(jnp.abs(z) ** 2 + jnp.angle(z) * jnp.imag(z))
    x = jnp.asarray(RNG.uniform(-1, 1, 4))
    g = grad(f)(x)
    assert g.dtype == np.float64
    check_grads(f, (x,), order=2)
    h = hessian(f)(x)
    eps = 1e-5
    fd = np.stack([(np.asarray(grad(f)(x + eps * e)) - np.asarray(grad(f)(x - eps * e))) / (2 * eps)
                   for e in np.eye(4)])
    np.testing.assert_allclose(np.asarray(h), fd, rtol=1e-6, atol=1e-7)


# --- holomorphic derivatives ----------------------------------------------------------------------

HOLOMORPHIC = {
    "exp": (jnp.exp, Z), "log": (jnp.log, Z), "sin": (jnp.sin, Z), "cos": (jnp.cos, Z), "tan": (jnp.tan, Z),
    "sinh": (jnp.sinh, Z), "cosh": (jnp.cosh, Z), "tanh": (jnp.tanh, Z), "sqrt": (jnp.sqrt, Z),
    "arcsin": (jnp.arcsin, Z), "arccos": (jnp.arccos, Z), "arctan": (jnp.arctan, Z),
    "arcsinh": (jnp.arcsinh, Z), "arccosh": (jnp.arccosh, 1.5 + 0.5j), "arctanh": (jnp.arctanh, Z),
    "exp2": (jnp.exp2, Z), "log2": (jnp.log2, Z), "log10": (jnp.log10, Z), "expm1": (jnp.expm1, Z),
    "log1p": (jnp.log1p, Z), "square": (jnp.square, Z), "reciprocal": (jnp.reciprocal, Z),
    "logistic": (jnp.logistic, Z), "pow_const": (lambda z: z ** 2.5, Z), "pow_self": (lambda z: z ** z, Z),
    "integer_pow": (lambda z: z ** 3 - 2 * z, Z), "rational": (lambda z: (z * z + 1j) / (z - 2), Z),
    "sinc": (jnp.sinc, Z),
}


@pytest.mark.parametrize("name", sorted(HOLOMORPHIC))
def test_holomorphic_grad_is_complex_derivative(name):
    f, z = HOLOMORPHIC[name]
    g = grad(f, holomorphic=True)(c128(z))
    assert g.dtype == np.complex128
    np.testing.assert_allclose(complex(g), complex_derivative(f, z), rtol=1e-8, atol=1e-9)
    # vjp of a complex cotangent c is c * f'(z) (no conjugation); jvp of t is f'(z) * t
    c = np.complex128(0.3 - 1.2j)
    _, pull = vjp(f, c128(z))
    np.testing.assert_allclose(complex(pull(c128(c))[0]), c * complex(g), rtol=1e-12)
    _, t_out = jvp(f, (c128(z),), (c128(c),))
    np.testing.assert_allclose(complex(t_out), c * complex(g), rtol=1e-12)


def test_holomorphic_sin_and_second_derivative():
    z = c128(1 + 2j)
    np.testing.assert_allclose(complex(grad(jnp.sin, holomorphic=True)(z)), np.cos(1 + 2j), rtol=1e-15)
    d2 = grad(grad(jnp.sin, holomorphic=True), holomorphic=True)(z)
    np.testing.assert_allclose(complex(d2), -np.sin(1 + 2j), rtol=1e-14)
    d2 = grad(grad(lambda w: w ** 4 + jnp.exp(w), holomorphic=True), holomorphic=True)(z)
    np.testing.assert_allclose(complex(d2), 12 * (1 + 2j) ** 2 + np.exp(1 + 2j), rtol=1e-13)


def _vector_fn(z):
    a = jnp.asarray(np.array([[1 + 1j, 2, 0.5j], [0.3, -1j, 1], [2 - 1j, 0, 1]]))
    return jnp.sin(a @ z) * z[0] + jnp.exp(z) / (z + 3) + jnp.sum(z ** 2)


def test_holomorphic_jacfwd_equals_jacrev():
    z = jnp.asarray(RNG.uniform(-1, 1, 3) + 1j * RNG.uniform(-1, 1, 3))
    jf = jacfwd(_vector_fn, holomorphic=True)(z)
    jr = jacrev(_vector_fn, holomorphic=True)(z)
    assert jf.dtype == jr.dtype == np.complex128 and jf.shape == jr.shape == (3, 3)
    np.testing.assert_allclose(np.asarray(jf), np.asarray(jr), rtol=1e-12, atol=1e-12)
    h = 1e-6
    fd = np.stack([(np.asarray(_vector_fn(z + h * e)) - np.asarray(_vector_fn(z - h * e))) / (2 * h)
                   for e in np.eye(3)], axis=1)
    np.testing.assert_allclose(np.asarray(jf), fd, rtol=1e-7, atol=1e-8)
    hf = jacfwd(jacrev(lambda w: jnp.sum(jnp.sin(w) * w[::-1]), holomorphic=True), holomorphic=True)(z)
    hr = jacrev(jacrev(lambda w: jnp.sum(jnp.sin(w) * w[::-1]), holomorphic=True), holomorphic=True)(z)
    np.testing.assert_allclose(np.asarray(hf), np.asarray(hr), rtol=1e-12, atol=1e-12)


def test_jacrev_of_real_output_of_complex_input():
    z = jnp.asarray(np.array([1 + 2j, -0.5 + 0.3j]))
    j = jacrev(lambda w: jnp.abs(w) ** 2)(z)
    np.testing.assert_allclose(np.asarray(j), np.diag(2 * np.conj(np.asarray(z))), rtol=1e-14)


# --- errors ---------------------------------------------------------------------------------------

def test_grad_errors():
    with pytest.raises(TypeError, match="holomorphic"):
        grad(jnp.sin)(c128(1 + 1j))  # complex output without holomorphic=True
    with pytest.raises(TypeError, match="holomorphic"):
        grad(jnp.sin, holomorphic=True)(jnp.asarray(np.float64(1.0)))  # real input
    with pytest.raises(TypeError, match="complex output"):
        grad(jnp.abs, holomorphic=True)(c128(1 + 1j))  # real output
    with pytest.raises(TypeError):
        grad(lambda x: jnp.exp(1j * x))(jnp.asarray(np.float64(1.0)))


# --- vmap and jit ---------------------------------------------------------------------------------

def test_vmap_and_jit_with_complex():
    zs = jnp.asarray(RNG.uniform(-1, 1, 5) + 1j * RNG.uniform(0.2, 1, 5))
    f = REAL_VALUED["mixed"]
    per_example = np.array([complex(grad(f)(zs[i])) for i in range(5)])
    np.testing.assert_allclose(np.asarray(vmap(grad(f))(zs)), per_example, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(jit(vmap(grad(f)))(zs)), per_example, rtol=1e-13)
    hol = vmap(grad(jnp.tan, holomorphic=True))(zs)
    np.testing.assert_allclose(np.asarray(hol), 1 / np.cos(np.asarray(zs)) ** 2, rtol=1e-13)

    def g(z):
        return jnp.conj(z) * jnp.exp(z) + jnp.abs(z) + funcgrad.lax.complex(jnp.real(z), jnp.angle(z))
    np.testing.assert_allclose(np.asarray(jit(g)(zs)), np.asarray(g(zs)), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(vmap(g)(zs)), np.asarray(g(zs)), rtol=1e-14)
    m = jnp.asarray(np.stack([np.asarray(zs)] * 3))
    np.testing.assert_allclose(np.asarray(vmap(g, in_axes=1, out_axes=1)(m)), np.asarray(g(m)), rtol=1e-14)
    assert jit(g)(zs).dtype == np.complex128


def test_complex_numpy_functions_values():
    z = np.array([1 + 2j, -3 - 0.5j, 0.25j, 2.0 + 0j], dtype=np.complex64)
    for fn in ("exp", "log", "sin", "cos", "tan", "sinh", "cosh", "tanh", "sqrt", "arcsin", "arccos",
               "arctan", "arcsinh", "arccosh", "arctanh", "exp2", "log2", "log10", "square", "reciprocal",
               "conj", "real", "imag", "abs", "angle", "sign", "expm1", "log1p", "rint"):
        got = getattr(jnp, fn)(z)
        want = getattr(np, fn)(z)
        assert got.dtype == want.dtype, fn
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=2e-6, err_msg=fn)
    np.testing.assert_allclose(np.asarray(jnp.sinc(z)), np.sinc(z), rtol=2e-6)
    a, b = jnp.asarray(z), jnp.asarray(z[::-1])
    for got, want in [(a * b, z * z[::-1]), (a / b, z / z[::-1]), (a ** 2, z ** 2), (a ** b, z ** z[::-1]),
                      (jnp.float_power(a, b), np.float_power(z, z[::-1]).astype(np.complex64))]:  # JAX's dtype
        assert got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)


# --- every complex-capable elementwise card, by the numerical checks --------------------------------

CARDS = ["exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "logistic", "sin", "cos", "tan", "asin",
         "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sqrt", "rsqrt", "square", "neg",
         "abs", "real", "imag", "conj"]


@pytest.mark.parametrize("name", CARDS)
def test_complex_cards_check_grads(name):
    """jvp against finite differences and vjp against jvp (JAX's pairing), to second order, on complex
    operands away from branch cuts."""
    from funcgrad._src.core.primitive import registry
    prim = registry[name]
    z = RNG.uniform(0.3, 0.8, 4) + 1j * RNG.uniform(0.2, 0.6, 4)
    if name == "acosh":
        z = z + 1.0
    check_grads(prim.bind, (jnp.asarray(z),), order=2)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow"])
def test_complex_binary_cards_check_grads(name):
    from funcgrad._src.core.primitive import registry
    x = jnp.asarray(RNG.uniform(0.3, 1.5, 3) + 1j * RNG.uniform(0.2, 0.6, 3))
    y = jnp.asarray(RNG.uniform(0.3, 1.5, 3) - 1j * RNG.uniform(0.2, 0.6, 3))
    check_grads(registry[name].bind, (x, y), order=2)
    check_grads(registry["complex"].bind, (jnp.real(x), jnp.imag(y)), order=2)


def test_jacobian_dtype_checks_follow_jax():
    import pytest
    z = np.array([1 + 2j, 0.5 - 1j])
    with pytest.raises(TypeError, match="real-valued outputs"):
        funcgrad.jacrev(lambda x: x * 1j)(np.ones(2))
    with pytest.raises(TypeError, match="complex outputs"):
        funcgrad.jacfwd(lambda z: jnp.abs(z), holomorphic=True)(z)
    with pytest.raises(TypeError, match="complex outputs"):
        funcgrad.jacrev(lambda z: jnp.abs(z), holomorphic=True)(z)
