"""funcgrad.distributions' PyTorch face against real torch.distributions: values, gradients (autograd through
log_prob, entropy and rsample), shapes and dtypes of samples, expand, enumerate_support, validation errors."""
import numpy as np
import pytest
from hypothesis import given, settings

import funcgrad as fg
import funcgrad.distributions as D
from funcgrad.testing.strategies import broadcastable_shape_pairs

torch = pytest.importorskip("torch")
TD = torch.distributions

rng = np.random.default_rng(0)


def pos(*s):
    return rng.uniform(0.5, 3.0, s)


def unit(*s):
    return rng.uniform(0.15, 0.85, s)


def simplex(*s):
    return rng.dirichlet(np.ones(s[-1]), s[:-1])


def T(x, grad=False):
    return torch.tensor(np.asarray(x, np.float64), requires_grad=grad)


def F(x, grad=False):
    return fg.tensor(np.asarray(x, np.float64), requires_grad=grad)


def N(x):
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return np.asarray(x.detach()._arr()) if hasattr(x, "_arr") else np.asarray(x)


# name: (parameter arrays, keyword names or None for positional, value sampler)
CASES = {
    "Normal": ([rng.normal(size=3), pos(3)], None, lambda: rng.normal(size=(2, 3))),
    "Uniform": ([np.array([0., -1, 2]), np.array([1., 3, 5])], None, lambda: np.array([[0.5, 0., 3.]])),
    "Exponential": ([pos(3)], None, lambda: pos(2, 3)),
    "Laplace": ([rng.normal(size=3), pos(3)], None, lambda: rng.normal(size=(2, 3))),
    "Cauchy": ([rng.normal(size=3), pos(3)], None, lambda: rng.normal(size=(2, 3))),
    "Gamma": ([pos(3), pos(3)], None, lambda: pos(2, 3)),
    "Chi2": ([pos(3)], None, lambda: pos(2, 3)),
    "Beta": ([pos(3), pos(3)], None, lambda: unit(2, 3)),
    "StudentT": ([pos(3) + 2, rng.normal(size=3), pos(3)], None, lambda: rng.normal(size=(2, 3))),
    "FisherSnedecor": ([pos(3), pos(3) + 4], None, lambda: pos(2, 3)),
    "HalfNormal": ([pos(3)], None, lambda: pos(2, 3)),
    "HalfCauchy": ([pos(3)], None, lambda: pos(2, 3)),
    "VonMises": ([rng.normal(size=3), np.array([0.5, 2., 10.])], None, lambda: rng.normal(size=(2, 3))),
    "ContinuousBernoulli": ([np.array([0.2, 0.5, 0.9])], None, lambda: unit(2, 3)),
    "GeneralizedPareto": ([rng.normal(size=3), pos(3), np.array([-0.2, 0.1, 0.3])], None, None),
    "LogNormal": ([rng.normal(size=3), pos(3)], None, lambda: pos(2, 3)),
    "Gumbel": ([rng.normal(size=3), pos(3)], None, lambda: rng.normal(size=(2, 3))),
    "Pareto": ([pos(3), pos(3) + 2], None, lambda: pos(2, 3) + 3),
    "Weibull": ([pos(3), pos(3)], None, lambda: pos(2, 3)),
    "Kumaraswamy": ([pos(3), pos(3)], None, lambda: unit(2, 3)),
    "InverseGamma": ([pos(3) + 2, pos(3)], None, lambda: pos(2, 3)),
    "Bernoulli": ([unit(3)], None, lambda: np.array([[0., 1., 1.]])),
    "Geometric": ([unit(3)], None, lambda: np.array([[0., 3., 1.]])),
    "Poisson": ([pos(3)], None, lambda: np.array([[0., 3., 1.]])),
    "Binomial": ([np.array([5., 5., 5.]), unit(3)], None, lambda: np.array([[0., 3., 5.]])),
    "NegativeBinomial": ([np.array([5., 2., 3.]), unit(3)], None, lambda: np.array([[0., 3., 5.]])),
    "Categorical": ([simplex(3, 4)], None, lambda: np.array([[0., 3., 1.]])),
    "OneHotCategorical": ([simplex(3, 4)], None, lambda: np.eye(4)[[0, 3, 1]]),
    "Dirichlet": ([pos(3, 4)], None, lambda: simplex(3, 4)),
    "LogisticNormal": ([rng.normal(size=(3, 3)), pos(3, 3)], None, lambda: simplex(3, 4)),
    "RelaxedBernoulli": ([np.array(0.7), unit(3)], None, lambda: unit(2, 3)),
    "RelaxedOneHotCategorical": ([np.array(0.7), simplex(3, 4)], None, lambda: simplex(3, 4)),
    "Multinomial": ([simplex(3, 4)], "multinomial", lambda: np.array([[1., 2., 0., 4.]] * 3)),
    "LKJCholesky": ([np.array([0.5, 2.0])], "lkj", None),
}
# the parameters that get gradients: float params (skipping counts)
NO_GRAD_PARAM = {"Binomial": {0}, "NegativeBinomial": set(), "RelaxedBernoulli": {0},
                 "RelaxedOneHotCategorical": {0}}


