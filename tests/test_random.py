"""funcgrad.random: known answers (Random123 and JAX), key semantics, sampler statistics, transforms
(jit == eager bit for bit, vmap over keys == a loop) and reparameterisation gradients.

Reference values marked "JAX" were produced by jax 0.10.2 with jax_threefry_partitionable=False
(JAX's default before 0.5; a fixture selects it here, tests/test_jax_differential.py checks the
partitionable default against JAX itself), x64 disabled unless noted.
Statistical checks use fixed keys, so they are deterministic; their bounds are 5 standard errors.
"""
import math
import zlib

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as jnp
import funcgrad.random as jr
from funcgrad._src.core import dtypes
from funcgrad._src.prims.prng import random_gamma_grad, threefry2x32

U32 = np.uint32
N = 10_000


# funcgrad in one of JAX's two modes (the default int, float and complex of 32 or 64 bits), restored after
x64_mode = funcgrad.enable_x64


@pytest.fixture(autouse=True)
def _original_threefry_layout_x64_off():
    """The known answers below were produced with JAX's original (non-partitionable) layout and x64
    off (those marked "JAX (x64)" run under x64_mode(True))."""
    previous = funcgrad.config.read("jax_threefry_partitionable")
    funcgrad.config.update("jax_threefry_partitionable", False)
    with x64_mode(False):
        yield
    funcgrad.config.update("jax_threefry_partitionable", previous)


def key(seed=0):
    return jr.PRNGKey(seed)


def np_(x):
    return np.asarray(x)


# --- threefry2x32: Random123 known-answer vectors -----------------------------------------------

KAT = [  # (key1, key2, x1, x2) -> (y1, y2), Threefry-2x32 with 20 rounds
    ((0x00000000, 0x00000000, 0x00000000, 0x00000000), (0x6b200159, 0x99ba4efe)),
    ((0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff), (0x1cb996fc, 0xbb002be7)),
    ((0x13198a2e, 0x03707344, 0x243f6a88, 0x85a308d3), (0xc4923a9c, 0x483df7a0)),
]


@pytest.mark.parametrize("args,expected", KAT)
def test_threefry2x32_known_answers(args, expected):
    out = threefry2x32(*(jnp.asarray(np.array(v, U32)) for v in args))
    assert [int(o) for o in out] == list(expected)
    assert all(o.dtype == np.uint32 and o.shape == () for o in out)


def test_threefry2x32_vectorised_jit_and_vmap_agree_with_the_vectors():
    ins = [np.array([a[i] for a, _ in KAT], U32) for i in range(4)]
    expected = [np.array([e[i] for _, e in KAT], U32) for i in range(2)]
    for f in (threefry2x32, funcgrad.jit(threefry2x32), funcgrad.vmap(threefry2x32)):
        out = f(*(jnp.asarray(x) for x in ins))
        for o, e in zip(out, expected):
            np.testing.assert_array_equal(np_(o), e)
    # vmap with some operands unbatched broadcasts them
    out = funcgrad.vmap(threefry2x32, in_axes=(None, None, 0, 0))(
        jnp.asarray(np.array(0x13198a2e, U32)), jnp.asarray(np.array(0x03707344, U32)),
        jnp.asarray(np.array([0x243f6a88] * 3, U32)), jnp.asarray(np.array([0x85a308d3] * 3, U32)))
    assert np_(out[0]).tolist() == [0xc4923a9c] * 3 and np_(out[1]).tolist() == [0x483df7a0] * 3


def test_threefry2x32_rejects_other_dtypes_and_shapes():
    a = jnp.asarray(np.zeros(3, U32))
    with pytest.raises(TypeError, match="uint32"):
        threefry2x32(a, a, a, jnp.zeros(3, dtype=jnp.int32))
    with pytest.raises(TypeError, match="shape"):
        threefry2x32(a, a, a, jnp.asarray(np.zeros(4, U32)))


# --- keys, split, fold_in, bits: JAX's values --------------------------------------------------

