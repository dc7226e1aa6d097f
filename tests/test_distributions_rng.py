"""Samples of torch.distributions and torch's serial samplers (_standard_gamma, _sample_dirichlet, poisson,
binomial) drawn from torch's bit-exact CPU generator: the same numbers as torch after the same manual_seed
(compared where torch is installed), and the right moments (checked without torch)."""
import math

import numpy as np
import pytest

import funcgrad as ft
import funcgrad.distributions as fd


def _torch():
    return pytest.importorskip("torch")


def _both(fn):
    """fn(lib, distributions) under manual_seed(0) for torch and funcgrad, then the next randn(3) of each (the
    generator must be left where torch leaves it)."""
    torch = _torch()
    import torch.distributions as td
    out = []
    for lib, d in ((torch, td), (ft, fd)):
        lib.manual_seed(0)
        x = fn(lib, d)
        out.append((np.asarray(x.detach().numpy()), lib.randn(3).numpy()))
    return out


# families whose samples are the draws themselves or exact arithmetic on them: bit-identical to torch's
EXACT = {
    "Exponential": lambda L, d: d.Exponential(L.tensor([0.5, 2.0])).sample((7,)),
    "Gamma": lambda L, d: d.Gamma(L.tensor([0.05, 0.9, 1.0, 4.5, 300.0]), L.tensor([1.0, 2.0, 0.5, 1.0, 3.0])).sample((6,)),
    "Gamma64": lambda L, d: d.Gamma(L.tensor([0.3, 2.5], dtype=L.float64), L.tensor([1.0, 2.0], dtype=L.float64)).rsample((9,)),
    "Chi2": lambda L, d: d.Chi2(L.tensor([0.7, 3.0, 12.0])).sample((5,)),
    "Beta": lambda L, d: d.Beta(L.tensor([0.3, 2.0, 9.0]), L.tensor([1.5, 0.4, 9.0])).sample((6,)),
    "Dirichlet": lambda L, d: d.Dirichlet(L.tensor([[0.2, 1.0, 5.0, 0.7], [3.0, 3.0, 3.0, 3.0]])).sample((4,)),
    "Dirichlet64": lambda L, d: d.Dirichlet(L.tensor([0.5, 1.5, 2.5], dtype=L.float64)).rsample((5,)),
    "StudentT": lambda L, d: d.StudentT(L.tensor([1.5, 4.0, 30.0]), L.tensor([0.0, 1.0, -1.0]), L.tensor([1.0, 2.0, 0.5])).sample((5,)),
    "FisherSnedecor": lambda L, d: d.FisherSnedecor(L.tensor([3.0, 7.0]), L.tensor([4.0, 11.0])).sample((6,)),
    "Poisson": lambda L, d: d.Poisson(L.tensor([0.0, 0.3, 4.0, 9.99, 10.0, 57.0, 4000.0])).sample((5,)),
    "Poisson64": lambda L, d: d.Poisson(L.tensor([2.0, 25.0], dtype=L.float64)).sample((5,)),
    "Binomial": lambda L, d: d.Binomial(L.tensor([0.0, 5.0, 30.0, 100.0, 1000.0, 40.0, 8.0]),
                                        L.tensor([0.5, 0.5, 0.2, 0.6, 0.97, 1.0, 0.0])).sample((5,)),
    "Binomial64": lambda L, d: d.Binomial(L.tensor([25.0, 700.0], dtype=L.float64), L.tensor([0.45, 0.3], dtype=L.float64)).sample((6,)),
    "NegativeBinomial": lambda L, d: d.NegativeBinomial(L.tensor([2.0, 9.0]), L.tensor([0.3, 0.8])).sample((6,)),
    "Geometric": lambda L, d: d.Geometric(L.tensor([0.1, 0.5, 0.9])).sample((6,)),
    "Cauchy": lambda L, d: d.Cauchy(L.tensor([0.0, 1.0]), L.tensor([1.0, 3.0])).sample((5,)),
    "HalfCauchy": lambda L, d: d.HalfCauchy(L.tensor([1.0, 3.0])).sample((5,)),
    "HalfNormal": lambda L, d: d.HalfNormal(L.tensor([1.0, 3.0])).sample((20,)),
    "Categorical": lambda L, d: d.Categorical(L.tensor([0.1, 0.2, 0.3, 0.4])).sample((40,)),
    "Categorical1": lambda L, d: d.Categorical(L.tensor([[0.1, 0.9], [0.5, 0.5], [0.7, 0.3]])).sample(),
    "CategoricalLogits": lambda L, d: d.Categorical(logits=L.tensor([[0.0, 1.0, -1.0], [2.0, 0.0, 0.0]])).sample((3, 5)),
    "CategoricalScalar": lambda L, d: d.Categorical(L.tensor([0.25, 0.75], dtype=L.float64)).sample(),
    "CategoricalBatch": lambda L, d: d.Categorical(L.tensor([[[0.1, 0.9]], [[0.6, 0.4]]])).sample(),
    "OneHotCategorical": lambda L, d: d.OneHotCategorical(L.tensor([0.2, 0.3, 0.5])).sample((6,)),
    "Multinomial": lambda L, d: d.Multinomial(17, L.tensor([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])).sample((4,)),
    "MultivariateNormal": lambda L, d: d.MultivariateNormal(L.tensor([1.0, -1.0]), scale_tril=L.tensor([[1.0, 0.0], [0.5, 2.0]])).sample((3,)),
    "LowRankMultivariateNormal": lambda L, d: d.LowRankMultivariateNormal(
        L.tensor([1.0, 2.0]), L.tensor([[1.0], [2.0]]), L.tensor([1.0, 3.0])).sample((3,)),
}

