"""random.binomial / multinomial / shuffle: goodness of fit against SciPy's pmf (fixed keys, so the
tests are deterministic), invalid parameters, jit and vmap."""
import numpy as np
import pytest
import scipy.stats as sst

import funcgrad as jax
import funcgrad.numpy as jnp
import funcgrad.random as jr

KEY = jr.PRNGKey(0)


def _chi2_pvalue(samples, n, p):
    counts = np.bincount(samples.astype(int), minlength=int(n) + 1)
    probs = sst.binom.pmf(np.arange(int(n) + 1), n, p)
    keep = probs * samples.size >= 5  # pool the sparse tails
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(probs[keep], probs[~keep].sum()) * samples.size
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return sst.chisquare(obs, exp).pvalue


@pytest.mark.parametrize("n,p", [(5, 0.3), (40, 0.7), (200, 0.05)])
def test_binomial_distribution(n, p):
    s = np.asarray(jr.binomial(KEY, n, p, (4000,), dtype=jnp.float64))
    assert s.dtype == np.float64 and s.min() >= 0 and s.max() <= n and np.all(s == np.floor(s))
    assert _chi2_pvalue(s, n, p) > 1e-3


def test_binomial_large_n_moments_and_edges():
    n, p = 1e6, 0.01
    s = np.asarray(jr.binomial(KEY, n, p, (2000,), dtype=jnp.float64))
    se = np.sqrt(n * p * (1 - p) / s.size)
    assert abs(s.mean() - n * p) < 5 * se
    out = np.asarray(jr.binomial(KEY, jnp.array([0.0, 7.0, 7.0, -1.0, 3.0]), jnp.array([0.5, 0.0, 1.0, 0.5, 1.5])))
    assert out[:3].tolist() == [0.0, 0.0, 7.0] and np.isnan(out[3:]).all()
    a = jax.jit(lambda k: jr.binomial(k, 30.0, 0.4, (6,)))(KEY)
    b = jr.binomial(KEY, 30.0, 0.4, (6,))
    np.testing.assert_array_equal(a, b)
    keys = jr.split(KEY, 3)
    v = jax.vmap(lambda k: jr.binomial(k, 30.0, 0.4, (2,)))(keys)
    np.testing.assert_array_equal(v[1], jr.binomial(keys[1], 30.0, 0.4, (2,)))


def test_multinomial():
    p = np.array([0.2, 0.3, 0.5])
    m = np.asarray(jr.multinomial(KEY, 50.0, p, shape=(3000, 3), dtype=jnp.float64))  # JAX: categories last
    assert m.shape == (3000, 3) and np.all(m.sum(-1) == 50) and m.min() >= 0
    np.testing.assert_allclose(m.mean(0), 50 * p, atol=5 * np.sqrt(50 * 0.25 / 3000))
    assert _chi2_pvalue(m[:, 1], 50, 0.3) > 1e-3
    batch = jr.multinomial(KEY, jnp.array([5.0, 10.0]), jnp.array([[0.5, 0.5], [0.1, 0.9]]))
    assert batch.shape == (2, 2) and np.asarray(batch.sum(-1)).tolist() == [5.0, 10.0]


def test_shuffle_is_deprecated_permutation():
    x = jnp.arange(10)
    with pytest.warns(DeprecationWarning):
        s = jr.shuffle(KEY, x)
    assert sorted(np.asarray(s).tolist()) == list(range(10))
    np.testing.assert_array_equal(s, jr.permutation(KEY, x, independent=True))