def test_keys_from_seeds():
    assert np_(key(0)).tolist() == [0, 0] and key(0).dtype == np.uint32
    assert np_(key(7)).tolist() == [0, 7]
    assert np_(jr.key(7)).tolist() == [0, 7]
    assert np_(jr.PRNGKey(2 ** 40 + 7)).tolist() == [0, 7]                   # JAX: int32 seed
    assert np_(jr.PRNGKey(-1)).tolist() == [0, 2 ** 32 - 1]                  # JAX: int32 seed
    with x64_mode(True):
        assert np_(jr.PRNGKey(2 ** 40 + 7)).tolist() == [256, 7]             # JAX (x64)
        assert np_(jr.PRNGKey(-1)).tolist() == [2 ** 32 - 1, 2 ** 32 - 1]     # JAX (x64): 64-bit seed
        assert np_(jr.PRNGKey(np.uint64(2 ** 63 + 5))).tolist() == [2 ** 31, 5]
    assert np_(jr.PRNGKey(np.int32(-1))).tolist() == [0, 2 ** 32 - 1]        # JAX: 32-bit seed
    np.testing.assert_array_equal(np_(jr.key_data(key(3))), np_(key(3)))
    for seed in (0, 5, -3):  # a traced seed gives the same key
        np.testing.assert_array_equal(np_(funcgrad.jit(jr.PRNGKey)(seed)), np_(jr.PRNGKey(seed)))
    with x64_mode(True):
        for seed in (-3, 2 ** 40 + 7):
            np.testing.assert_array_equal(np_(funcgrad.jit(jr.PRNGKey)(seed)), np_(jr.PRNGKey(seed)))
    np.testing.assert_array_equal(np_(funcgrad.vmap(jr.PRNGKey)(jnp.arange(3))), [[0, 0], [0, 1], [0, 2]])
    with pytest.raises(TypeError, match="integer"):
        jr.PRNGKey(1.5)
    with pytest.raises(TypeError, match="scalar"):
        jr.PRNGKey(np.arange(2))


def test_split_fold_in_and_bits_match_jax():
    np.testing.assert_array_equal(np_(jr.split(key(0))), [[4146024105, 967050713], [2718843009, 1272950319]])
    np.testing.assert_array_equal(np_(jr.split(key(42), 3)), [[3134548294, 3733159049],
                                                               [3746501087, 894150801],
                                                               [801545058, 2363201431]])
    assert jr.split(key(0), (2, 3)).shape == (2, 3, 2)
    assert np_(jr.fold_in(key(0), 1)).tolist() == [928981903, 3453687069]
    assert np_(jr.fold_in(key(3), 123456789)).tolist() == [1143149278, 1847441915]
    assert np_(jr.bits(key(0), (5,))).tolist() == [2467461003, 428148500, 1688610540, 3840466878, 2562233961]
    assert np_(jr.bits(key(0), (5,), np.uint16)).tolist() == [20137, 63263, 64300, 20622, 16513]
    assert np_(jr.bits(key(0), (7,), np.uint8)).tolist() == [143, 35, 95, 55, 29, 21, 219]
    with x64_mode(True):
        assert np_(jr.bits(key(0), (3,), np.uint64)).tolist() == [10597664315880824766, 1838883807893689961,
                                                                  13686855971547664781]   # JAX (x64)
    assert jr.bits(key(0), (2, 3), np.uint16).shape == (2, 3)
    assert jr.bits(key(0), (0,)).shape == (0,)


def test_samplers_match_jax_values():
    assert float(jr.uniform(key(0))) == np.float32(0.41845703)
    np.testing.assert_array_equal(np_(jr.uniform(key(0), (3,))),
                                  np.array([0.96532142162323, 0.31468164920806885, 0.6330299377441406], np.float32))
    np.testing.assert_array_equal(np_(jr.uniform(key(1), (3,), minval=-3.3, maxval=7.1)),
                                  np.array([2.612945795059204, -0.6105204224586487, 5.949028491973877], np.float32))
    with x64_mode(True):
        np.testing.assert_array_equal(np_(jr.uniform(key(0), (3,), jnp.float64)),
                                      [0.5745005337275046, 0.0996860909733377, 0.7419659489424089])  # JAX (x64)
    assert np_(jr.randint(key(0), (8,), 0, 10, dtype=jnp.int32)).tolist() == [8, 6, 8, 4, 6, 0, 3, 8]
    assert np_(jr.randint(key(5), (6,), -1000, 1000, dtype=jnp.int32)).tolist() == [669, -570, -277, 815, -555, 813]
    assert np_(jr.randint(key(5), (6,), 0, 256, dtype=jnp.uint8)).tolist() == [181, 254, 35, 183, 205, 53]
    with x64_mode(True):
        assert np_(jr.randint(key(0), (5,), 0, 10, dtype=jnp.int64)).tolist() == [1, 0, 3, 8, 4]  # JAX (x64)
    assert np_(jr.permutation(key(0), 10)).tolist() == [2, 7, 9, 6, 0, 8, 1, 3, 4, 5]
    assert np_(jr.bernoulli(key(0), 0.3, (12,))).astype(int).tolist() == [0, 1, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0]
    logits = np.log(np.array([.1, .2, .7], np.float32))
    assert np_(jr.categorical(key(0), logits, shape=(10,))).tolist() == [1, 2, 1, 2, 2, 2, 2, 1, 2, 2]
    p = np.array([.1, .2, .3, .2, .2], np.float32)
    assert np_(jr.choice(key(0), 5, (10,), p=p)).tolist() == [3, 2, 2, 3, 3, 2, 3, 3, 1, 1]
    assert np_(jr.choice(key(0), 10, (4,), replace=False)).tolist() == [2, 7, 9, 6]
    assert np_(jr.poisson(key(0), np.array([0.5, 3., 20., 100.], np.float32))).tolist() == [1, 2, 20, 98]
    # Through transcendental functions (erf_inv, log, pow) values agree to float32 rounding.
    np.testing.assert_allclose(np_(jr.normal(key(0), (3,))), [1.8160862922668457, -0.4826231598854065,
                                                              0.3398890793323517], rtol=1e-5)
    np.testing.assert_allclose(np_(jr.gamma(key(0), np.array([0.5, 2.5, 10.], np.float32))),
                               [0.1400693953037262, 1.864467978477478, 8.308809280395508], rtol=1e-5)
    np.testing.assert_allclose(np_(jr.beta(key(0), 2., 3., (3,))),
                               [0.028093529865145683, 0.13760720193386078, 0.49360352754592896], rtol=1e-5)