# families that apply torch's elementwise log/log1p/exp/pow to the draws: the same draws, the same values to
# the last place of those functions
CLOSE = {
    "Laplace": lambda L, d: d.Laplace(L.tensor([0.0, 1.0]), L.tensor([1.0, 2.0])).sample((8,)),
    "LogNormal": lambda L, d: d.LogNormal(L.tensor([0.0, 1.0]), L.tensor([1.0, 0.5])).sample((8,)),
    "Gumbel": lambda L, d: d.Gumbel(L.tensor([0.0, 1.0]), L.tensor([1.0, 2.0])).sample((8,)),
    "Pareto": lambda L, d: d.Pareto(L.tensor([1.0, 2.0]), L.tensor([2.0, 3.0])).sample((8,)),
    "Weibull": lambda L, d: d.Weibull(L.tensor([1.0, 2.0]), L.tensor([2.0, 3.0])).sample((8,)),
    "InverseGamma": lambda L, d: d.InverseGamma(L.tensor([1.5, 2.0]), L.tensor([2.0, 3.0])).sample((8,)),
    "Kumaraswamy": lambda L, d: d.Kumaraswamy(L.tensor([1.5, 2.0]), L.tensor([2.0, 3.0])).sample((8,)),
    "RelaxedBernoulli": lambda L, d: d.RelaxedBernoulli(L.tensor(0.5), L.tensor([0.3, 0.6])).sample((8,)),
    "RelaxedOneHotCategorical": lambda L, d: d.RelaxedOneHotCategorical(L.tensor(0.7), L.tensor([0.2, 0.3, 0.5])).sample((4,)),
    "ContinuousBernoulli": lambda L, d: d.ContinuousBernoulli(L.tensor([0.3, 0.8])).sample((8,)),
    "GeneralizedPareto": lambda L, d: d.GeneralizedPareto(L.tensor([0.0, 1.0]), L.tensor([1.0, 2.0]), L.tensor([0.1, -0.2])).sample((8,)),
    # rejection rounds of rand((3,) + shape) in float64 until every element accepts (tiny, moderate, large
    # concentrations; the float32 result rounded from float64)
    "VonMises": lambda L, d: d.VonMises(L.tensor([0.5, -1.0, 2.0, 3.1]), L.tensor([1e-6, 0.01, 1.0, 50.0])).sample((6,)),
    "VonMises64": lambda L, d: d.VonMises(L.tensor(0.3, dtype=L.float64), L.tensor(2.0, dtype=L.float64)).sample((4, 3)),
    "VonMisesScalar": lambda L, d: d.VonMises(L.tensor(-2.0), L.tensor(0.5)).sample(),
    # Bartlett: Chi2 diagonals, randn below it in tril_indices order, torch's correction rounds
    "Wishart": lambda L, d: d.Wishart(L.tensor([4.0, 5.0], dtype=L.float64),
                                      covariance_matrix=L.tensor([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.5]],
                                                                 dtype=L.float64)).rsample((2,)),
    "WishartScalarDf": lambda L, d: d.Wishart(3.5, scale_tril=L.tensor([[1.0, 0.0], [0.5, 2.0]])).sample(),
    "WishartPrecision": lambda L, d: d.Wishart(L.tensor(6.0), precision_matrix=L.eye(4) * 2).sample((3,)),
    # the onion method: Beta samples, then randn(shape) directions on the hypersphere
    "LKJCholesky": lambda L, d: d.LKJCholesky(3, L.tensor([0.5, 2.0])).sample((2,)),
    "LKJCholesky2": lambda L, d: d.LKJCholesky(2, 1.0).sample((5,)),
    "LKJCholesky64": lambda L, d: d.LKJCholesky(5, L.tensor(1.5, dtype=L.float64)).sample(),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_samples_are_torchs(name):
    (t, t_next), (f, f_next) = _both(EXACT[name])
    assert t.dtype == f.dtype and t.shape == f.shape
    np.testing.assert_array_equal(f, t)
    np.testing.assert_array_equal(f_next, t_next)


