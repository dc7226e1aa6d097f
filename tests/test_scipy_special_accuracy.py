"""The accuracy of the later funcgrad.scipy.special functions against SciPy (expn, sici, fresnel, spence,
hyp1f1, hyp2f1, lpmn / lpmn_values, sph_harm_y, wofz, dawsn, owens_t, boxcox, comb, loggamma, erfcx): float64
values at tight tolerances, float32 at ~1e-5, edge values, jit == eager, vmap, and derivatives (exact rules
against finite differences)."""
import warnings

import numpy as np
import pytest
import scipy.special as ss
from hypothesis import given
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as jnp
import funcgrad.scipy.special as fs
from funcgrad.testing import check_grads

RNG = np.random.default_rng(7)


@pytest.fixture
def x64():
    funcgrad.config.update("enable_x64", True)
    yield
    funcgrad.config.update("enable_x64", False)


def _tuple(v):
    return v if isinstance(v, tuple) else (v,)


def compare(ours, theirs, args, rtol, atol=0.0, dtype=np.float64):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # SciPy's "n truncated to an integer"
        exp = _tuple(theirs(*[np.asarray(a, np.float64) if isinstance(a, np.ndarray) else a for a in args]))
    got = _tuple(ours(*args))
    assert len(got) == len(exp)
    for g, e in zip(got, exp):
        g = np.asarray(g)
        assert g.dtype == dtype
        np.testing.assert_allclose(g, np.asarray(e, np.float64), rtol=rtol, atol=atol)


X_EXPN = np.concatenate([np.linspace(0.01, 5, 120), np.geomspace(5, 700, 60), [1e-10, 0.999, 1.0, 1.001]])
X_SICI = np.concatenate([np.linspace(-30, 30, 241), np.geomspace(1e-8, 1e4, 80), [3.9999, 4.0, 4.0001]])
X_FRES = np.concatenate([np.linspace(-30, 30, 241), np.geomspace(1e-8, 30, 60), [1.7999, 1.8, 1.8001]])
X_SPENCE = np.concatenate([np.linspace(0, 5, 201), np.geomspace(1e-10, 1e10, 120), [0.5, 2.0, 1.0]])


# --- float64 values ---------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 10, 30])
def test_expn_float64(x64, n):
    compare(fs.expn, ss.expn, (n, X_EXPN), rtol=1e-13)


def test_expn_broadcast_and_edges(x64):
    n = np.array([[0.0], [1.0], [2.0], [4.0]])
    x = np.array([0.0, 1e-300, 0.5, 3.0, 750.0, np.inf, -1.0, np.nan])
    compare(fs.expn, ss.expn, (n, x), rtol=1e-13)
    assert np.isnan(np.asarray(fs.expn(np.nan, 1.0)))


def test_expn_real_and_negative_orders_follow_jax(x64):
    """jax.scipy.special.expn's domain (SciPy instead truncates n and gives NaN for n < 0): any real order at
    x > 1 (its continued fraction), NaN for n < 0 or a non-integer n at 0 < x <= 1, inf at x = 0 for n <= 1;
    the values against mpmath's expint."""
    mpmath = pytest.importorskip("mpmath")
    n = np.array([-2.0, -1.0, 0.5, 2.7, 7.5])
    x = np.array([1.0001, 1.5, 3.0, 20.0])
    got = np.asarray(fs.expn(n[:, None], x))
    want = np.array([[float(mpmath.expint(a, b)) for b in x] for a in n])
    np.testing.assert_allclose(got, want, rtol=1e-11)
    assert np.isnan(np.asarray(fs.expn(n, 0.5))).all() and np.isnan(np.asarray(fs.expn(n, -2.0))).all()
    np.testing.assert_array_equal(np.asarray(fs.expn(np.array([-2.0, -1.0, 0.5, 1.0]), 0.0)), np.inf)
    np.testing.assert_allclose(np.asarray(fs.expn(np.array([1.5, 2.0, 2.7]), 0.0)), [2.0, 1.0, 1 / 1.7], rtol=1e-15)


def test_sici_fresnel_spence_float64(x64):
    compare(fs.sici, ss.sici, (X_SICI,), rtol=1e-13, atol=2e-15)  # atol: near the zeros of Ci
    compare(fs.fresnel, ss.fresnel, (X_FRES,), rtol=1e-13)
    compare(fs.spence, ss.spence, (X_SPENCE,), rtol=1e-13, atol=1e-15)


