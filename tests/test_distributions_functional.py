"""The functional face of funcgrad.distributions: distributions with Array parameters are pytrees that go
through grad, vmap and jit; sampling takes a key; derivatives checked by finite differences."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.distributions as D
import funcgrad.numpy as jnp
import funcgrad.random as jr
from funcgrad.testing import check_grads
from funcgrad.tree_util import tree_flatten, tree_unflatten


def A(x):
    return jnp.asarray(np.asarray(x, np.float64))


def N(x):
    return np.asarray(x)


KEY = jr.PRNGKey(0)

# name: (constructor of Arrays, parameter values, a value in the support)
FAMILIES = {
    "Normal": (lambda m, s: D.Normal(m, s), [[0.3, -1.0], [1.2, 0.6]], [0.5, -0.2]),
    "Gamma": (lambda c, r: D.Gamma(c, r), [[1.3, 2.5], [0.7, 1.6]], [0.5, 2.0]),
    "Beta": (lambda a, b: D.Beta(a, b), [[1.3, 2.5], [0.7, 1.6]], [0.3, 0.6]),
    "StudentT": (lambda d, m, s: D.StudentT(d, m, s), [[3.0, 5.0], [0.1, 0.2], [1.0, 2.0]], [0.5, -0.2]),
    "Laplace": (lambda m, s: D.Laplace(m, s), [[0.3, -1.0], [1.2, 0.6]], [0.5, -0.2]),
    "Bernoulli": (lambda p: D.Bernoulli(p), [[0.3, 0.6]], [1.0, 0.0]),
    "Poisson": (lambda r: D.Poisson(r), [[1.3, 2.5]], [1.0, 4.0]),
    "Dirichlet": (lambda c: D.Dirichlet(c), [[[1.3, 2.5, 0.7]]], [[0.2, 0.3, 0.5]]),
    "LogNormal": (lambda m, s: D.LogNormal(m, s), [[0.3, -1.0], [1.2, 0.6]], [0.5, 2.0]),
    "Weibull": (lambda s, c: D.Weibull(s, c), [[1.3, 2.5], [0.7, 1.6]], [0.5, 2.0]),
    "MultivariateNormal": (lambda m, L: D.MultivariateNormal(m, scale_tril=L, validate_args=False),
                           [[0.3, -1.0], [[1.0, 0.0], [0.4, 0.8]]], [0.5, 0.1]),
    "VonMises": (lambda m, k: D.VonMises(m, k), [[0.3, -1.0], [1.2, 5.0]], [0.5, -0.2]),
}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_log_prob_grads_finite_differences(name):
    make, params, value = FAMILIES[name]
    x = A(value)
    check_grads(lambda *ps: jnp.sum(make(*ps).log_prob(x)), [A(p) for p in params], order=1)


@pytest.mark.parametrize("name", ["Normal", "Laplace", "LogNormal", "Weibull", "MultivariateNormal"])
def test_rsample_grads_finite_differences(name):
    # location/scale-type samplers are smooth functions of the parameters at a fixed key (gamma-based ones use
    # implicit reparameterisation, unbiased but not the pathwise derivative: see test_distributions_torch)
    make, params, _ = FAMILIES[name]
    check_grads(lambda *ps: jnp.sum(make(*ps).rsample(KEY, (3,)) ** 2), [A(p) for p in params], order=1)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_vmap_equals_loop_and_jit_equals_eager(name):
    make, params, value = FAMILIES[name]
    batch = [np.stack([np.asarray(p) * (1 + 0.1 * i) for i in range(3)]) for p in params]
    x = A(value)
    f = lambda *ps: make(*ps).log_prob(x)  # noqa: E731
    out = N(fg.vmap(f)(*[A(b) for b in batch]))
    loop = np.stack([N(f(*[A(b[i]) for b in batch])) for i in range(3)])
    np.testing.assert_allclose(out, loop, rtol=1e-12)
    np.testing.assert_allclose(N(fg.jit(f)(*[A(p) for p in params])), N(f(*[A(p) for p in params])), rtol=1e-12)
    # the distribution itself as a jit argument and a vmapped pytree
    d = make(*[A(p) for p in params])
    np.testing.assert_allclose(N(fg.jit(lambda d: d.log_prob(x))(d)), N(d.log_prob(x)), rtol=1e-12)
    ds = make(*[A(b) for b in batch])
    if ds.batch_shape[:1] == (3,):
        np.testing.assert_allclose(N(fg.vmap(lambda d: d.log_prob(x))(ds)), loop, rtol=1e-12)
    # jitted sampling is the same as eager sampling for the same key
    np.testing.assert_array_equal(N(fg.jit(lambda k: d.sample(k, (2,)))(KEY)), N(d.sample(KEY, (2,))))


def test_pytree_roundtrip_and_batch_shape_under_vmap():
    d = D.Independent(D.Normal(A(np.zeros((4, 3))), A(np.ones((4, 3)))), 1)
    leaves, tree = tree_flatten(d)
    assert len(leaves) == 2
    d2 = tree_unflatten(tree, leaves)
    assert d2.batch_shape == (4,) and d2.event_shape == (3,)

    def shapes(d):
        assert d.batch_shape == () and d.event_shape == (3,)
        return d.log_prob(jnp.zeros(3))
    assert N(fg.vmap(shapes)(d)).shape == (4,)
    td = D.TransformedDistribution(D.Normal(A(np.zeros(4)), A(np.ones(4))), [D.AffineTransform(A(np.ones(4)), 2.0)])
    out = fg.vmap(lambda d: d.log_prob(1.0))(td)
    np.testing.assert_allclose(N(out), N(td.log_prob(A(np.ones(4)))), rtol=1e-12)


def test_grad_of_kl_and_elbo_functional():
    def kl(m, s):
        return jnp.sum(D.kl_divergence(D.Normal(m, s), D.Normal(0.0, 1.0)))
    m, s = A([0.3, -1.0]), A([1.2, 0.6])
    gm, gs = fg.grad(kl, argnums=(0, 1))(m, s)
    np.testing.assert_allclose(N(gm), N(m), rtol=1e-12)  # d/dm 0.5 m^2
    np.testing.assert_allclose(N(gs), N(s) - 1 / N(s), rtol=1e-12)  # d/ds 0.5 (s^2 - 1 - 2 log s)
    check_grads(kl, (m, s), order=2)

    def elbo(m, key):
        q = D.Normal(m, 1.0)
        z = q.rsample(key, (500,))
        return jnp.mean(D.Normal(2.0, 1.0).log_prob(z) - q.log_prob(z))
    g = fg.jit(fg.grad(elbo))(A(0.0), KEY)
    assert abs(float(g) - 2.0) < 0.2  # d/dm of -(m - 2)^2 / 2 at 0


def test_functional_sampling_requires_key_and_statistics():
    d = D.Gamma(A([2.0, 5.0]), A([1.0, 2.0]))
    with pytest.raises(TypeError, match="PRNG key"):
        d.sample((3,))
    x = N(d.sample(KEY, (20000,)))
    np.testing.assert_allclose(x.mean(0), [2.0, 2.5], rtol=0.03)
    a = N(d.sample(KEY, (2,)))
    np.testing.assert_array_equal(a, N(d.sample(KEY, (2,))))  # stateless
    ks = jr.split(KEY, 4)
    batched = N(fg.vmap(lambda k: d.sample(k))(ks))
    np.testing.assert_array_equal(batched, np.stack([N(d.sample(k)) for k in ks]))


def test_tensor_face_under_funcgrad_func_transforms():
    # Tensors hold tracers under funcgrad.func transforms: the formulas run through them
    from funcgrad import func
    lp = func.grad(lambda m: D.Normal(m, 1.0).log_prob(fg.tensor([0.5, 1.0], dtype=fg.float64)).sum())
    g = lp(fg.tensor([0.0, 0.0], dtype=fg.float64))
    np.testing.assert_allclose(np.asarray(g.detach()._arr()), [0.5, 1.0], rtol=1e-12)