@pytest.mark.parametrize("probs", [[0.1, 0.6, 0.3], [[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]], [[[0.1, 0.9]], [[0.5, 0.5]]]])
@pytest.mark.parametrize("sample_shape", [(), (5,), (2, 3)])
def test_categorical_sample_layout_is_torchs(probs, sample_shape):
    """Categorical's samples: torch's values, shape and strides (torch's transposed multinomial rows) for one
    row or many, one draw or many."""
    torch = _torch()
    out = []
    for lib in (torch, ft):
        lib.manual_seed(3)
        out.append(lib.distributions.Categorical(lib.tensor(probs)).sample(sample_shape))
    t, f = out
    assert tuple(f.shape) == tuple(t.shape) and f.stride() == t.stride() and f.dtype == ft.int64
    np.testing.assert_array_equal(f.numpy(), t.numpy())


@pytest.mark.parametrize("probs, msg", [([0.2, -0.1], "element < 0"), ([float("nan"), 1.0], "element < 0"),
                                        ([float("inf"), 1.0], "element < 0"), ([0.0, 0.0], "sum of probabilities")])
def test_multinomial_rejects_what_torch_rejects(probs, msg):
    torch = _torch()
    for lib in (torch, ft):
        with pytest.raises(RuntimeError, match=msg):
            lib.multinomial(lib.tensor([probs, [0.5, 0.5]]), 1, True)


@pytest.mark.parametrize("name", sorted(CLOSE))
@pytest.mark.filterwarnings("ignore:Singular sample detected")
def test_transformed_samples_are_torchs(name):
    (t, t_next), (f, f_next) = _both(CLOSE[name])
    assert t.dtype == f.dtype and t.shape == f.shape
    np.testing.assert_allclose(f, t, rtol=2e-6, atol=1e-7)
    np.testing.assert_array_equal(f_next, t_next)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_serial_samplers_are_torchs(dtype):
    torch = _torch()
    a = np.array([0.0, 1e-3, 0.2, 0.99, 1.0, 1.01, 3.0, 17.5, 1e4] * 3, dtype)
    lam = np.array([0.0, 1e-4, 0.7, 9.5, 10.0, 10.5, 77.0, 1e6], dtype)
    n = np.array([0, 1, 9, 10, 11, 60, 500, 1e6, 35, 35, 3, 3], dtype)
    p = np.array([0.3, 0.5, 0.9, 0.99, 0.5, 0.17, 0.5, 1e-3, 0.71, 0.29, 1.0, 0.0], dtype)
    alpha = np.array([[0.1, 0.2, 0.3], [1.0, 50.0, 1e-2], [2.0, 2.0, 2.0]], dtype)
    for seed in (0, 1, 12345):
        res = []
        for lib in (torch, ft):
            lib.manual_seed(seed)
            res.append([lib._standard_gamma(lib.tensor(a)).numpy(), lib.poisson(lib.tensor(lam)).numpy(),
                        lib.binomial(lib.tensor(n), lib.tensor(p)).numpy(),
                        lib._sample_dirichlet(lib.tensor(alpha)).numpy(), lib.rand(5, dtype=lib.float64).numpy()])
        for x, y in zip(*res):
            assert x.dtype == y.dtype
            np.testing.assert_array_equal(y, x)


def test_serial_samplers_continue_the_normal_cache():
    """A gamma sample consumes and leaves the generator's cached second normal as torch's does."""
    torch = _torch()
    res = []
    for lib in (torch, ft):
        lib.manual_seed(7)
        lib.randn(1, dtype=lib.float64)           # (caches the second normal of its pair)
        g = lib._standard_gamma(lib.tensor([2.0, 0.5, 3.0], dtype=lib.float64))
        res.append((g.numpy(), lib.randn(3, dtype=lib.float64).numpy(), lib.get_rng_state().numpy()))
    for x, y in zip(*res):
        np.testing.assert_array_equal(y, x)