def test_edges_match_scipy(x64):
    e = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1e-300, 1e300])
    compare(fs.sici, ss.sici, (e,), rtol=1e-14)
    compare(fs.fresnel, ss.fresnel, (e,), rtol=1e-14)
    compare(fs.spence, ss.spence, (e,), rtol=1e-14)


def test_fresnel_large_arguments(x64):
    # the phase pi x^2 / 2 is rounded: accuracy degrades to about 1e-12 at x ~ 1e4
    x = np.geomspace(30, 1e4, 40)
    compare(fs.fresnel, ss.fresnel, (x,), rtol=5e-12)


# --- float32 and integer inputs --------------------------------------------------------------------

def test_float32():
    x = np.linspace(0.05, 20, 60).astype(np.float32)
    compare(lambda v: fs.expn(3, v), lambda v: ss.expn(3, v), (x,), rtol=2e-5, dtype=np.float32)
    xs = np.linspace(-20, 20, 81).astype(np.float32)
    compare(fs.sici, ss.sici, (xs,), rtol=2e-5, atol=2e-6, dtype=np.float32)
    compare(fs.fresnel, ss.fresnel, (xs,), rtol=2e-5, atol=1e-7, dtype=np.float32)
    compare(fs.spence, ss.spence, (x,), rtol=2e-5, atol=1e-6, dtype=np.float32)


def test_integer_inputs_promote():
    # JAX's rule (this module runs with x64 on): Python ints and int64 give the default float, int32 float32
    assert fs.expn(2, 3).dtype == jnp.float64 and fs.expn(np.int32(2), np.int32(3)).dtype == jnp.float32
    assert fs.spence(2).dtype == jnp.float64  # (jax.scipy.special.spence rejects integers)
    assert all(v.dtype == jnp.float64 for v in fs.sici(np.arange(1, 4)))
    assert all(v.dtype == jnp.float32 for v in fs.sici(np.arange(1, 4, dtype=np.int32)))
    assert all(v.dtype == jnp.float64 for v in fs.fresnel(np.arange(1, 4)))  # int64: the default float (JAX)


# --- transforms ------------------------------------------------------------------------------------

def test_jit_and_vmap_match_eager(x64):
    x = jnp.asarray(np.array([0.3, 1.7, 4.5, 9.0]))
    n = jnp.asarray(np.array([0, 1, 3, 6]))
    np.testing.assert_array_equal(funcgrad.jit(fs.expn)(n, x), fs.expn(n, x))
    np.testing.assert_array_equal(funcgrad.vmap(fs.expn)(n, x), fs.expn(n, x))
    for f in (fs.sici, fs.fresnel, fs.spence):
        for a, b in zip(_tuple(funcgrad.jit(f)(x)), _tuple(f(x))):
            np.testing.assert_array_equal(a, b)
        for a, b in zip(_tuple(funcgrad.vmap(f)(x)), _tuple(f(x))):
            np.testing.assert_array_equal(a, b)


# --- derivatives -----------------------------------------------------------------------------------

def test_derivatives(x64):
    x = jnp.asarray(np.array([0.3, 1.7, 5.0, 7.5]))
    check_grads(lambda v: fs.expn(1, v), (x,), order=1)
    # E_1'' = E_{-1}, which JAX's domain (and so funcgrad's) defines at x > 1 only
    check_grads(lambda v: fs.expn(1, v), (jnp.asarray(np.array([1.7, 5.0, 7.5])),), order=2)
    check_grads(lambda v: fs.expn(4, v), (x,), order=1)
    check_grads(fs.sici, (x,), order=1)
    check_grads(fs.fresnel, (x,), order=2)
    check_grads(fs.spence, (jnp.asarray(np.array([0.2, 1.0, 1.5, 6.0])),), order=2)


def test_derivative_values(x64):
    g = funcgrad.grad(lambda v: fs.expn(3, v))(1.3)
    np.testing.assert_allclose(float(g), -ss.expn(2, 1.3), rtol=1e-13)
    g = funcgrad.grad(lambda v: fs.expn(0, v))(1.3)
    np.testing.assert_allclose(float(g), -np.exp(-1.3) * 2.3 / 1.69, rtol=1e-13)
    assert float(funcgrad.grad(fs.spence)(1.0)) == -1.0
    assert float(funcgrad.grad(lambda v: fs.sici(v)[0])(0.0)) == 1.0
    s, c = funcgrad.jacfwd(fs.fresnel)(jnp.asarray(0.8))
    np.testing.assert_allclose([float(s), float(c)], [np.sin(np.pi * 0.32), np.cos(np.pi * 0.32)], rtol=1e-14)