def _make(lib, name, args, grad=False):
    mk = T if lib is TD else F
    ps = [mk(a, grad and i not in NO_GRAD_PARAM.get(name, ())) for i, a in enumerate(args)]
    kind = CASES[name][1]
    if kind == "multinomial":
        return getattr(lib, name)(7, *ps), ps
    if kind == "lkj":
        return getattr(lib, name)(3, *ps), ps
    return getattr(lib, name)(*ps), ps


def _close(a, b, what):
    a, b = N(a), N(b)
    assert a.shape == b.shape, (what, a.shape, b.shape)
    np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-9, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_torch(name):
    args, _, val = CASES[name]
    td, tps = _make(TD, name, args, grad=True)
    fd, fps = _make(D, name, args, grad=True)
    assert tuple(td.batch_shape) == tuple(fd.batch_shape) and tuple(td.event_shape) == tuple(fd.event_shape)
    assert td.has_rsample == fd.has_rsample and td.has_enumerate_support == fd.has_enumerate_support
    for prop in ("mean", "mode", "variance", "stddev"):
        try:
            t = getattr(td, prop)
        except NotImplementedError:
            continue
        if name == "Kumaraswamy" and prop == "mode":  # torch's formula gives NaN for concentration0 > 1
            continue
        _close(t, getattr(fd, prop), f"{name}.{prop}")
    outs = []
    for meth in ("entropy", "log_prob", "cdf", "icdf"):
        if meth in ("log_prob", "cdf") and val is None:
            if name == "LKJCholesky" and meth == "log_prob":
                v = td.sample((2,)).numpy()
            else:
                continue
        elif meth in ("log_prob", "cdf"):
            v = val()
        elif meth == "icdf":
            v = unit(2, *td.batch_shape)
        try:
            t = getattr(td, meth)() if meth == "entropy" else getattr(td, meth)(T(v))
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                getattr(fd, meth)() if meth == "entropy" else getattr(fd, meth)(F(v))
            continue
        f = getattr(fd, meth)() if meth == "entropy" else getattr(fd, meth)(F(v))
        _close(t, f, f"{name}.{meth}")
        if not (meth == "cdf" and name in ("Gamma", "Chi2", "InverseGamma")):  # torch: no d igamma / d a
            outs.append((t, f))
    # gradients of everything computed, through the Tensor face's autograd
    tsum = sum((t * (i + 1.0)).sum() for i, (t, _) in enumerate(outs) if t.requires_grad)
    fsum = sum((f * (i + 1.0)).sum() for i, (_, f) in enumerate(outs) if f.requires_grad)
    if not isinstance(tsum, torch.Tensor):
        return
    tg = torch.autograd.grad(tsum, [p for p in tps if p.requires_grad], allow_unused=True)
    fsum.backward()
    for p, g in zip([p for p in fps if p.requires_grad], tg):
        if g is None:
            assert p.grad is None or not np.any(N(p.grad))
        else:
            _close(g, p.grad, f"{name} gradient")


