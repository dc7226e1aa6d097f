"""kl_divergence (closed forms against Monte-Carlo estimates and against torch, the registered pairs),
transforms (against torch, log|det J| against a numerical Jacobian, inverses), biject_to / transform_to and
constraints (against torch)."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.distributions as D
import funcgrad.numpy as jnp
import funcgrad.random as jr
from funcgrad.distributions import constraints as C
from funcgrad.distributions import transforms as TR

torch = pytest.importorskip("torch")
TD = torch.distributions


def A(x):
    return jnp.asarray(np.asarray(x, np.float64))


def T(x):
    return torch.tensor(np.asarray(x, np.float64))


def F(x):
    return fg.tensor(np.asarray(x, np.float64))


def N(x):
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return np.asarray(x._arr()) if hasattr(x, "_arr") else np.asarray(x)


P2 = np.array([0.7, 2.0])
Q2 = np.array([1.5, 0.6])
# (name, p params, q params): pairs with finite KL, all registered by torch
KL_PAIRS = [
    ("Normal", "Normal", [[0.3, -1.0], [1.0, 0.5]], [[0.0, 0.5], [2.0, 1.5]]),
    ("Laplace", "Laplace", [[0.3, -1.0], [1.0, 0.5]], [[0.0, 0.5], [2.0, 1.5]]),
    ("Cauchy", "Cauchy", [[0.3, -1.0], [1.0, 0.5]], [[0.0, 0.5], [2.0, 1.5]]),
    ("Gumbel", "Gumbel", [[0.3, -1.0], [1.0, 0.5]], [[0.0, 0.5], [2.0, 1.5]]),
    ("Exponential", "Exponential", [P2], [Q2]),
    ("Gamma", "Gamma", [P2, Q2], [Q2, P2]),
    ("Beta", "Beta", [P2, Q2], [Q2, P2]),
    ("HalfNormal", "HalfNormal", [P2], [Q2]),
    ("Pareto", "Pareto", [[0.5, 0.7], [2.5, 3.0]], [[0.4, 0.6], [1.5, 4.0]]),
    ("Poisson", "Poisson", [P2], [Q2]),
    ("Bernoulli", "Bernoulli", [[0.3, 0.8]], [[0.6, 0.5]]),
    ("Geometric", "Geometric", [[0.3, 0.8]], [[0.6, 0.5]]),
    ("Binomial", "Binomial", [[5.0, 5.0], [0.3, 0.8]], [[5.0, 5.0], [0.6, 0.5]]),
    ("Categorical", "Categorical", [[[0.2, 0.3, 0.5]]], [[[0.4, 0.4, 0.2]]]),
    ("OneHotCategorical", "OneHotCategorical", [[[0.2, 0.3, 0.5]]], [[[0.4, 0.4, 0.2]]]),
    ("Dirichlet", "Dirichlet", [[[0.7, 2.0, 1.2]]], [[[1.5, 0.6, 1.0]]]),
    ("ContinuousBernoulli", "ContinuousBernoulli", [[0.3, 0.8]], [[0.6, 0.5]]),
    ("Uniform", "Uniform", [[0.0, 1.0], [1.0, 2.0]], [[-1.0, 0.5], [2.0, 3.0]]),
    ("LogNormal", "LogNormal", [[0.3, -1.0], [1.0, 0.5]], [[0.0, 0.5], [2.0, 1.5]]),
    ("Normal", "Laplace", [[0.3, -1.0], [1.0, 0.5]], [[0.0, 0.5], [2.0, 1.5]]),
    ("Normal", "Gumbel", [[0.3, -1.0], [1.0, 0.5]], [[0.0, 0.5], [2.0, 1.5]]),
    ("Laplace", "Normal", [[0.3, -1.0], [1.0, 0.5]], [[0.0, 0.5], [2.0, 1.5]]),
    ("Exponential", "Gamma", [P2], [Q2, P2]),
    ("Exponential", "Normal", [P2], [[0.0, 0.5], [2.0, 1.5]]),
    ("Gamma", "Exponential", [P2, Q2], [Q2]),
    ("Gamma", "Normal", [P2, Q2], [[0.0, 0.5], [2.0, 1.5]]),
    ("Beta", "Exponential", [P2, Q2], [Q2]),
    ("Uniform", "Normal", [[0.0, 1.0], [1.0, 2.0]], [[0.0, 0.5], [2.0, 1.5]]),
    ("Uniform", "Exponential", [[0.1, 1.0], [1.0, 2.0]], [Q2]),
    ("Uniform", "Gamma", [[0.1, 1.0], [1.0, 2.0]], [P2, Q2]),
    ("Uniform", "Gumbel", [[0.0, 1.0], [1.0, 2.0]], [[0.0, 0.5], [2.0, 1.5]]),
    ("Uniform", "Beta", [[0.1, 0.2], [0.5, 0.9]], [P2, Q2]),
    ("Uniform", "Pareto", [[0.5, 1.0], [1.0, 2.0]], [[0.4, 0.6], [1.5, 4.0]]),
    ("Bernoulli", "Poisson", [[0.3, 0.8]], [Q2]),
    ("Beta", "ContinuousBernoulli", [P2, Q2], [[0.6, 0.3]]),
    ("Beta", "Gamma", [P2, Q2], [Q2, P2]),
    ("Beta", "Normal", [P2, Q2], [[0.0, 0.5], [2.0, 1.5]]),
    ("Beta", "Uniform", [P2, Q2], [[-1.0, 0.0], [1.0, 2.0]]),
    ("ContinuousBernoulli", "Exponential", [[0.3, 0.8]], [Q2]),
    ("ContinuousBernoulli", "Normal", [[0.3, 0.8]], [[0.0, 0.5], [2.0, 1.5]]),
    ("ContinuousBernoulli", "Uniform", [[0.3, 0.8]], [[-1.0, -0.5], [1.5, 2.0]]),  # torch: inf on the boundary
    ("Exponential", "Gumbel", [P2], [[0.0, 0.5], [2.0, 1.5]]),
    ("Gamma", "Gumbel", [P2, Q2], [[0.0, 0.5], [2.0, 1.5]]),
    ("Gumbel", "Normal", [[0.3, -1.0], [1.0, 0.5]], [[0.0, 0.5], [2.0, 1.5]]),
    ("Pareto", "Exponential", [[0.5, 0.7], [2.5, 3.0]], [Q2]),
    ("Pareto", "Gamma", [[0.5, 0.7], [2.5, 3.0]], [P2, Q2]),
    ("Pareto", "Normal", [[0.5, 0.7], [4.5, 5.0]], [[0.0, 0.5], [2.0, 1.5]]),
    ("Uniform", "ContinuousBernoulli", [[0.1, 0.2], [0.5, 0.9]], [[0.6, 0.3]]),
]


def _mk(lib, name, params, wrap):
    return getattr(lib, name)(*[wrap(p) for p in params])


@pytest.mark.parametrize("pn,qn,pp,qp", KL_PAIRS, ids=[f"{a}-{b}" for a, b, _, _ in KL_PAIRS])
def test_kl_closed_form(pn, qn, pp, qp):
    ref = N(TD.kl_divergence(_mk(TD, pn, pp, T), _mk(TD, qn, qp, T)))
    p, q = _mk(D, pn, pp, A), _mk(D, qn, qp, A)
    kl = N(D.kl_divergence(p, q))
    np.testing.assert_allclose(kl, ref, rtol=1e-7, atol=1e-10)
    # Monte Carlo: E_p[log p - log q] (an independent check of the formula)
    n = 20000
    x = p.sample(jr.PRNGKey(11), (n,))
    diff = N(p.log_prob(x)) - N(q.log_prob(x))
    se = diff.std(0) / np.sqrt(n)
    assert np.all(np.abs(diff.mean(0) - kl) < 5 * se + 1e-9), (diff.mean(0), kl)
    # the Tensor face gives the same
    np.testing.assert_allclose(N(D.kl_divergence(_mk(D, pn, pp, F), _mk(D, qn, qp, F))), kl, rtol=1e-12)


def test_kl_multivariate_and_wrappers():
    rng = np.random.default_rng(0)
    B = rng.normal(size=(2, 3, 3))
    cov = B @ B.transpose(0, 2, 1) + np.eye(3)
    loc = rng.normal(size=(2, 3))
    loc_r = np.ascontiguousarray(loc[::-1])
    W, d = rng.normal(size=(2, 3, 1)), rng.uniform(0.5, 2, (2, 3))
    tp, tq = TD.MultivariateNormal(T(loc), T(cov)), TD.LowRankMultivariateNormal(T(loc_r), T(W), T(d))
    p, q = D.MultivariateNormal(A(loc), A(cov)), D.LowRankMultivariateNormal(A(loc_r), A(W), A(d))
    for a, b, ta, tb in [(p, q, tp, tq), (q, p, tq, tp), (p, p, tp, tp), (q, q, tq, tq)]:
        np.testing.assert_allclose(N(D.kl_divergence(a, b)), N(TD.kl_divergence(ta, tb)), rtol=1e-8, atol=1e-12)
    ip = D.Independent(D.Normal(A(loc), A(d)), 1)
    iq = D.Independent(D.Normal(A(loc * 0), A(d * 2)), 1)
    ref = TD.kl_divergence(TD.Independent(TD.Normal(T(loc), T(d)), 1),
                           TD.Independent(TD.Normal(T(loc * 0), T(d * 2)), 1))
    np.testing.assert_allclose(N(D.kl_divergence(ip, iq)), N(ref), rtol=1e-10)
    with pytest.raises(ValueError):
        D.kl_divergence(p, D.MultivariateNormal(A(np.zeros(2)), A(np.eye(2))))
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.StudentT(A(3.0)), D.StudentT(A(4.0)))
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Binomial(A(3.0), A(0.5)), D.Binomial(A(5.0), A(0.5)))
    # infinite KLs: support of p not inside that of q
    assert np.isinf(N(D.kl_divergence(D.Normal(A(0.0), A(1.0)), D.Exponential(A(1.0)))))
    assert np.isinf(N(D.kl_divergence(D.Uniform(A(0.0), A(2.0)), D.Uniform(A(0.0), A(1.0)))))


def test_kl_exponential_family_bregman():
    from funcgrad.distributions.kl import _kl_expfamily_expfamily
    from torch.distributions.kl import _kl_expfamily_expfamily as t_kl
    for name, pp, qp in [("Gamma", [P2, Q2], [Q2, P2]), ("Normal", [P2, Q2], [Q2, P2]), ("Poisson", [P2], [Q2]),
                         ("Dirichlet", [[[0.7, 2.0]]], [[[1.5, 0.6]]]), ("Bernoulli", [[0.3, 0.6]], [[0.5, 0.1]])]:
        ref = t_kl(_mk(TD, name, pp, T), _mk(TD, name, qp, T))
        np.testing.assert_allclose(N(_kl_expfamily_expfamily(_mk(D, name, pp, A), _mk(D, name, qp, A))), N(ref),
                                   rtol=1e-9)
    with pytest.raises(NotImplementedError):
        _kl_expfamily_expfamily(D.Gamma(A(1.0), A(1.0)), D.Poisson(A(1.0)))


def test_registered_pairs_are_torchs():
    from funcgrad.distributions.kl import _KL_REGISTRY
    from torch.distributions.kl import _KL_REGISTRY as T_REG
    ours = {(a.__name__, b.__name__) for a, b in _KL_REGISTRY}
    theirs = {(a.__name__, b.__name__) for a, b in T_REG}
    assert ours <= theirs, ours - theirs
    assert ours == theirs, sorted(theirs - ours)


def test_register_kl_dispatch():
    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(A(0.0), A(1.0)), MyNormal(A(1.0), A(1.0))
    assert float(N(D.kl_divergence(p, q))) == pytest.approx(0.5)

    @D.register_kl(MyNormal, MyNormal)
    def _kl(p, q):
        return jnp.asarray(42.0)
    assert float(N(D.kl_divergence(p, q))) == 42.0


# --- transforms ----------------------------------------------------------------------------------------------

TRANSFORMS = [
    ("ExpTransform", (), (3,)), ("SigmoidTransform", (), (3,)), ("TanhTransform", (), (3,)),
    ("SoftplusTransform", (), (3,)), ("AffineTransform", (0.5, -2.0), (3,)),
    ("PowerTransform", (2.5,), (3,)), ("StickBreakingTransform", (), (3,)), ("SoftmaxTransform", (), (3,)),
    ("LowerCholeskyTransform", (), (3, 3)), ("PositiveDefiniteTransform", (), (3, 3)),
    ("CorrCholeskyTransform", (), (3,)), ("AbsTransform", (), (3,)),
]


@pytest.mark.parametrize("name,args,shape", TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_transform_against_torch(name, args, shape):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2,) + shape) * 0.7
    if name == "PowerTransform":
        x = np.abs(x) + 0.2
    tt = getattr(TD.transforms, name)(*[T(a) if name == "PowerTransform" else a for a in args])
    ft = getattr(TR, name)(*[A(a) if name == "PowerTransform" else a for a in args])
    y_t = tt(T(x))
    y = ft(A(x))
    np.testing.assert_allclose(N(y), N(y_t), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(N(ft.inv(y)), N(tt.inv(y_t)), rtol=1e-8, atol=1e-10)
    assert repr(ft.domain) == repr(tt.domain) and repr(ft.codomain) == repr(tt.codomain)
    assert ft.bijective == tt.bijective
    assert tuple(ft.forward_shape((2,) + shape)) == tuple(tt.forward_shape((2,) + shape))
    try:
        ref = tt.log_abs_det_jacobian(T(x), y_t)
    except NotImplementedError:
        return
    ladj = ft.log_abs_det_jacobian(A(x), y)
    np.testing.assert_allclose(N(ladj), N(ref), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(N(ft.inv.log_abs_det_jacobian(y, A(x))), -N(ref), rtol=1e-8, atol=1e-10)
    if ft.bijective and ft.domain.event_dim == ft.codomain.event_dim and ft.domain.event_dim <= 1 and \
            name != "StickBreakingTransform":
        # log|det J| against funcgrad's own Jacobian of the forward map
        for xi, li in zip(x, N(ladj)):
            if ft.domain.event_dim == 0:
                J = np.diag(np.asarray(fg.jacfwd(ft)(A(xi))))
                np.testing.assert_allclose(np.log(np.abs(J)), li, rtol=1e-8)
            else:
                J = np.asarray(fg.jacfwd(ft)(A(xi)))
                np.testing.assert_allclose(np.linalg.slogdet(J)[1], li, rtol=1e-8)


def test_composite_transforms():
    x = np.random.default_rng(2).normal(size=(4, 3))
    parts_t = [TD.transforms.AffineTransform(0.3, 2.0), TD.transforms.ExpTransform()]
    parts_f = [TR.AffineTransform(0.3, 2.0), TR.ExpTransform()]
    ct, cf = TD.transforms.ComposeTransform(parts_t), TR.ComposeTransform(parts_f)
    np.testing.assert_allclose(N(cf(A(x))), N(ct(T(x))), rtol=1e-12)
    np.testing.assert_allclose(N(cf.log_abs_det_jacobian(A(x), cf(A(x)))),
                               N(ct.log_abs_det_jacobian(T(x), ct(T(x)))), rtol=1e-12)
    np.testing.assert_allclose(N(cf.inv(cf(A(x)))), x, rtol=1e-12)
    it, itf = TD.transforms.IndependentTransform(ct, 1), TR.IndependentTransform(cf, 1)
    np.testing.assert_allclose(N(itf.log_abs_det_jacobian(A(x), itf(A(x)))),
                               N(it.log_abs_det_jacobian(T(x), it(T(x)))), rtol=1e-12)
    rt, rf = TD.transforms.ReshapeTransform((3,), (3, 1)), TR.ReshapeTransform((3,), (3, 1))
    assert N(rf(A(x))).shape == tuple(rt(T(x)).shape)
    with pytest.raises(ValueError):
        TR.ReshapeTransform((3,), (2,))
    cat_t = TD.transforms.CatTransform([TD.transforms.ExpTransform(), TD.transforms.identity_transform], 1, [1, 2])
    cat_f = TR.CatTransform([TR.ExpTransform(), TR.identity_transform], 1, [1, 2])
    np.testing.assert_allclose(N(cat_f(A(x))), N(cat_t(T(x))), rtol=1e-12)
    np.testing.assert_allclose(N(cat_f.log_abs_det_jacobian(A(x), cat_f(A(x)))),
                               N(cat_t.log_abs_det_jacobian(T(x), cat_t(T(x)))), rtol=1e-12)
    st_t = TD.transforms.StackTransform([TD.transforms.ExpTransform(), TD.transforms.identity_transform,
                                         TD.transforms.SigmoidTransform()], 1)
    st_f = TR.StackTransform([TR.ExpTransform(), TR.identity_transform, TR.SigmoidTransform()], 1)
    np.testing.assert_allclose(N(st_f(A(x))), N(st_t(T(x))), rtol=1e-12)
    np.testing.assert_allclose(N(st_f.inv(st_f(A(x)))), x, rtol=1e-9)
    d = D.Normal(A(0.3), A(1.2))
    cdt = TR.CumulativeDistributionTransform(d)
    tcd = TD.transforms.CumulativeDistributionTransform(TD.Normal(T(0.3), T(1.2)))
    np.testing.assert_allclose(N(cdt(A(x))), N(tcd(T(x))), rtol=1e-12)
    np.testing.assert_allclose(N(cdt.log_abs_det_jacobian(A(x), cdt(A(x)))),
                               N(tcd.log_abs_det_jacobian(T(x), tcd(T(x)))), rtol=1e-12)
    # the Tensor face records through a transform's parameters
    loc = F([0.5, 1.0, 1.5])
    loc.requires_grad_(True)
    TR.AffineTransform(loc, 2.0)(F(x)).sum().backward()
    np.testing.assert_allclose(N(loc.grad), [4.0, 4.0, 4.0])
    assert TR.ExpTransform() == TR.ExpTransform() and TR.ExpTransform().inv.inv == TR.ExpTransform()
    assert TR.AffineTransform(0.0, -2.0).sign == -1


def test_transformed_distribution_against_torch():
    x = np.random.default_rng(3).uniform(0.1, 3, size=(4, 2))
    base_t, base_f = TD.Normal(T([0.1, -0.3]), T([1.0, 0.7])), D.Normal(A([0.1, -0.3]), A([1.0, 0.7]))
    tt = TD.TransformedDistribution(base_t, [TD.transforms.ExpTransform(), TD.transforms.AffineTransform(0.0, 2.0)])
    ft = D.TransformedDistribution(base_f, [TR.ExpTransform(), TR.AffineTransform(0.0, 2.0)])
    np.testing.assert_allclose(N(ft.log_prob(A(x))), N(tt.log_prob(T(x))), rtol=1e-12)
    np.testing.assert_allclose(N(ft.cdf(A(x))), N(tt.cdf(T(x))), rtol=1e-12)
    np.testing.assert_allclose(N(ft.icdf(A([0.3, 0.6]))), N(tt.icdf(T([0.3, 0.6]))), rtol=1e-12)
    sb_t = TD.TransformedDistribution(TD.Normal(T(np.zeros(3)), T(np.ones(3))), TD.transforms.StickBreakingTransform())
    sb_f = D.TransformedDistribution(D.Normal(A(np.zeros(3)), A(np.ones(3))), TR.StickBreakingTransform())
    assert tuple(sb_f.batch_shape) == tuple(sb_t.batch_shape) and tuple(sb_f.event_shape) == tuple(sb_t.event_shape)
    v = np.array([[0.1, 0.2, 0.3, 0.4]])
    np.testing.assert_allclose(N(sb_f.log_prob(A(v))), N(sb_t.log_prob(T(v))), rtol=1e-10)
    with pytest.raises(ValueError):
        D.TransformedDistribution(base_f, "exp")


# --- constraints and the constraint registry -------------------------------------------------------------

CONSTRAINTS = ["real", "positive", "nonnegative", "unit_interval", "boolean", "nonnegative_integer",
               "positive_integer", "simplex", "lower_cholesky", "lower_triangular", "corr_cholesky",
               "positive_definite", "positive_semidefinite", "symmetric", "square", "real_vector", "one_hot"]


@pytest.mark.parametrize("name", CONSTRAINTS)
def test_constraints_against_torch(name):
    rng = np.random.default_rng(4)
    tc, fc = getattr(TD.constraints, name), getattr(C, name)
    assert repr(fc) == repr(tc) and fc.event_dim == tc.event_dim and fc.is_discrete == tc.is_discrete
    B = rng.normal(size=(6, 3, 3))
    samples = [rng.normal(size=(6, 3)), np.abs(rng.normal(size=(6, 3))), rng.integers(0, 3, (6, 3)) * 1.0,
               rng.dirichlet(np.ones(3), 6), B, np.tril(B), B @ B.transpose(0, 2, 1),
               np.linalg.cholesky(B @ B.transpose(0, 2, 1) + np.eye(3)), np.eye(3)[[0, 2, 1, 1, 0, 2]],
               np.zeros((6, 3))]
    corr = B @ B.transpose(0, 2, 1) + np.eye(3)
    dg = np.sqrt(np.diagonal(corr, axis1=1, axis2=2))
    samples.append(np.linalg.cholesky(corr / dg[:, :, None] / dg[:, None, :]))
    for v in samples:
        if v.ndim < tc.event_dim:
            continue
        np.testing.assert_array_equal(N(fc.check(A(v))), N(tc.check(T(v))))
        np.testing.assert_array_equal(N(fc.check(F(v))), N(tc.check(T(v))))


def test_parametrised_constraints_and_registry():
    x = np.linspace(-2, 4, 13)
    for fc, tc in [(C.interval(-1.0, 2.0), TD.constraints.interval(-1.0, 2.0)),
                   (C.half_open_interval(-1.0, 2.0), TD.constraints.half_open_interval(-1.0, 2.0)),
                   (C.greater_than(0.5), TD.constraints.greater_than(0.5)),
                   (C.greater_than_eq(0.5), TD.constraints.greater_than_eq(0.5)),
                   (C.less_than(0.5), TD.constraints.less_than(0.5)),
                   (C.integer_interval(0, 3), TD.constraints.integer_interval(0, 3))]:
        assert repr(fc) == repr(tc)
        np.testing.assert_array_equal(N(fc.check(A(x))), N(tc.check(T(x))))
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    with pytest.raises(ValueError):
        C.dependent.check(A(x))
    for c in [C.real, C.positive, C.unit_interval, C.interval(-1.0, 3.0), C.greater_than(1.0), C.less_than(1.0),
              C.simplex, C.real_vector, C.corr_cholesky, C.independent(C.positive, 1)]:
        for registry in (D.biject_to, D.transform_to):
            t = registry(c)
            u = np.random.default_rng(5).normal(size=(2, 3) if c is not C.corr_cholesky else (2, 3))
            y = t(A(u))
            assert bool(np.all(N(c.check(y)))), (c, registry)
            if registry is D.biject_to:
                np.testing.assert_allclose(N(t.inv(y)), u, rtol=1e-6, atol=1e-8)
    for c in [C.lower_cholesky, C.positive_definite]:
        y = D.transform_to(c)(A(np.random.default_rng(6).normal(size=(3, 3))))
        assert bool(N(c.check(y)))
    with pytest.raises(NotImplementedError):
        D.biject_to(C.boolean)


def test_constraint_checks_of_concrete_tensors():
    """A concrete tensor is checked in NumPy (Constraint._np_check): the same booleans as the Array path
    (`_check`) and as torch, for every dtype, NaN, infinities and bounds at the edge of an integer dtype."""
    floats = [-1.5, -1.0, -0.0, 0.0, 1e-7, 0.5, 1.0, 2.0, 2.5, 3.0, np.inf, -np.inf, np.nan]
    cases = [(np.float64, floats), (np.float32, floats), (np.float16, floats),
             (np.int64, [-3, -1, 0, 1, 2, 3, 4]), (np.int8, [-128, -1, 0, 1, 3, 127]),
             (np.uint8, [0, 1, 2, 3, 255]), (np.bool_, [False, True])]
    cons = [(C.real, "real"), (C.boolean, "boolean"), (C.positive, "positive"), (C.nonnegative, "nonnegative"),
            (C.unit_interval, "unit_interval"), (C.nonnegative_integer, "nonnegative_integer"),
            (C.positive_integer, "positive_integer"), (C.integer_interval(0, 3), None),
            (C.integer_interval(-1000, 1000), None), (C.interval(-1, 2), None),
            (C.half_open_interval(-1.0, 2.0), None), (C.greater_than(0.5), None), (C.less_than(0.5), None)]
    for c, tname in cons:
        for dt, xs in cases:
            v = np.array(xs, dt)
            got = c.check(fg.tensor(v))
            ref = c._check(jnp.asarray(v))
            assert got.dtype == fg.bool and tuple(got.shape) == ref.shape, (c, dt)
            np.testing.assert_array_equal(got.numpy(), np.asarray(ref), err_msg=f"{c} {dt}")
            if tname is not None and dt in (np.float64, np.float32, np.int64):
                np.testing.assert_array_equal(got.numpy(), getattr(TD.constraints, tname).check(torch.tensor(v)).numpy(),
                                              err_msg=f"{c} {dt}")
    nan, inf = np.nan, np.inf
    x = fg.tensor([-1.0, 0.0, 2.5, 3.0, inf, nan])
    np.testing.assert_array_equal(C.integer_interval(0, 3).check(x).numpy(), [False, True, False, True, False, False])
    np.testing.assert_array_equal(C.real.check(x).numpy(), [True] * 5 + [False])
    for dt in (np.float32, np.float64):
        p = np.array([[0.2, 0.8], [0.5, 0.6], [-0.1, 1.1], [nan, 1.0], [0.3, 0.7]], dt)
        got = C.simplex.check(fg.tensor(p))
        np.testing.assert_array_equal(got.numpy(), [True, False, False, False, True])
        np.testing.assert_array_equal(got.numpy(), np.asarray(C.simplex._check(jnp.asarray(p))))
        np.testing.assert_array_equal(got.numpy(), TD.constraints.simplex.check(torch.tensor(p)).numpy())
    assert C.simplex.check(fg.tensor([0.25, 0.75])).shape == ()