# --- key hygiene --------------------------------------------------------------------------------

def test_split_and_fold_in_are_deterministic_and_give_independent_streams():
    k = key(123)
    np.testing.assert_array_equal(np_(jr.split(k, 4)), np_(jr.split(k, 4)))
    subkeys = np_(jr.split(k, 64))
    rows = {tuple(r) for r in subkeys} | {tuple(np_(k))}
    assert len(rows) == 65  # all distinct, none equal to the parent
    folded = {tuple(np_(jr.fold_in(k, i))) for i in range(64)}
    assert len(folded) == 64
    # different keys: different, uncorrelated streams; the same key: the same stream
    a, b = (np_(jr.normal(s, (N,))) for s in jr.split(k))
    assert abs(np.corrcoef(a, b)[0, 1]) < 5 / math.sqrt(N)
    np.testing.assert_array_equal(np_(jr.normal(k, (N,))), np_(jr.normal(k, (N,))))
    # consecutive outputs of one call are uncorrelated too
    u = np_(jr.uniform(k, (N + 1,)))
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 5 / math.sqrt(N)


def test_key_errors_are_clear():
    with pytest.raises(TypeError, match="uint32\\[2\\]"):
        jr.normal(np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="vmap"):
        jr.normal(jr.split(key(0), 3))
    with pytest.raises(ValueError, match="broadcast"):
        jr.uniform(key(0), (3,), minval=np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="float"):
        jr.uniform(key(0), (3,), dtype=jnp.int32)
    with pytest.raises(TypeError, match="integer"):
        jr.randint(key(0), (3,), 0, 5, dtype=jnp.float32)


# --- statistics -----------------------------------------------------------------------------------

def _moments_ok(x, mean, var, what):
    """Sample mean and variance within 5 standard errors of the distribution's."""
    x = np.asarray(x, np.float64).ravel()
    n = x.size
    m, s2 = x.mean(), x.var(ddof=1)
    assert abs(m - mean) < 5 * math.sqrt(var / n), f"{what}: mean {m} vs {mean}"
    m4 = np.mean((x - m) ** 4)
    se_var = math.sqrt(max(m4 - s2 ** 2, 0.0) / n)
    # (+ 25 var / n: the sample mean's own error, (m - mean)^2, which dominates for two-point laws)
    assert abs(s2 - var) < 5 * se_var + 25 * var / n, f"{what}: variance {s2} vs {var} (se {se_var})"


