"""funcgrad.scipy.stats and the new funcgrad.scipy.special functions against SciPy (float64), plus
gradients by finite differences; gumbel_r, gumbel_l, wrapcauchy, mode and rankdata also against their defining
properties and against JAX (where installed)."""
import numpy as np
import pytest
import scipy.special as ss
import scipy.stats as sst

import funcgrad
import funcgrad.numpy as jnp
import funcgrad.scipy.special as fs
from funcgrad.scipy import stats
from funcgrad.testing import check_grads

RNG = np.random.default_rng(0)
X = RNG.normal(0, 2, 30)
POS = np.exp(RNG.normal(0, 1, 30))
Q = RNG.uniform(0.001, 0.999, 30)
U = RNG.uniform(0.02, 0.98, 30)
A = np.exp(RNG.uniform(-1, 2, 30))
B = np.exp(RNG.uniform(-1, 2, 30))
K = RNG.integers(0, 8, 30).astype(float)


def close(got, expected, rtol=1e-10, atol=1e-13):
    got = np.asarray(got)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


@pytest.fixture(autouse=True)
def x64():
    funcgrad.config.update("enable_x64", True)
    yield
    funcgrad.config.update("enable_x64", False)


CONT = [  # (our module, scipy distribution, args after x, x values, methods)
    ("norm", sst.norm, (0.5, 1.5), X, ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]),
    ("cauchy", sst.cauchy, (0.5, 1.5), X, ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]),
    ("laplace", sst.laplace, (0.5, 1.5), X, ["logpdf", "pdf", "cdf"]),
    ("logistic", sst.logistic, (0.5, 1.5), X, ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]),
    ("uniform", sst.uniform, (-1.0, 3.0), X, ["logpdf", "pdf", "cdf"]),
    ("expon", sst.expon, (-0.5, 2.0), X, ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]),
    ("t", sst.t, (3.5, 0.5, 1.5), X, ["logpdf", "pdf"]),
    ("gamma", sst.gamma, (A, 0.1, 1.5), POS, ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]),
    ("chi2", sst.chi2, (A * 2, 0.1, 1.5), POS, ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]),
    ("beta", sst.beta, (A, B), U, ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]),
]


@pytest.mark.parametrize("name,dist,args,xs,methods", CONT, ids=[c[0] for c in CONT])
def test_continuous_against_scipy(name, dist, args, xs, methods):
    mod = getattr(stats, name)
    for m in methods:
        got = getattr(mod, m)(xs, *args)
        exp = getattr(dist, m)(xs, *args)
        finite = np.isfinite(exp)
        assert np.array_equal(np.isfinite(np.asarray(got)), finite), f"{name}.{m}: non-finite pattern"
        close(np.asarray(got)[finite], exp[finite], rtol=1e-9)


@pytest.mark.parametrize("name,dist,args", [("norm", sst.norm, (0.5, 1.5)), ("cauchy", sst.cauchy, (0.5, 1.5)),
                                            ("logistic", sst.logistic, (0.5, 1.5)),
                                            ("uniform", sst.uniform, (-1.0, 3.0)),
                                            ("expon", sst.expon, (-0.5, 2.0))])
def test_quantiles_against_scipy(name, dist, args):
    mod = getattr(stats, name)
    close(mod.ppf(Q, *args), dist.ppf(Q, *args), rtol=1e-10)
    if hasattr(mod, "isf"):
        close(mod.isf(Q, *args), dist.isf(Q, *args), rtol=1e-10)
    assert np.isnan(np.asarray(mod.ppf(np.array([-0.1, 1.1]), *args))).all()