@given(st.floats(0.01, 50.0), st.integers(0, 12))
def test_expn_hypothesis(x, n):
    funcgrad.config.update("enable_x64", True)
    try:
        np.testing.assert_allclose(float(fs.expn(n, x)), ss.expn(n, x), rtol=1e-12)
    finally:
        funcgrad.config.update("enable_x64", False)


@given(st.floats(-1e3, 1e3))
def test_sici_fresnel_hypothesis(x):
    funcgrad.config.update("enable_x64", True)
    try:
        for a, b in zip(fs.sici(x), ss.sici(x)):
            np.testing.assert_allclose(float(a), b, rtol=1e-12, atol=1e-15)
        for a, b in zip(fs.fresnel(x), ss.fresnel(x)):
            np.testing.assert_allclose(float(a), b, rtol=1e-12)
    finally:
        funcgrad.config.update("enable_x64", False)


def test_complex_input_rejected():
    for f in (fs.sici, fs.fresnel, fs.spence, lambda v: fs.expn(1, v), lambda v: fs.hyp1f1(1.0, 2.0, v),
              lambda v: fs.hyp2f1(1.0, 2.0, 3.0, v)):
        with pytest.raises(TypeError):
            f(np.array([1 + 1j]))


# --- hyp1f1 / hyp2f1 ---------------------------------------------------------------------------------

def test_hyp1f1_float64(x64):
    r = np.random.default_rng(11)
    a = r.uniform(0.1, 20, 200)
    b = r.uniform(0.1, 20, 200)
    compare(fs.hyp1f1, ss.hyp1f1, (a, b, r.uniform(0, 50, 200)), rtol=1e-13)
    compare(fs.hyp1f1, ss.hyp1f1, (a, a + r.uniform(0, 20, 200), r.uniform(-50, 0, 200)), rtol=1e-13)
    far = r.uniform(250, 700, 200) * r.choice([-1.0, 1.0], 200)  # the large-argument expansion
    compare(fs.hyp1f1, ss.hyp1f1, (a, b, far), rtol=1e-12)
    an = r.uniform(-10, 0, 200)  # alternating terms: a few digits are lost
    compare(fs.hyp1f1, ss.hyp1f1, (an, b, r.uniform(-30, 30, 200)), rtol=1e-9)


def test_hyp1f1_edges(x64):
    a = np.array([-2.0, -3.0, 0.0, 1.0, 1.0, 1.5, 2.0])
    b = np.array([1.0, 2.5, 3.0, 0.0, -1.0, 1.5, 3.0])
    x = np.array([3.0, -4.0, 7.0, 0.5, 0.5, 2.0, 0.0])
    compare(fs.hyp1f1, ss.hyp1f1, (a, b, x), rtol=1e-13)
    assert np.isnan(float(fs.hyp1f1(np.nan, 1.0, 1.0)))


def test_hyp2f1_float64(x64):
    r = np.random.default_rng(12)
    a, b = r.uniform(-5, 5, 200), r.uniform(-5, 5, 200)
    c = r.uniform(0.1, 10, 200)
    compare(fs.hyp2f1, ss.hyp2f1, (a, b, c, r.uniform(-1, 0.6, 200)), rtol=1e-13, atol=1e-14)
    compare(fs.hyp2f1, ss.hyp2f1, (a, b, c, r.uniform(-20, 0.95, 200)), rtol=5e-11, atol=1e-14)


def test_hyp2f1_edges(x64):
    a = np.array([1.0, 0.5, -2.0, 1.0, 1.0, 0.5, 2.0, 1.0, -3.0])
    b = np.array([1.0, 0.3, 0.3, 1.0, 1.0, 0.3, 1.0, 2.0, 1.5])
    c = np.array([2.0, 1.2, 1.2, -1.0, 3.0, 0.2, 3.0, 4.0, 2.0])
    x = np.array([1.5, 1.0, 2.0, 0.5, 0.9, 1.0, 0.5, 0.0, -7.0])
    compare(fs.hyp2f1, ss.hyp2f1, (a, b, c, x), rtol=1e-13)
    # c - a - b an integer: the series is used, slower to converge towards 1
    compare(fs.hyp2f1, ss.hyp2f1, (np.array([1.0, 0.5]), np.array([1.0, 0.5]), np.array([2.0, 3.0]),
                                   np.array([0.9, -0.8])), rtol=1e-10)


