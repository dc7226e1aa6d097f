"""Special functions at the edges of their domains, on both faces: acosh at 1, entr at 0 and below, ndtri
outside [0, 1], torch.special's K0 / K1 at tiny arguments, torch.frexp's mantissa and torch.nextafter's
derivatives (and the JAX face's nextafter, which JAX does not differentiate).

Each quantity (value, first and second derivative, forward and reverse) is checked against its exact value
(closed forms, mpmath), and against torch / JAX where installed (importorskip): regressions of the rows
tests/test_special_points_matrix.py found wrong.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import funcgrad
import funcgrad as fg
import funcgrad.numpy as fnp
import funcgrad.scipy.special as fss

mpmath = pytest.importorskip("mpmath")


# --- the quantities (elementwise functions: every direction and cotangent is ones) ---------------------

def torch_face_derivs(lib, f, x, dtype=None):
    """(value, rev1, rev2, fwd1, fwd2) of the elementwise f at x on a torch-like library (funcgrad or torch);
    a derivative that is not differentiable again (no grad_fn) counts as a zero second derivative."""
    dtype = dtype or lib.float64
    xt = lib.tensor(np.asarray(x), dtype=dtype)
    leaf = xt.clone().requires_grad_(True)
    y = f(leaf)
    g = lib.autograd.grad(y.sum(), leaf, create_graph=True)[0]
    h = lib.autograd.grad(g.sum(), leaf)[0] if g.requires_grad else lib.zeros_like(xt)
    ones = lib.ones_like(xt)
    f1 = lib.func.jvp(f, (xt,), (ones,))[1]
    f2 = lib.func.jvp(lambda a: lib.func.jvp(f, (a,), (lib.ones_like(a),))[1], (xt,), (ones,))[1]
    return [np.asarray(v.detach().numpy(), np.float64) for v in (y, g, h, f1, f2)]


def jax_face_derivs(lib, lnp, f, x):
    """(value, rev1, rev2, fwd1, fwd2) of the elementwise f at x on a JAX-like library (funcgrad or jax)."""
    xa = lnp.asarray(np.asarray(x))
    ones = lnp.ones_like(xa)
    out = [f(xa), lib.vmap(lib.grad(f))(xa), lib.vmap(lib.grad(lib.grad(f)))(xa), lib.jvp(f, (xa,), (ones,))[1],
           lib.jvp(lambda a: lib.jvp(f, (a,), (lnp.ones_like(a),))[1], (xa,), (ones,))[1]]
    return [np.asarray(v, np.float64) for v in out]


def assert_close(got, want, rtol=1e-13, what=""):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=rtol, atol=0,
                               equal_nan=True, err_msg=what)


@pytest.fixture
def jax64():
    jax = pytest.importorskip("jax")
    prev = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", True)
    yield jax
    jax.config.update("jax_enable_x64", prev)


# --- acosh at 1: acosh' = 1/sqrt(x^2 - 1) -> inf, acosh'' = -x/(x^2 - 1)^(3/2) -> -inf -------------------

ACOSH_X = np.array([1.0, 1.0 + 2.0 ** -52, 1.5, 2.0, 30.0, 1e150])


def _acosh_exact(x):
    d1, d2 = [], []
    for v in x:
        if v == 1:
            d1.append(np.inf)
            d2.append(-np.inf)
            continue
        m = mpmath.mpf(float(v))
        d1.append(float(1 / mpmath.sqrt(m * m - 1)))
        d2.append(float(-m / (m * m - 1) ** 1.5))
    return np.array([float(mpmath.acosh(mpmath.mpf(float(v)))) for v in x]), np.array(d1), np.array(d2)


def test_acosh_derivatives_at_one_are_the_limits():
    val, d1, d2 = _acosh_exact(ACOSH_X)
    with funcgrad.enable_x64():
        for f in (fnp.arccosh, funcgrad.lax.acosh):
            got = jax_face_derivs(funcgrad, fnp, f, ACOSH_X)
            for g, w, what in zip(got, (val, d1, d2, d1, d2), ("value", "rev1", "rev2", "fwd1", "fwd2")):
                assert_close(g, w, 1e-12, what)
    got = torch_face_derivs(fg, fg.acosh, ACOSH_X)
    for g, w, what in zip(got, (val, d1, d2, d1, d2), ("value", "rev1", "rev2", "fwd1", "fwd2")):
        assert_close(g, w, 1e-12, what)


def test_acosh_matches_torch_and_jax(jax64):
    torch = pytest.importorskip("torch")
    x = np.concatenate([ACOSH_X[:-1], [-1.0, 0.5]])  # (x^2 overflows in JAX's formula at 1e150)
    for g, w in zip(torch_face_derivs(fg, fg.acosh, x), torch_face_derivs(torch, torch.acosh, x)):
        assert_close(g, w, 1e-12)
    import jax.numpy as jnp
    with funcgrad.enable_x64():
        ours = jax_face_derivs(funcgrad, fnp, fnp.arccosh, x)
    for g, w in zip(ours, jax_face_derivs(jax64, jnp, jnp.arccosh, x)):
        assert_close(g, w, 1e-12)


# --- entr at 0 and below ------------------------------------------------------------------------------

ENTR_X = np.array([0.0, -0.0, 1e-300, 1e-8, 0.5, 2.0, -1.0, -0.5])


def test_torch_entr_derivatives():
    # entr' = -(log x + 1): +inf at 0; entr'' = -1/x: -inf at 0, +inf at -0.0; below 0 torch's formula
    # gives NaN and -1/x
    with np.errstate(all="ignore"):
        d1 = -(np.log(ENTR_X) + 1)
        d1[:2] = np.inf
        d2 = -1 / ENTR_X
    val = np.array([0.0, 0.0, 1e-300 * math.log(1e300), -1e-8 * math.log(1e-8), 0.5 * math.log(2),
                    -2 * math.log(2), -np.inf, -np.inf])
    got = torch_face_derivs(fg, fg.special.entr, ENTR_X)
    for g, w, what in zip(got, (val, d1, d2, d1, d2), ("value", "rev1", "rev2", "fwd1", "fwd2")):
        assert_close(g, w, 1e-14, what)
    assert not np.signbit(got[0][:2]).any()   # (0.0 at +-0, torch's; the JAX face's is -0.0)


def test_torch_entr_matches_torch():
    torch = pytest.importorskip("torch")
    for g, w in zip(torch_face_derivs(fg, fg.special.entr, ENTR_X),
                    torch_face_derivs(torch, torch.special.entr, ENTR_X)):
        assert_close(g, w, 1e-14)


# --- ndtri outside [0, 1] -----------------------------------------------------------------------------

NDTRI_X = np.array([-1e-300, -0.5, 1.5, 2.0, -np.inf, np.inf, 0.0, 1.0, 1e-300, 0.25])


def _ndtri_exact_values():
    out = []
    for p in NDTRI_X:
        if not 0 <= p <= 1:
            out.append(np.nan)
        elif p in (0.0, 1.0):
            out.append(-np.inf if p == 0 else np.inf)
        else:
            with mpmath.workdps(400):   # (1 - 2p for p = 1e-300)
                out.append(float(-mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * mpmath.mpf(float(p)))))
    return np.array(out)


def test_ndtri_is_nan_outside_the_unit_interval():
    want = _ndtri_exact_values()
    outside = ~((NDTRI_X >= 0) & (NDTRI_X <= 1))
    with funcgrad.enable_x64():
        got = jax_face_derivs(funcgrad, fnp, fss.ndtri, NDTRI_X)
    assert_close(got[0], want, 1e-13)
    for g in got[1:]:
        assert np.isnan(g[outside]).all()
    got = torch_face_derivs(fg, fg.special.ndtri, NDTRI_X)
    assert_close(got[0], want, 1e-13)
    for g in got[1:]:
        assert np.isnan(g[outside]).all()


def test_ndtri_values_match_torch_and_scipy(jax64):
    torch = pytest.importorskip("torch")
    ss = pytest.importorskip("scipy.special")
    import jax.scipy.special as jss
    assert_close(fg.special.ndtri(fg.tensor(NDTRI_X)).numpy(), torch.special.ndtri(torch.tensor(NDTRI_X)).numpy())
    assert_close(fg.special.ndtri(fg.tensor(NDTRI_X)).numpy(), ss.ndtri(NDTRI_X))
    with funcgrad.enable_x64():
        assert_close(np.asarray(fss.ndtri(fnp.asarray(NDTRI_X))), np.asarray(jss.ndtri(NDTRI_X)))


# --- torch.special's K0 / K1 (plain and exponentially scaled) from tiny to large arguments ----------------

K_X = np.concatenate([[1e-300, 1e-100, 1e-20, 1e-12, 1e-8, 1e-6, 1e-3, 0.25, 1.0, 1.999, 2.0, 2.001, 3.0, 10.0,
                       100.0, 700.0], np.geomspace(1e-11, 60, 60)])
K_FUNCS = {"modified_bessel_k0": (0, False), "modified_bessel_k1": (1, False),
           "scaled_modified_bessel_k0": (0, True), "scaled_modified_bessel_k1": (1, True)}


def _k_exact(nu, scaled, x):
    with mpmath.workdps(30):
        return np.array([float(mpmath.besselk(nu, mpmath.mpf(float(v))) * (mpmath.exp(mpmath.mpf(float(v)))
                                                                             if scaled else 1)) for v in x])


@pytest.mark.parametrize("name", sorted(K_FUNCS))
def test_bessel_k_exact_from_tiny_to_large(name):
    nu, scaled = K_FUNCS[name]
    got = getattr(fg.special, name)(fg.tensor(K_X)).numpy()
    assert_close(got, _k_exact(nu, scaled, K_X), 1e-13, name)
    # the leading terms at tiny x: K0 = -log(x/2) - euler_gamma, K1 = 1/x
    tiny = getattr(fg.special, name)(fg.tensor([1e-300], dtype=fg.float64)).numpy()[0]
    assert tiny == pytest.approx(-math.log(0.5e-300) - 0.5772156649015329 if nu == 0 else 1e300, rel=1e-15)


@pytest.mark.parametrize("name", sorted(K_FUNCS))
def test_bessel_k_matches_torch_and_scipy(name):
    torch = pytest.importorskip("torch")
    ss = pytest.importorskip("scipy.special")
    nu, scaled = K_FUNCS[name]
    x = np.concatenate([K_X, [0.0, -1.0, np.inf, np.nan]])
    got = getattr(fg.special, name)(fg.tensor(x)).numpy()
    assert_close(got, getattr(torch.special, name)(torch.tensor(x)).numpy(), 1e-13, name)
    sp = {(0, False): ss.k0, (1, False): ss.k1, (0, True): ss.k0e, (1, True): ss.k1e}[(nu, scaled)]
    assert_close(got[:len(K_X)], sp(K_X), 1e-13, name)
    x32 = K_X[K_X > 1e-30].astype(np.float32)   # (float32: tiny x rounds to 0)
    assert_close(getattr(fg.special, name)(fg.tensor(x32)).numpy(),
                 getattr(torch.special, name)(torch.tensor(x32)).numpy(), 2e-6, name)


# --- frexp: mantissa = x 2^-e, derivative 2^-e (0 in the exponent) ----------------------------------------

FREXP_X = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.75, 3.5, -30.0, 1e-8, 1e-300, -1e-300, 5e-324, 1e300])


def _frexp_exact(x):
    e = np.frexp(x)[1]
    d1 = np.array([math.ldexp(1.0, -int(k)) if -int(k) < 1024 else np.inf for k in e])
    return np.frexp(x)[0], d1


def test_torch_frexp_mantissa_derivative():
    m, d1 = _frexp_exact(FREXP_X)
    got = torch_face_derivs(fg, lambda t: fg.frexp(t)[0], FREXP_X)
    zero = np.zeros_like(d1)   # (mantissa = x 2^-e is linear between powers of 2)
    for g, w, what in zip(got, (m, d1, zero, d1, zero), ("value", "rev1", "rev2", "fwd1", "fwd2")):
        assert_close(g, w, 0, what)
    x = fg.tensor(FREXP_X, requires_grad=True)
    mant, ex = fg.frexp(x)
    assert mant.requires_grad and not ex.requires_grad and ex.dtype == fg.int32
    assert type(mant.grad_fn).__name__ == "FrexpBackward0"
    np.testing.assert_array_equal(ex.numpy(), np.frexp(FREXP_X)[1])


def test_frexp_matches_torch_and_jax(jax64):
    torch = pytest.importorskip("torch")
    import jax.numpy as jnp
    # torch divides by 2^e computed in float32: inf where 2^e underflows (|x| < 2^-149) and 0 where it
    # overflows (|x| >= 2^128); compared inside float32's range only
    normal = (np.abs(FREXP_X) > 1e-30) & (np.abs(FREXP_X) < 1e30)
    x = FREXP_X[normal]
    ours = torch_face_derivs(fg, lambda t: fg.frexp(t)[0], x)
    for g, w in zip(ours, torch_face_derivs(torch, lambda t: torch.frexp(t)[0], x)):
        assert_close(g, w, 0)
    with funcgrad.enable_x64():
        ours = jax_face_derivs(funcgrad, fnp, lambda a: fnp.frexp(a)[0], FREXP_X)
    for g, w in zip(ours, jax_face_derivs(jax64, jnp, lambda a: jnp.frexp(a)[0], FREXP_X)):
        assert_close(g, w, 1e-13)   # (JAX's 2^-e is a few ulps off: 67108863.99999992 for 2^26)


# --- nextafter: torch's d/dx = [x != y], d/dy = 0; JAX defines no derivative ----------------------------

NA_X = np.array([0.0, 1.0, 2.0, 2.0, -1.0, 5e-324, 1e-300, 3.0])
NA_Y = np.array([0.0, 1.0, 3.0, 1.0, -1.0, 0.0, -1.0, np.inf])


def _nextafter_derivs(lib, x, y):
    xt, yt = (lib.tensor(v, dtype=lib.float64) for v in (x, y))
    xl, yl = xt.clone().requires_grad_(True), yt.clone().requires_grad_(True)
    out = lib.nextafter(xl, yl)
    gx, gy = lib.autograd.grad(out.sum(), (xl, yl))
    one, zero = lib.ones_like(xt), lib.zeros_like(xt)
    fx = lib.func.jvp(lib.nextafter, (xt, yt), (one, zero))[1]
    fy = lib.func.jvp(lib.nextafter, (xt, yt), (zero, one))[1]
    return [np.asarray(v.detach().numpy()) for v in (out, gx, gy, fx, fy)]


def test_torch_nextafter_derivatives():
    dx = (NA_X != NA_Y).astype(np.float64)
    got = _nextafter_derivs(fg, NA_X, NA_Y)
    np.testing.assert_array_equal(got[0], np.nextafter(NA_X, NA_Y))
    for g, w in zip(got[1:], (dx, 0 * dx, dx, 0 * dx)):
        np.testing.assert_array_equal(g, w)
    x = fg.tensor(NA_X, requires_grad=True)
    assert type(fg.nextafter(x, fg.tensor(NA_Y)).grad_fn).__name__ == "NextafterBackward0"


def test_torch_nextafter_matches_torch():
    torch = pytest.importorskip("torch")
    for g, w in zip(_nextafter_derivs(fg, NA_X, NA_Y), _nextafter_derivs(torch, NA_X, NA_Y)):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("f", [lambda x: fnp.nextafter(x, 2.0), lambda x: funcgrad.lax.nextafter(x, x + 1),
                               fnp.spacing])
def test_jax_face_nextafter_is_not_differentiable(f):
    # as jax.lax.nextafter: no differentiation rule, in either mode (the value still works)
    with pytest.raises(NotImplementedError, match="nextafter"):
        funcgrad.grad(f)(1.0)
    with pytest.raises(NotImplementedError, match="nextafter"):
        funcgrad.jvp(f, (1.0,), (1.0,))
    assert float(f(fnp.asarray(1.0))) > 0


def test_jax_nextafter_is_not_differentiable(jax64):
    import jax.numpy as jnp
    with pytest.raises(NotImplementedError, match="nextafter"):
        jax64.grad(lambda x: jnp.nextafter(x, 2.0))(1.0)
    with pytest.raises(NotImplementedError, match="nextafter"):
        jax64.grad(jnp.spacing)(1.0)