def test_discrete_against_scipy():
    ks = np.concatenate([K, [-1.0, 2.5]])
    close(stats.poisson.logpmf(ks, 3.2), sst.poisson.logpmf(ks, 3.2))
    close(stats.poisson.pmf(ks, 3.2, 1), sst.poisson.pmf(ks, 3.2, 1))
    close(stats.poisson.cdf(ks, 3.2), sst.poisson.cdf(ks, 3.2))
    close(stats.binom.logpmf(ks, 9, 0.3), sst.binom.logpmf(ks, 9, 0.3))
    close(stats.binom.pmf(ks, 9, 0.3), sst.binom.pmf(ks, 9, 0.3))
    kb = np.array([0.0, 1.0, 2.0, -1.0, 0.5])
    close(stats.bernoulli.logpmf(kb, 0.3), sst.bernoulli.logpmf(kb, 0.3))
    close(stats.bernoulli.pmf(kb, 0.3), sst.bernoulli.pmf(kb, 0.3))
    close(stats.bernoulli.cdf(kb, 0.3), sst.bernoulli.cdf(kb, 0.3))
    close(stats.bernoulli.ppf(np.array([0.1, 0.7, 0.71, 1.0]), 0.3), sst.bernoulli.ppf([0.1, 0.7, 0.71, 1.0], 0.3))


def test_multivariate():
    d = 3
    M = RNG.normal(size=(d, d))
    cov = M @ M.T + d * np.eye(d)
    mean = RNG.normal(size=d)
    xs = RNG.normal(size=(5, d))
    close(stats.multivariate_normal.logpdf(xs, mean, cov), sst.multivariate_normal.logpdf(xs, mean, cov))
    close(stats.multivariate_normal.pdf(xs[0], mean, cov), sst.multivariate_normal.pdf(xs[0], mean, cov))
    close(stats.multivariate_normal.logpdf(xs, mean, np.diag(cov)),
          sst.multivariate_normal.logpdf(xs, mean, np.diag(np.diag(cov))))
    alpha = np.array([0.5, 2.0, 3.0])
    pts = RNG.dirichlet(alpha, size=4).T  # (K, N)
    close(stats.dirichlet.logpdf(pts, alpha), sst.dirichlet.logpdf(pts, alpha))
    close(stats.dirichlet.pdf(pts[:, 0], alpha), sst.dirichlet.pdf(pts[:, 0], alpha))
    assert float(stats.dirichlet.logpdf(np.array([0.5, 0.6, 0.1]), alpha)) == -np.inf


def test_stats_gradients():
    check_grads(lambda x, m, s: stats.norm.logcdf(x, m, s), (jnp.asarray(X[:4]), 0.3, 1.2), order=2)
    check_grads(lambda x, a: stats.gamma.logpdf(x, a), (jnp.asarray(POS[:4]), jnp.asarray(A[:4])), order=2)
    check_grads(lambda x, a: stats.gamma.cdf(x, a), (jnp.asarray(POS[:4]), jnp.asarray(A[:4])), order=1)
    check_grads(lambda x: stats.beta.cdf(x, 2.0, 3.0), (jnp.asarray(U[:4]),), order=2)
    check_grads(lambda x, df: stats.t.logpdf(x, df), (jnp.asarray(X[:4]), 4.0), order=2)
    cov = np.array([[2.0, 0.3], [0.3, 1.0]])
    check_grads(lambda x, m, c: stats.multivariate_normal.logpdf(x, m, c),
                (jnp.asarray(X[:2]), jnp.zeros(2), jnp.asarray(cov)), order=1)
    # vmap and jit agree with the eager result
    f = lambda x: stats.norm.logpdf(x, 1.0, 2.0)
    close(funcgrad.vmap(f)(X), f(X))
    close(funcgrad.jit(f)(X), f(X))


