"""The torch face's CPU generator is torch's, bit for bit: mt19937 seeded as ATen seeds it, torch's 5056-byte
state, and the transforms of ATen's CPU kernels (compared with torch where it is installed; the mt19937
reference sequence and statistics without it)."""
import math

import numpy as np
import pytest

import funcgrad as fg
from funcgrad._torch import _mt19937 as MT


# --- without torch: the reference sequence, the state layout, statistics ------------------------------------

def test_mt19937_reference_sequence():
    # mt19937 seeded with 5489 (the C++ standard's default): first output 3499211612, 10000th 4123659995
    w = MT.Engine(5489).words(10000)
    assert int(w[0]) == 3499211612
    assert int(w[9999]) == 4123659995


def test_seed_uses_low_32_bits_and_keeps_64():
    g1 = fg.Generator().manual_seed(5489)
    g2 = fg.Generator().manual_seed(5489 + (7 << 32))
    assert g2.initial_seed() == 5489 + (7 << 32)
    assert fg.equal(fg.rand(10, generator=g1), fg.rand(10, generator=g2))


def test_rand_is_the_top_24_bits_of_each_word():
    g = fg.Generator().manual_seed(5489)
    v = fg.rand(3, generator=g).numpy()
    assert v[0] == np.float32((3499211612 & 0xFFFFFF) / 2.0 ** 24)


def test_state_layout_and_round_trip():
    g = fg.Generator().manual_seed(123)
    s = g.get_state().numpy()
    assert s.dtype == np.uint8 and s.shape == (5056,)
    assert int.from_bytes(s[:8].tobytes(), "little") == 123
    assert int.from_bytes(s[8:12].tobytes(), "little") == 1       # left: the words twist before the first output
    assert int.from_bytes(s[24:32].tobytes(), "little") == 123    # state[0] = the seed's low 32 bits
    fg.randn(3, generator=g)                                        # leaves a cached normal in the state
    s = g.get_state()
    a = fg.randn(5, generator=g)
    g.set_state(s)
    assert fg.equal(fg.randn(5, generator=g), a)
    with pytest.raises(RuntimeError, match="size 5056"):
        g.set_state(fg.zeros(10, dtype=fg.uint8))
    with pytest.raises(TypeError, match="ByteTensor"):
        g.set_state(fg.zeros(5056))


def test_statistics():
    fg.manual_seed(0)
    u = fg.rand(200000, dtype=fg.float64).numpy()
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.005
    z = fg.randn(200000).numpy()
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    b = fg.empty(100000).bernoulli_(0.3).numpy()
    assert abs(b.mean() - 0.3) < 0.01
    e = fg.empty(100000).exponential_(2.0).numpy()
    assert e.min() > 0 and abs(e.mean() - 0.5) < 0.01
    r = fg.randint(0, 10, (100000,)).numpy()
    assert set(np.unique(r)) == set(range(10))
    p = fg.randperm(1000).numpy()
    assert sorted(p) == list(range(1000))


def test_fma_helpers_round_once():
    # 1 + 2**-30 times itself, minus 1: the exact 2**-29 + 2**-60 needs one rounding to keep the last term
    a = np.float64(1 + 2.0 ** -30)
    assert MT._fma64(a, a, -1.0) == 2.0 ** -29 + 2.0 ** -60
    b = np.float32(1 + 2.0 ** -12)
    assert MT._fma32(b, b, np.float32(-1)) == np.float32(2.0 ** -11 + 2.0 ** -24)


def test_large_randperm_inside_out_path(monkeypatch):
    monkeypatch.setattr(MT, "RANDPERM_SMALL", 4)
    e = MT.Engine(0)
    p = MT.randperm(e, 10)
    z = MT.Engine(0).words64(10) % np.arange(1, 11, dtype=np.uint64)
    ref = []
    for i, k in enumerate(z.tolist()):   # the inside-out shuffle, written plainly
        ref.append(i)
        ref[i], ref[k] = ref[k], i
    assert p.tolist() == ref and sorted(ref) == list(range(10))