@pytest.mark.parametrize("name", sorted(CASES))
def test_sample_shapes_dtypes(name):
    args = CASES[name][0]
    td, _ = _make(TD, name, args)
    fd, _ = _make(D, name, args)
    for shape in [(), (4,), (2, 1)]:
        t, f = td.sample(shape), fd.sample(shape)
        assert tuple(t.shape) == tuple(f.shape) and str(t.dtype) == str(f.dtype), (name, shape)
        assert not f.requires_grad
    assert bool(N(fd.support.check(fd.sample((3,)))).all())


def test_rsample_gradients_match_torch():
    # location-scale: with the same base noise eps = (x - loc) / scale, d sum(x) / d loc = n, / d scale = sum(eps)
    loc, scale = F([0.5, -1.0], True), F([2.0, 0.5], True)
    x = D.Normal(loc, scale).rsample((50,))
    x.sum().backward()
    eps = (N(x) - N(loc)) / N(scale)
    tl, ts = T(N(loc), True), T(N(scale), True)
    (tl + ts * T(eps)).sum().backward()
    _close(tl.grad, loc.grad, "Normal loc")
    _close(ts.grad, scale.grad, "Normal scale")
    # Gamma: implicit reparameterisation, against torch's own derivative of the standard gamma sampler
    alpha = F([0.4, 1.5, 7.0], True)
    g = D.Gamma(alpha, F([1.0, 1.0, 1.0])).rsample((20,))
    g.sum().backward()
    ta = T(N(alpha)).expand(20, 3)
    # torch's derivative is an approximation good to ~3e-5; the exact one is -dP(a, x)/da / p(x)
    ref = torch._standard_gamma_grad(ta, T(N(g))).sum(0)
    np.testing.assert_allclose(N(alpha.grad), ref.numpy(), rtol=1e-4)
    from scipy import special as ss
    from scipy import stats
    a_, x_, h = np.broadcast_to(N(alpha), (20, 3)), N(g), 1e-6
    exact = -(ss.gammainc(a_ + h, x_) - ss.gammainc(a_ - h, x_)) / (2 * h) / stats.gamma(a_).pdf(x_)
    np.testing.assert_allclose(N(alpha.grad), exact.sum(0), rtol=1e-6)
    # Dirichlet / Beta: implicit reparameterisation gradients differ pathwise from torch's (and from finite
    # differences at a fixed key), but must be unbiased: mean gradient == gradient of the mean
    conc = F([0.7, 2.0, 3.5], True)
    w = np.array([1.0, -2.0, 0.5])
    (D.Dirichlet(conc).rsample((20000,)) * F(w)).mean(0).sum().backward()
    tc = T(N(conc), True)
    (tc / tc.sum() * T(w)).sum().backward()
    np.testing.assert_allclose(N(conc.grad), tc.grad.numpy(), atol=0.01)
    a, b = F(0.8, True), F(2.5, True)
    D.Beta(a, b).rsample((20000,)).mean().backward()
    ta, tb = T(0.8, True), T(2.5, True)
    (ta / (ta + tb)).backward()
    np.testing.assert_allclose([N(a.grad), N(b.grad)], [ta.grad.item(), tb.grad.item()], atol=0.01)


def test_expand_matches_torch():
    for name in ("Normal", "Gamma", "Bernoulli", "Categorical", "Dirichlet", "LogNormal", "Binomial", "Gumbel"):
        args, _, val = CASES[name]
        td, _ = _make(TD, name, args)
        fd, _ = _make(D, name, args)
        te, fe = td.expand((5,) + tuple(td.batch_shape)), fd.expand((5,) + tuple(fd.batch_shape))
        assert tuple(te.batch_shape) == tuple(fe.batch_shape) == (5,) + tuple(td.batch_shape)
        assert tuple(fe.sample().shape) == tuple(te.sample().shape)
        v = val()[:1]
        _close(te.log_prob(T(v)), fe.log_prob(F(v)), name + " expanded")
    mv = D.MultivariateNormal(F([0.0, 1.0]), F([[2.0, 0.3], [0.3, 1.0]])).expand((3,))
    tmv = TD.MultivariateNormal(T([0.0, 1.0]), T([[2.0, 0.3], [0.3, 1.0]])).expand((3,))
    _close(tmv.log_prob(T([[0.5, 0.5]])), mv.log_prob(F([[0.5, 0.5]])), "MVN expanded")
    ind = D.Independent(D.Normal(F(np.zeros((2, 3))), F(np.ones((2, 3)))), 1).expand((4, 2))
    assert ind.batch_shape == (4, 2) and ind.event_shape == (3,)