SPECIAL = [  # (ours, scipy's, args)
    (fs.xlogy, ss.xlogy, (np.array([0.0, 0.0, 1.5, 2.0]), np.array([0.0, 2.0, 3.0, 0.5]))),
    (fs.xlog1py, ss.xlog1py, (np.array([0.0, 0.0, 1.5, 2.0]), np.array([-1.0, 2.0, 3.0, -0.5]))),
    (fs.entr, ss.entr, (np.array([-1.0, 0.0, 0.5, 3.0]),)),
    (fs.rel_entr, ss.rel_entr, (np.array([0.0, 1.0, 1.0, -1.0, 2.0]), np.array([1.0, 2.0, 0.0, 1.0, 0.3]))),
    (fs.kl_div, ss.kl_div, (np.array([0.0, 1.0, 1.0, -1.0, 2.0]), np.array([1.0, 2.0, 0.0, 1.0, 0.3]))),
    (fs.ndtr, ss.ndtr, (X * 5,)),
    (fs.log_ndtr, ss.log_ndtr, (np.concatenate([X * 5, [-19.9, -20.1, -40.0, -1e3, 8.0, 30.0]]),)),
    (fs.ndtri, ss.ndtri, (np.concatenate([Q, [1e-300, 1e-20, 1e-10, 0.5, 1 - 1e-12, 0.0, 1.0]]),)),
    (fs.gammainc, ss.gammainc, (A, POS)),
    (fs.gammaincc, ss.gammaincc, (A, POS)),
    (fs.betainc, ss.betainc, (A, B, U)),
    (fs.betaln, ss.betaln, (A, B)),
    (fs.beta, ss.beta, (A, B)),
    (fs.i0, ss.i0, (X * 5,)),
    (fs.i0e, ss.i0e, (X * 20,)),
    (fs.i1, ss.i1, (X * 5,)),
    (fs.i1e, ss.i1e, (X * 20,)),
    (fs.zeta, ss.zeta, (1 + POS, A)),
    (lambda a: fs.multigammaln(a, 3), lambda a: ss.multigammaln(a, 3), (A + 1,)),
    (fs.factorial, ss.factorial, (np.array([-1.0, 0.0, 1.0, 4.0, 7.5]),)),
    (fs.poch, ss.poch, (A, B)),
    (fs.exp1, ss.exp1, (np.concatenate([np.linspace(0.01, 3, 40), [0.0, 5.0, 20.0, 50.0, 800.0, -1.0]]),)),
    (fs.expi, ss.expi, (np.concatenate([np.linspace(-30, 80, 120), [0.0, 100.0, 500.0, -700.0]]),)),
    (fs.bernoulli, ss.bernoulli, (20,)),
    (fs.gammasgn, ss.gammasgn, (np.array([0.0, -0.0, -1.0, -2.0, -0.5, -1.5, -2.5, 2.0, np.inf, -np.inf, np.nan]),)),
    (fs.softmax, ss.softmax, (X.reshape(5, 6),)),
    (fs.log_softmax, ss.log_softmax, (X.reshape(5, 6),)),
    (lambda x: fs.softmax(x, axis=1), lambda x: ss.softmax(x, axis=1), (X.reshape(5, 6),)),
    (lambda x: fs.log_softmax(x, axis=0), lambda x: ss.log_softmax(x, axis=0), (X.reshape(5, 6),)),
]


@pytest.mark.parametrize("ours,theirs,args", SPECIAL, ids=[getattr(s[1], "__name__", "f") for s in SPECIAL])
def test_special_against_scipy(ours, theirs, args):
    with np.errstate(all="ignore"):
        exp = np.asarray(theirs(*args), dtype=np.float64)
    got = np.asarray(ours(*args))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, exp, rtol=2e-12, atol=0)


def test_special_gradients():
    check_grads(lambda x, y: fs.xlogy(x, y), (jnp.asarray(POS[:3]), jnp.asarray(A[:3])), order=2)
    g = funcgrad.grad(lambda x: fs.xlogy(x, 0.0))(0.0)
    assert float(g) == 0.0  # finite at x == y == 0
    check_grads(fs.ndtri, (jnp.asarray(Q[:4]),), order=2)
    check_grads(fs.log_ndtr, (jnp.asarray(np.array([-30.0, -5.0, 0.3, 4.0])),), order=2)
    check_grads(lambda q: fs.zeta(2.5, q), (jnp.asarray(A[:3]),), order=2)
    check_grads(lambda a, x: fs.gammainc(a, x), (jnp.asarray(A[:3]), jnp.asarray(POS[:3])), order=1)
    h = 1e-6  # the a-derivative against SciPy's function by central differences
    a0, x0 = 1.7, 2.5
    ga = funcgrad.grad(lambda a: fs.gammaincc(a, x0))(a0)
    np.testing.assert_allclose(float(ga), (ss.gammaincc(a0 + h, x0) - ss.gammaincc(a0 - h, x0)) / (2 * h), rtol=1e-7)
    with pytest.raises(NotImplementedError):
        funcgrad.grad(funcgrad.grad(lambda a: fs.gammainc(a, x0)))(a0)
    with pytest.raises(ValueError, match="Betainc gradient"):
        funcgrad.grad(lambda a: fs.betainc(a, 2.0, 0.3))(1.5)
    check_grads(lambda x: fs.betainc(1.5, 2.0, x), (jnp.asarray(U[:3]),), order=2)
    check_grads(fs.i0e, (jnp.asarray(X[:4] * 10),), order=2)
    check_grads(fs.exp1, (jnp.asarray(POS[:4] * 2),), order=2)
    check_grads(fs.expi, (jnp.asarray(X[:4] * 3),), order=2)
    check_grads(fs.i1e, (jnp.asarray(X[:4] * 10),), order=2)