def test_dropout_scale_is_rounded_from_float():
    # torch: noise.bernoulli_(1 - p).div_(1 - p), the division a product with float's reciprocal of 1 - p, so a
    # float16 kept element is float16(1 / 0.6f) = 1.6669921875 (not 1 / float16(0.6) = 1.666015625)
    fg.manual_seed(0)
    y = fg.nn.functional.dropout(fg.ones(200, dtype=fg.float16), 0.4).numpy()
    kept = y[y != 0]
    assert kept.size and np.all(kept == np.float16(np.float32(1) / np.float32(0.6)))
    assert float(np.float16(np.float32(1) / np.float32(0.6))) == 1.6669921875


def test_rrelu_draws_one_double_per_nonpositive_element():
    # ATen: uniform_real_distribution<double>(lower, upper) for each x <= 0, in order (not for x > 0 or NaN)
    x = fg.tensor([-1.0, 2.0, 0.0, float("nan"), -4.0], dtype=fg.float64, requires_grad=True)
    fg.manual_seed(3)
    y = fg.nn.functional.rrelu(x, 0.25, 0.5, training=True)
    eng = MT.Engine(3)
    r = eng.words64(3) & np.uint64((1 << 53) - 1)
    slopes = r.astype(np.float64) * 2.0 ** -53 * 0.25 + 0.25
    want = np.array([-slopes[0], 2.0, 0.0, np.nan, -4.0 * slopes[2]])
    np.testing.assert_array_equal(y.detach().numpy(), want)
    assert fg.get_rng_state().numpy().tobytes() == eng.get_state().tobytes()
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [slopes[0], 1.0, slopes[1], 1.0, slopes[2]])
    with pytest.raises(NotImplementedError, match="rrelu_with_noise_out_cpu"):
        fg.nn.functional.rrelu(fg.ones(3, dtype=fg.float16), training=True)


# --- against torch -----------------------------------------------------------------------------------------

torch = pytest.importorskip("torch")

SIZES = (1, 7, 15, 16, 17, 100, 1000)


def _bits(x):
    if hasattr(x, "detach"):
        x = x.detach()
        if x.dtype == (torch.bfloat16 if not isinstance(x, fg.Tensor) else fg.bfloat16):
            x = x.float()
        x = x.numpy()
    return np.ascontiguousarray(x)


def _same(f, seed=0):
    """f(torch) and f(funcgrad) from the same seed: the same bits, and the same generator state after."""
    torch.manual_seed(seed)
    fg.manual_seed(seed)
    a, b = _bits(f(torch)), _bits(f(fg))
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes(), (a, b)
    assert torch.get_rng_state().numpy().tobytes() == fg.get_rng_state().numpy().tobytes()


def test_readme_numbers():
    fg.manual_seed(0)
    assert np.allclose(fg.randn(3).numpy(), [1.5410, -0.2934, -2.1788], atol=1e-4)


@pytest.mark.parametrize("seed", [0, 1, 42, 2 ** 40 + 3, -5])
@pytest.mark.parametrize("name", ["float32", "float64", "float16", "bfloat16"])
def test_rand_randn_sizes(seed, name):
    def f(t):
        dt = getattr(t, name)
        return t.cat([t.rand(n, dtype=dt) for n in SIZES] + [t.randn(n, dtype=dt) for n in SIZES]
                     + [t.randn(n, dtype=dt) for n in reversed(SIZES)])
    _same(f, seed)


@pytest.mark.parametrize("name", ["float32", "float64"])
def test_normal_uniform_in_place(name):
    def f(t):
        dt = getattr(t, name)
        return t.cat([t.empty(n, dtype=dt).normal_(0.3, 2.5) for n in SIZES]
                     + [t.empty(n, dtype=dt).uniform_(-2, 3) for n in SIZES]
                     + [t.normal(0.5, 2.0, (n,), dtype=dt) for n in (5, 40)]
                     + [t.normal(t.zeros(20, dtype=dt), t.ones(20, dtype=dt) * 2)]
                     + [t.normal(t.ones(20, dtype=dt), 3.0)])
    _same(f)