def test_hyp_float32_and_transforms(x64):
    y = np.linspace(-10, 10, 21).astype(np.float32)
    f32 = np.float32
    funcgrad.config.update("enable_x64", False)
    compare(fs.hyp1f1, ss.hyp1f1, (f32(1.5), f32(2.5), y), rtol=1e-5, dtype=np.float32)
    compare(fs.hyp2f1, ss.hyp2f1, (f32(1.5), f32(0.7), f32(2.5), np.linspace(-10, 0.9, 21).astype(f32)),
            rtol=1e-5, dtype=np.float32)
    funcgrad.config.update("enable_x64", True)
    a = jnp.asarray(np.array([0.5, 1.5, 2.5]))
    x = jnp.asarray(np.array([-3.0, 0.4, 2.5]))
    np.testing.assert_array_equal(funcgrad.jit(fs.hyp1f1)(a, a + 1, x), fs.hyp1f1(a, a + 1, x))
    np.testing.assert_array_equal(funcgrad.vmap(fs.hyp1f1)(a, a + 1, x), fs.hyp1f1(a, a + 1, x))
    np.testing.assert_array_equal(funcgrad.jit(fs.hyp2f1)(a, a, a + 1, x / 5), fs.hyp2f1(a, a, a + 1, x / 5))
    np.testing.assert_array_equal(funcgrad.vmap(fs.hyp2f1)(a, a, a + 1, x / 5), fs.hyp2f1(a, a, a + 1, x / 5))


def _fd(f, args, i, h=1e-6):
    up = list(args)
    dn = list(args)
    up[i] += h
    dn[i] -= h
    return (f(*up) - f(*dn)) / (2 * h)


@pytest.mark.parametrize("args", [(1.5, 2.5, 3.0), (1.5, 2.5, -3.0), (0.7, 4.0, 30.0), (3.0, 1.2, -10.0),
                                  (2.0, 3.0, 300.0)])
def test_hyp1f1_derivatives(x64, args):
    g = funcgrad.grad(fs.hyp1f1, argnums=(0, 1, 2))(*args)
    a, b, x = args
    np.testing.assert_allclose(float(g[2]), a / b * ss.hyp1f1(a + 1, b + 1, x), rtol=1e-12)
    for i in range(2):  # the parameter derivatives against SciPy by central differences
        np.testing.assert_allclose(float(g[i]), _fd(ss.hyp1f1, args, i), rtol=1e-7)


@pytest.mark.parametrize("args", [(1.5, 0.7, 2.5, 0.3), (1.5, 0.7, 2.5, 0.8), (1.5, 0.7, 2.5, -3.0),
                                  (-1.3, 2.2, 4.1, 0.9), (2.0, 1.0, 3.0, 0.5)])
def test_hyp2f1_derivatives(x64, args):
    g = funcgrad.grad(fs.hyp2f1, argnums=(0, 1, 2, 3))(*args)
    a, b, c, x = args
    np.testing.assert_allclose(float(g[3]), a * b / c * ss.hyp2f1(a + 1, b + 1, c + 1, x), rtol=1e-12)
    for i in range(3):
        np.testing.assert_allclose(float(g[i]), _fd(ss.hyp2f1, args, i), rtol=1e-7)


def test_hyp_check_grads(x64):
    check_grads(lambda v: fs.hyp1f1(1.5, 2.5, v), (jnp.asarray(np.array([-3.0, 0.4, 2.5])),), order=2)
    check_grads(lambda v: fs.hyp2f1(1.5, 0.7, 2.5, v), (jnp.asarray(np.array([-3.0, 0.3, 0.8])),), order=1)


@given(st.floats(0.1, 10.0), st.floats(0.1, 10.0), st.floats(0.0, 40.0))
def test_hyp1f1_hypothesis(a, b, x):
    funcgrad.config.update("enable_x64", True)
    try:
        np.testing.assert_allclose(float(fs.hyp1f1(a, b, x)), ss.hyp1f1(a, b, x), rtol=1e-12)
    finally:
        funcgrad.config.update("enable_x64", False)


# --- lpmn / lpmn_values / sph_harm_y -----------------------------------------------------------------

