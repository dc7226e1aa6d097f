"""Sampling through the stateful Generator: determinism, distributions (KS / chi-square at fixed seeds),
shapes, dtypes and torch's errors. Streams differ from torch's by design; only behaviour is compared."""
import numpy as np
import pytest
from scipy import stats

import funcgrad as fg

torch = pytest.importorskip("torch")
N = 4000
P = 1e-4  # a correct sampler fails a test with this probability at most (fixed seeds make it deterministic)


def g(seed=0):
    return fg.Generator().manual_seed(seed)


def test_generator_state_and_determinism():
    gen = fg.Generator()
    assert gen.manual_seed(3) is gen and gen.initial_seed() == 3 and gen.device == fg.device("cpu")
    a = fg.rand(5, generator=gen)
    st = gen.get_state()
    assert st.dtype == fg.uint8 and st.ndim == 1
    b = fg.rand(5, generator=gen)
    gen.set_state(st)
    assert fg.rand(5, generator=gen).tolist() == b.tolist() != a.tolist()
    assert fg.rand(5, generator=g(3)).tolist() == a.tolist()
    with pytest.raises(TypeError):
        gen.set_state(fg.zeros(16))
    with pytest.raises(RuntimeError):
        gen.set_state(fg.zeros(3, dtype=fg.uint8))
    assert fg.manual_seed(-1).initial_seed() == torch.manual_seed(-1).initial_seed()
    with pytest.raises(ValueError):
        fg.manual_seed(2 ** 64)
    s = fg.seed()
    assert isinstance(s, int) and fg.initial_seed() == s


def test_default_generator_and_random_module():
    fg.manual_seed(7)
    x = fg.randn(4)
    fg.random.manual_seed(7)
    assert fg.randn(4).tolist() == x.tolist()
    assert fg.random.initial_seed() == 7
    with fg.random.fork_rng():
        fg.randn(10)
    y = fg.randn(4)
    fg.manual_seed(7)
    fg.randn(4)
    assert fg.randn(4).tolist() == y.tolist()
    st = fg.random.get_rng_state()
    z = fg.rand(3)
    fg.random.set_rng_state(st)
    assert fg.rand(3).tolist() == z.tolist()
    assert isinstance(fg.default_generator, fg.Generator)


@pytest.mark.parametrize("fn,cdf", [
    (lambda gen: fg.rand(N, generator=gen), stats.uniform.cdf),
    (lambda gen: fg.randn(N, generator=gen, dtype=fg.float64), stats.norm.cdf),
    (lambda gen: fg.normal(2.0, 3.0, size=(N,), generator=gen), stats.norm(2, 3).cdf),
    (lambda gen: fg.normal(fg.full((N,), 2.0), fg.full((N,), 3.0), generator=gen), stats.norm(2, 3).cdf),
    (lambda gen: fg.normal(fg.full((N,), 2.0), 3.0, generator=gen), stats.norm(2, 3).cdf),
    (lambda gen: fg.normal(2.0, fg.full((N,), 3.0), generator=gen), stats.norm(2, 3).cdf),
    (lambda gen: fg.empty(N).uniform_(-2, 5, generator=gen), stats.uniform(-2, 7).cdf),
    (lambda gen: fg.empty(N, dtype=fg.float64).normal_(1, 0.5, generator=gen), stats.norm(1, 0.5).cdf),
    (lambda gen: fg.empty(N).exponential_(2.0, generator=gen), stats.expon(scale=0.5).cdf),
    (lambda gen: fg.empty(N).cauchy_(1.0, 2.0, generator=gen), stats.cauchy(1, 2).cdf),
    (lambda gen: fg.empty(N).log_normal_(0.5, 0.75, generator=gen), stats.lognorm(0.75, scale=np.exp(0.5)).cdf),
])
def test_continuous_distributions_ks(fn, cdf):
    x = fn(g(11)).numpy().astype(np.float64)
    assert stats.kstest(x, cdf).pvalue > P


def _chi2(counts, probs):
    exp = np.asarray(probs) * counts.sum()
    return stats.chisquare(counts, exp).pvalue