@pytest.mark.parametrize("name,args", [
    ("Bernoulli", [unit(3)]), ("Binomial", [np.array([4., 4., 4.]), unit(3)]), ("Categorical", [simplex(2, 4)]),
    ("OneHotCategorical", [simplex(2, 4)])])
def test_enumerate_support_matches_torch(name, args):
    td = getattr(TD, name)(*[T(a) for a in args])
    fd = getattr(D, name)(*[F(a) for a in args])
    for expand in (True, False):
        t, f = td.enumerate_support(expand), fd.enumerate_support(expand)
        assert tuple(t.shape) == tuple(f.shape) and str(t.dtype) == str(f.dtype)
        np.testing.assert_array_equal(N(t), N(f))
    _close(td.entropy(), fd.entropy(), name)
    with pytest.raises(NotImplementedError):
        D.Binomial(F([2., 3.]), F([0.5, 0.5])).enumerate_support()


def _raises_like(tfn, ffn):
    with pytest.raises(Exception) as te:
        tfn()
    with pytest.raises(Exception) as fe:
        ffn()
    assert type(fe.value) is type(te.value), (te.value, fe.value)
    return str(te.value), str(fe.value)


def test_validation_errors_match_torch():
    t, f = _raises_like(lambda: TD.Normal(T([0.]), T([-1.]), validate_args=True),
                        lambda: D.Normal(F([0.]), F([-1.]), validate_args=True))
    assert t == f
    t, f = _raises_like(lambda: TD.Uniform(0., 1., validate_args=True).log_prob(T(2.)),
                        lambda: D.Uniform(0., 1., validate_args=True).log_prob(F(2.)))
    assert t == f
    t, f = _raises_like(lambda: TD.Normal(0., 1., validate_args=True).log_prob(2.),
                        lambda: D.Normal(0., 1., validate_args=True).log_prob(2.))
    assert t == f
    t, f = _raises_like(lambda: TD.Normal(T([0., 1.]), 1., validate_args=True).log_prob(T([1., 2., 3.])),
                        lambda: D.Normal(F([0., 1.]), 1., validate_args=True).log_prob(F([1., 2., 3.])))
    assert t == f
    t, f = _raises_like(lambda: TD.Dirichlet(T([1., 2.]), validate_args=True).log_prob(T([0.5, 0.5, 0.])),
                        lambda: D.Dirichlet(F([1., 2.]), validate_args=True).log_prob(F([0.5, 0.5, 0.])))
    assert t == f
    cases = [
        (lambda L: L.Bernoulli(probs=T([0.5]) if L is TD else F([0.5]), logits=T([0.]) if L is TD else F([0.]))),
        (lambda L: L.Bernoulli(T([1.5]) if L is TD else F([1.5]), validate_args=True)),
        (lambda L: L.Categorical(T(0.5) if L is TD else F(0.5))),
        (lambda L: L.Gamma(T([1.]) if L is TD else F([1.]), T([0.]) if L is TD else F([0.]), validate_args=True)),
        (lambda L: L.Poisson(T([1.]) if L is TD else F([1.]), validate_args=True).log_prob(
            T([0.5]) if L is TD else F([0.5]))),
        (lambda L: L.Uniform(T([1.]) if L is TD else F([1.]), T([0.]) if L is TD else F([0.]), validate_args=True)),
        (lambda L: L.MultivariateNormal(T([0., 0.]) if L is TD else F([0., 0.]))),
        (lambda L: L.MultivariateNormal(T(0.) if L is TD else F(0.), scale_tril=T(np.eye(1)) if L is TD
                                        else F(np.eye(1)))),
        (lambda L: L.MultivariateNormal(T([0., 0.]) if L is TD else F([0., 0.]),
                                        covariance_matrix=T([[1., 2.], [2., 1.]]) if L is TD
                                        else F([[1., 2.], [2., 1.]]), validate_args=True)),
        (lambda L: L.Independent(L.Normal(T([0.]) if L is TD else F([0.]), 1.), 2)),
        (lambda L: L.TransformedDistribution(L.Normal(0., 1.), "exp")),
        (lambda L: L.LKJCholesky(1)),
        (lambda L: L.Binomial(T([2.]) if L is TD else F([2.]), T([0.5]) if L is TD else F([0.5]),
                              validate_args=True).log_prob(T([3.]) if L is TD else F([3.]))),
        (lambda L: L.Normal(T([0.]) if L is TD else F([0.]), 1., validate_args=True).log_prob(
            T([float("nan")]) if L is TD else F([float("nan")]))),
    ]
    for c in cases:
        t, f = _raises_like(lambda: c(TD), lambda: c(D))