def test_standard_gamma_gradient_is_torchs():
    torch = _torch()
    grads = []
    for lib in (torch, ft):
        lib.manual_seed(0)
        a = lib.tensor([0.3, 1.0, 2.5, 20.0], requires_grad=True)
        lib._standard_gamma(a.expand(50, 4)).sum().backward()
        grads.append(a.grad.numpy())
    # torch's standard_gamma_grad is an approximation good to a few 1e-5; funcgrad's the implicit gradient
    np.testing.assert_allclose(grads[1], grads[0], rtol=3e-4)


def test_generator_argument_and_errors():
    g = ft.Generator().manual_seed(3)
    x = ft.poisson(ft.tensor([5.0, 50.0]), generator=g)
    ft.manual_seed(3)
    np.testing.assert_array_equal(x.numpy(), ft.poisson(ft.tensor([5.0, 50.0])).numpy())
    with pytest.raises(RuntimeError, match="non-negative"):
        ft.poisson(ft.tensor([-1.0]))
    with pytest.raises(NotImplementedError, match="gamma_cpu"):
        ft._standard_gamma(ft.ones(2, dtype=ft.float16))
    with pytest.raises(NotImplementedError, match="binomial_cpu"):
        ft.binomial(ft.ones(2, dtype=ft.int64), ft.ones(2, dtype=ft.int64))
    with pytest.raises(RuntimeError, match="expected Float"):
        ft.binomial(ft.ones(2), ft.ones(2, dtype=ft.float64))


# --- moments (no torch needed) ---------------------------------------------------------------------------------

def _check_mean(x, mean, var, n):
    """The sample mean of n draws lies within 5 standard errors of the exact mean."""
    assert abs(float(np.mean(x)) - mean) < 5 * math.sqrt(var / n) + 1e-12


@pytest.mark.parametrize("alpha", [0.25, 1.0, 3.7, 40.0])
def test_gamma_moments(alpha):
    ft.manual_seed(1)
    x = ft._standard_gamma(ft.full((20000,), alpha, dtype=ft.float64)).numpy()
    _check_mean(x, alpha, alpha, x.size)
    _check_mean((x - alpha) ** 2, alpha, 2 * alpha ** 2 + 6 * alpha, x.size)   # var alpha, 4th moment 3a^2 + 6a


@pytest.mark.parametrize("lam", [0.5, 6.0, 10.0, 123.0])
def test_poisson_moments(lam):
    ft.manual_seed(2)
    x = ft.poisson(ft.full((20000,), lam, dtype=ft.float64)).numpy()
    assert np.all(x == np.floor(x)) and np.all(x >= 0)
    _check_mean(x, lam, lam, x.size)
    _check_mean((x - lam) ** 2, lam, lam + 2 * lam ** 2, x.size)   # 4th central moment lam (1 + 3 lam)


@pytest.mark.parametrize("n,p", [(7, 0.3), (50, 0.5), (400, 0.1), (400, 0.93), (30, 0.8)])
def test_binomial_moments(n, p):
    ft.manual_seed(3)
    x = ft.binomial(ft.full((20000,), float(n)), ft.full((20000,), p)).numpy().astype(np.float64)
    assert np.all((x >= 0) & (x <= n) & (x == np.floor(x)))
    v = n * p * (1 - p)
    _check_mean(x, n * p, v, x.size)
    _check_mean((x - n * p) ** 2, v, 3 * v ** 2 + v * (1 - 6 * p * (1 - p)) - v ** 2, x.size)


def test_dirichlet_and_beta_moments():
    ft.manual_seed(4)
    a = np.array([0.5, 1.5, 3.0])
    x = ft._sample_dirichlet(ft.tensor(np.tile(a, (20000, 1)))).numpy().astype(np.float64)
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-6)
    a0 = a.sum()
    for i in range(3):
        m = a[i] / a0
        _check_mean(x[:, i], m, m * (1 - m) / (a0 + 1), len(x))
    b = fd.Beta(ft.tensor([2.0]), ft.tensor([5.0])).sample((20000,)).numpy().astype(np.float64)
    _check_mean(b, 2 / 7, 2 * 5 / (49 * 8), b.size)