def _scipy_lpmn(l_max, z):
    """SciPy's lpmn (removed in SciPy 1.17) rebuilt from assoc_legendre_p_all: (m, l, z) tables."""
    vals, ders = ss.assoc_legendre_p_all(l_max, l_max, z, diff_n=1)
    v = np.zeros((l_max + 1, l_max + 1, len(z)))
    d = np.zeros_like(v)
    for m in range(l_max + 1):
        for l in range(m, l_max + 1):
            v[m, l], d[m, l] = vals[l, m], ders[l, m]
    return v, d


def _norm(l_max):
    from math import factorial, pi, sqrt
    return np.array([[sqrt((2 * l + 1) * factorial(l - m) / (4 * pi * factorial(l + m))) if m <= l else 0.0
                      for l in range(l_max + 1)] for m in range(l_max + 1)])[..., None]


@pytest.mark.parametrize("l_max", [0, 1, 3, 8])
def test_lpmn_float64(x64, l_max):
    z = np.linspace(-0.99, 0.99, 23)
    v, d = fs.lpmn(l_max, l_max, z)
    ev, ed = _scipy_lpmn(l_max, z)
    assert v.shape == d.shape == (l_max + 1, l_max + 1, 23) and v.dtype == jnp.float64
    scale = np.max(np.abs(ev), axis=-1, keepdims=True) + 1  # relative to each table entry's size
    np.testing.assert_allclose(np.asarray(v) / scale, ev / scale, rtol=0, atol=1e-14)
    dscale = np.max(np.abs(ed), axis=-1, keepdims=True) + 1
    np.testing.assert_allclose(np.asarray(d) / dscale, ed / dscale, rtol=0, atol=1e-13)
    np.testing.assert_allclose(np.asarray(fs.lpmn_values(l_max, l_max, z, False)), np.asarray(v), rtol=0, atol=0)
    np.testing.assert_allclose(np.asarray(fs.lpmn_values(l_max, l_max, z, True)), ev * _norm(l_max),
                               rtol=1e-13, atol=1e-15)


def test_lpmn_high_degree_float32():
    # normalised recurrences: no overflow in float32 even where (l + m)! would
    z = np.linspace(-0.9, 0.9, 11).astype(np.float32)
    got = fs.lpmn_values(40, 40, z, True)
    assert got.dtype == jnp.float32 and np.all(np.isfinite(np.asarray(got)))
    ev, _ = _scipy_lpmn(8, z.astype(np.float64))
    np.testing.assert_allclose(np.asarray(got)[:9, :9], ev * _norm(8), rtol=1e-5, atol=1e-6)
    v, d = fs.lpmn(3, 3, z)
    ev, ed = _scipy_lpmn(3, z.astype(np.float64))
    np.testing.assert_allclose(np.asarray(v), ev, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(d), ed, rtol=1e-5, atol=1e-4)


def test_lpmn_edges_and_errors(x64):
    v = fs.lpmn_values(2, 2, np.array([-1.0, 1.0, 1.5, np.nan]), False)
    np.testing.assert_allclose(np.asarray(v)[:, :, :2], _scipy_lpmn(2, np.array([-1.0, 1.0]))[0], atol=1e-15)
    assert np.all(np.isnan(np.asarray(v)[:, :, 2:]))
    with pytest.raises(NotImplementedError, match="m != n"):
        fs.lpmn(2, 3, np.array([0.5]))
    with pytest.raises(ValueError, match="1D"):
        fs.lpmn(2, 2, np.array([[0.5]]))
    with pytest.raises(TypeError, match="float32 or float64"):
        fs.lpmn_values(2, 2, np.array([0, 1]), True)
    with pytest.raises(ValueError, match="non-negative"):
        fs.lpmn(-1, -1, np.array([0.5]))
    with pytest.raises(TypeError, match="concrete Python ints"):
        fs.lpmn(2.0, 2, np.array([0.5]))


def test_lpmn_transforms(x64):
    z = jnp.asarray(np.linspace(-0.8, 0.8, 5))
    for a, b in zip(funcgrad.jit(lambda v: fs.lpmn(4, 4, v))(z), fs.lpmn(4, 4, z)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-15, atol=0)
    zb = jnp.stack([z, z / 2])
    batched = funcgrad.vmap(lambda v: fs.lpmn_values(3, 3, v, True))(zb)
    assert batched.shape == (2, 4, 4, 5)
    for i in range(2):
        np.testing.assert_allclose(np.asarray(batched[i]), np.asarray(fs.lpmn_values(3, 3, zb[i], True)),
                                   rtol=1e-15)
    # the z-derivative of the values (through the recurrences) equals lpmn's derivative table
    jac = funcgrad.jacfwd(lambda v: jnp.sum(fs.lpmn_values(4, 4, v, False), axis=()))(z)
    diag = np.einsum("mlkk->mlk", np.asarray(jac))
    np.testing.assert_allclose(diag, np.asarray(fs.lpmn(4, 4, z)[1]), rtol=1e-12, atol=1e-12)