def test_more_distributions_against_scipy():
    ks = np.concatenate([K, [-1.0, 0.0, 2.5]])
    close(stats.geom.logpmf(ks, 0.3), sst.geom.logpmf(ks, 0.3))
    close(stats.geom.pmf(ks, 0.3, 1), sst.geom.pmf(ks, 0.3, 1))
    close(stats.nbinom.logpmf(ks, 3.5, 0.4), sst.nbinom.logpmf(ks, 3.5, 0.4))
    close(stats.betabinom.logpmf(ks, 9, 2.5, 1.5), sst.betabinom.logpmf(ks, 9, 2.5, 1.5))
    close(stats.pareto.logpdf(1 + POS, 2.5, 0.1, 1.2), sst.pareto.logpdf(1 + POS, 2.5, 0.1, 1.2))
    close(stats.vonmises.logpdf(X, 2.5), sst.vonmises.logpdf(X, 2.5))
    close(stats.vonmises.pdf(X, 50.0), sst.vonmises.pdf(X, 50.0))
    close(stats.gennorm.logpdf(X, 1.5), sst.gennorm.logpdf(X, 1.5))
    close(stats.gennorm.cdf(X, 1.5), sst.gennorm.cdf(X, 1.5))
    x = np.array([[1.0, 2.0, 3.0], [0.0, 6.0, 0.0], [1.0, 1.0, 1.0]])
    p = np.array([0.2, 0.3, 0.5])
    exp = np.array([sst.multinomial.logpmf(r, 6, p) for r in x])
    close(stats.multinomial.logpmf(x, 6.0, p), exp)
    for a, b in [(-1.0, 2.0), (0.5, 3.0), (-4.0, -1.5), (-np.inf, 0.3), (6.0, 9.0)]:
        xs = np.linspace(a - 0.5 if np.isfinite(a) else -3, b + 0.5, 17) * 1.3 + 0.2
        for m in ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]:
            got = np.asarray(getattr(stats.truncnorm, m)(xs, a, b, 0.2, 1.3))
            want = getattr(sst.truncnorm, m)(xs, a, b, 0.2, 1.3)
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-300, err_msg=f"truncnorm.{m} a={a} b={b}")


@pytest.mark.parametrize("bw", [None, "silverman", 0.3])
@pytest.mark.parametrize("weighted", [False, True])
def test_gaussian_kde_against_scipy(bw, weighted):
    rng = np.random.default_rng(1)
    data, pts = rng.normal(size=(2, 40)), rng.normal(size=(2, 7))
    w = rng.uniform(0.5, 2.0, 40) if weighted else None
    ours, ref = stats.gaussian_kde(data, bw, w), sst.gaussian_kde(data, bw, w)
    close(ours(pts), ref(pts), rtol=1e-12)
    close(ours.logpdf(pts), ref.logpdf(pts), rtol=1e-12)
    close(ours.covariance, ref.covariance, rtol=1e-12)


