"""funcgrad.nn.init against torch.nn.init: gains, the deterministic initialisers exactly, the random ones by
Kolmogorov-Smirnov tests against the distributions torch's formulas define, and every layer's default
initialisation."""
import math
import warnings

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import nn
from funcgrad.nn import init

torch = pytest.importorskip("torch")
stats = pytest.importorskip("scipy.stats")

P_MIN = 1e-4  # a correct sampler fails a test at this level once in 10^4 runs (and the seeds are fixed)


def _np(t):
    return np.asarray(t.detach().numpy())


def _ks_uniform(t, bound):
    v = _np(t).ravel().astype(np.float64)
    assert v.min() >= -bound and v.max() <= bound
    assert stats.kstest(v, stats.uniform(-bound, 2 * bound).cdf).pvalue > P_MIN


def _ks_normal(t, mean, std):
    v = _np(t).ravel().astype(np.float64)
    assert stats.kstest(v, stats.norm(mean, std).cdf).pvalue > P_MIN


def test_calculate_gain_all_nonlinearities():
    for nl, p in [("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None), ("conv_transpose1d", None),
                  ("conv_transpose2d", None), ("conv_transpose3d", None), ("sigmoid", None), ("tanh", None),
                  ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu", None)]:
        assert init.calculate_gain(nl, p) == pytest.approx(torch.nn.init.calculate_gain(nl, p))
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="negative_slope a not a valid number"):
        init.calculate_gain("leaky_relu", "a")
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)


@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3), (2, 3, 2, 2)])
def test_fan_computation(shape):
    t = torch.empty(*shape)
    assert init._calculate_fan_in_and_fan_out(fg.empty(*shape)) == torch.nn.init._calculate_fan_in_and_fan_out(t)


def test_uniform_normal_constant_families():
    fg.manual_seed(0)
    w = fg.empty(150, 120)
    fan_in, fan_out = 120, 150
    assert init.uniform_(w, -0.3, 0.7) is w
    v = _np(w).ravel().astype(np.float64)
    assert stats.kstest(v, stats.uniform(-0.3, 1.0).cdf).pvalue > P_MIN
    init.normal_(w, 0.5, 2.0)
    _ks_normal(w, 0.5, 2.0)
    init.xavier_uniform_(w, gain=1.5)
    _ks_uniform(w, 1.5 * math.sqrt(6 / (fan_in + fan_out)))
    init.xavier_normal_(w, gain=0.5)
    _ks_normal(w, 0, 0.5 * math.sqrt(2 / (fan_in + fan_out)))
    for a, mode, nl in [(0, "fan_in", "relu"), (math.sqrt(5), "fan_in", "leaky_relu"), (0.1, "fan_out", "leaky_relu"),
                        (0, "fan_out", "tanh")]:
        fan = fan_in if mode == "fan_in" else fan_out
        std = torch.nn.init.calculate_gain(nl, a) / math.sqrt(fan)
        init.kaiming_uniform_(w, a, mode, nl)
        _ks_uniform(w, math.sqrt(3) * std)
        init.kaiming_normal_(w, a, mode, nl)
        _ks_normal(w, 0, std)
    for fn, val in ((init.ones_, 1.0), (init.zeros_, 0.0), (lambda t: init.constant_(t, 0.25), 0.25)):
        assert np.all(_np(fn(w)) == np.float32(val))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(w, mode="fan_avg")
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed"):
        init.xavier_normal_(fg.empty(4))
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(fg.empty(0, 3))


@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (1.0, 2.0, -1.0, 2.0), (0.0, 0.02, -0.04, 0.01)])
def test_trunc_normal(mean, std, a, b):
    fg.manual_seed(1)
    w = init.trunc_normal_(fg.empty(100, 100), mean, std, a, b)
    v = _np(w).ravel().astype(np.float64)
    assert v.min() >= a and v.max() <= b
    dist = stats.truncnorm((a - mean) / std, (b - mean) / std, loc=mean, scale=std)
    assert stats.kstest(v, dist.cdf).pvalue > P_MIN


def test_generator_argument_reproducible():
    for fn in (init.uniform_, init.normal_, init.xavier_uniform_, init.xavier_normal_, init.kaiming_uniform_,
               init.kaiming_normal_, init.trunc_normal_, init.orthogonal_, lambda t, generator: init.sparse_(
                   t, 0.3, generator=generator)):
        g1, g2 = fg.Generator().manual_seed(7), fg.Generator().manual_seed(7)
        fg.manual_seed(1)   # (sparse_ picks its zeros with the default generator's randperm, as torch 2.13)
        a = fn(fg.empty(6, 5), generator=g1)
        fg.manual_seed(1)
        b = fn(fg.empty(6, 5), generator=g2)
        np.testing.assert_array_equal(_np(a), _np(b))