def test_sph_harm_y_float64(x64):
    r = np.random.default_rng(5)
    n = r.integers(0, 12, 300)
    m = r.integers(-12, 13, 300)  # includes |m| > n, where both give 0
    th, ph = r.uniform(0, np.pi, 300), r.uniform(0, 2 * np.pi, 300)
    got = fs.sph_harm_y(n, m, th, ph)
    assert got.dtype == jnp.complex128
    np.testing.assert_allclose(np.asarray(got), ss.sph_harm_y(n, m, th, ph), rtol=1e-12, atol=1e-14)
    # SciPy's old argument order: (m, n, azimuth, polar)
    np.testing.assert_allclose(np.asarray(fs.sph_harm(m, n, ph, th)), ss.sph_harm_y(n, m, th, ph),
                               rtol=1e-12, atol=1e-14)
    # broadcasting, the poles
    got = fs.sph_harm_y(np.array([[2], [3]]), np.array([1, 0, -2]), np.array([0.0, np.pi, 1.0]), 0.3)
    np.testing.assert_allclose(np.asarray(got), ss.sph_harm_y(np.array([[2], [3]]), np.array([1, 0, -2]),
                                                              np.array([0.0, np.pi, 1.0]), 0.3), atol=1e-15)


def test_sph_harm_y_float32_jit_vmap_grad(x64):
    n, m = jnp.asarray(np.array([1, 2, 4, 6])), jnp.asarray(np.array([-1, 2, 0, -3]))
    th, ph = np.array([0.3, 1.2, 2.0, 2.9]), np.array([0.1, 2.0, 4.0, 6.0])
    f32 = fs.sph_harm_y(n, m, th.astype(np.float32), ph.astype(np.float32))
    assert f32.dtype == jnp.complex64
    np.testing.assert_allclose(np.asarray(f32), ss.sph_harm_y(n, m, th, ph), rtol=2e-5, atol=1e-6)
    f = funcgrad.jit(lambda t, p: fs.sph_harm_y(n, m, t, p, n_max=6))
    np.testing.assert_allclose(np.asarray(f(th, ph)), np.asarray(fs.sph_harm_y(n, m, th, ph)), rtol=1e-15)
    v = funcgrad.vmap(lambda a, b, t, p: fs.sph_harm_y(a, b, t, p, n_max=6))(n, m, jnp.asarray(th), jnp.asarray(ph))
    np.testing.assert_allclose(np.asarray(v), np.asarray(fs.sph_harm_y(n, m, th, ph)), rtol=1e-15)
    with pytest.raises(TypeError, match="n_max"):
        funcgrad.jit(lambda a, t: fs.sph_harm_y(a, m, t, ph))(n, th)
    with pytest.raises(NotImplementedError):
        fs.sph_harm_y(n, m, th, ph, diff_n=1)
    with pytest.raises(TypeError, match="integer"):
        fs.sph_harm_y(np.array([1.0]), m, th, ph)
    # d/dtheta of the real part against finite differences
    check_grads(lambda t: jnp.real(fs.sph_harm_y(n, m, t, jnp.asarray(ph))), (jnp.asarray(th),), order=1)
    # degrees above n_max are clipped to it (as JAX)
    np.testing.assert_allclose(np.asarray(fs.sph_harm_y(np.array([5]), np.array([1]), 0.7, 0.2, n_max=3)),
                               ss.sph_harm_y(3, 1, 0.7, 0.2), rtol=1e-13)


# --- wofz, dawsn, owens_t, boxcox, comb, loggamma, erfcx ----------------------------------------------