def _dist_table():
    g = math.gamma
    return {
        # name: (sampler(key), mean, variance, support check)
        "uniform": (lambda k: jr.uniform(k, (N,), minval=-2.0, maxval=3.0), 0.5, 25 / 12,
                    lambda x: (x >= -2).all() and (x < 3).all()),
        "normal": (lambda k: jr.normal(k, (N,)), 0.0, 1.0, None),
        "normal64": (lambda k: jr.normal(k, (N,), jnp.float64), 0.0, 1.0, None),
        "truncated_normal": (lambda k: jr.truncated_normal(k, -1.0, 2.0, (N,)), 0.229637, 0.519763,
                             lambda x: (x > -1).all() and (x < 2).all()),
        "exponential": (lambda k: jr.exponential(k, (N,)), 1.0, 1.0, lambda x: (x >= 0).all()),
        "gumbel": (lambda k: jr.gumbel(k, (N,)), 0.5772156649, math.pi ** 2 / 6, None),
        "gumbel_high": (lambda k: jr.gumbel(k, (N,), mode="high"), 0.5772156649, math.pi ** 2 / 6, None),
        "laplace": (lambda k: jr.laplace(k, (N,)), 0.0, 2.0, None),
        "logistic": (lambda k: jr.logistic(k, (N,)), 0.0, math.pi ** 2 / 3, None),
        "gamma_small": (lambda k: jr.gamma(k, 0.3, (N,)), 0.3, 0.3, lambda x: (x >= 0).all()),
        "gamma": (lambda k: jr.gamma(k, 4.5, (N,)), 4.5, 4.5, lambda x: (x > 0).all()),
        "gamma64": (lambda k: jr.gamma(k, 4.5, (N,), jnp.float64), 4.5, 4.5, lambda x: (x > 0).all()),
        "loggamma": (lambda k: jnp.exp(jr.loggamma(k, 2.0, (N,))), 2.0, 2.0, None),
        "beta": (lambda k: jr.beta(k, 2.0, 3.0, (N,)), 0.4, 0.04, lambda x: (x >= 0).all() and (x <= 1).all()),
        "dirichlet": (lambda k: jr.dirichlet(k, np.array([1.0, 2.0, 3.0], np.float32), (N,))[:, 2], 0.5,
                      0.5 * 0.5 / 7, None),
        "chisquare": (lambda k: jr.chisquare(k, 3.0, (N,)), 3.0, 6.0, lambda x: (x > 0).all()),
        "t": (lambda k: jr.t(k, 5.0, (N,)), 0.0, 5 / 3, None),
        "poisson_small": (lambda k: jr.poisson(k, 3.5, (N,)), 3.5, 3.5, lambda x: (x >= 0).all()),
        "poisson_large": (lambda k: jr.poisson(k, 40.0, (N,)), 40.0, 40.0, lambda x: (x >= 0).all()),
        "bernoulli": (lambda k: jr.bernoulli(k, 0.3, (N,)), 0.3, 0.21, None),
        "bernoulli_high": (lambda k: jr.bernoulli(k, 0.3, (N,), mode="high"), 0.3, 0.21, None),
        "rademacher": (lambda k: jr.rademacher(k, (N,)), 0.0, 1.0, lambda x: set(np.unique(x)) == {-1, 1}),
        "randint": (lambda k: jr.randint(k, (N,), -3, 7), 1.5, (10 ** 2 - 1) / 12,
                    lambda x: (x >= -3).all() and (x < 7).all()),
        "geometric": (lambda k: jr.geometric(k, 0.25, (N,)), 4.0, 0.75 / 0.0625, lambda x: (x >= 1).all()),
        "rayleigh": (lambda k: jr.rayleigh(k, 2.0, (N,)), 2 * math.sqrt(math.pi / 2), (4 - math.pi) / 2 * 4,
                     lambda x: (x >= 0).all()),
        "pareto": (lambda k: jr.pareto(k, 5.0, (N,)), 1.25, 5 / (16 * 3), lambda x: (x >= 1).all()),
        "weibull_min": (lambda k: jr.weibull_min(k, 2.0, 1.5, (N,)), 2 * g(1 + 1 / 1.5),
                        4 * (g(1 + 2 / 1.5) - g(1 + 1 / 1.5) ** 2), lambda x: (x >= 0).all()),
        "lognormal": (lambda k: jr.lognormal(k, 0.5, (N,)), math.exp(0.125), (math.exp(0.25) - 1) * math.exp(0.25),
                      lambda x: (x > 0).all()),
        "maxwell": (lambda k: jr.maxwell(k, (N,)), 2 * math.sqrt(2 / math.pi), 3 - 8 / math.pi, None),
        "triangular": (lambda k: jr.triangular(k, 0.0, 0.3, 1.0, (N,)), 1.3 / 3, (1 + 0.09 - 0.3) / 18,
                       lambda x: (x >= 0).all() and (x <= 1).all()),
        "wald": (lambda k: jr.wald(k, 1.5, (N,)), 1.5, 1.5 ** 3, lambda x: (x > 0).all()),
        "generalized_normal": (lambda k: jr.generalized_normal(k, 2.0, (N,)), 0.0, 0.5, None),
        "double_sided_maxwell": (lambda k: jr.double_sided_maxwell(k, 1.0, 2.0, (N,)), 1.0, 12.0, None),
        "f": (lambda k: jr.f(k, 4.0, 12.0, (N,)), 1.2, 2 * 144 * 14 / (4 * 100 * 8), lambda x: (x > 0).all()),
    }


DISTS = _dist_table()


@pytest.mark.parametrize("name", sorted(DISTS))
def test_sampler_moments_and_support(name):
    sampler, mean, var, support = DISTS[name]
    x = np_(sampler(key(zlib.crc32(name.encode()) % 1000)))
    assert x.shape == (N,) and np.isfinite(x.astype(np.float64)).all()
    _moments_ok(x, mean, var, name)
    if support is not None:
        assert support(x), f"{name}: samples outside the support"


