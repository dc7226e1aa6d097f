"""funcgrad.distributions against scipy.stats: log_prob, cdf, icdf, entropy, mean, variance (float64,
Hypothesis-drawn parameters inside the support), and sampling (moments and a KS / chi-square test at a
fixed key) for every family with a scipy counterpart."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.distributions as D
import funcgrad.numpy as jnp
import funcgrad.random as jr

stats = pytest.importorskip("scipy.stats")


def A(x):
    return jnp.asarray(np.asarray(x, np.float64))


def N(x):
    return np.asarray(x)


# name: (ranges of each parameter, funcgrad constructor, scipy frozen distribution, discrete?)
CASES = {
    "Normal": ([(-3, 3), (0.3, 3)], lambda m, s: D.Normal(m, s), lambda m, s: stats.norm(m, s), False),
    "Uniform": ([(-3, 3), (0.5, 4)], lambda lo, w: D.Uniform(lo, lo + w), lambda lo, w: stats.uniform(lo, w), False),
    "Exponential": ([(0.3, 4)], lambda r: D.Exponential(r), lambda r: stats.expon(scale=1 / r), False),
    "Laplace": ([(-3, 3), (0.3, 3)], lambda m, s: D.Laplace(m, s), lambda m, s: stats.laplace(m, s), False),
    "Cauchy": ([(-3, 3), (0.3, 3)], lambda m, s: D.Cauchy(m, s), lambda m, s: stats.cauchy(m, s), False),
    "Gamma": ([(0.5, 5), (0.3, 3)], lambda c, r: D.Gamma(c, r), lambda c, r: stats.gamma(c, scale=1 / r), False),
    "Chi2": ([(0.5, 8)], lambda k: D.Chi2(k), lambda k: stats.chi2(k), False),
    "Beta": ([(0.5, 5), (0.5, 5)], lambda a, b: D.Beta(a, b), lambda a, b: stats.beta(a, b), False),
    "StudentT": ([(2.5, 10), (-2, 2), (0.3, 3)], lambda d, m, s: D.StudentT(d, m, s),
                 lambda d, m, s: stats.t(d, m, s), False),
    "FisherSnedecor": ([(1, 10), (4.5, 12)], lambda a, b: D.FisherSnedecor(a, b), lambda a, b: stats.f(a, b), False),
    "HalfNormal": ([(0.3, 3)], lambda s: D.HalfNormal(s), lambda s: stats.halfnorm(scale=s), False),
    "HalfCauchy": ([(0.3, 3)], lambda s: D.HalfCauchy(s), lambda s: stats.halfcauchy(scale=s), False),
    "VonMises": ([(-2, 2), (0.2, 8)], lambda m, k: D.VonMises(m, k), lambda m, k: stats.vonmises(k, loc=m), False),
    "LogNormal": ([(-1, 1), (0.2, 1)], lambda m, s: D.LogNormal(m, s),
                  lambda m, s: stats.lognorm(s, scale=np.exp(m)), False),
    "Gumbel": ([(-3, 3), (0.3, 3)], lambda m, s: D.Gumbel(m, s), lambda m, s: stats.gumbel_r(m, s), False),
    "Pareto": ([(0.5, 3), (2.5, 6)], lambda s, a: D.Pareto(s, a), lambda s, a: stats.pareto(a, scale=s), False),
    "Weibull": ([(0.5, 3), (0.6, 4)], lambda s, c: D.Weibull(s, c), lambda s, c: stats.weibull_min(c, scale=s), False),
    "InverseGamma": ([(2.5, 6), (0.5, 3)], lambda c, r: D.InverseGamma(c, r),
                     lambda c, r: stats.invgamma(c, scale=r), False),
    "GeneralizedPareto": ([(-2, 2), (0.5, 2), (-0.3, 0.3)], lambda m, s, c: D.GeneralizedPareto(m, s, c),
                          lambda m, s, c: stats.genpareto(c, m, s), False),
    "Poisson": ([(0.3, 8)], lambda r: D.Poisson(r), lambda r: stats.poisson(r), True),
    "Bernoulli": ([(0.05, 0.95)], lambda p: D.Bernoulli(p), lambda p: stats.bernoulli(p), True),
    "Geometric": ([(0.1, 0.9)], lambda p: D.Geometric(p), lambda p: stats.geom(p, loc=-1), True),
    "Binomial": ([(0.05, 0.95)], lambda p: D.Binomial(7, p), lambda p: stats.binom(7, p), True),
    "NegativeBinomial": ([(0.5, 6), (0.1, 0.8)], lambda n, p: D.NegativeBinomial(n, p),
                         lambda n, p: stats.nbinom(n, 1 - p), True),
}
NO_ENTROPY = {"VonMises", "FisherSnedecor", "Poisson", "NegativeBinomial", "GeneralizedPareto"}
NO_ICDF = {"Gamma", "Chi2", "Beta", "StudentT", "FisherSnedecor", "VonMises", "InverseGamma", "Poisson",
           "Bernoulli", "Geometric", "Binomial", "NegativeBinomial"}
NO_CDF = {"Beta", "StudentT", "FisherSnedecor", "VonMises", "Poisson", "Bernoulli", "Geometric", "Binomial",
          "NegativeBinomial"}


def _params(data, ranges, n=2):
    out = []
    for lo, hi in ranges:
        # (no subnormals: scipy.stats.genpareto mis-handles a concentration of 1e-309)
        out.append(np.array(data.draw(st.lists(st.floats(lo, hi, allow_subnormal=False), min_size=n, max_size=n)),
                            np.float64))
    return out


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=4)
@given(data=st.data())
def test_against_scipy(name, data):
    ranges, make, ref, discrete = CASES[name]
    ps = _params(data, ranges)
    d = make(*[A(p) for p in ps])
    assert d.batch_shape == (2,) and d.event_shape == ()
    frozen = ref(*[p for p in ps])
    x = frozen.rvs(size=(3, 2), random_state=np.random.default_rng(0))
    ref_lp = frozen.logpmf(x) if discrete else frozen.logpdf(x)
    # VonMises' normaliser uses Abramowitz & Stegun's polynomials for log I0 (as PyTorch): ~1e-7 accurate
    np.testing.assert_allclose(N(d.log_prob(A(x))), ref_lp, rtol=1e-7, atol=2e-7 if name == "VonMises" else 1e-9)
    if name == "VonMises":  # circular mean and variance (scipy's are by slow quadrature)
        from scipy.special import i0e, i1e
        np.testing.assert_allclose(N(d.mean), ps[0], rtol=1e-12)
        np.testing.assert_allclose(N(d.variance), 1 - i1e(ps[1]) / i0e(ps[1]), rtol=1e-6)
    else:
        np.testing.assert_allclose(N(d.mean), frozen.mean(), rtol=1e-7, atol=1e-12)
    if name not in ("Cauchy", "VonMises"):  # scipy says NaN, PyTorch (and funcgrad) inf
        np.testing.assert_allclose(N(d.variance), frozen.var(), rtol=1e-7)
        np.testing.assert_allclose(N(d.stddev), frozen.std(), rtol=1e-7)
    if name not in NO_ENTROPY:
        np.testing.assert_allclose(N(d.entropy()), frozen.entropy(), rtol=1e-7, atol=1e-9)
    if name not in NO_CDF:
        np.testing.assert_allclose(N(d.cdf(A(x))), frozen.cdf(x), rtol=1e-7, atol=1e-10)
    if name not in NO_ICDF:
        q = np.array(data.draw(st.lists(st.floats(0.02, 0.98), min_size=2, max_size=2)))
        np.testing.assert_allclose(N(d.icdf(A(q))), frozen.ppf(q), rtol=1e-7, atol=1e-9)


def test_cdf_icdf_of_transformed_and_gamma():
    # cdf through monotone decreasing transforms (InverseGamma: x -> 1/x) and Gamma's incomplete gamma
    for c, r in [(0.7, 2.0), (3.0, 0.5), (30.0, 3.0)]:
        x = np.array([0.05, 0.5, 2.0, 9.0, 40.0])
        np.testing.assert_allclose(N(D.Gamma(A(c), A(r)).cdf(A(x))), stats.gamma(c, scale=1 / r).cdf(x), rtol=1e-9,
                                   atol=1e-14)
        np.testing.assert_allclose(N(D.InverseGamma(A(c), A(r)).cdf(A(x))), stats.invgamma(c, scale=r).cdf(x),
                                   rtol=1e-9, atol=1e-14)
    q = np.array([0.1, 0.5, 0.9])
    np.testing.assert_allclose(N(D.Kumaraswamy(A(2.0), A(3.0)).icdf(A(q))), (1 - (1 - q) ** (1 / 3)) ** 0.5,
                               rtol=1e-10)


def test_multivariate_against_scipy():
    rng = np.random.default_rng(1)
    B = rng.normal(size=(2, 3, 3))
    cov = B @ B.transpose(0, 2, 1) + np.eye(3)
    loc = rng.normal(size=(2, 3))
    d = D.MultivariateNormal(A(loc), covariance_matrix=A(cov))
    x = rng.normal(size=(4, 2, 3))
    for i in range(2):
        ref = stats.multivariate_normal(loc[i], cov[i])
        np.testing.assert_allclose(N(d.log_prob(A(x)))[:, i], ref.logpdf(x[:, i]), rtol=1e-9)
        np.testing.assert_allclose(N(d.entropy())[i], ref.entropy(), rtol=1e-9)
    W = rng.normal(size=(3, 2))
    diag = rng.uniform(0.5, 2, 3)
    lr = D.LowRankMultivariateNormal(A(loc[0]), A(W), A(diag))
    ref = stats.multivariate_normal(loc[0], W @ W.T + np.diag(diag))
    np.testing.assert_allclose(N(lr.log_prob(A(x[:, 0]))), ref.logpdf(x[:, 0]), rtol=1e-9)
    np.testing.assert_allclose(N(lr.entropy()), ref.entropy(), rtol=1e-9)
    alpha = np.array([0.7, 2.0, 3.5])
    dd = D.Dirichlet(A(alpha))
    v = stats.dirichlet(alpha).rvs(3, random_state=1)
    np.testing.assert_allclose(N(dd.log_prob(A(v))), [stats.dirichlet(alpha).logpdf(r) for r in v], rtol=1e-9)
    np.testing.assert_allclose(N(dd.entropy()), stats.dirichlet(alpha).entropy(), rtol=1e-9)
    np.testing.assert_allclose(N(dd.mean), stats.dirichlet(alpha).mean(), rtol=1e-12)
    np.testing.assert_allclose(N(dd.variance), stats.dirichlet(alpha).var(), rtol=1e-12)
    wi = D.Wishart(A(5.0), covariance_matrix=A(cov[0]))
    X = stats.wishart(5.0, cov[0]).rvs(3, random_state=2)
    np.testing.assert_allclose(N(wi.log_prob(A(X))), stats.wishart(5.0, cov[0]).logpdf(X.transpose(1, 2, 0)),
                               rtol=1e-9)
    np.testing.assert_allclose(N(wi.entropy()), stats.wishart(5.0, cov[0]).entropy(), rtol=1e-9)
    np.testing.assert_allclose(N(wi.mean), stats.wishart(5.0, cov[0]).mean(), rtol=1e-12)
    p = np.array([0.2, 0.3, 0.5])
    mn = D.Multinomial(6, A(p))
    c = stats.multinomial(6, p).rvs(4, random_state=3).astype(np.float64)
    np.testing.assert_allclose(N(mn.log_prob(A(c))), stats.multinomial(6, p).logpmf(c), rtol=1e-9)
    np.testing.assert_allclose(N(mn.entropy()), stats.multinomial(6, p).entropy(), rtol=1e-9)
    cat = D.Categorical(A(p))
    np.testing.assert_allclose(N(cat.log_prob(A([0., 2., 1.]))), np.log(p[[0, 2, 1]]), rtol=1e-12)
    np.testing.assert_allclose(N(cat.entropy()), stats.entropy(p), rtol=1e-12)


def _integrate(pdf, lo, hi, k):
    from scipy.integrate import quad
    return quad(lambda t: t ** k * pdf(t), lo, hi, limit=200)[0]


@pytest.mark.parametrize("make,lo,hi", [
    (lambda: D.Kumaraswamy(A(2.0), A(3.0)), 0, 1),
    (lambda: D.ContinuousBernoulli(A(0.3)), 0, 1),
    (lambda: D.ContinuousBernoulli(A(0.5)), 0, 1),
])
def test_moments_by_quadrature(make, lo, hi):
    """Families without a scipy counterpart: density integrates to 1; mean, variance and entropy by quadrature."""
    d = make()
    pdf = lambda t: float(np.exp(N(d.log_prob(A(t)))))  # noqa: E731
    assert _integrate(pdf, lo, hi, 0) == pytest.approx(1.0, rel=1e-7)
    m = _integrate(pdf, lo, hi, 1)
    assert float(N(d.mean)) == pytest.approx(m, rel=1e-7)
    assert float(N(d.variance)) == pytest.approx(_integrate(pdf, lo, hi, 2) - m ** 2, rel=1e-6)
    from scipy.integrate import quad
    h = quad(lambda t: -pdf(t) * math.log(pdf(t)), lo, hi, limit=200)[0]
    assert float(N(d.entropy())) == pytest.approx(h, rel=1e-6, abs=1e-9)


# --- sampling: moments and goodness of fit at a fixed key --------------------------------------------------

SAMPLE_N = 4000


@pytest.mark.parametrize("name", sorted(CASES))
def test_sampling_fit(name):
    ranges, make, ref, discrete = CASES[name]
    ps = [np.array([lo + 0.3 * (hi - lo), lo + 0.8 * (hi - lo)]) for lo, hi in ranges]
    d = make(*[A(p) for p in ps])
    x = N(d.sample(jr.PRNGKey(7), (SAMPLE_N,)))
    assert x.shape == (SAMPLE_N, 2) and x.dtype == np.float64
    for i in range(2):
        frozen = ref(*[p[i] for p in ps])
        xi = x[:, i]
        if discrete:
            values, counts = np.unique(xi, return_counts=True)
            assert np.all(frozen.pmf(values) > 0)
            # chi-square over the values seen, with the tail merged into the last cell
            probs = frozen.pmf(values)
            keep = probs * SAMPLE_N >= 5
            obs = np.append(counts[keep], SAMPLE_N - counts[keep].sum())
            exp = np.append(probs[keep] * SAMPLE_N, SAMPLE_N - probs[keep].sum() * SAMPLE_N)
            if exp[-1] < 1e-9:
                obs, exp = obs[:-1], exp[:-1]
            assert stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > 1e-4
        else:
            assert stats.kstest(xi, frozen.cdf).pvalue > 1e-4
        if name not in ("Cauchy", "HalfCauchy", "VonMises") and np.isfinite(frozen.var()):
            se = math.sqrt(frozen.var() / SAMPLE_N)
            assert abs(xi.mean() - frozen.mean()) < 5 * se


@pytest.mark.parametrize("make,check", [
    (lambda: D.Dirichlet(A([[0.5, 1.0, 3.0]])), "simplex"),
    (lambda: D.MultivariateNormal(A([1.0, -1.0]), A([[2.0, 0.6], [0.6, 1.0]])), "mvn"),
    (lambda: D.LowRankMultivariateNormal(A([1.0, -1.0]), A([[1.0], [0.5]]), A([1.0, 0.5])), "mvn"),
    (lambda: D.Categorical(A([0.2, 0.5, 0.3])), "categorical"),
    (lambda: D.OneHotCategorical(A([0.2, 0.5, 0.3])), "onehot"),
    (lambda: D.Multinomial(5, A([0.2, 0.5, 0.3])), "multinomial"),
    (lambda: D.Kumaraswamy(A(2.0), A(3.0)), "ks"),
    (lambda: D.ContinuousBernoulli(A(0.3)), "ks"),
    (lambda: D.LogisticNormal(A([0.0, 1.0]), A([1.0, 0.5])), "simplex"),
    (lambda: D.Wishart(A(4.0), A([[2.0, 0.6], [0.6, 1.0]])), "wishart"),
    (lambda: D.LKJCholesky(3, A(2.0)), "lkj"),
    (lambda: D.RelaxedBernoulli(A(0.5), A(0.3)), "unit"),
    (lambda: D.RelaxedOneHotCategorical(A(0.5), A([0.2, 0.5, 0.3])), "simplex"),
    (lambda: D.MixtureSameFamily(D.Categorical(A([0.3, 0.7])), D.Normal(A([-2.0, 2.0]), A([0.5, 1.0]))), "mix"),
])
def test_sampling_multivariate(make, check):
    d = make()
    x = N(d.sample(jr.PRNGKey(3), (SAMPLE_N,)))
    assert x.shape == (SAMPLE_N,) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert bool(np.all(N(d.support.check(A(x)))))
    if check in ("mvn", "wishart", "onehot", "multinomial", "simplex") and check != "simplex" or \
            isinstance(d, D.Dirichlet):
        se = np.sqrt(N(d.variance) / SAMPLE_N)
        assert np.all(np.abs(x.mean(0) - N(d.mean)) < 5 * se + 1e-12)
    if check == "mvn":
        np.testing.assert_allclose(np.cov(x.T), N(d.covariance_matrix), atol=0.15)
    if check == "categorical":
        counts = np.bincount(x.astype(int), minlength=3)
        assert stats.chisquare(counts, N(d.probs) * SAMPLE_N).pvalue > 1e-4
    if check == "ks":
        pdf = lambda t: np.exp(N(d.log_prob(A(t))))  # noqa: E731
        grid = np.linspace(1e-6, 1 - 1e-6, 4001)
        cdf_grid = np.concatenate([[0], np.cumsum((pdf(grid[1:]) + pdf(grid[:-1])) / 2 * np.diff(grid))])
        assert stats.kstest(x, lambda t: np.interp(t, grid, cdf_grid)).pvalue > 1e-4
    if check == "lkj":  # correlations: rows of unit norm; marginal of an off-diagonal correlation is Beta-shaped
        corr = x @ np.swapaxes(x, -1, -2)
        np.testing.assert_allclose(np.diagonal(corr, axis1=-2, axis2=-1), 1.0, atol=1e-6)
        r = corr[:, 0, 1]  # for LKJ(eta) in dim 3: (r + 1) / 2 ~ Beta(eta + 1/2, eta + 1/2)
        assert stats.kstest((r + 1) / 2, stats.beta(2.5, 2.5).cdf).pvalue > 1e-4
    if check == "mix":
        ref_cdf = lambda t: 0.3 * stats.norm(-2, 0.5).cdf(t) + 0.7 * stats.norm(2, 1).cdf(t)  # noqa: E731
        assert stats.kstest(x, ref_cdf).pvalue > 1e-4