def test_wofz(x64):
    r = np.random.default_rng(21)
    z = r.normal(0, 2, 400) + 1j * r.normal(0, 2, 400)
    got = fs.wofz(z)
    assert got.dtype == jnp.complex128
    np.testing.assert_allclose(np.asarray(got), ss.wofz(z), rtol=3e-14)
    x = np.concatenate([np.linspace(-10, 10, 101), [0.0, 1e10, np.inf, -np.inf, np.nan]])
    got = fs.wofz(x)
    assert got.dtype == jnp.complex128
    np.testing.assert_allclose(np.asarray(got), ss.wofz(x), rtol=1e-14, atol=1e-30)
    np.testing.assert_allclose(np.asarray(fs.wofz(np.array([1e10j, -3j]))), ss.wofz(np.array([1e10j, -3j])),
                               rtol=1e-14)
    funcgrad.config.update("enable_x64", False)
    g32 = fs.wofz(z.astype(np.complex64))
    assert g32.dtype == jnp.complex64 and fs.wofz(np.float32(1.0)).dtype == jnp.complex64
    np.testing.assert_allclose(np.asarray(g32), ss.wofz(z), rtol=1e-5)
    funcgrad.config.update("enable_x64", True)
    # holomorphic derivative w' = -2 z w + 2i / sqrt(pi), against SciPy by central differences along t
    z0 = jnp.asarray(np.array([0.3 + 0.8j, -1.2 - 0.4j]))
    t0 = jnp.asarray(np.array([1.0 + 0.5j, -0.3 + 1j]))
    _, tout = funcgrad.jvp(fs.wofz, (z0,), (t0,))
    h = 1e-6
    fd = (ss.wofz(np.asarray(z0) + h * np.asarray(t0)) - ss.wofz(np.asarray(z0) - h * np.asarray(t0))) / (2 * h)
    np.testing.assert_allclose(np.asarray(tout), fd, rtol=1e-8)
    np.testing.assert_array_equal(np.asarray(funcgrad.jit(fs.wofz)(z)), np.asarray(fs.wofz(z)))
    np.testing.assert_array_equal(np.asarray(funcgrad.vmap(fs.wofz)(z)), np.asarray(fs.wofz(z)))


def test_dawsn(x64):
    x = np.concatenate([np.linspace(-10, 10, 401), np.geomspace(1e-300, 1e300, 60),
                        [np.inf, -np.inf, np.nan, 0.0, -0.0]])
    compare(fs.dawsn, ss.dawsn, (x,), rtol=1e-14)
    assert np.signbit(np.asarray(fs.dawsn(-0.0)))
    funcgrad.config.update("enable_x64", False)
    compare(fs.dawsn, ss.dawsn, (np.linspace(-10, 10, 41).astype(np.float32),), rtol=2e-6, dtype=np.float32)
    assert fs.dawsn(np.arange(3)).dtype == jnp.float32
    funcgrad.config.update("enable_x64", True)
    check_grads(fs.dawsn, (jnp.asarray(np.array([-2.0, 0.3, 4.0])),), order=2)
    np.testing.assert_allclose(float(funcgrad.grad(fs.dawsn)(1.3)), 1 - 2.6 * ss.dawsn(1.3), rtol=1e-14)
    xs = jnp.asarray(np.array([-2.0, 0.3, 4.0]))
    np.testing.assert_array_equal(np.asarray(funcgrad.jit(fs.dawsn)(xs)), np.asarray(fs.dawsn(xs)))
    np.testing.assert_array_equal(np.asarray(funcgrad.vmap(fs.dawsn)(xs)), np.asarray(fs.dawsn(xs)))


def test_owens_t(x64):
    r = np.random.default_rng(22)
    h, a = r.uniform(-30, 30, 1000), r.uniform(-10, 10, 1000)
    compare(fs.owens_t, ss.owens_t, (h, a), rtol=2e-13)
    e = np.array([0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.0])
    compare(fs.owens_t, ss.owens_t, (0.5, e), rtol=1e-14)
    compare(fs.owens_t, ss.owens_t, (e, 0.7), rtol=1e-14)
    compare(fs.owens_t, ss.owens_t, (np.array([[0.3], [2.0]]), np.array([0.2, 5.0, -50.0])), rtol=1e-13)
    funcgrad.config.update("enable_x64", False)
    compare(fs.owens_t, ss.owens_t, (h[:50].astype(np.float32) / 5, a[:50].astype(np.float32)), rtol=2e-5,
            atol=1e-8, dtype=np.float32)
    funcgrad.config.update("enable_x64", True)
    check_grads(fs.owens_t, (jnp.asarray(np.array([-2.0, 0.3, 1.5])), jnp.asarray(np.array([0.5, -3.0, 0.9]))),
                order=1)
    # dT/da = e^(-h^2 (1 + a^2) / 2) / (2 pi (1 + a^2))
    np.testing.assert_allclose(float(funcgrad.grad(fs.owens_t, argnums=1)(0.7, 0.4)),
                               np.exp(-0.49 * 1.16 / 2) / (2 * np.pi * 1.16), rtol=1e-13)
    hs, as_ = jnp.asarray(h[:6]), jnp.asarray(a[:6])
    np.testing.assert_allclose(np.asarray(funcgrad.jit(fs.owens_t)(hs, as_)), np.asarray(fs.owens_t(hs, as_)),
                               rtol=1e-15)
    np.testing.assert_allclose(np.asarray(funcgrad.vmap(fs.owens_t)(hs, as_)), np.asarray(fs.owens_t(hs, as_)),
                               rtol=1e-15)