def test_gaussian_kde_1d_resample_and_jit():
    rng = np.random.default_rng(2)
    data = rng.normal(size=50)
    ours, ref = stats.gaussian_kde(data), sst.gaussian_kde(data)
    close(ours.integrate_box_1d(-0.5, 1.0), ref.integrate_box_1d(-0.5, 1.0))
    close(funcgrad.jit(lambda k, x: k(x))(ours, np.array([0.0, 1.0])), ref(np.array([0.0, 1.0])))
    s = np.asarray(ours.resample(funcgrad.random.PRNGKey(0), (4000,)))
    assert s.shape == (1, 4000)
    sd = np.sqrt(data.var(ddof=1) + ref.covariance[0, 0])
    assert abs(s.mean() - data.mean()) < 5 * sd / np.sqrt(4000)
    with pytest.raises(ValueError, match="multiple elements"):
        stats.gaussian_kde(np.ones(1))


# --- gumbel_r, gumbel_l, wrapcauchy, mode, rankdata ----------------------------------------------------------

GX = np.array([-3.0, -0.5, 0.0, 0.7, 2.0, 5.0])
GQ = np.array([1e-9, 0.01, 0.3, 0.5, 0.99])


@pytest.mark.parametrize("name", ["gumbel_r", "gumbel_l"])
def test_gumbel_properties(name):
    d = getattr(stats, name)
    loc, scale = 0.3, 1.7
    cdf = np.asarray(d.cdf(GX, loc, scale))
    np.testing.assert_allclose(np.asarray(d.sf(GX, loc, scale)), 1 - cdf, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(d.logpdf(GX, loc, scale)), np.log(np.asarray(d.pdf(GX, loc, scale))),
                               rtol=1e-12)
    np.testing.assert_allclose(np.asarray(d.logcdf(GX, loc, scale)), np.log(cdf), rtol=1e-10)  # (two formulas)
    np.testing.assert_allclose(np.asarray(d.logsf(GX, loc, scale)), np.log1p(-cdf), rtol=1e-9)
    dcdf = funcgrad.vmap(funcgrad.grad(lambda x: d.cdf(x, loc, scale)))(GX)  # the density is the CDF's derivative
    np.testing.assert_allclose(np.asarray(dcdf), np.asarray(d.pdf(GX, loc, scale)), rtol=1e-10)  # (two formulas)
    np.testing.assert_allclose(np.asarray(d.cdf(d.ppf(GQ, loc, scale), loc, scale)), GQ, rtol=1e-9)
    edges = np.asarray(d.ppf(np.array([-0.1, 0.0, 1.0, 1.5]), loc, scale))
    assert np.isnan(edges).all()  # outside the open interval, as jax.scipy.stats gives


@pytest.mark.parametrize("name", ["gumbel_r", "gumbel_l"])
def test_gumbel_matches_scipy(name):
    st = pytest.importorskip("scipy.stats")
    d, ref = getattr(stats, name), getattr(st, name)
    for f in ("logpdf", "pdf", "logcdf", "cdf", "logsf", "sf"):
        np.testing.assert_allclose(np.asarray(getattr(d, f)(GX, 0.3, 1.7)), getattr(ref, f)(GX, 0.3, 1.7),
                                   rtol=1e-10, err_msg=f)
    np.testing.assert_allclose(np.asarray(d.ppf(GQ, 0.3, 1.7)), ref.ppf(GQ, 0.3, 1.7), rtol=1e-10)