def test_validate_args_switches():
    D.Normal(F([0.]), F([-1.]), validate_args=False)  # no check
    try:
        D.Distribution.set_default_validate_args(False)
        D.Normal(F([0.]), F([-1.]))
        D.Uniform(0., 1.).log_prob(F(3.))
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(F([0.]), F([-1.]))
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


def test_default_generator_reproducible():
    fg.manual_seed(3)
    a = D.Gamma(F([2.0]), F([1.0])).sample((5,))
    fg.manual_seed(3)
    b = D.Gamma(F([2.0]), F([1.0])).sample((5,))
    np.testing.assert_array_equal(N(a), N(b))
    c = D.Gamma(F([2.0]), F([1.0])).sample((5,))
    assert not np.array_equal(N(a), N(c))


def test_straight_through_and_mixture():
    p = F([[0.2, 0.5, 0.3]], True)
    d = D.OneHotCategoricalStraightThrough(p)
    s = d.rsample((4,))
    assert set(np.unique(N(s))) <= {0.0, 1.0} and np.all(N(s).sum(-1) == 1)
    (s * F([1.0, 2.0, 3.0])).sum().backward()
    # gradient of sum(s * w) through the probabilities (straight through): 4 * w, then through the normalisation
    tp = T(N(p), True)
    (tp / tp.sum(-1, keepdim=True) * T([1.0, 2.0, 3.0]) * 4).sum().backward()
    _close(tp.grad, p.grad, "straight-through")
    mix = D.MixtureSameFamily(D.Categorical(F([0.3, 0.7])), D.Normal(F([-1.0, 1.0]), F([1.0, 0.5])))
    tmix = TD.MixtureSameFamily(TD.Categorical(T([0.3, 0.7])), TD.Normal(T([-1.0, 1.0]), T([1.0, 0.5])))
    x = np.array([-1.0, 0.0, 2.0])
    _close(tmix.log_prob(T(x)), mix.log_prob(F(x)), "mixture")
    _close(tmix.cdf(T(x)), mix.cdf(F(x)), "mixture cdf")
    _close(tmix.mean, mix.mean, "mixture mean")
    _close(tmix.variance, mix.variance, "mixture var")
    assert tuple(mix.sample((6,)).shape) == (6,)


@pytest.mark.parametrize("name", ["Normal", "Gamma", "Beta", "Bernoulli", "Categorical", "Dirichlet", "LogNormal",
                                  "StudentT", "Poisson", "VonMises"])
def test_float32_matches_torch(name):
    args, _, val = CASES[name]
    td = getattr(TD, name)(*[torch.tensor(np.asarray(a, np.float32), requires_grad=True) for a in args])
    fps = [fg.tensor(np.asarray(a, np.float32), requires_grad=True) for a in args]
    fd = getattr(D, name)(*fps)
    v = val()
    t = td.log_prob(torch.tensor(np.asarray(v, np.float32)))
    f = fd.log_prob(fg.tensor(np.asarray(v, np.float32)))
    assert str(f.dtype) == "torch.float32" and str(fd.sample((2,)).dtype) == str(td.sample((2,)).dtype)
    np.testing.assert_allclose(N(f), N(t), rtol=2e-5, atol=2e-5)
    f.sum().backward()
    tleaf = [torch.tensor(np.asarray(a, np.float32), requires_grad=True) for a in args]
    getattr(TD, name)(*tleaf).log_prob(torch.tensor(np.asarray(v, np.float32))).sum().backward()
    for a, b in zip(fps, tleaf):
        np.testing.assert_allclose(N(a.grad), N(b.grad), rtol=2e-4, atol=2e-5)


