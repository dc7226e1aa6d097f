"""Derivatives and edge values the JAX reference column of the special-points matrix found wrong (issue #20):
each checked against the exact value and, where jax is installed, against JAX (x64)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as jnp
from funcgrad import lax
from funcgrad.scipy import special as jsp


@pytest.fixture(autouse=True)
def _x64():
    prev = funcgrad.config.read("enable_x64")
    funcgrad.config.update("enable_x64", True)
    yield
    funcgrad.config.update("enable_x64", prev)


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def _jvp(f, xs, vs):
    return np.asarray(funcgrad.jvp(f, tuple(jnp.asarray(x) for x in xs), tuple(jnp.asarray(v) for v in vs))[1])


# --- remainder / mod / divmod: d/dx = 1, d/dy = -trunc(x / y) also where the remainder is 0 ----------

X_MULT = np.array([1.0, -1.0, 2.0, 0.5, -2.0, 1.5])
Y_MULT = np.array([0.5, 1.0, -1.0, 0.5, 1.0, -0.5])   # x a multiple of y: remainder 0


@pytest.mark.parametrize("name", ["remainder", "mod"])
def test_remainder_derivative_at_multiples(name):
    f = getattr(jnp, name)
    one, zero = np.ones(6), np.zeros(6)
    np.testing.assert_array_equal(_jvp(f, (X_MULT, Y_MULT), (one, zero)), one)
    np.testing.assert_array_equal(_jvp(f, (X_MULT, Y_MULT), (zero, one)), -(X_MULT / Y_MULT))
    r = np.asarray(f(jnp.asarray(X_MULT), jnp.asarray(Y_MULT)))   # jax.numpy's values: zeros with x's sign
    np.testing.assert_array_equal(r, np.zeros(6))
    np.testing.assert_array_equal(np.signbit(r), np.signbit(X_MULT))
    jax = _jax()
    jf = getattr(jax.numpy, name)
    for v in ((one, zero), (zero, one)):
        want = jax.jvp(jf, (X_MULT, Y_MULT), v)[1]
        np.testing.assert_array_equal(_jvp(f, (X_MULT, Y_MULT), v), np.asarray(want))


def test_divmod_remainder_derivative():
    one, zero = np.ones(6), np.zeros(6)
    got = funcgrad.jvp(lambda a, b: jnp.divmod(a, b)[1], (jnp.asarray(X_MULT), jnp.asarray(Y_MULT)),
                       (jnp.asarray(one), jnp.asarray(zero)))[1]
    np.testing.assert_array_equal(np.asarray(got), one)
    q = funcgrad.jvp(lambda a, b: jnp.divmod(a, b)[0], (jnp.asarray(X_MULT), jnp.asarray(Y_MULT)),
                     (jnp.asarray(one), jnp.asarray(one)))[1]
    np.testing.assert_array_equal(np.asarray(q), zero)   # floor division: derivative 0, as JAX's


# --- modf: the fraction x - trunc(x) has derivative 1, also at negative integers ----------------------

def test_modf_fraction_derivative_and_signs():
    x = np.array([-1.0, -2.0, 2.0, -0.5, 1.5, -0.0, 0.0])
    np.testing.assert_array_equal(_jvp(lambda t: jnp.modf(t)[0], (x,), (np.ones(7),)), np.ones(7))
    frac, whole = jnp.modf(jnp.asarray(x))
    nf, nw = np.modf(x)
    np.testing.assert_array_equal(np.asarray(frac), nf)
    np.testing.assert_array_equal(np.signbit(np.asarray(frac)), np.signbit(nf))
    np.testing.assert_array_equal(np.asarray(whole), nw)
    jax = _jax()
    want = jax.jvp(lambda t: jax.numpy.modf(t)[0], (x,), (np.ones(7),))[1]
    np.testing.assert_array_equal(_jvp(lambda t: jnp.modf(t)[0], (x,), (np.ones(7),)), np.asarray(want))


# --- interp: at a knot the derivative is the slope to its right (the last segment's at xp[-1]) --------

XP, FP = np.array([-1.0, 0.0, 1.0, 2.0]), np.array([0.0, 1.0, -1.0, 3.0])


def test_interp_derivative_at_knots():
    x = np.array([-1.0, 0.0, 1.0, 2.0, 0.5, 3.0, -2.0])
    f = lambda t: jnp.interp(t, jnp.asarray(XP), jnp.asarray(FP))  # noqa: E731
    np.testing.assert_array_equal(np.asarray(f(jnp.asarray(x))), np.interp(x, XP, FP))
    np.testing.assert_array_equal(_jvp(f, (x,), (np.ones(7),)), [1.0, -2.0, 4.0, 4.0, -2.0, 0.0, 0.0])
    jax = _jax()
    want = jax.jvp(lambda t: jax.numpy.interp(t, XP, FP), (x,), (np.ones(7),))[1]
    np.testing.assert_array_equal(_jvp(f, (x,), (np.ones(7),)), np.asarray(want))


# --- unique and the set operations: no derivative without a static size, as in JAX ---------------------

V = np.array([1.0, 3.0, 3.0, -2.0, 0.5])
W = np.array([0.5, 1.0, -1.5, 2.0, 1.0])


@pytest.mark.parametrize("name", ["unique", "unique_values", "union1d", "intersect1d", "setdiff1d", "setxor1d"])
def test_set_operations_have_jax_zero_derivative(name):
    f = getattr(jnp, name)
    call = (lambda a, b: f(a)) if name.startswith("unique") else f
    g = funcgrad.grad(lambda a, b: jnp.sum(jnp.sin(call(a, b))), argnums=(0, 1))(jnp.asarray(V), jnp.asarray(W))
    for gi in g:
        np.testing.assert_array_equal(np.asarray(gi), np.zeros(5))
    jax = _jax()
    jf = getattr(jax.numpy, name)
    jcall = (lambda a, b: jf(a)) if name.startswith("unique") else jf
    want = jax.grad(lambda a, b: jax.numpy.sum(jax.numpy.sin(jcall(a, b))), argnums=(0, 1))(V, W)
    for gi, wi in zip(g, want):
        np.testing.assert_array_equal(np.asarray(gi), np.asarray(wi))


def test_unique_with_size_is_differentiable():
    g = funcgrad.grad(lambda a: jnp.sum(jnp.unique(a, size=4) * jnp.asarray([1.0, 10.0, 100.0, 1000.0])))(
        jnp.asarray(V))
    np.testing.assert_array_equal(np.asarray(g), [100.0, 1000.0, 0.0, 1.0, 10.0])  # first of the tied 3s
    jax = _jax()
    want = jax.grad(lambda a: jax.numpy.sum(jax.numpy.unique(a, size=4) * np.array([1.0, 10.0, 100.0, 1000.0])))(V)
    np.testing.assert_array_equal(np.asarray(g), np.asarray(want))


# --- polygamma with an array of orders (jax.lax.polygamma's signature) --------------------------------

def test_polygamma_array_orders():
    mpmath = pytest.importorskip("mpmath")
    m = np.array([1.5, -1.0, 0.0, 1.0, 2.0, 3.0])
    x = np.array([2.0, 2.0, 2.0, 0.5, 3.5, 6.0])
    got = np.asarray(lax.polygamma(m, jnp.asarray(x)))
    want = [math.nan, math.nan] + [float(mpmath.polygamma(int(k), v)) for k, v in zip(m[2:], x[2:])]
    np.testing.assert_allclose(got, want, rtol=1e-13)
    d = _jvp(lambda t: lax.polygamma(np.ones(6), t), (x,), (np.ones(6),))
    np.testing.assert_allclose(d, [float(mpmath.polygamma(2, v)) for v in x], rtol=1e-13)
    n = np.array([0, 1, 2, 3, 1, -1])
    got = np.asarray(jsp.polygamma(n, jnp.asarray(x)))
    want = [float(mpmath.polygamma(int(k), v)) for k, v in zip(n[:5], x[:5])] + [math.nan]
    np.testing.assert_allclose(got, want, rtol=1e-13)
    with pytest.raises(ValueError, match="integer type"):
        jsp.polygamma(np.ones(6), jnp.asarray(x))
    with pytest.raises(TypeError, match="concrete"):
        funcgrad.jit(lambda k, t: lax.polygamma(k, t))(jnp.ones(6), jnp.asarray(x))
    jax = _jax()
    np.testing.assert_allclose(np.asarray(lax.polygamma(m, jnp.asarray(x))),
                               np.asarray(jax.lax.polygamma(m, x)), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(jsp.polygamma(n, jnp.asarray(x))),
                               np.asarray(jax.scipy.special.polygamma(n, x)), rtol=1e-13)


# --- incomplete gamma and zeta at the edges of their domains --------------------------------------------

def test_igamma_at_a_zero_and_grad_a_outside_domain():
    a = np.array([0.0, 0.0, 0.0, 0.0, 1.0, -1.0, -2.0])
    x = np.array([1.0, 2.0, 0.5, 0.0, 0.0, 0.0, 0.0])
    p = np.asarray(lax.igamma(jnp.asarray(a), jnp.asarray(x)))
    q = np.asarray(lax.igammac(jnp.asarray(a), jnp.asarray(x)))
    # P(0, x) = 1 - lim_{a->0} Q(a, x) = 1 for x > 0 (scipy.special.gammainc's value); NaN outside the domain
    np.testing.assert_array_equal(p, [1.0, 1.0, 1.0, np.nan, 0.0, np.nan, np.nan])
    np.testing.assert_array_equal(q, [0.0, 0.0, 0.0, np.nan, 1.0, np.nan, np.nan])
    ga = np.asarray(lax.igamma_grad_a(jnp.asarray(a[4:]), jnp.asarray(x[4:])))
    np.testing.assert_array_equal(ga, [0.0, np.nan, np.nan])   # P(a, 0) = 0 for a > 0; NaN for a <= 0
    jax = _jax()
    np.testing.assert_array_equal(p[[0, 1, 3, 4, 5, 6]], np.asarray(jax.lax.igamma(a, x))[[0, 1, 3, 4, 5, 6]])
    np.testing.assert_array_equal(q, np.asarray(jax.lax.igammac(a, x)))
    np.testing.assert_array_equal(ga, np.asarray(jax.lax.igamma_grad_a(a[4:], x[4:])))


def test_zeta_poles_at_non_positive_integer_q():
    x = np.array([2.0, 2.0, 4.0, 2.0, 1.0, 3.0, 2.5])
    q = np.array([0.0, -1.0, -2.0, 1.0, -1.0, -2.0, 0.0])
    got = np.asarray(jsp.zeta(jnp.asarray(x), jnp.asarray(q)))
    # a term (k + q)^-x = 1/0: +inf for an even x; for an odd or non-integer x its sign depends on the side
    # (JAX's NaN)
    np.testing.assert_array_equal(got[[0, 1, 2, 4]], np.inf)
    np.testing.assert_array_equal(got[[5, 6]], np.nan)
    assert got[3] == pytest.approx(math.pi ** 2 / 6, rel=1e-14)
    jax = _jax()
    np.testing.assert_allclose(got, np.asarray(jax.scipy.special.zeta(x, q)), rtol=1e-14)


# --- jax.scipy.special comb / beta / poch and jax.scipy.stats.vonmises (issue #20, second pass) -------

def test_comb_derivative_in_k_at_zero():
    """comb(N, k) = exp(lgamma(N+1) - lgamma(k+1) - lgamma(N-k+1)): at k = 0, d/dk = psi(N+1) - psi(1) = H_N."""
    N = np.array([1.0, 0.5, 2.0, 3.0])
    k = np.zeros(4)
    got = _jvp(jsp.comb, (N, k), (np.zeros(4), np.ones(4)))
    harmonic = np.array([1.0, 2 - 2 * math.log(2), 1.5, 11 / 6])   # H_N (H_0.5 = 2 - 2 log 2)
    np.testing.assert_allclose(got, harmonic, rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(jsp.comb(jnp.asarray(N), jnp.asarray(k))), np.ones(4))
    # with repetition k = 0 is the constant 1 (JAX's select), derivative 0
    rep = funcgrad.jvp(lambda a, b: jsp.comb(a, b, repetition=True), (jnp.asarray(N), jnp.asarray(k)),
                       (jnp.zeros(4), jnp.ones(4)))[1]
    np.testing.assert_array_equal(np.asarray(rep), np.zeros(4))
    jax = _jax()
    want = jax.jvp(jax.scipy.special.comb, (N, k), (np.zeros(4), np.ones(4)))[1]
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-12)


def test_beta_and_poch_signs():
    """B(a, b) and poch(z, m) are signed at negative arguments: B(-0.5, 1) = 1 / (-0.5) = -2,
    B(-0.5, -0.5) = Gamma(-0.5)^2 / Gamma(-1) -> 0, poch(0.5, -1) = 1 / (0.5 - 1) = -2, poch(-1.5, 1) = -1.5;
    poch(z, 0) = 1 also at a pole z, poch(-1, 2) = (-1)(0) = 0."""
    b = np.asarray(jsp.beta(jnp.asarray([-0.5, -1.5, 2.0]), jnp.asarray([1.0, 1.0, 3.0])))
    np.testing.assert_allclose(b, [-2.0, -1 / 1.5, 1 / 12], rtol=1e-13)
    z, m = np.array([0.5, -1.5, 0.0, -1.0, -1.0, 3.0]), np.array([-1.0, 1.0, 0.0, 0.0, 2.0, 2.0])
    p = np.asarray(jsp.poch(jnp.asarray(z), jnp.asarray(m)))
    np.testing.assert_allclose(p, [-2.0, -1.5, 1.0, 1.0, 0.0, 12.0], rtol=1e-13)
    # d/dm poch(z, m) = psi(z + m) poch(z, m): at (0.5, -1): psi(-0.5) * (-2)
    psi_m05 = 0.03648997397857652   # digamma(-0.5)
    dm = _jvp(jsp.poch, (np.array([0.5]), np.array([-1.0])), (np.zeros(1), np.ones(1)))
    np.testing.assert_allclose(dm, [-2 * psi_m05], rtol=1e-12)
    jax = _jax()
    np.testing.assert_allclose(b, np.asarray(jax.scipy.special.beta(np.array([-0.5, -1.5, 2.0]),
                                                                    np.array([1.0, 1.0, 3.0]))), rtol=1e-13)
    keep = m != 0   # JAX: poch(z, 0) = 1; NaN at the poles of Gamma(z)
    jp = np.asarray(jax.scipy.special.poch(z, m))
    np.testing.assert_allclose(p[[0, 1, 2, 3, 5]], jp[[0, 1, 2, 3, 5]], rtol=1e-13)
    assert keep.any()
    want = jax.jvp(jax.scipy.special.poch, (np.array([0.5]), np.array([-1.0])), (np.zeros(1), np.ones(1)))[1]
    np.testing.assert_allclose(dm, np.asarray(want), rtol=1e-12)


def test_vonmises_logpdf_outside_kappa_domain():
    """vonmises.logpdf is NaN for kappa <= 0 (JAX's; scipy's is NaN for kappa < 0); log(e^(k cos x) / (2 pi I0(k)))
    for kappa > 0: at x = 0, kappa = 1: 1 - log(2 pi I0(1)), I0(1) = 1.2660658777520082."""
    from funcgrad.scipy.stats import vonmises
    got = np.asarray(vonmises.logpdf(jnp.asarray([1.0, 1.0, 0.0]), jnp.asarray([-1.0, 0.0, 1.0])))
    assert np.isnan(got[0]) and np.isnan(got[1])
    np.testing.assert_allclose(got[2], 1 - math.log(2 * math.pi * 1.2660658777520082), rtol=1e-13)
    g = funcgrad.grad(lambda k: vonmises.logpdf(jnp.asarray(0.5), k))(jnp.asarray(2.0))
    assert np.isfinite(float(g))
    jax = _jax()
    want = jax.scipy.stats.vonmises.logpdf(np.array([1.0, 1.0, 0.0]), np.array([-1.0, 0.0, 1.0]))
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-13)
    np.testing.assert_allclose(float(g), float(jax.grad(lambda k: jax.scipy.stats.vonmises.logpdf(0.5, k))(2.0)),
                               rtol=1e-12)
