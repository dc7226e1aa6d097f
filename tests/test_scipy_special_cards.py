"""Edge cases of the jax.scipy.special functions that are primitive cards (funcgrad/_src/prims/scipy_special.py):
entr, xlogy, xlog1py, ndtri, exp1, expi, expn, sici (si, ci), fresnel, spence, dawsn, wofz. The registry-wide
property tests (tests/test_primitive_properties.py, cases in tests/cases/scipy_special.py) check their
rules in general; these check the limits, the non-differentiable order of expn, complex wofz, float32
rounding, and that the functions are one equation each (no custom_jvp left)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as jnp
import funcgrad.scipy.special as fs
from funcgrad._src.core.primitive import registry

ss = pytest.importorskip("scipy.special")

CARDS = ["entr", "xlogy", "xlog1py", "ndtri", "exp1", "expi", "expn", "si", "ci", "fresnel", "spence", "dawsn", "wofz"]


def test_registered():
    for name in CARDS:
        assert name in registry, name


@pytest.mark.parametrize("f,args,prims", [
    (fs.entr, (0.5,), {"entr"}), (fs.xlogy, (1.5, 2.0), {"xlogy"}), (fs.xlog1py, (1.5, 2.0), {"xlog1py"}), (fs.ndtri, (0.3,), {"ndtri"}),
    (fs.exp1, (0.5,), {"exp1"}), (fs.expi, (0.5,), {"expi"}), (lambda x: fs.expn(2, x), (0.5,), {"expn"}),
    (fs.sici, (0.5,), {"si", "ci"}), (fs.fresnel, (0.5,), {"fresnel"}), (fs.spence, (0.5,), {"spence"}),
    (fs.dawsn, (0.5,), {"dawsn"}), (fs.wofz, (0.5 + 0.5j,), {"wofz"})])
def test_one_card_no_custom_jvp(f, args, prims):
    args = [np.asarray(a) for a in args]
    text = str(funcgrad.make_jaxpr(f)(*args))
    assert "custom_jvp" not in text
    for p in prims:
        assert f" {p}" in text or f"= {p}" in text or text.count(p), (p, text)


# --- xlogy / xlog1py at x == 0 --------------------------------------------------------------------

def _grads(f, x, y):
    gx = funcgrad.grad(f, argnums=0)(x, y)
    gy = funcgrad.grad(f, argnums=1)(x, y)
    return float(gx), float(gy)


def test_xlogy_gradients_at_zero():
    # d/dx x log y = log y (also at x == 0, for y > 0); d/dy = x / y = 0 at x == 0
    assert _grads(fs.xlogy, 0.0, 2.0) == (pytest.approx(math.log(2.0)), 0.0)
    assert _grads(fs.xlogy, 0.0, 0.0) == (0.0, 0.0)        # finite where log y is not
    assert _grads(fs.xlogy, 0.0, -1.0) == (0.0, 0.0)
    assert _grads(fs.xlogy, 0.0, np.inf)[1] == 0.0
    assert _grads(fs.xlogy, 1.5, 3.0) == (pytest.approx(math.log(3.0)), pytest.approx(0.5))
    # the mixed second derivative is 1 / y at x == 0 too
    mixed = funcgrad.grad(lambda y: funcgrad.grad(fs.xlogy)(0.0, y))(4.0)
    assert float(mixed) == pytest.approx(0.25)
    mixed2 = funcgrad.grad(lambda x: funcgrad.grad(fs.xlogy, argnums=1)(x, 4.0))(0.0)
    assert float(mixed2) == pytest.approx(0.25)
    assert float(fs.xlogy(0.0, 0.0)) == 0.0 and float(fs.xlogy(0.0, np.nan)) == 0.0


def test_xlog1py_gradients_at_zero():
    assert _grads(fs.xlog1py, 0.0, 1.0) == (pytest.approx(math.log(2.0)), 0.0)
    assert _grads(fs.xlog1py, 0.0, -1.0) == (0.0, 0.0)
    assert _grads(fs.xlog1py, 0.0, -2.0) == (0.0, 0.0)
    assert _grads(fs.xlog1py, 2.0, 1.0) == (pytest.approx(math.log(2.0)), pytest.approx(1.0))
    mixed = funcgrad.grad(lambda y: funcgrad.grad(fs.xlog1py)(0.0, y))(3.0)
    assert float(mixed) == pytest.approx(0.25)


_ENTR_X = np.array([0.0, -0.0, 1e-300, 0.5, 2.0, -1.0, np.inf])


def _entr_derivs(f, x):
    d1 = funcgrad.vmap(funcgrad.grad(f))(x)
    d2 = funcgrad.vmap(funcgrad.grad(funcgrad.grad(f)))(x)
    t1 = funcgrad.jvp(f, (x,), (jnp.ones_like(x),))[1]
    t2 = funcgrad.jvp(lambda a: funcgrad.jvp(f, (a,), (jnp.ones_like(a),))[1], (x,), (jnp.ones_like(x),))[1]
    return [np.asarray(v) for v in (d1, d2, t1, t2)]


def test_entr_derivatives_at_zero_are_the_one_sided_limits():
    # entr' = -(log x + 1) -> +inf and entr'' = -1/x -> -inf (+inf at -0.0, as -1/x); below 0, where entr is
    # -inf, JAX's select(x < 0, -inf, ...) gives 0 for both
    with funcgrad.enable_x64():
        x = jnp.asarray(_ENTR_X)
        d1, d2, t1, t2 = _entr_derivs(fs.entr, x)
    want1 = np.array([np.inf, np.inf, -math.log(1e-300) - 1, -math.log(0.5) - 1, -math.log(2.0) - 1, 0.0, -np.inf])
    want2 = np.array([-np.inf, np.inf, -1e300, -2.0, -0.5, 0.0, -0.0])
    for got, want in ((d1, want1), (t1, want1), (d2, want2), (t2, want2)):
        np.testing.assert_allclose(got, want, rtol=1e-15)
    v = np.asarray(fs.entr(x))
    assert v[0] == 0 and np.signbit(v[0]) and v[5] == -np.inf and v[6] == -np.inf   # (-0.0 at 0, as JAX's)


def test_entr_derivatives_match_jax():
    jax = pytest.importorskip("jax")
    jss = pytest.importorskip("jax.scipy.special")
    prev = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", True)
    try:
        xj = jax.numpy.asarray(_ENTR_X)
        want = [np.asarray(jax.vmap(jax.grad(jss.entr))(xj)), np.asarray(jax.vmap(jax.grad(jax.grad(jss.entr)))(xj)),
                np.asarray(jax.jvp(jss.entr, (xj,), (jax.numpy.ones_like(xj),))[1])]
    finally:
        jax.config.update("jax_enable_x64", prev)
    with funcgrad.enable_x64():
        got = _entr_derivs(fs.entr, jnp.asarray(_ENTR_X))
    # (below 0 JAX's grad is NaN and its jvp 0: the transposed select multiplies a zero cotangent by
    # log(x) + 1 = NaN; entr is -inf there, with no derivative, and funcgrad's "jax" convention is 0)
    inside = _ENTR_X >= 0
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g[inside], w[inside])


# --- ndtri ----------------------------------------------------------------------------------------

def test_ndtri_ends():
    v = np.asarray(fs.ndtri(np.array([0.0, 1.0, -0.5, 1.5])))
    assert v[0] == -np.inf and v[1] == np.inf and np.isnan(v[2:]).all()
    g = funcgrad.vmap(funcgrad.grad(fs.ndtri))(np.array([0.0, 1.0, 0.5]))
    assert np.asarray(g)[0] == np.inf and np.asarray(g)[1] == np.inf  # (JAX's polynomial gives 0 there)
    assert float(np.asarray(g)[2]) == pytest.approx(math.sqrt(2 * math.pi))
    p = np.array([1e-300, 1e-20, 0.3, 0.999])
    np.testing.assert_allclose(np.asarray(funcgrad.vmap(funcgrad.grad(fs.ndtri))(p)),
                               np.sqrt(2 * np.pi) * np.exp(0.5 * ss.ndtri(p) ** 2), rtol=1e-12)


# --- expn: the order is not differentiable ---------------------------------------------------------

def test_expn_order_has_zero_derivative_and_x_derivative():
    assert float(funcgrad.grad(fs.expn, argnums=0)(2.0, 1.5)) == 0.0
    _, t = funcgrad.jvp(fs.expn, (np.float64(2.0), np.float64(1.5)), (np.float64(1.0), np.float64(0.0)))
    assert float(t) == 0.0
    x = np.array([0.3, 1.0, 2.5, 7.0])
    for n in (1, 2, 3, 5):
        g = funcgrad.vmap(funcgrad.grad(lambda x: fs.expn(n, x)))(x)
        np.testing.assert_allclose(np.asarray(g), -ss.expn(n - 1, x), rtol=1e-12)
    # n = 0: -E_{-1}(x) = -e^-x (x + 1) / x^2 where JAX's domain defines E_{-1} (x > 1), NaN below, as JAX's rule
    g0 = np.asarray(funcgrad.vmap(funcgrad.grad(lambda x: fs.expn(0, x)))(x))
    np.testing.assert_allclose(g0[x > 1], (-np.exp(-x) * (x + 1) / x ** 2)[x > 1], rtol=1e-12)
    assert np.isnan(g0[x <= 1]).all()


# --- sici, fresnel, spence, dawsn, exp1, expi -----------------------------------------------------

def test_si_derivatives_at_zero():
    si = lambda x: fs.sici(x)[0]  # noqa: E731
    assert float(funcgrad.grad(si)(0.0)) == 1.0
    assert float(funcgrad.grad(funcgrad.grad(si))(0.0)) == 0.0
    assert float(funcgrad.grad(funcgrad.grad(funcgrad.grad(si)))(0.0)) == pytest.approx(-1 / 3)
    assert float(funcgrad.grad(funcgrad.grad(si))(1e-300)) == pytest.approx(-1e-300 / 3)  # finite near 0
    assert float(funcgrad.grad(lambda x: fs.sici(x)[1])(0.0)) == np.inf
    assert np.asarray(fs.sici(np.inf)[0]) == math.pi / 2


def test_spence_derivative_through_one():
    g = funcgrad.vmap(funcgrad.grad(fs.spence))(np.array([1.0, 1 + 1e-9, 0.95, 1.2, 3.0]))
    x = np.array([1.0, 1 + 1e-9, 0.95, 1.2, 3.0])
    with np.errstate(all="ignore"):
        expect = np.where(x == 1, -1.0, np.log(x) / (1 - x))
    np.testing.assert_allclose(np.asarray(g), expect, rtol=1e-9)
    assert float(funcgrad.grad(funcgrad.grad(fs.spence))(1.0)) == pytest.approx(0.5)  # d/dx -log1p(w)/w


def test_derivatives_against_scipy():
    x = np.array([0.2, 0.9, 1.1, 3.0, 7.5])
    np.testing.assert_allclose(np.asarray(funcgrad.vmap(funcgrad.grad(fs.exp1))(x)), -np.exp(-x) / x, rtol=1e-13)
    xe = np.concatenate([-x, x])
    np.testing.assert_allclose(np.asarray(funcgrad.vmap(funcgrad.grad(fs.expi))(xe)), np.exp(xe) / xe, rtol=1e-13)
    xd = np.array([-4.0, -0.5, 0.0, 0.7, 6.0])
    np.testing.assert_allclose(np.asarray(funcgrad.vmap(funcgrad.grad(fs.dawsn))(xd)), 1 - 2 * xd * ss.dawsn(xd),
                               rtol=1e-12, atol=1e-15)
    s, c = funcgrad.jvp(fs.fresnel, (xd,), (np.ones_like(xd),))[1]
    np.testing.assert_allclose(np.asarray(s), np.sin(np.pi / 2 * xd ** 2), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(np.asarray(c), np.cos(np.pi / 2 * xd ** 2), rtol=1e-13, atol=1e-15)
    # reverse mode through one of fresnel's two results only
    np.testing.assert_allclose(np.asarray(funcgrad.vmap(funcgrad.grad(lambda v: fs.fresnel(v)[1]))(xd)),
                               np.cos(np.pi / 2 * xd ** 2), rtol=1e-13, atol=1e-15)


# --- wofz: complex ---------------------------------------------------------------------------------

def test_wofz_complex_derivative():
    z = np.array([0.5 + 0.3j, -1.2 + 2.0j, 0.7 - 1.1j, 3.0 + 0.0j], np.complex128)
    w = np.asarray(fs.wofz(z))
    np.testing.assert_allclose(w, ss.wofz(z), rtol=1e-13)
    dw = -2 * z * ss.wofz(z) + 2j / np.sqrt(np.pi)
    for t in (1.0, 1j):  # holomorphic: the tangent in any complex direction is f'(z) t
        _, tz = funcgrad.jvp(fs.wofz, (z,), (np.full_like(z, t),))
        np.testing.assert_allclose(np.asarray(tz), dw * t, rtol=1e-12)
    h = 1e-6  # against central differences of scipy's function
    np.testing.assert_allclose(dw, (ss.wofz(z + h) - ss.wofz(z - h)) / (2 * h), rtol=1e-7)
    # vjp is the transpose without conjugation (JAX's convention): g * f'(z)
    _, pull = funcgrad.vjp(fs.wofz, jnp.asarray(z))
    np.testing.assert_allclose(np.asarray(pull(jnp.ones_like(jnp.asarray(z)))[0]), dw, rtol=1e-12)
    assert fs.wofz(np.float32(0.5)).dtype == np.complex64
    assert np.dtype(fs.wofz(np.array([1, 2])).dtype).kind == "c"


# --- float32: the kernels compute in float64 -------------------------------------------------------

@pytest.mark.parametrize("name,args", [
    ("xlogy", (np.linspace(-3, 3, 50), np.linspace(0.1, 5, 50))),
    ("xlog1py", (np.linspace(-3, 3, 50), np.linspace(-0.9, 5, 50))),
    ("ndtri", (np.linspace(0.001, 0.999, 50),)), ("exp1", (np.linspace(0.05, 30, 50),)),
    ("expi", (np.linspace(-30, 60, 50),)), ("spence", (np.linspace(0, 10, 50),)),
    ("dawsn", (np.linspace(-10, 10, 50),)), ("expn", (np.full(50, 3.0), np.linspace(0.05, 10, 50))),
])
def test_float32_correctly_rounded(name, args):
    a32 = [a.astype(np.float32) for a in args]
    got = np.asarray(getattr(fs, name)(*a32))
    assert got.dtype == np.float32
    exp = getattr(ss, name)(*[a.astype(np.float64) for a in a32])
    np.testing.assert_allclose(got, exp.astype(np.float32), rtol=1.2e-7, atol=1e-38)


def test_transforms_agree():
    x = np.linspace(0.1, 3, 7)
    for f in (fs.exp1, fs.spence, fs.dawsn, fs.expi, lambda v: fs.sici(v)[1],
              lambda v: fs.fresnel(v)[0], lambda v: fs.xlogy(v, v + 1), lambda v: fs.expn(3, v)):
        np.testing.assert_allclose(np.asarray(funcgrad.jit(f)(x)), np.asarray(f(x)), rtol=1e-15)
        np.testing.assert_allclose(np.asarray(funcgrad.vmap(f)(x)), np.asarray(f(x)), rtol=1e-15)
        funcgrad.testing.check_grads(f, (x,), order=2)