def test_exponential_family_entropy_from_log_normalizer():
    for d in [D.Normal(F([0.3, 1.0]), F([0.5, 2.0])), D.Exponential(F([0.5, 2.0])), D.Bernoulli(F([0.3, 0.9])),
              D.ContinuousBernoulli(F([0.3, 0.9])), D.Gamma(F([0.5, 2.0]), F([1.5, 0.2]))]:
        _close(d.entropy(), D.ExponentialFamily.entropy(d), type(d).__name__)
    d = D.Normal(F([0.3, 1.0]), F([0.5, 2.0]))
    _close(TD.Normal(T([0.3, 1.0]), T([0.5, 2.0])).perplexity(), d.perplexity(), "perplexity")


@settings(max_examples=6)
@given(shapes=broadcastable_shape_pairs(max_dims=3, max_side=3))
def test_parameter_broadcasting_matches_torch(shapes):
    s1, s2 = shapes
    r = np.random.default_rng(len(s1) * 10 + len(s2))
    a, b = r.uniform(0.5, 2.0, s1), r.uniform(0.5, 2.0, s2)
    for name in ("Normal", "Gamma", "Beta"):
        td = getattr(TD, name)(T(a), T(b))
        fd = getattr(D, name)(F(a), F(b))
        assert tuple(fd.batch_shape) == tuple(td.batch_shape)
        v = r.uniform(0.1, 0.9, (2,) + tuple(td.batch_shape))
        _close(td.log_prob(T(v)), fd.log_prob(F(v)), name)
        assert tuple(fd.sample((2,)).shape) == (2,) + tuple(td.batch_shape)


@pytest.mark.parametrize("name,param", [("Categorical", "probs"), ("Categorical", "logits"),
                                        ("Bernoulli", "probs"), ("Binomial", "probs"),
                                        ("Geometric", "probs"), ("OneHotCategorical", "probs")])