def test_categorical_and_multinomial_frequencies():
    ft.manual_seed(5)
    p = np.array([0.1, 0.2, 0.3, 0.4])
    s = fd.Categorical(ft.tensor(p)).sample((20000,)).numpy()
    assert s.dtype == np.int64
    for k in range(4):
        _check_mean(s == k, p[k], p[k] * (1 - p[k]), s.size)
    c = fd.Multinomial(10, ft.tensor(p)).sample((5000,)).numpy()
    np.testing.assert_array_equal(c.sum(-1), 10.0)
    for k in range(4):
        _check_mean(c[:, k], 10 * p[k], 10 * p[k] * (1 - p[k]), len(c))


def test_geometric_exponential_studentt_moments():
    ft.manual_seed(6)
    g = fd.Geometric(ft.tensor([0.25])).sample((20000,)).numpy().astype(np.float64)
    _check_mean(g, 3.0, 0.75 / 0.25 ** 2, g.size)
    e = fd.Exponential(ft.tensor([2.0])).sample((20000,)).numpy().astype(np.float64)
    _check_mean(e, 0.5, 0.25, e.size)
    t = fd.StudentT(ft.tensor([8.0])).sample((20000,)).numpy().astype(np.float64)
    _check_mean(t, 0.0, 8.0 / 6.0, t.size)


def test_von_mises_moments():
    """E[cos(x - loc)] = I1(k) / I0(k), E[sin(x - loc)] = 0, and every sample lies in [-pi, pi)."""
    ft.manual_seed(8)
    for k in (0.3, 2.0, 25.0):
        x = fd.VonMises(ft.tensor(1.0, dtype=ft.float64), ft.tensor(k, dtype=ft.float64)).sample((20000,)).numpy()
        assert x.min() >= -math.pi and x.max() < math.pi
        r = sum((k / 2) ** (2 * j + 1) / (math.factorial(j) * math.factorial(j + 1)) for j in range(80)) / np.i0(k)
        _check_mean(np.cos(x - 1.0), r, 1 - r / k - r ** 2, x.size)  # (E cos 2x = I2 / I0 = 1 - 2 r / k)
        _check_mean(np.sin(x - 1.0), 0.0, 0.5, x.size)


@pytest.mark.filterwarnings("ignore:Singular sample detected")
def test_wishart_and_lkj_moments():
    """Wishart(df, V): mean df V, every sample symmetric positive definite; LKJCholesky(d, eta): rows of unit
    norm, lower triangular with a positive diagonal, and the correlation of the first two coordinates of variance
    1 / (2 eta + d - 1). (torch's onion sampler, which funcgrad follows draw for draw, gives row i >= 2 a
    Beta(i - 1/2, .) radius where the method has Beta(i / 2, .): its deeper correlations are too small.)"""
    ft.manual_seed(9)
    V = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.5]])
    x = fd.Wishart(ft.tensor(5.0, dtype=ft.float64), ft.tensor(V)).sample((4000,)).numpy()
    np.testing.assert_allclose(x, np.swapaxes(x, -1, -2), atol=1e-12)
    assert (np.linalg.eigvalsh(x) > 0).all()
    var = 5.0 * (V ** 2 + np.outer(np.diag(V), np.diag(V)))
    for i, j in ((0, 0), (0, 1), (2, 1), (2, 2)):
        _check_mean(x[:, i, j], 5.0 * V[i, j], var[i, j], len(x))
    d, eta = 4, 1.5
    L = fd.LKJCholesky(d, ft.tensor(eta, dtype=ft.float64)).sample((8000,)).numpy()
    np.testing.assert_allclose((L ** 2).sum(-1), 1.0, rtol=1e-12)
    assert (np.triu(L, 1) == 0).all() and (np.diagonal(L, axis1=-2, axis2=-1) > 0).all()
    r = (L @ np.swapaxes(L, -1, -2))[:, 1, 0]
    v = 1 / (2 * eta + d - 1)
    _check_mean(r, 0.0, v, r.size)
    _check_mean(r ** 2, v, 2 * v ** 2, r.size)  # (4th moment of the scaled Beta below 3 v^2)


def test_categorical_sampling_is_fast():
    """One multinomial call for all samples (it drew one key per sample through threefry before)."""
    import time
    d = fd.Categorical(ft.softmax(ft.randn(50), 0))
    t0 = time.perf_counter()
    d.sample((20000,))
    assert time.perf_counter() - t0 < 2.0
