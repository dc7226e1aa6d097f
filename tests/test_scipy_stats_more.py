"""funcgrad.scipy.stats: gumbel_r, gumbel_l, wrapcauchy, mode and rankdata, against scipy (where installed),
against JAX (where installed) and against their defining properties."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.scipy.stats as fs

X = np.array([-3.0, -0.5, 0.0, 0.7, 2.0, 5.0])
Q = np.array([1e-9, 0.01, 0.3, 0.5, 0.99])


@pytest.mark.parametrize("name", ["gumbel_r", "gumbel_l"])
def test_gumbel_properties(name):
    d = getattr(fs, name)
    loc, scale = 0.3, 1.7
    cdf = np.asarray(d.cdf(X, loc, scale))
    np.testing.assert_allclose(np.asarray(d.sf(X, loc, scale)), 1 - cdf, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(d.logpdf(X, loc, scale)), np.log(np.asarray(d.pdf(X, loc, scale))),
                               rtol=1e-12)
    np.testing.assert_allclose(np.asarray(d.logcdf(X, loc, scale)), np.log(cdf), rtol=1e-10)  # (two formulas)
    np.testing.assert_allclose(np.asarray(d.logsf(X, loc, scale)), np.log1p(-cdf), rtol=1e-9)
    dcdf = fg.vmap(fg.grad(lambda x: d.cdf(x, loc, scale)))(X)  # the density is the CDF's derivative
    np.testing.assert_allclose(np.asarray(dcdf), np.asarray(d.pdf(X, loc, scale)), rtol=1e-10)  # (two formulas)
    np.testing.assert_allclose(np.asarray(d.cdf(d.ppf(Q, loc, scale), loc, scale)), Q, rtol=1e-9)
    edges = np.asarray(d.ppf(np.array([-0.1, 0.0, 1.0, 1.5]), loc, scale))
    assert np.isnan(edges).all()  # outside the open interval, as jax.scipy.stats gives


@pytest.mark.parametrize("name", ["gumbel_r", "gumbel_l"])
def test_gumbel_matches_scipy(name):
    st = pytest.importorskip("scipy.stats")
    d, ref = getattr(fs, name), getattr(st, name)
    for f in ("logpdf", "pdf", "logcdf", "cdf", "logsf", "sf"):
        np.testing.assert_allclose(np.asarray(getattr(d, f)(X, 0.3, 1.7)), getattr(ref, f)(X, 0.3, 1.7),
                                   rtol=1e-10, err_msg=f)
    np.testing.assert_allclose(np.asarray(d.ppf(Q, 0.3, 1.7)), ref.ppf(Q, 0.3, 1.7), rtol=1e-10)


def test_wrapcauchy():
    x = np.linspace(0, 2 * np.pi, 2001)
    for c in (0.1, 0.5, 0.9):
        p = np.asarray(fs.wrapcauchy.pdf(x, c))
        np.testing.assert_allclose(np.trapezoid(p, x), 1.0, rtol=1e-6)
        np.testing.assert_allclose(p, (1 - c * c) / (2 * np.pi * (1 + c * c - 2 * c * np.cos(x))), rtol=1e-12)
    out = np.asarray(fs.wrapcauchy.logpdf(np.array([-0.1, 7.0, 1.0, 1.0, 1.0]), np.array([0.5, 0.5, 0.0, 1.0, -0.2])))
    assert np.isneginf(out[:2]).all() and np.isnan(out[2:]).all()
    st = pytest.importorskip("scipy.stats")
    np.testing.assert_allclose(np.asarray(fs.wrapcauchy.logpdf(x[1:-1], 0.7)), st.wrapcauchy.logpdf(x[1:-1], 0.7),
                               rtol=1e-10)


def _mode_ref(row):
    vals, counts = np.unique(row, return_counts=True, equal_nan=True)
    i = int(np.argmax(counts))
    return vals[i], counts[i]


def test_mode_against_a_count():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 4, (3, 5, 4)).astype(np.float32)
    a[0, 1, 2] = a[1, 1, 2] = np.nan
    for axis in (0, 1, 2, -1):
        m = fs.mode(a, axis=axis)
        moved = np.moveaxis(a, axis, -1).reshape(-1, a.shape[axis])
        want = np.array([_mode_ref(r) for r in moved]).reshape(np.moveaxis(a, axis, -1).shape[:-1] + (2,))
        np.testing.assert_array_equal(np.asarray(m.mode), want[..., 0])
        np.testing.assert_array_equal(np.asarray(m.count), want[..., 1])
    m = fs.mode(a, axis=None, keepdims=True)
    assert m.mode.shape == (1, 1, 1) and (float(m.mode.reshape(())), int(m.count.reshape(()))) == _mode_ref(a.ravel())
    assert fs.mode(a, axis=1, keepdims=True).mode.shape == (3, 1, 4)
    with pytest.raises(NotImplementedError, match="propagate"):
        fs.mode(a, nan_policy="omit")


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
def test_rankdata_matches_scipy(method):
    st = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(1)
    a = rng.integers(0, 5, (4, 6))
    for axis in (None, 0, 1, -1):
        got = np.asarray(fs.rankdata(a, method, axis=axis))
        want = st.rankdata(a, method, axis=axis)
        assert got.shape == want.shape and got.dtype.kind == "f"
        np.testing.assert_array_equal(got, want)
    with_nan = np.array([[1.0, np.nan, 3.0], [2.0, 2.0, 1.0]])
    got = np.asarray(fs.rankdata(with_nan, method, axis=1))
    assert np.isnan(got[0]).all()
    np.testing.assert_array_equal(got[1], st.rankdata(with_nan[1], method))
    with pytest.raises(ValueError, match="unknown method"):
        fs.rankdata(a, "foo")


def test_against_jax():
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp
    js = jax.scipy.stats
    rng = np.random.default_rng(2)
    a = rng.integers(0, 4, (3, 5, 4)).astype(np.float32)
    a[0, 1, 2] = np.nan
    for axis in (0, 2, None):
        for kd in (False, True):
            r1, r2 = fs.mode(a, axis=axis, keepdims=kd), js.mode(jjnp.asarray(a), axis=axis, keepdims=kd)
            np.testing.assert_array_equal(np.asarray(r1.mode), np.asarray(r2.mode))
            np.testing.assert_array_equal(np.asarray(r1.count), np.asarray(r2.count))
        for m in ("average", "min", "max", "dense", "ordinal"):
            np.testing.assert_array_equal(np.asarray(fs.rankdata(a, m, axis=axis)),
                                          np.asarray(js.rankdata(jjnp.asarray(a), m, axis=axis)))
    for name in ("gumbel_r", "gumbel_l"):
        for f in ("logpdf", "cdf", "logsf"):
            np.testing.assert_allclose(np.asarray(getattr(getattr(fs, name), f)(X.astype(np.float32), 0.3, 1.7)),
                                       np.asarray(getattr(getattr(js, name), f)(X.astype(np.float32), 0.3, 1.7)),
                                       rtol=2e-6)