def test_wrapcauchy():
    x = np.linspace(0, 2 * np.pi, 2001)
    for c in (0.1, 0.5, 0.9):
        p = np.asarray(stats.wrapcauchy.pdf(x, c))
        np.testing.assert_allclose(np.trapezoid(p, x), 1.0, rtol=1e-6)
        np.testing.assert_allclose(p, (1 - c * c) / (2 * np.pi * (1 + c * c - 2 * c * np.cos(x))), rtol=1e-12)
    out = np.asarray(stats.wrapcauchy.logpdf(np.array([-0.1, 7.0, 1.0, 1.0, 1.0]), np.array([0.5, 0.5, 0.0, 1.0, -0.2])))
    assert np.isneginf(out[:2]).all() and np.isnan(out[2:]).all()
    st = pytest.importorskip("scipy.stats")
    np.testing.assert_allclose(np.asarray(stats.wrapcauchy.logpdf(x[1:-1], 0.7)), st.wrapcauchy.logpdf(x[1:-1], 0.7),
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
        m = stats.mode(a, axis=axis)
        moved = np.moveaxis(a, axis, -1).reshape(-1, a.shape[axis])
        want = np.array([_mode_ref(r) for r in moved]).reshape(np.moveaxis(a, axis, -1).shape[:-1] + (2,))
        np.testing.assert_array_equal(np.asarray(m.mode), want[..., 0])
        np.testing.assert_array_equal(np.asarray(m.count), want[..., 1])
    m = stats.mode(a, axis=None, keepdims=True)
    assert m.mode.shape == (1, 1, 1) and (float(m.mode.reshape(())), int(m.count.reshape(()))) == _mode_ref(a.ravel())
    assert stats.mode(a, axis=1, keepdims=True).mode.shape == (3, 1, 4)
    with pytest.raises(NotImplementedError, match="propagate"):
        stats.mode(a, nan_policy="omit")


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
def test_rankdata_matches_scipy(method):
    st = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(1)
    a = rng.integers(0, 5, (4, 6))
    for axis in (None, 0, 1, -1):
        got = np.asarray(stats.rankdata(a, method, axis=axis))
        want = st.rankdata(a, method, axis=axis)
        assert got.shape == want.shape and got.dtype.kind == "f"
        np.testing.assert_array_equal(got, want)
    with_nan = np.array([[1.0, np.nan, 3.0], [2.0, 2.0, 1.0]])
    got = np.asarray(stats.rankdata(with_nan, method, axis=1))
    assert np.isnan(got[0]).all()
    np.testing.assert_array_equal(got[1], st.rankdata(with_nan[1], method))
    with pytest.raises(ValueError, match="unknown method"):
        stats.rankdata(a, "foo")


def test_gumbel_mode_rankdata_against_jax():
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp
    js = jax.scipy.stats
    rng = np.random.default_rng(2)
    a = rng.integers(0, 4, (3, 5, 4)).astype(np.float32)
    a[0, 1, 2] = np.nan
    for axis in (0, 2, None):
        for kd in (False, True):
            r1, r2 = stats.mode(a, axis=axis, keepdims=kd), js.mode(jjnp.asarray(a), axis=axis, keepdims=kd)
            np.testing.assert_array_equal(np.asarray(r1.mode), np.asarray(r2.mode))
            np.testing.assert_array_equal(np.asarray(r1.count), np.asarray(r2.count))
        for m in ("average", "min", "max", "dense", "ordinal"):
            np.testing.assert_array_equal(np.asarray(stats.rankdata(a, m, axis=axis)),
                                          np.asarray(js.rankdata(jjnp.asarray(a), m, axis=axis)))
    for name in ("gumbel_r", "gumbel_l"):
        for f in ("logpdf", "cdf", "logsf"):
            np.testing.assert_allclose(np.asarray(getattr(getattr(stats, name), f)(GX.astype(np.float32), 0.3, 1.7)),
                                       np.asarray(getattr(getattr(js, name), f)(GX.astype(np.float32), 0.3, 1.7)),
                                       rtol=2e-6)


def test_python_scalar_parameters_keep_the_arrays_dtype_as_jax(x64_on):
    """A Python scalar beside a float32 array is promoted strongly typed (JAX's promote_args_inexact), so
    beta.logpdf / truncnorm.logpdf / uniform.logpdf of float32 data stay float32 with x64 on and give JAX's
    weak type (were float64: betaln of two weakly typed float32 values promoted as Python scalars)."""
    jax = pytest.importorskip("jax")
    import jax.scipy.stats as jst
    import funcgrad.scipy.stats as fst
    jax.config.update("jax_enable_x64", True)
    try:
        u = np.linspace(0.1, 0.9, 5).astype(np.float32)
        for name, args in [("beta", (2.0, 3.0)), ("truncnorm", (-1, 1)), ("uniform", ()), ("norm", (1.0, 2.0)),
                           ("gamma", (2.0,)), ("t", (3.0,))]:
            ours, theirs = getattr(fst, name).logpdf(u, *args), getattr(jst, name).logpdf(u, *args)
            assert (ours.dtype, ours.weak_type) == (theirs.dtype, theirs.weak_type), name
            np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=2e-5, atol=1e-6)
    finally:
        jax.config.update("jax_enable_x64", False)