def test_discrete_distributions_chi2():
    gen = g(5)
    v = fg.randint(3, 8, (N,), generator=gen).numpy()
    assert v.dtype == np.int64 and v.min() >= 3 and v.max() < 8
    assert _chi2(np.bincount(v - 3, minlength=5), [0.2] * 5) > P
    v = fg.empty(N, dtype=fg.long).random_(-3, 2, generator=gen).numpy()
    assert _chi2(np.bincount(v + 3, minlength=5), [0.2] * 5) > P
    v = fg.empty(N).random_(4, generator=gen).numpy().astype(int)
    assert _chi2(np.bincount(v, minlength=4), [0.25] * 4) > P
    v = fg.empty(N).geometric_(0.4, generator=gen).numpy().astype(int)
    k = np.arange(1, 8)
    probs = list(0.6 ** (k - 1) * 0.4) + [0.6 ** 7]
    assert _chi2(np.bincount(np.minimum(v, 8) - 1, minlength=8), probs) > P
    lam = 3.0
    v = fg.poisson(fg.full((N,), lam), generator=gen).numpy().astype(int)
    pk = stats.poisson(lam).pmf(np.arange(8))
    assert _chi2(np.bincount(np.minimum(v, 8), minlength=9), list(pk) + [1 - pk.sum()]) > P
    b = fg.bernoulli(fg.full((N,), 0.3), generator=gen).numpy()
    assert set(np.unique(b)) <= {0.0, 1.0} and _chi2(np.bincount(b.astype(int), minlength=2), [0.7, 0.3]) > P
    b = fg.zeros(N, dtype=fg.long).bernoulli_(0.3, generator=gen).numpy()
    assert _chi2(np.bincount(b, minlength=2), [0.7, 0.3]) > P
    b = fg.zeros(N).bernoulli_(fg.full((N,), 0.8), generator=gen).numpy().astype(int)
    assert _chi2(np.bincount(b, minlength=2), [0.2, 0.8]) > P
    assert fg.bernoulli(fg.zeros(3, dtype=fg.float64), p=1.0).tolist() == [1.0, 1.0, 1.0]


def test_randperm():
    gen = g(2)
    p = fg.randperm(50, generator=gen)
    assert sorted(p.tolist()) == list(range(50)) and p.dtype == fg.int64
    assert fg.randperm(4, dtype=fg.float32).dtype == fg.float32 and fg.randperm(0).shape == (0,)
    firsts = np.array([fg.randperm(4, generator=gen)[0].item() for _ in range(400)])
    assert _chi2(np.bincount(firsts, minlength=4), [0.25] * 4) > P


def test_multinomial():
    gen = g(9)
    probs = fg.tensor([[0.2, 0.0, 0.8], [1.0, 1.0, 2.0]])
    r = fg.multinomial(probs, N, replacement=True, generator=gen)
    assert r.shape == (2, N) and r.dtype == fg.int64
    assert np.bincount(r[0].numpy(), minlength=3)[1] == 0
    assert _chi2(np.bincount(r[0].numpy(), minlength=3)[[0, 2]], [0.2, 0.8]) > P
    assert _chi2(np.bincount(r[1].numpy(), minlength=3), [0.25, 0.25, 0.5]) > P
    r = fg.multinomial(fg.tensor([1.0, 2.0, 3.0, 4.0]), 4, generator=gen)
    assert sorted(r.tolist()) == [0, 1, 2, 3]
    firsts = fg.multinomial(fg.tensor([[1.0, 2.0, 3.0, 4.0]] * 2000), 2, generator=gen)[:, 0].numpy()
    assert _chi2(np.bincount(firsts, minlength=4), [0.1, 0.2, 0.3, 0.4]) > P
    r = fg.tensor([0.0, 1.0, 1.0]).multinomial(2, generator=gen)
    assert 0 not in r.tolist()