def test_boxcox_comb_loggamma_against_scipy():
    import funcgrad
    import funcgrad.scipy.special as fs
    sps = pytest.importorskip("scipy.special")
    rng = np.random.default_rng(11)
    x = rng.uniform(0.01, 5, 50)
    for lm in (-1.5, -1e-3, 0.0, 0.5, 2.0):
        np.testing.assert_allclose(np.asarray(fs.boxcox(jnp.asarray(x), lm)), sps.boxcox(x, lm), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(fs.boxcox1p(jnp.asarray(x - 0.5), lm)), sps.boxcox1p(x - 0.5, lm),
                                   rtol=1e-12, atol=1e-15)
    assert np.isnan(np.asarray(fs.boxcox(jnp.asarray([-1.0]), 0.5))).all()
    # the lmbda = 0 branch has a finite derivative in lmbda (its limit, log(x)^2 / 2) and in x
    g = funcgrad.grad(lambda lm: fs.boxcox(jnp.asarray(2.0), lm))(jnp.asarray(0.0))
    assert np.isfinite(float(g))
    np.testing.assert_allclose(float(funcgrad.grad(lambda v: fs.boxcox(v, 0.5))(jnp.asarray(4.0))), 4.0 ** -0.5)
    N, k = np.array([5.0, 5.0, 10.0, 3.0, 0.0, 7.5, 4.0]), np.array([2.0, 2.5, 3.0, 5.0, 0.0, 2.0, -1.0])
    np.testing.assert_allclose(np.asarray(fs.comb(jnp.asarray(N), jnp.asarray(k))), sps.comb(N, k), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(fs.comb(jnp.asarray(N), jnp.asarray(k), repetition=True)),
                               sps.comb(N, k, repetition=True), rtol=1e-12)
    z = np.array([-2.5, -1.0, 0.0, 0.5, 3.0, 40.0])
    got = np.asarray(fs.loggamma(jnp.asarray(z)))
    np.testing.assert_array_equal(np.isnan(got), z < 0)
    np.testing.assert_allclose(got[z >= 0], sps.gammaln(z[z >= 0]), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(funcgrad.jit(fs.loggamma)(jnp.asarray(z[3:]))), sps.gammaln(z[3:]),
                               rtol=1e-13)
    with pytest.raises(TypeError, match="complex"):
        fs.loggamma(jnp.asarray([1 + 1j]))


def test_erfcx_card_against_scipy():
    import funcgrad
    import funcgrad.scipy.special as fs
    sps = pytest.importorskip("scipy.special")
    x = np.concatenate([np.linspace(-26, 60, 4001), [0.0, 1e10, 1e200, np.inf, -np.inf, -30.0, np.nan]])
    got, want = np.asarray(fs.erfcx(jnp.asarray(x))), sps.erfcx(x)
    fin = np.isfinite(want) & (want != 0)
    np.testing.assert_allclose(got[fin], want[fin], rtol=4e-15)
    np.testing.assert_array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)])  # 0 at inf, inf below -26.6
    assert np.isnan(got[-1])
    x32 = x[:4001].astype(np.float32)
    g32 = np.asarray(fs.erfcx(jnp.asarray(x32)))
    w32 = sps.erfcx(x32.astype(np.float64))
    ok = w32 < 1e38
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32[ok], w32[ok], rtol=2e-7)
    pts = jnp.asarray(np.array([-2.0, -0.3, 0.0, 0.7, 5.0, 40.0]))
    d = np.asarray(funcgrad.vmap(funcgrad.grad(fs.erfcx))(pts))
    p = np.asarray(pts)
    np.testing.assert_allclose(d, 2 * p * sps.erfcx(p) - 2 / np.sqrt(np.pi), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(funcgrad.jit(fs.erfcx)(pts)), sps.erfcx(p), rtol=4e-15)