def test_distributions_pass_kolmogorov_smirnov():
    stats = pytest.importorskip("scipy.stats")
    checks = {
        "normal": (jr.normal(key(1), (N,)), stats.norm.cdf),
        "uniform": (jr.uniform(key(2), (N,)), stats.uniform.cdf),
        "gamma_0.3": (jr.gamma(key(3), 0.3, (N,)), stats.gamma(0.3).cdf),
        "gamma_7": (jr.gamma(key(4), 7.0, (N,)), stats.gamma(7.0).cdf),
        "beta": (jr.beta(key(5), 0.5, 2.0, (N,)), stats.beta(0.5, 2.0).cdf),
        "truncated_normal": (jr.truncated_normal(key(6), -0.5, 1.5, (N,)), stats.truncnorm(-0.5, 1.5).cdf),
        "t": (jr.t(key(7), 3.0, (N,)), stats.t(3.0).cdf),
        "laplace": (jr.laplace(key(8), (N,)), stats.laplace.cdf),
        "cauchy": (jr.cauchy(key(9), (N,)), stats.cauchy.cdf),
    }
    for name, (x, cdf) in checks.items():
        x = np.sort(np_(x).astype(np.float64))
        c = cdf(x)
        d = max(np.max(np.arange(1, N + 1) / N - c), np.max(c - np.arange(N) / N))
        assert d < 1.95 / math.sqrt(N), f"{name}: KS distance {d}"  # alpha = 0.001


def test_discrete_frequencies():
    p = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    for name, x in {
        "categorical": jr.categorical(key(1), np.log(p), shape=(N,)),
        "choice_p": jr.choice(key(2), 4, (N,), p=p),
    }.items():
        counts = np.bincount(np_(x), minlength=4)
        se = np.sqrt(N * p * (1 - p))
        assert (np.abs(counts - N * p) < 5 * se).all(), f"{name}: {counts}"
    # batched logits along a non-default axis
    logits = np.log(np.array([[0.9, 0.5], [0.1, 0.5]], np.float32))
    x = np_(jr.categorical(key(3), logits, axis=0, shape=(N, 2)))
    assert abs(x[:, 0].mean() - 0.1) < 5 * math.sqrt(0.09 / N) and abs(x[:, 1].mean() - 0.5) < 5 * math.sqrt(0.25 / N)
    # randint covers its range evenly, including a range reaching past int8's maximum
    counts = np.bincount(np_(jr.randint(key(4), (N,), 0, 10)), minlength=10)
    assert (np.abs(counts - N / 10) < 5 * math.sqrt(N * 0.09)).all()
    u8 = np_(jr.randint(key(5), (N,), 250, 256, dtype=jnp.uint8))
    assert u8.dtype == np.uint8 and set(np.unique(u8)) == set(range(250, 256))
    assert np_(jr.randint(key(6), (5,), 3, 3)).tolist() == [3] * 5  # empty range gives minval


def test_permutation_and_choice():
    for n in (1, 2, 17, 1000):
        perm = np_(jr.permutation(key(n), n))
        assert sorted(perm.tolist()) == list(range(n))
    x = np.arange(12).reshape(3, 4)
    cols = np_(jr.permutation(key(1), x, axis=1))
    assert sorted(cols[0].tolist()) == [0, 1, 2, 3] and (cols - cols[0] == np.array([[0], [4], [8]])).all()
    ind = np_(jr.permutation(key(1), x, axis=1, independent=True))
    assert all(sorted(r.tolist()) == list(x[i]) for i, r in enumerate(ind))
    # position of element 0 after shuffling 4 items is uniform
    pos = np.array([np_(jr.permutation(k, 4)).tolist().index(0) for k in np_(jr.split(key(2), 2000))])
    counts = np.bincount(pos, minlength=4)
    assert (np.abs(counts - 500) < 5 * math.sqrt(2000 * 0.1875)).all()
    no_rep = np_(jr.choice(key(3), 10, (10,), replace=False))
    assert sorted(no_rep.tolist()) == list(range(10))
    rows = np_(jr.choice(key(4), x, (2,), replace=False, axis=1))
    assert rows.shape == (3, 2) and len(set(rows[0].tolist())) == 2
    assert np_(jr.choice(key(5), 5, (2, 3))).shape == (2, 3)
    with pytest.raises(ValueError, match="larger sample"):
        jr.choice(key(0), 3, (4,), replace=False)
    with pytest.raises(funcgrad.ConcretizationError):
        funcgrad.jit(lambda n: jr.permutation(key(0), n))(5)