def test_eye_and_dirac_exact():
    for shape in ((3, 5), (4, 2), (3, 3)):
        t = torch.nn.init.eye_(torch.empty(*shape))
        np.testing.assert_array_equal(_np(init.eye_(fg.empty(*shape))), t.numpy())
    for shape, groups in (((4, 2, 3), 1), ((6, 4, 3, 3), 2), ((4, 2, 3, 3, 3), 2), ((2, 5, 2, 4), 1)):
        t = torch.nn.init.dirac_(torch.empty(*shape), groups)
        np.testing.assert_array_equal(_np(init.dirac_(fg.empty(*shape), groups)), t.numpy())
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(fg.empty(3))
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions are supported"):
        init.dirac_(fg.empty(3, 3))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        init.dirac_(fg.empty(3, 3, 3), groups=2)
    # a dirac-initialised convolution is the identity on its input channels
    conv = nn.Conv2d(3, 3, 3, padding=1, bias=False)
    init.dirac_(conv.weight)
    x = fg.randn(2, 3, 5, 5)
    np.testing.assert_allclose(_np(conv(x)), _np(x), atol=1e-6)


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 2, 3), (8, 8)])
@pytest.mark.parametrize("gain", [1.0, 2.5])
def test_orthogonal(shape, gain):
    w = init.orthogonal_(fg.empty(*shape), gain)
    m = _np(w).reshape(shape[0], -1).astype(np.float64)
    small = min(m.shape)
    gram = m.T @ m if m.shape[0] >= m.shape[1] else m @ m.T
    np.testing.assert_allclose(gram, gain ** 2 * np.eye(small), atol=1e-5 * gain ** 2)
    assert w.grad_fn is None
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        init.orthogonal_(fg.empty(3))


def test_orthogonal_is_haar_distributed():
    # the first column of a Haar-random orthogonal matrix is uniform on the sphere: its first coordinate x
    # satisfies (x + 1)/2 ~ Beta((n-1)/2, (n-1)/2)
    fg.manual_seed(3)
    n = 5
    xs = np.array([_np(init.orthogonal_(fg.empty(n, n)))[0, 0] for _ in range(300)], np.float64)
    assert stats.kstest((xs + 1) / 2, stats.beta((n - 1) / 2, (n - 1) / 2).cdf).pvalue > P_MIN


def test_sparse():
    fg.manual_seed(2)
    w = init.sparse_(fg.empty(40, 300), 0.25, std=0.5)
    v = _np(w)
    assert np.all((v == 0).sum(0) == math.ceil(0.25 * 40))
    _ks_normal(fg.tensor(v[v != 0]), 0, 0.5)
    # which rows are zeroed is uniform: every row is hit about equally often
    hits = (v == 0).sum(1)
    assert stats.chisquare(hits).pvalue > P_MIN
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.sparse_(fg.empty(3), 0.1)


def test_initialisers_keep_leaves_and_return_tensor():
    p = nn.Parameter(fg.empty(4, 5))
    for fn in (init.uniform_, init.normal_, init.ones_, init.zeros_, init.eye_, init.xavier_uniform_,
               init.xavier_normal_, init.kaiming_uniform_, init.kaiming_normal_, init.trunc_normal_,
               init.orthogonal_, lambda t: init.constant_(t, 2.0), lambda t: init.sparse_(t, 0.5)):
        assert fn(p) is p
        assert p.is_leaf and p.requires_grad and p.grad_fn is None


# --- default initialisation of the layers -------------------------------------------------------
def test_linear_and_bilinear_defaults():
    fg.manual_seed(0)
    lin = nn.Linear(50, 400)
    _ks_uniform(lin.weight, 1 / math.sqrt(50))  # kaiming_uniform(a=sqrt 5) == U(-1/sqrt(fan_in), ...)
    _ks_uniform(lin.bias, 1 / math.sqrt(50))
    bil = nn.Bilinear(20, 7, 30)
    _ks_uniform(bil.weight, 1 / math.sqrt(20))
    _ks_uniform(bil.bias, 1 / math.sqrt(20))


def test_embedding_prelu_norm_defaults():
    fg.manual_seed(1)
    e = nn.Embedding(300, 40, padding_idx=3)
    v = _np(e.weight)
    assert np.all(v[3] == 0)
    _ks_normal(fg.tensor(np.delete(v, 3, 0)), 0, 1)
    bag = nn.EmbeddingBag(300, 40)
    _ks_normal(bag.weight, 0, 1)
    assert np.all(_np(nn.PReLU(7).weight) == np.float32(0.25))
    assert np.all(_np(nn.PReLU(3, init=0.1).weight) == np.float32(0.1))
    for mod, tmod in ((nn.GroupNorm(2, 6), torch.nn.GroupNorm(2, 6)), (nn.LayerNorm(5), torch.nn.LayerNorm(5)),
                      (nn.RMSNorm(5), torch.nn.RMSNorm(5)), (nn.BatchNorm3d(4), torch.nn.BatchNorm3d(4)),
                      (nn.InstanceNorm2d(4, affine=True, track_running_stats=True),
                       torch.nn.InstanceNorm2d(4, affine=True, track_running_stats=True))):
        sd, tsd = mod.state_dict(), tmod.state_dict()
        assert list(sd) == list(tsd)
        for k in sd:
            np.testing.assert_array_equal(_np(sd[k]), tsd[k].numpy())
            assert _np(sd[k]).dtype == tsd[k].numpy().dtype


def test_conv_defaults():
    fg.manual_seed(2)
    c = nn.Conv2d(4, 64, 3)
    _ks_uniform(c.weight, 1 / math.sqrt(4 * 9))
    _ks_uniform(c.bias, 1 / math.sqrt(4 * 9))


def test_bad_fan_mode_message_as_torch():
    torch = pytest.importorskip("torch")
    msgs = []
    for L in (fg, torch):
        with pytest.raises(ValueError) as info:
            L.nn.init.kaiming_normal_(L.empty(3, 4), mode="bad")
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
