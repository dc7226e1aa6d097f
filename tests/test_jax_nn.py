"""jax.nn's functions and initializers in funcgrad.nn: values against NumPy formulas (and real JAX where
installed), derivatives at kinks as JAX defines them, grad/vmap/jit composition, initializer statistics;
log1mexp and logmeanexp (and, in their JAX comparison, tree_util's flatten_one_level and tree_broadcast)."""
import math

import numpy as np
import pytest
from scipy import stats

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad.testing import check_grads

X = np.linspace(-4, 4, 33)  # includes the kinks 0, +-1 exactly


def _sig(x):
    return 1 / (1 + np.exp(-x))


def _softplus(x):
    return np.logaddexp(x, 0)


REFS = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "sigmoid": _sig,
    "log_sigmoid": lambda x: -_softplus(-x),
    "softplus": _softplus,
    "soft_sign": lambda x: x / (np.abs(x) + 1),
    "silu": lambda x: x * _sig(x),
    "swish": lambda x: x * _sig(x),
    "hard_sigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
    "hard_silu": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "elu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "celu": lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0)),
    "selu": lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "gelu": lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))),
    "mish": lambda x: x * np.tanh(_softplus(x)),
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "tanh": np.tanh,
}


@pytest.mark.parametrize("name", sorted(REFS))
def test_activation_values(name):
    got = np.asarray(getattr(fg.nn, name)(jnp.asarray(X)))
    np.testing.assert_allclose(got, REFS[name](X), rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("name", ["relu", "softplus", "silu", "gelu", "elu", "selu", "mish", "log_sigmoid"])
def test_activation_gradients_against_finite_differences(name):
    x = jnp.asarray(np.array([-2.3, -0.7, 0.4, 1.9]))
    check_grads(getattr(fg.nn, name), (x,), order=2)


def test_kink_derivatives_follow_jax():
    g = fg.grad(lambda x: fg.nn.relu(x))
    assert float(g(0.0)) == 0.0 and float(g(1e-3)) == 1.0
    assert float(fg.grad(fg.nn.relu6)(6.0)) == 0.0
    assert float(fg.grad(fg.nn.hard_tanh)(1.0)) == 1.0


def test_relu_keeps_nan_with_zero_derivative_like_jax():
    """jax.nn.relu is max(x, 0) with derivative 0 at and below 0: NaN stays NaN (its derivative is 0,
    as JAX's select(x > 0, g, 0)), -0.0 and -inf give 0, inf stays inf."""
    a = np.array([-0.0, 0.0, -1.0, np.nan, 2.0, -np.inf, np.inf, 1e-30])
    np.testing.assert_array_equal(np.asarray(fg.nn.relu(a)), [0, 0, 0, np.nan, 2, 0, np.inf, 1e-30])
    np.testing.assert_array_equal(np.asarray(fg.jit(fg.nn.relu)(a)), [0, 0, 0, np.nan, 2, 0, np.inf, 1e-30])
    np.testing.assert_array_equal(np.asarray(fg.vmap(fg.grad(fg.nn.relu))(a)), [0, 0, 0, 0, 1, 0, 1, 1])
    np.testing.assert_array_equal(np.asarray(fg.vmap(fg.grad(fg.grad(lambda x: fg.nn.relu(x) * x)))(a)),
                                  [0, 0, 0, 0, 2, 0, 2, 2])


def test_gelu_exact_and_softmax_family():
    from scipy.special import erf
    np.testing.assert_allclose(np.asarray(fg.nn.gelu(jnp.asarray(X), approximate=False)),
                               0.5 * X * (1 + erf(X / math.sqrt(2))), rtol=1e-6, atol=1e-12)
    a = np.random.default_rng(0).standard_normal((3, 5))
    for axis in (-1, 0, (0, 1)):
        e = np.exp(a - a.max(axis=axis, keepdims=True))
        ref = e / e.sum(axis=axis, keepdims=True)
        np.testing.assert_allclose(np.asarray(fg.nn.softmax(jnp.asarray(a), axis=axis)), ref, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(fg.nn.log_softmax(jnp.asarray(a), axis=axis)), np.log(ref),
                                   rtol=1e-6, atol=1e-12)
    mask = a > 0
    got = np.asarray(fg.nn.softmax(jnp.asarray(a), where=mask))
    e = np.where(mask, np.exp(a), 0)
    np.testing.assert_allclose(got, e / e.sum(-1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(fg.nn.logsumexp(jnp.asarray(a), axis=1)),
                               np.log(np.exp(a).sum(1)), rtol=1e-6)
    b, c = np.split(a[:, :4], 2, axis=-1)
    np.testing.assert_allclose(np.asarray(fg.nn.glu(jnp.asarray(a[:, :4]))), b * _sig(c), rtol=1e-6)
    with pytest.raises(ValueError):
        fg.nn.glu(jnp.asarray(a))
    s = np.asarray(fg.nn.standardize(jnp.asarray(a), axis=1))
    np.testing.assert_allclose(s, (a - a.mean(1, keepdims=True)) / np.sqrt(a.var(1, keepdims=True) + 1e-5),
                               rtol=1e-5)


def test_one_hot_and_attention():
    oh = np.asarray(fg.nn.one_hot(jnp.asarray([0, 2, 5, -1]), 3))
    np.testing.assert_array_equal(oh, [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
    assert oh.dtype == np.float64  # the default float (x64 on in this module), as jax.nn.one_hot
    np.testing.assert_array_equal(np.asarray(fg.nn.one_hot(jnp.asarray([1, 0]), 2, axis=0)), [[0, 1], [1, 0]])
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((2, 4, 3, 8)) for _ in range(3))  # batch, seq, heads, dim
    got = np.asarray(fg.nn.dot_product_attention(jnp.asarray(q), jnp.asarray(k), jnp.asarray(v), is_causal=True))
    logits = np.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(8)
    logits = np.where(np.tril(np.ones((4, 4), bool)), logits, -np.inf)
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(got, np.einsum("bhqk,bkhd->bqhd", p, v), rtol=1e-6, atol=1e-12)


def test_composes_with_vmap_and_jit():
    x = jnp.asarray(np.random.default_rng(2).standard_normal((4, 6)))
    f = lambda r: fg.nn.log_softmax(fg.nn.gelu(r))  # noqa: E731
    np.testing.assert_allclose(np.asarray(fg.vmap(f)(x)), np.asarray(f(x)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(fg.jit(f)(x)), np.asarray(f(x)), rtol=1e-6)


@pytest.mark.parametrize("name,scale,mode", [("glorot_uniform", 1, "avg"), ("glorot_normal", 1, "avg"),
                                             ("lecun_uniform", 1, "in"), ("lecun_normal", 1, "in"),
                                             ("he_uniform", 2, "in"), ("he_normal", 2, "in")])
def test_variance_scaling_initializers(name, scale, mode):
    shape = (300, 200)
    w = np.asarray(getattr(fg.nn.initializers, name)()(fg.random.key(42), shape), np.float64).ravel()
    fan = {"in": 300, "avg": 250}[mode]
    std = math.sqrt(scale / fan)
    if "uniform" in name:
        lim = std * math.sqrt(3)
        assert stats.kstest(w, stats.uniform(-lim, 2 * lim).cdf).pvalue > 1e-3
    else:
        dist = stats.truncnorm(-2, 2, scale=std / stats.truncnorm(-2, 2).std())
        assert stats.kstest(w, dist.cdf).pvalue > 1e-3


def test_other_initializers():
    k = fg.random.key(3)
    I = fg.nn.initializers
    assert np.asarray(I.zeros(k, (2, 3))).sum() == 0 and np.asarray(I.ones(k, (2,), jnp.float64)).dtype == np.float64
    np.testing.assert_array_equal(np.asarray(I.constant(7.0)(k, (2,))), [7.0, 7.0])
    u = np.asarray(I.uniform(0.5)(k, (5000,)))
    assert u.min() >= 0 and u.max() < 0.5 and abs(u.mean() - 0.25) < 0.01
    for shape in ((5, 3), (3, 5), (2, 3, 4)):
        w = np.asarray(I.orthogonal()(k, shape), np.float64).reshape(-1, shape[-1])
        gram = w.T @ w if w.shape[0] >= w.shape[1] else w @ w.T
        np.testing.assert_allclose(gram, np.eye(gram.shape[0]), atol=1e-5)
    d = np.asarray(I.delta_orthogonal()(k, (3, 3, 4, 4)), np.float64)
    np.testing.assert_allclose(d[1, 1].T @ d[1, 1], np.eye(4), atol=1e-5)
    assert np.abs(d).sum() == pytest.approx(np.abs(d[1, 1]).sum())
    with pytest.raises(ValueError):
        I.glorot_uniform()(k, (5,))


def test_against_real_jax():
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp
    for name in REFS:
        if hasattr(jax.nn, name):
            np.testing.assert_allclose(np.asarray(getattr(fg.nn, name)(jnp.asarray(X))),
                                       np.asarray(getattr(jax.nn, name)(jjnp.asarray(X, jjnp.float32))),
                                       rtol=2e-6, atol=1e-6)
            gf = np.asarray(fg.vmap(fg.grad(getattr(fg.nn, name)))(jnp.asarray(X, jnp.float32)))
            gj = np.asarray(jax.vmap(jax.grad(getattr(jax.nn, name)))(jjnp.asarray(X, jjnp.float32)))
            np.testing.assert_allclose(gf, gj, rtol=1e-5, atol=1e-6, err_msg=name)


# --- log1mexp, logmeanexp ------------------------------------------------------------------------------------

RNG = np.random.default_rng(0)


def test_nn_log1mexp_logmeanexp():
    x = np.array([1e-8, 0.1, 0.5, 1.0, 10.0, 50.0])
    got = np.asarray(fg.nn.log1mexp(x))
    want = [np.log(-np.expm1(-v)) if v < 0.69 else np.log1p(-np.exp(-v)) for v in x]  # the accurate branch
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got[-1] == pytest.approx(-np.exp(-50.0), rel=1e-12)
    assert np.asarray(fg.nn.log1mexp(0.0)) == -np.inf and np.isnan(np.asarray(fg.nn.log1mexp(-1.0)))
    check_grads(fg.nn.log1mexp, (np.array([0.3, 0.9, 3.0]),), order=2)
    a = RNG.standard_normal((2, 3))
    np.testing.assert_allclose(np.asarray(fg.nn.logmeanexp(a, axis=1)), np.log(np.exp(a).mean(1)), rtol=1e-12)
    np.testing.assert_allclose(float(fg.nn.logmeanexp(a)), np.log(np.exp(a).mean()), rtol=1e-12)
    w = np.array([[1, 1, 0], [1, 0, 0]], bool)
    want = [np.log(np.exp(a[0, :2]).mean()), a[1, 0]]
    np.testing.assert_allclose(np.asarray(fg.nn.logmeanexp(a, axis=1, where=w)), want, rtol=1e-12)
    assert fg.nn.logmeanexp(a, axis=0, keepdims=True).shape == (1, 3)
    check_grads(lambda v: fg.nn.logmeanexp(v, axis=0), (a,), order=2)


def test_tree_nn_match_jax():
    jax = pytest.importorskip("jax")
    x = np.array([0.1, 1.0, 10.0, 0.0, 1e-8, 50.0, -1.0], np.float32)
    np.testing.assert_allclose(np.asarray(fg.nn.log1mexp(x)), np.asarray(jax.nn.log1mexp(x)), rtol=1e-6)
    a = RNG.standard_normal((2, 3)).astype(np.float32)
    w = np.array([[1, 1, 0], [1, 0, 0]], bool)
    np.testing.assert_allclose(np.asarray(fg.nn.logmeanexp(a, axis=1, where=w)),
                               np.asarray(jax.nn.logmeanexp(a, axis=1, where=w)), rtol=1e-6)
    tree = {"a": 1, "b": [2, (3, 4)]}
    assert fg.tree_util.flatten_one_level(tree) == jax.tree_util.flatten_one_level(tree)
    assert fg.tree_util.tree_broadcast((1, {"a": 2}), ([3, 4], {"a": (5, 6)})) == \
        jax.tree_util.tree_broadcast((1, {"a": 2}), ([3, 4], {"a": (5, 6)}))