def test_multivariate_normal_and_orthogonal():
    mean = np.array([1.0, -2.0, 0.5], np.float32)
    a = np.array([[1.0, 0.0, 0.0], [0.5, 1.0, 0.0], [-0.3, 0.2, 0.7]], np.float32)
    cov = a @ a.T
    for method in ("cholesky", "eigh", "svd"):
        x = np_(jr.multivariate_normal(key(1), mean, cov, (N,), method=method)).astype(np.float64)
        assert x.shape == (N, 3)
        assert (np.abs(x.mean(0) - mean) < 5 * np.sqrt(np.diag(cov) / N)).all()
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)
    q = np_(jr.orthogonal(key(2), 4, (3,)))
    assert q.shape == (3, 4, 4)
    np.testing.assert_allclose(np.einsum("bij,bkj->bik", q, q), np.broadcast_to(np.eye(4), (3, 4, 4)), atol=1e-5)
    wide = np_(jr.orthogonal(key(3), 2, m=5))
    assert wide.shape == (2, 5)
    np.testing.assert_allclose(wide @ wide.T, np.eye(2), atol=1e-5)
    b = np_(jr.ball(key(4), 3, shape=(1000,)))
    assert b.shape == (1000, 3) and (np.linalg.norm(b, axis=-1) <= 1).all()


def test_shapes_and_dtypes():
    k = key(0)
    assert jr.uniform(k).shape == () and jr.uniform(k).dtype == np.float32
    assert jr.uniform(k, (2, 3), jnp.float16).dtype == np.float16
    assert jr.normal(k, (4,), jnp.complex64).dtype == np.complex64
    assert jr.randint(k, (3,), 0, 5).dtype == np.int32   # the default int, JAX's with x64 off
    assert jr.bernoulli(k, 0.5, (3,)).dtype == np.bool_
    assert jr.bernoulli(k, np.array([0.1, 0.9], np.float32)).shape == (2,)
    assert jr.gamma(k, np.ones((2, 3), np.float32)).shape == (2, 3)
    assert jr.gamma(k, 2.0, (0,)).shape == (0,)
    assert jr.dirichlet(k, np.ones(4, np.float32), (2, 3)).shape == (2, 3, 4)
    assert jr.categorical(k, np.zeros((5, 3), np.float32)).shape == (5,)
    assert jr.categorical(k, np.zeros((5, 3), np.float32), shape=(2, 5)).shape == (2, 5)
    assert jr.categorical(k, np.zeros((5, 3), np.float32), shape=(2, 5), replace=False).shape == (2, 5)
    assert jr.poisson(k, np.array([1.0, 50.0], np.float32)).dtype == np.int32
    with x64_mode(True):
        assert jr.randint(k, (3,), 0, 5).dtype == np.int64
        assert jr.poisson(k, np.array([1.0, 50.0], np.float32)).dtype == np.int64
        assert jr.bits(k, (3,)).dtype == np.uint64
    assert jr.poisson(k, 3.0, (3,), dtype=jnp.int32).dtype == np.int32
    assert jr.truncated_normal(k, np.zeros(3, np.float32), 1.0).shape == (3,)
    x = np_(jr.uniform(k, (1000,), jnp.float16, minval=1.0, maxval=1.5))
    assert (x >= 1.0).all() and (x <= 1.5).all()  # float16 rounding may reach maxval, as in JAX
    s = np_(jr.normal(k, (N,), jnp.complex64))
    assert abs(np.var(s.real) - 0.5) < 0.05 and abs(np.var(s.imag) - 0.5) < 0.05
    assert np_(jr.poisson(k, np.array([0.0, 0.0], np.float32))).tolist() == [0, 0]


# --- transforms: jit == eager bit for bit, vmap over keys == a loop ------------------------------