ERRORS = [
    "m.multinomial(m.tensor([.2, .3, .5]), 4)", "m.multinomial(m.tensor([-.2, .3, .5]), 1)",
    "m.multinomial(m.tensor([0., 0.]), 1)", "m.multinomial(m.tensor([1, 2]), 1)", "m.multinomial(m.ones(2, 2, 2), 1)",
    "m.multinomial(m.ones(3), 0)", "m.multinomial(m.tensor([float('inf'), 1.]), 1)",
    "m.bernoulli(m.full((3,), 1.5))", "m.bernoulli(m.ones(3, dtype=m.long))", "m.bernoulli(m.zeros(3), 1.5)",
    "m.poisson(m.full((3,), 2))", "m.poisson(m.tensor([-1.]))", "m.normal(0.0, 1.0)",
    "m.normal(0.0, -1.0, size=(2,))", "m.normal(m.zeros(2), -1.0)", "m.normal(m.zeros(2), m.tensor([1., -1.]))",
    "m.normal(m.zeros(2, dtype=m.long), 1.)", "m.randn(2, dtype=m.long)", "m.rand(2, dtype=m.long)",
    "m.randint(3, (2,), dtype=m.bool)", "m.randint(5, 3, (2,))", "m.randperm(-1)",
    "m.zeros(3).random_(7, 3)", "m.zeros(3, dtype=m.uint8).random_(-3, 5)", "m.zeros(3, dtype=m.uint8).random_(3, 300)",
    "m.zeros(3).uniform_(3, 1)", "m.zeros(3).geometric_(1.5)", "m.zeros(3).geometric_(0)",
    "m.zeros(3).exponential_(-1)", "m.zeros(3).exponential_(0)", "m.zeros(3).bernoulli_(1.5)",
    "m.zeros(3).bernoulli_(m.tensor([1.5, 0, 0]))", "m.zeros(3, dtype=m.long).normal_()",
    "m.zeros(3, dtype=m.long).uniform_()", "m.zeros(3, dtype=m.long).exponential_()",
    "m.zeros(3, dtype=m.long).cauchy_()", "m.zeros(3, dtype=m.long).log_normal_()", "m.zeros(3).log_normal_(1, 0)",
    "m.zeros(2).cauchy_(0, -1)", "m.zeros(3, requires_grad=True).normal_()",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_sampling_errors_match_torch(expr):
    errs = []
    for m in (torch, fg):
        try:
            eval(expr, {"m": m})
            errs.append(None)
        except Exception as e:  # noqa: BLE001
            errs.append(type(e))
    assert errs[0] is not None and errs[0] is errs[1]


@pytest.mark.parametrize("expr", [
    "m.zeros(3, dtype=m.long).random_(3, 7)", "m.zeros(3, dtype=m.bool).random_()", "m.zeros(3, dtype=m.int8).random_()",
    "m.zeros(3, dtype=m.long).geometric_(0.5)", "m.zeros(3, dtype=m.long).bernoulli_(0.5)",
    "m.bernoulli(m.zeros(3, dtype=m.long), 0.5)", "m.randint(0, 2 ** 40, (2,))", "m.randint(3, 10, (2,))",
    "m.randint(1, 3, (2,), dtype=m.float32)", "m.normal(m.zeros(3, 1), m.ones(3))", "m.normal(2., 3., size=(2,), dtype=m.float64)",
    "m.poisson(m.ones(2, dtype=m.float64))", "m.zeros(3).uniform_(1, 1)", "m.zeros(3).normal_(0, 0)",
])
def test_sample_shapes_and_dtypes(expr):
    a, b = eval(expr, {"m": torch}), eval(expr, {"m": fg})
    assert (str(a.dtype), tuple(a.shape)) == (str(b.dtype), tuple(b.shape))
    if "uniform_(1, 1)" in expr or "normal_(0, 0)" in expr:
        assert a.tolist() == b.tolist()


def test_random_bounds():
    x = fg.zeros(2000, dtype=fg.uint8).random_(generator=g(1)).numpy()
    assert x.min() >= 0 and x.max() <= 255 and x.max() > 240
    x = fg.zeros(2000).random_(generator=g(1)).numpy()
    assert x.min() >= 0 and x.max() <= 2 ** 24 and x.max() > 2 ** 23
    x = fg.zeros(2000, dtype=fg.bool).random_(generator=g(1)).numpy()
    assert x.any() and not x.all()


def test_normal_records_zero_gradients_as_torch():
    for m in (torch, fg):
        mean = m.zeros(3, requires_grad=True)
        std = m.ones(3, requires_grad=True)
        y = m.normal(mean, std)
        assert y.requires_grad
        y.sum().backward()
        assert mean.grad.tolist() == [0.0] * 3 and std.grad.tolist() == [0.0] * 3