def test_complex_and_strided():
    _same(lambda t: t.view_as_real(t.randn(20, dtype=t.complex64)))
    _same(lambda t: t.view_as_real(t.rand(9, dtype=t.complex128)))
    _same(lambda t: t.empty(20, 30).t().uniform_())
    _same(lambda t: t.empty(20, 30).t().normal_())     # strided: the scalar Box-Muller path


def test_integers():
    _same(lambda t: t.cat([t.randint(-5, 17, (n,)) for n in SIZES] + [t.randint(0, 2 ** 40, (9,))]))
    _same(lambda t: t.randint(3, 1000, (50,), dtype=t.int32))
    _same(lambda t: t.cat([t.empty(50, dtype=t.int64).random_(), t.empty(50, dtype=t.int64).random_(10),
                           t.empty(50, dtype=t.int64).random_(5, None),
                           t.empty(50, dtype=t.int64).random_(-2 ** 63, None)]))
    _same(lambda t: t.empty(50).random_())
    _same(lambda t: t.empty(50, dtype=t.int32).random_())
    _same(lambda t: t.empty(50, dtype=t.float64).random_())
    _same(lambda t: t.randint_like(t.zeros(30), 4, 9))


def test_randperm():
    _same(lambda t: t.cat([t.randperm(n) for n in (0, 1, 2, 5, 100, 1000)]))
    _same(lambda t: t.randperm(30, dtype=t.float32))


def test_bernoulli_exponential_and_friends():
    _same(lambda t: t.empty(1000).bernoulli_(0.3))
    _same(lambda t: t.empty(100).bernoulli_(t.rand(100)))
    _same(lambda t: t.empty(100).bernoulli_(t.rand(100, dtype=t.float64)))
    _same(lambda t: t.bernoulli(t.rand(3, 40)))
    _same(lambda t: t.bernoulli(t.rand(3, 40), 0.25))
    _same(lambda t: t.empty(1000).exponential_(1.7))
    _same(lambda t: t.empty(1000, dtype=t.float64).exponential_(1.7))
    _same(lambda t: t.empty(100).cauchy_(0.5, 2.0))
    _same(lambda t: t.empty(100, dtype=t.float64).log_normal_())
    _same(lambda t: t.empty(100).geometric_(0.3))


def test_multinomial():
    _same(lambda t: t.multinomial(t.tensor([[0.1, 0.2, 0.7, 0.0], [1., 2., 3., 4.]]), 20, replacement=True))
    _same(lambda t: t.multinomial(t.rand(3, 50), 10))
    _same(lambda t: t.multinomial(t.rand(3, 50, dtype=t.float64), 10))
    _same(lambda t: t.multinomial(t.rand(50), 1, replacement=True))


def test_like_functions_and_generators():
    _same(lambda t: t.cat([t.rand_like(t.zeros(20)), t.randn_like(t.zeros(20, dtype=t.float64)).float()]))
    for seed in (7, 2 ** 63 + 5):
        a = torch.rand(20, generator=torch.Generator().manual_seed(seed))
        b = fg.rand(20, generator=fg.Generator().manual_seed(seed))
        assert a.numpy().tobytes() == b.numpy().tobytes()
        ga, gb = torch.Generator().manual_seed(seed), fg.Generator().manual_seed(seed)
        assert ga.initial_seed() == gb.initial_seed()
        a = torch.randn(40, generator=ga), torch.randperm(9, generator=ga), torch.rand_like(torch.zeros(3),
                                                                                           generator=ga)
        b = fg.randn(40, generator=gb), fg.randperm(9, generator=gb), fg.rand_like(fg.zeros(3), generator=gb)
        assert all(x.numpy().tobytes() == y.numpy().tobytes() for x, y in zip(a, b))
        assert ga.get_state().numpy().tobytes() == gb.get_state().numpy().tobytes()