SAMPLERS = {
    "bits": lambda k: jr.bits(k, (7,), jnp.uint8),
    "split": lambda k: jr.split(k, 3),
    "fold_in": lambda k: jr.fold_in(k, 9),
    "uniform": lambda k: jr.uniform(k, (5,), minval=-1.0, maxval=2.0),
    "normal": lambda k: jr.normal(k, (5,)),
    "normal_c64": lambda k: jr.normal(k, (3,), jnp.complex64),
    "truncated_normal": lambda k: jr.truncated_normal(k, -1.0, 2.0, (5,)),
    "bernoulli": lambda k: jr.bernoulli(k, 0.3, (5,)),
    "randint": lambda k: jr.randint(k, (5,), -4, 9),
    "permutation": lambda k: jr.permutation(k, np.arange(12).reshape(3, 4), axis=1),
    "choice": lambda k: jr.choice(k, 10, (4,), replace=False),
    "choice_p": lambda k: jr.choice(k, 4, (6,), p=np.array([.1, .2, .3, .4], np.float32)),
    "categorical": lambda k: jr.categorical(k, np.zeros((2, 3), np.float32), shape=(4, 2)),
    "gumbel": lambda k: jr.gumbel(k, (5,)),
    "exponential": lambda k: jr.exponential(k, (5,)),
    "laplace": lambda k: jr.laplace(k, (5,)),
    "logistic": lambda k: jr.logistic(k, (5,)),
    "gamma": lambda k: jr.gamma(k, np.array([0.2, 1.0, 3.0, 50.0], np.float32)),
    "loggamma": lambda k: jr.loggamma(k, np.array([0.01, 3.0], np.float32)),
    "beta": lambda k: jr.beta(k, 0.5, 2.0, (3,)),
    "dirichlet": lambda k: jr.dirichlet(k, np.array([0.5, 1.0, 2.0], np.float32)),
    "poisson": lambda k: jr.poisson(k, np.array([0.5, 4.0, 30.0, 0.0], np.float32)),
    "geometric": lambda k: jr.geometric(k, 0.3, (4,)),
    "orthogonal": lambda k: jr.orthogonal(k, 3),
    "t": lambda k: jr.t(k, 3.0, (3,)),
    "rademacher": lambda k: jr.rademacher(k, (4,)),
    "wald": lambda k: jr.wald(k, 1.5, (4,)),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_jit_equals_eager_and_vmap_over_keys_equals_loop(name):
    f = SAMPLERS[name]
    keys = jr.split(key(11), 3)
    eager = np_(f(keys[0]))
    jitted = np_(funcgrad.jit(f)(keys[0]))
    assert jitted.dtype == eager.dtype
    np.testing.assert_array_equal(jitted, eager)
    batched = np_(funcgrad.vmap(f)(keys))
    loop = np.stack([np_(f(k)) for k in keys])
    assert batched.dtype == loop.dtype
    np.testing.assert_array_equal(batched, loop)
    np.testing.assert_array_equal(np_(funcgrad.jit(funcgrad.vmap(f))(keys)), loop)


def test_vmap_over_parameters_and_keys_together():
    keys = jr.split(key(5), 4)
    a = np.array([0.5, 1.0, 2.0, 8.0], np.float32)
    out = np_(funcgrad.vmap(lambda k, a: jr.gamma(k, a, (3,)))(keys, a))
    np.testing.assert_array_equal(out, np.stack([np_(jr.gamma(k, x, (3,))) for k, x in zip(keys, a)]))
    mv = np_(funcgrad.vmap(lambda k: jr.multivariate_normal(k, np.zeros(2, np.float32),
                                                            np.eye(2, dtype=np.float32), (3,)))(keys))
    np.testing.assert_allclose(mv, np.stack([np_(jr.multivariate_normal(k, np.zeros(2, np.float32),
                                                                        np.eye(2, dtype=np.float32), (3,)))
                                             for k in keys]), rtol=1e-6, atol=1e-6)


# --- gradients ------------------------------------------------------------------------------------

def test_location_scale_gradients():
    k = key(0)
    z = np_(jr.normal(k, (1000,)))
    g_mu, g_sigma = funcgrad.grad(lambda mu, s: jnp.mean(jr.normal(k, (1000,)) * s + mu), argnums=(0, 1))(1.0, 2.0)
    np.testing.assert_allclose(float(g_mu), 1.0, rtol=1e-6)
    np.testing.assert_allclose(float(g_sigma), z.mean(), rtol=1e-5, atol=1e-7)
    u = np_(jr.uniform(k, (1000,)))
    g_lo, g_hi = funcgrad.grad(lambda lo, hi: jnp.mean(jr.uniform(k, (1000,), minval=lo, maxval=hi)),
                               argnums=(0, 1))(1.0, 3.0)
    np.testing.assert_allclose([float(g_lo), float(g_hi)], [1 - u.mean(), u.mean()], rtol=1e-5)
    g = funcgrad.grad(lambda m: jnp.sum(jr.multivariate_normal(k, m, np.eye(2, dtype=np.float32), (10,))))
    np.testing.assert_allclose(np_(g(jnp.zeros(2))), [10.0, 10.0])


def test_gamma_gradient_is_the_implicit_reparameterisation_gradient():
    """dx/da at the sample's own quantile: finite differences of x = F^-1(F(x; a); a + h) in a.

    (The sample is a deterministic function of `a` for a fixed key, but through Marsaglia-Tsang's
    transform, not the inverse CDF; its pathwise derivative differs per sample, with the same mean.)"""
    special = pytest.importorskip("scipy.special")
    a = np.array([0.05, 0.3, 0.9, 1.0, 2.5, 7.0, 40.0, 300.0] * 4, np.float64)
    k = key(3)
    x = np_(jr.gamma(k, a, dtype=jnp.float64))
    grad = np_(funcgrad.grad(lambda a: jnp.sum(jr.gamma(k, a, dtype=jnp.float64)))(jnp.asarray(a)))
    q = special.gammainc(a, x)
    upper = q > 0.5  # invert through the upper tail there, where it is better conditioned
    qc = special.gammaincc(a, x)
    h = 1e-6 * a

    def inv(aa):
        return np.where(upper, special.gammainccinv(aa, qc), special.gammaincinv(aa, q))
    fd = (inv(a + h) - inv(a - h)) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=2e-5, atol=1e-12)
    # jit and vmap of the gradient give the same numbers
    np.testing.assert_allclose(np_(funcgrad.jit(funcgrad.grad(lambda a: jnp.sum(jr.gamma(k, a, dtype=jnp.float64))))(
        jnp.asarray(a))), grad, rtol=1e-12)