def test_parameter_derived_inside_sample_keeps_its_graph(name, param):
    """REINFORCE's pattern: sample() (under no_grad) is the first to touch a lazily derived parameter
    (logits from probs or back); log_prob afterwards must still differentiate to the given parameter."""
    p = simplex(3, 4) if name in ("Categorical", "OneHotCategorical") else unit(3)
    if param == "logits":
        p = np.log(p)
    grads, value = [], None
    for lib, mk in ((fg, F), (torch, T)):
        x = mk(p, grad=True)
        d = getattr(lib.distributions, name)(**{param: x})
        s = N(d.sample())
        value = s if value is None else value  # the two generators differ: score funcgrad's draw in both
        d.log_prob(mk(value)).sum().backward()
        grads.append(N(x.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("make", [
    lambda M: M.Normal(M_t(M, [0.0, 1.0, -2.0]), M_t(M, [1.0, 0.5, 3.0])),
    lambda M: M.Uniform(M_t(M, [0.0, -1.0]), M_t(M, [1.0, 4.0])),
    lambda M: M.Bernoulli(probs=M_t(M, [0.1, 0.5, 0.9])),
    lambda M: M.LogNormal(M_t(M, [0.0, 1.0]), M_t(M, [0.3, 0.7])),
    lambda M: M.Independent(M.Normal(M_t(M, [[0.0, 1.0]] * 3), M_t(M, [[1.0, 2.0]] * 3)), 1),
], ids=["Normal", "Uniform", "Bernoulli", "LogNormal", "Independent"])
@pytest.mark.parametrize("method", ["sample", "rsample"])
def test_samples_are_torchs_after_the_same_seed(make, method):
    """The tensor face draws Normal/Uniform/Bernoulli (and what wraps them) with torch's transforms of the default
    generator: the same numbers as torch after the same manual_seed, and the stream continues in step."""
    out = {}
    for lib, M in ((fg, D), (torch, TD)):
        d = make(M)
        if method == "rsample" and not d.has_rsample:
            pytest.skip("no rsample")
        lib.manual_seed(3)
        out[lib] = [getattr(d, method)(s).numpy() for s in ((), (4,), (2, 3))] + [lib.randn(5).numpy()]
    exp_ulp = 3e-7 if isinstance(make(D), D.LogNormal) else 0  # (float32 exp: NumPy's and torch's differ by 1 ulp)
    for a, b in zip(out[fg], out[torch]):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=exp_ulp, atol=0)


def M_t(M, v):
    """A float32 tensor of the library M belongs to (funcgrad or torch)."""
    return (fg if M is D else torch).tensor(v)


@pytest.mark.parametrize("pshape,vshape", [((4,), ()), ((4,), (5,)), ((3, 4), (3,)), ((3, 4), (2, 3)),
                                           ((1, 4), (2, 3)), ((3, 1, 4), (2,)), ((2, 4), (5, 1, 2))])
@pytest.mark.parametrize("by", ["probs", "logits"])
def test_categorical_log_prob_integer_values(pshape, vshape, by):
    """Categorical.log_prob at integer values (the gather at each value's index), broadcast against the batch
    shape: values the normalised log-probabilities at the indices, gradients torch's."""
    p = simplex(*pshape)
    v = rng.integers(0, pshape[-1], vshape)
    logp = np.log(p / p.sum(-1, keepdims=True))
    want = np.take_along_axis(np.broadcast_to(logp, np.broadcast_shapes(vshape, pshape[:-1]) + pshape[-1:]),
                              np.broadcast_to(v, np.broadcast_shapes(vshape, pshape[:-1]))[..., None], -1)[..., 0]
    arg = p if by == "probs" else np.log(p)
    fp, tp = F(arg, True), T(arg, True)
    fl = D.Categorical(**{by: fp}).log_prob(fg.tensor(v))
    tl = TD.Categorical(**{by: tp}).log_prob(torch.tensor(v))
    assert tuple(fl.shape) == tuple(tl.shape) == want.shape
    np.testing.assert_allclose(N(fl), want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(N(fl), N(tl), rtol=1e-12, atol=1e-14)
    w = rng.standard_normal(want.shape)
    (fl * F(w)).sum().backward()
    (tl * T(w)).sum().backward()
    np.testing.assert_allclose(N(fp.grad), N(tp.grad), rtol=1e-10, atol=1e-12)


def test_categorical_log_prob_out_of_support():
    """With validation, an index outside the support is torch's ValueError."""
    for lib, t, dist in ((fg, F, D), (torch, T, TD)):
        with pytest.raises(ValueError, match="within the support"):
            dist.Categorical(t([0.2, 0.3, 0.5]), validate_args=True).log_prob(lib.tensor([3]))


def test_samplers_of_0d_parameters_are_0d_and_value_dtypes_as_torch():
    """A distribution of Python-number parameters samples 0-d values (torch.bernoulli / poisson /
    _standard_gamma / binomial of a 0-d tensor are 0-d; ours came back (1,)), with torch's numbers; Gamma and
    HalfCauchy cast the value to their parameter's dtype before log_prob, as torch's as_tensor."""
    out = []
    for lib in (fg, torch):
        lib.manual_seed(3)
        d = lib.distributions
        draws = [d.Bernoulli(0.3).sample(), d.Gamma(2.0, 1.0).sample(), d.Poisson(3.0).sample(),
                 d.StudentT(3.0).sample(), d.Binomial(5, 0.3).sample(), d.Beta(2.0, 3.0).sample(),
                 lib.bernoulli(lib.tensor(0.7)), lib.poisson(lib.tensor(2.0)), lib._standard_gamma(lib.tensor(2.0))]
        v = lib.tensor(0.5, dtype=lib.float64)
        lps = [d.Gamma(2.0, 1.0).log_prob(v), d.Chi2(3.0).log_prob(v), d.HalfCauchy(1.0).log_prob(v)]
        out.append(([(tuple(x.shape), x.item()) for x in draws], [(str(x.dtype), x.item()) for x in lps]))
    assert [s for s, _ in out[0][0]] == [s for s, _ in out[1][0]] == [()] * 9
    np.testing.assert_allclose([v for _, v in out[0][0]], [v for _, v in out[1][0]], rtol=1e-6)
    assert [t for t, _ in out[0][1]] == [t for t, _ in out[1][1]]
    np.testing.assert_allclose([v for _, v in out[0][1]], [v for _, v in out[1][1]], rtol=1e-6)