def test_state_round_trips_both_ways():
    torch.manual_seed(3)
    torch.randn(5)                     # an odd count: a cached double normal is in the state
    torch.rand(3)
    s = torch.get_rng_state()
    fg.set_rng_state(fg.tensor(s.numpy()))
    assert fg.get_rng_state().numpy().tobytes() == s.numpy().tobytes()
    a = torch.cat([torch.randn(3), torch.randn(100), torch.rand(7)])
    b = fg.cat([fg.randn(3), fg.randn(100), fg.rand(7)])
    assert a.numpy().tobytes() == b.numpy().tobytes()
    fg.manual_seed(11)
    fg.randn(1)
    fg.rand(700)                       # past a twist of the 624 words
    torch.set_rng_state(torch.from_numpy(fg.get_rng_state().numpy().copy()))
    assert torch.randn(9).numpy().tobytes() == fg.randn(9).numpy().tobytes()
    g = torch.Generator().manual_seed(5)
    torch.rand(4, generator=g)
    h = fg.Generator()
    h.set_state(fg.tensor(g.get_state().numpy()))
    assert h.initial_seed() == 5
    assert torch.rand(4, generator=g).numpy().tobytes() == fg.rand(4, generator=h).numpy().tobytes()


def test_modules_init_and_dropout():
    _same(lambda t: t.cat([t.nn.Linear(3, 2).weight.flatten(), t.nn.Linear(30, 20).bias]))
    _same(lambda t: t.nn.Conv2d(3, 8, 3).weight)
    _same(lambda t: t.nn.functional.dropout(t.ones(1000), 0.3))
    _same(lambda t: t.nn.Dropout(0.5)(t.ones(10, 20)))
    _same(lambda t: t.nn.functional.dropout2d(t.ones(4, 6, 3, 3), 0.5))
    init = [lambda t, w: t.nn.init.uniform_(w, -1, 2), lambda t, w: t.nn.init.normal_(w, 0.5, 3),
            lambda t, w: t.nn.init.xavier_uniform_(w), lambda t, w: t.nn.init.xavier_normal_(w),
            lambda t, w: t.nn.init.kaiming_uniform_(w), lambda t, w: t.nn.init.kaiming_normal_(w),
            lambda t, w: t.nn.init.trunc_normal_(w), lambda t, w: t.nn.init.trunc_normal_(w, 0.5, 1.0, -0.2, 0.3),
            lambda t, w: t.nn.init.sparse_(w, 0.3)]
    for f in init:
        _same(lambda t: f(t, t.empty(30, 40)))


def test_orthogonal_draws_match():
    torch.manual_seed(0)
    fg.manual_seed(0)
    a = torch.nn.init.orthogonal_(torch.empty(6, 9)).numpy()
    b = fg.nn.init.orthogonal_(fg.empty(6, 9)).numpy()
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)     # (LAPACK's QR, not the draws, may differ in the last bit)
    assert torch.get_rng_state().numpy().tobytes() == fg.get_rng_state().numpy().tobytes()


def test_bfloat16_draws_and_reduced_precision_scales():
    _same(lambda t: t.normal(t.zeros(40, dtype=t.bfloat16), 2.0))
    _same(lambda t: t.normal(1.0, t.ones(40, dtype=t.bfloat16)))
    _same(lambda t: t.bernoulli(t.full((40,), 0.6, dtype=t.bfloat16)))
    _same(lambda t: t.multinomial(t.rand(20, dtype=t.bfloat16), 4))
    _same(lambda t: t.nn.functional.dropout(t.ones(100, dtype=t.float16), 0.4))
    _same(lambda t: t.nn.functional.dropout(t.ones(100, dtype=t.bfloat16), 0.3))
    _same(lambda t: t.nn.functional.dropout2d(t.ones(2, 9, 2, 2, dtype=t.float16), 0.7))


@pytest.mark.parametrize("name", ["float32", "float64", "bfloat16"])
def test_rrelu_training_draws(name):
    _same(lambda t: t.nn.functional.rrelu(t.randn(300, dtype=getattr(t, name)), training=True))
    _same(lambda t: t.nn.functional.rrelu(t.randn(30, 3, dtype=getattr(t, name))[:, 1], 0.2, 0.6, training=True))