def test_random_gamma_grad_against_mpmath(x64_on):  # in float64, as JAX with x64 on: x = 1e-200, 1e-12 tolerances
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 30
    pts = [(1e-3, 1e-200), (0.05, 1e-3), (0.3, 0.2), (1.0, 1.5), (2.5, 2.0), (10.0, 30.0), (100.0, 95.0),
           (1000.0, 1040.0), (0.5, 4.0), (3.0, 0.1), (2e4, 2e4 + 300.0)]
    a = np.array([p[0] for p in pts])
    x = np.array([p[1] for p in pts])
    got = np_(random_gamma_grad(jnp.asarray(a), jnp.asarray(x)))
    got_log = np_(random_gamma_grad(jnp.asarray(a), jnp.asarray(np.log(x)), log_space=True))
    for ai, xi, g, gl in zip(a, x, got, got_log):
        ai_, xi_ = mp.mpf(ai), mp.mpf(xi)
        dpda = mp.diff(lambda s: mp.gammainc(s, 0, xi_, regularized=True), ai_)
        dpdx = xi_ ** (ai_ - 1) * mp.exp(-xi_) / mp.gamma(ai_)
        ref = float(-dpda / dpdx)
        assert abs(g - ref) <= 1e-12 * abs(ref) + 1e-300, (ai, xi, g, ref)
        assert abs(gl - ref / xi) <= 1e-12 * abs(ref / xi), (ai, xi, gl, ref / xi)
    edge = np_(random_gamma_grad(jnp.asarray(np.array([2.0, -1.0, 2.0])), jnp.asarray(np.array([0.0, 1.0, -1.0]))))
    assert edge[0] == 0.0 and np.isnan(edge[1:]).all()


def test_gradients_of_expectations_are_unbiased():
    k = key(7)
    for a in (0.4, 2.5):  # d/da E[x] = 1 and d/da E[x^2] = 2a + 1 for x ~ Gamma(a)
        g1 = np_(funcgrad.vmap(funcgrad.grad(lambda a, k: jr.gamma(k, a)), in_axes=(None, 0))(a, jr.split(k, N)))
        assert abs(g1.mean() - 1.0) < 5 * g1.std() / math.sqrt(N)
        g2 = float(funcgrad.grad(lambda a: jnp.mean(jr.gamma(k, a, (N,)) ** 2))(a))
        assert abs(g2 - (2 * a + 1)) < 0.1 * (2 * a + 1)
    # beta mean a / (a + b): d/da = b / (a + b)^2; dirichlet mean alpha_i / sum(alpha)
    gb = float(funcgrad.grad(lambda a: jnp.mean(jr.beta(k, a, 3.0, (N,))))(2.0))
    assert abs(gb - 3 / 25) < 0.01
    gd = np_(funcgrad.grad(lambda al: jnp.mean(jr.dirichlet(k, al, (N,))[:, 0]))(jnp.asarray([1.0, 2.0, 3.0])))
    np.testing.assert_allclose(gd, [5 / 36, -1 / 36, -1 / 36], atol=0.01)
    # log-space samples: d/da E[log x] = trigamma(a)
    gl = float(funcgrad.grad(lambda a: jnp.mean(jr.loggamma(k, a, (N,))))(0.5))
    assert abs(gl - 4.934802) < 0.15  # trigamma(0.5) = pi^2 / 2


def test_gamma_gradient_composes_with_transforms_and_refuses_second_order():
    k = key(1)
    f = lambda a: jr.gamma(k, a, (3,))  # noqa: E731
    jac = np_(funcgrad.jacfwd(f)(2.0))
    np.testing.assert_allclose(np_(funcgrad.jacrev(f)(2.0)), jac, rtol=1e-6)
    np.testing.assert_allclose(np_(funcgrad.jit(funcgrad.jacfwd(f))(2.0)), jac, rtol=1e-6)
    with pytest.raises(NotImplementedError, match="second derivatives"):
        funcgrad.grad(funcgrad.grad(lambda a: jr.gamma(k, a)))(2.0)
