"""funcgrad.nn against torch.nn: forward/backward of layers and losses, Module API, state dicts, training."""
import math

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import nn
from funcgrad.nn import functional as F

torch = pytest.importorskip("torch")

RTOL, ATOL = 1e-4, 1e-5


def _np(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t)


def _close(a, b, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


def _twin(tmod, fmod):
    """Copy torch's parameters and buffers into our module (a state_dict round trip)."""
    res = fmod.load_state_dict(tmod.state_dict())
    assert res.missing_keys == [] and res.unexpected_keys == []
    return fmod


def _check(tmod, fmod, *inputs, grad_inputs=(0,), rtol=RTOL, atol=ATOL, modes=("train", "eval")):
    rng = np.random.default_rng(0)
    for mode in modes:
        getattr(tmod, mode)()
        getattr(fmod, mode)()
        tin = [torch.tensor(x, requires_grad=(i in grad_inputs)) for i, x in enumerate(inputs)]
        fin = [fg.tensor(x, requires_grad=(i in grad_inputs)) for i, x in enumerate(inputs)]
        tout, fout = tmod(*tin), fmod(*fin)
        _close(fout, tout, rtol, atol)
        ct = rng.standard_normal(tuple(tout.shape)).astype(np.float32)
        (tout * torch.tensor(ct)).sum().backward()
        (fout * fg.tensor(ct)).sum().backward()
        for i in grad_inputs:
            _close(fin[i].grad, tin[i].grad, rtol, atol)
        tp = dict(tmod.named_parameters())
        for name, p in fmod.named_parameters():
            _close(p.grad, tp[name].grad, rtol, atol)
        tmod.zero_grad()
        fmod.zero_grad()
        for name, b in fmod.named_buffers():
            _close(b, dict(tmod.named_buffers())[name], rtol, atol)


def _randn(*shape, seed=1):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# --- layers ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("bias", [True, False])
def test_linear(bias):
    t = torch.nn.Linear(5, 3, bias=bias)
    _check(t, _twin(t, nn.Linear(5, 3, bias=bias)), _randn(4, 5))
    assert repr(t) == repr(nn.Linear(5, 3, bias=bias))
    _check(t, _twin(t, nn.Linear(5, 3, bias=bias)), _randn(2, 4, 5))


@pytest.mark.parametrize("name,args", [("Identity", ()), ("Flatten", ()), ("ReLU", ()), ("LeakyReLU", (0.2,)),
                                       ("Sigmoid", ()), ("Tanh", ()), ("GELU", ()), ("GELU", ("tanh",)),
                                       ("SiLU", ()), ("Softmax", (1,)), ("LogSoftmax", (-1,)), ("Softmax", ())])
def test_activations(name, args):
    t, f = getattr(torch.nn, name)(*args), getattr(nn, name)(*args)
    x = _randn(3, 4, 5)
    x[np.abs(x) < 1e-3] = 0.5
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check(t, f, x)
    assert repr(t) == repr(f)


@pytest.mark.parametrize("kw", [dict(), dict(stride=2), dict(padding=1), dict(padding="same"),
                                dict(padding="valid"), dict(dilation=2, padding=2), dict(groups=2),
                                dict(bias=False, stride=(2, 1), padding=(1, 0)),
                                dict(padding="same", dilation=2, kernel_size=4)])
def test_conv2d(kw):
    kw = dict(kw)
    k = kw.pop("kernel_size", 3)
    t = torch.nn.Conv2d(4, 6, k, **kw)
    f = _twin(t, nn.Conv2d(4, 6, k, **kw))
    assert repr(t) == repr(f)
    _check(t, f, _randn(2, 4, 7, 8))


def test_conv2d_unbatched_and_errors():
    t = torch.nn.Conv2d(2, 3, 3)
    f = _twin(t, nn.Conv2d(2, 3, 3))
    _check(t, f, _randn(2, 5, 5), modes=("train",))
    with pytest.raises(ValueError):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError):
        nn.Conv2d(2, 4, 3, stride=2, padding="same")
    with pytest.raises(RuntimeError):
        f(fg.randn(1, 3, 5, 5))


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=(2, 3), stride=(1, 2)), dict(kernel_size=3, dilation=2)])
def test_maxpool2d(kw):
    t, f = torch.nn.MaxPool2d(**kw), nn.MaxPool2d(**kw)
    assert repr(t) == repr(f)
    _check(t, f, _randn(2, 3, 8, 9))


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
                                dict(kernel_size=(2, 3), stride=(1, 2)), dict(kernel_size=2, divisor_override=3)])
def test_avgpool2d(kw):
    t, f = torch.nn.AvgPool2d(**kw), nn.AvgPool2d(**kw)
    _check(t, f, _randn(2, 3, 8, 9))


@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (6, 4)), ("BatchNorm1d", (6, 4, 5)),
                                       ("BatchNorm2d", (3, 4, 5, 5))])
@pytest.mark.parametrize("kw", [dict(), dict(momentum=None), dict(affine=False), dict(track_running_stats=False),
                                dict(momentum=0.3, eps=1e-3)])
def test_batchnorm(cls, shape, kw):
    t, f = getattr(torch.nn, cls)(4, **kw), getattr(nn, cls)(4, **kw)
    if f.affine:
        with torch.no_grad():
            t.weight.uniform_(0.5, 1.5)
            t.bias.uniform_(-0.5, 0.5)
    _twin(t, f)
    assert repr(t) == repr(f)
    for step in range(3):
        _check(t, f, _randn(*shape, seed=step), modes=("train",))
    _check(t, f, _randn(*shape, seed=7), modes=("eval",))
    with pytest.raises(ValueError):
        f(fg.randn(2, 4, 3, 3, 3))


@pytest.mark.parametrize("kw", [dict(), dict(elementwise_affine=False), dict(bias=False), dict(eps=1e-3)])
def test_layernorm(kw):
    t, f = torch.nn.LayerNorm((4, 5), **kw), nn.LayerNorm((4, 5), **kw)
    if f.elementwise_affine:
        with torch.no_grad():
            t.weight.uniform_(0.5, 1.5)
    _twin(t, f)
    assert repr(t) == repr(f)
    _check(t, f, _randn(3, 4, 5))


@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_embedding(padding_idx):
    t = torch.nn.Embedding(7, 3, padding_idx=padding_idx)
    f = _twin(t, nn.Embedding(7, 3, padding_idx=padding_idx))
    assert repr(t) == repr(f)
    idx = np.array([[0, 2, 6], [2, 2, 1]])
    _check(t, f, idx, grad_inputs=())
    if padding_idx is not None:
        assert float(f.weight.detach()[padding_idx].abs().sum()) == 0.0


def test_dropout():
    f = nn.Dropout(0.25)
    assert repr(f) == repr(torch.nn.Dropout(0.25))
    fg.manual_seed(0)
    x = fg.ones(200, 50, requires_grad=True)
    y = f(x)
    v = _np(y)
    np.testing.assert_allclose(v[v != 0], 1 / 0.75, rtol=1e-6)
    assert abs((v == 0).mean() - 0.25) < 0.03
    y.sum().backward()
    np.testing.assert_allclose(_np(x.grad), v)
    f.eval()
    assert f(x) is x
    with pytest.raises(ValueError):
        nn.Dropout(1.5)
    assert F.dropout(x, 0.0) is x


# --- losses ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses(reduction):
    x, y = _randn(4, 3), _randn(4, 3, seed=2)
    for name in ("MSELoss", "L1Loss"):
        _check(getattr(torch.nn, name)(reduction=reduction), getattr(nn, name)(reduction=reduction), x, y)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("kw", [dict(), dict(weight=True), dict(ignore_index=1), dict(label_smoothing=0.2),
                                dict(weight=True, ignore_index=2, label_smoothing=0.1)])
@pytest.mark.parametrize("shape", [(5, 4), (3, 4, 2, 3)])
def test_cross_entropy_nll(reduction, kw, shape):
    x = _randn(*shape)
    tgt = np.random.default_rng(3).integers(0, 4, size=(shape[0],) + shape[2:])
    kw = dict(kw)
    w = _randn(4, seed=5) ** 2 + 0.1 if kw.pop("weight", False) else None
    tkw = dict(kw, reduction=reduction)
    fkw = dict(tkw)
    if w is not None:
        tkw["weight"], fkw["weight"] = torch.tensor(w), fg.tensor(w)
    _check(torch.nn.CrossEntropyLoss(**tkw), nn.CrossEntropyLoss(**fkw), x, tgt, modes=("train",))
    tkw.pop("label_smoothing", None)
    fkw.pop("label_smoothing", None)
    lp = _np(torch.log_softmax(torch.tensor(x), 1))
    _check(torch.nn.NLLLoss(**tkw), nn.NLLLoss(**fkw), lp, tgt, modes=("train",))


def test_cross_entropy_probabilities():
    x, p = _randn(5, 4), np.abs(_randn(5, 4, seed=2))
    p = p / p.sum(1, keepdims=True)
    for ls in (0.0, 0.3):
        _check(torch.nn.CrossEntropyLoss(label_smoothing=ls), nn.CrossEntropyLoss(label_smoothing=ls), x, p)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_losses(reduction):
    x = _randn(4, 3)
    tgt = (np.random.default_rng(3).random((4, 3)) > 0.5).astype(np.float32)
    prob = 1 / (1 + np.exp(-x))
    w = np.abs(_randn(3, seed=4)) + 0.1
    _check(torch.nn.BCELoss(reduction=reduction), nn.BCELoss(reduction=reduction), prob, tgt)
    _check(torch.nn.BCELoss(torch.tensor(w), reduction=reduction), nn.BCELoss(fg.tensor(w), reduction=reduction),
           prob, tgt)
    _check(torch.nn.BCEWithLogitsLoss(reduction=reduction), nn.BCEWithLogitsLoss(reduction=reduction), x, tgt)
    _check(torch.nn.BCEWithLogitsLoss(torch.tensor(w), reduction=reduction, pos_weight=torch.tensor(w * 2)),
           nn.BCEWithLogitsLoss(fg.tensor(w), reduction=reduction, pos_weight=fg.tensor(w * 2)), x, tgt)


def test_functional_misc():
    x = fg.tensor(_randn(3, 4))
    _close(F.relu(x), torch.relu(torch.tensor(_np(x))))
    _close(F.softmax(x, 1), torch.softmax(torch.tensor(_np(x)), 1))
    _close(F.log_softmax(x, 0), torch.log_softmax(torch.tensor(_np(x)), 0))
    idx = np.array([0, 3, 2])
    oh = F.one_hot(fg.tensor(idx))
    assert oh.dtype == fg.int64
    np.testing.assert_array_equal(_np(oh), _np(torch.nn.functional.one_hot(torch.tensor(idx))))
    np.testing.assert_array_equal(_np(F.one_hot(fg.tensor(idx), 6)),
                                  _np(torch.nn.functional.one_hot(torch.tensor(idx), 6)))
    with pytest.raises(ValueError):
        F.mse_loss(x, x, reduction="bogus")


# --- init ------------------------------------------------------------------------------------------
def test_init():
    init = nn.init
    for nl, p in [("linear", None), ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None),
                  ("leaky_relu", 0.2), ("selu", None), ("conv2d", None)]:
        assert init.calculate_gain(nl, p) == pytest.approx(torch.nn.init.calculate_gain(nl, p))
    with pytest.raises(ValueError):
        init.calculate_gain("bogus")
    fg.manual_seed(0)
    w = fg.empty(200, 300)
    fan_in, fan_out = 300, 200
    init.xavier_uniform_(w)
    a = math.sqrt(6 / (fan_in + fan_out))
    assert _np(w).max() <= a and _np(w).min() >= -a and _np(w).max() > 0.95 * a
    init.xavier_normal_(w, gain=2.0)
    assert _np(w).std() == pytest.approx(2 * math.sqrt(2 / (fan_in + fan_out)), rel=0.03)
    init.kaiming_uniform_(w, a=math.sqrt(5))
    b = 1 / math.sqrt(fan_in)
    assert _np(w).max() <= b and _np(w).max() > 0.95 * b
    init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert _np(w).std() == pytest.approx(math.sqrt(2 / fan_out), rel=0.03)
    init.uniform_(w, -2, 3)
    assert _np(w).min() >= -2 and _np(w).max() <= 3
    init.normal_(w, 1.0, 0.5)
    assert _np(w).mean() == pytest.approx(1.0, abs=0.01)
    assert np.all(_np(init.constant_(w, 0.3)) == np.float32(0.3))
    assert np.all(_np(init.ones_(w)) == 1) and np.all(_np(init.zeros_(w)) == 0)
    with pytest.raises(ValueError):
        init.xavier_uniform_(fg.empty(3))
    p = nn.Parameter(fg.empty(3, 4))
    init.kaiming_uniform_(p)
    assert p.grad_fn is None and p.requires_grad


def test_default_init_and_seed():
    fg.manual_seed(3)
    a = nn.Linear(20, 30)
    fg.manual_seed(3)
    b = nn.Linear(20, 30)
    np.testing.assert_array_equal(_np(a.weight), _np(b.weight))
    bound = 1 / math.sqrt(20)
    for p in (a.weight, a.bias):
        assert np.abs(_np(p)).max() <= bound and np.abs(_np(p)).max() > 0.8 * bound
    c = nn.Conv2d(4, 8, 3)
    bound = 1 / math.sqrt(4 * 9)
    assert np.abs(_np(c.weight)).max() <= bound and np.abs(_np(c.bias)).max() <= bound
    e = nn.Embedding(100, 50)
    assert _np(e.weight).std() == pytest.approx(1.0, rel=0.05)
    bn = nn.BatchNorm2d(3)
    assert np.all(_np(bn.weight) == 1) and np.all(_np(bn.bias) == 0)
    assert bn.num_batches_tracked.dtype == fg.int64


# --- Module API -------------------------------------------------------------------------------------
def _Net(mod):
    lib = fg if mod is nn else torch

    class Net(mod.Module):
        def __init__(self):
            super().__init__()
            self.conv = mod.Conv2d(1, 2, 3)
            self.bn = mod.BatchNorm2d(2)
            self.register_buffer("scale", lib.ones(2))
            self.register_buffer("tmp", lib.zeros(1), persistent=False)
            self.head = mod.Sequential(mod.Flatten(), mod.Linear(2 * 4 * 4, 3))
            self.extra = mod.Parameter(lib.zeros(3))

        def forward(self, x):
            return self.head(self.bn(self.conv(x)) * self.scale.reshape(1, -1, 1, 1)) + self.extra

    return Net()


def test_module_api_matches_torch():
    t, f = _Net(torch.nn), _Net(nn)
    assert [n for n, _ in f.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in f.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in f.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in f.named_children()] == [n for n, _ in t.named_children()]
    assert list(f.state_dict()) == list(t.state_dict())
    assert repr(f) == repr(t)
    assert len(list(f.parameters())) == len(list(t.parameters()))
    assert len(list(f.modules())) == len(list(t.modules()))
    _twin(t, f)
    _check(t, f, _randn(2, 1, 6, 6))
    f.eval()
    assert not any(m.training for m in f.modules())
    f.train()
    assert all(m.training for m in f.modules())
    assert isinstance(f.conv.weight, nn.Parameter) and isinstance(f.conv.weight, fg.Tensor)
    assert f.get_submodule("head.1") is f.head[1]
    assert f.get_parameter("head.1.bias") is f.head[1].bias


def test_state_dict_roundtrip_and_strict():
    t, f = _Net(torch.nn), _Net(nn)
    sd = t.state_dict()
    _twin(t, f)
    for k, v in f.state_dict().items():
        np.testing.assert_array_equal(_np(v), _np(sd[k]))
    # ours -> torch
    f2 = _Net(nn)
    t2 = _Net(torch.nn)
    t2.load_state_dict({k: torch.tensor(_np(v)) for k, v in f2.state_dict().items()})
    for k, v in t2.state_dict().items():
        np.testing.assert_array_equal(_np(v), _np(f2.state_dict()[k]))
    # ours -> ours; state_dict values are detached and share storage
    g = _Net(nn)
    g.load_state_dict(f.state_dict())
    sd = g.state_dict()
    assert sd["conv.weight"].grad_fn is None and not sd["conv.weight"].requires_grad
    # strict errors, same message as torch
    bad = dict(sd)
    del bad["bn.bias"]
    bad["nope"] = fg.zeros(1)
    tbad = {k: torch.tensor(_np(v)) for k, v in bad.items()}
    with pytest.raises(RuntimeError) as te:
        t.load_state_dict(tbad)
    with pytest.raises(RuntimeError) as fe:
        g.load_state_dict(bad)
    assert str(fe.value) == str(te.value)
    res = g.load_state_dict(bad, strict=False)
    assert res.missing_keys == ["bn.bias"] and res.unexpected_keys == ["nope"]
    wrong = dict(sd)
    wrong["conv.bias"] = fg.zeros(5)
    with pytest.raises(RuntimeError) as fe:
        g.load_state_dict(wrong)
    twrong = {k: torch.tensor(_np(v)) for k, v in wrong.items()}
    with pytest.raises(RuntimeError) as te:
        t.load_state_dict(twrong)
    assert str(fe.value) == str(te.value)


def test_module_registration_rules():
    m = nn.Module()
    m.w = nn.Parameter(fg.ones(2))
    m.sub = nn.Linear(2, 2)
    m.register_buffer("b", fg.zeros(2))
    assert list(m._parameters) == ["w"] and list(m._modules) == ["sub"] and list(m._buffers) == ["b"]
    with pytest.raises(TypeError):
        m.w = fg.ones(2)
    m.w = None
    assert m.w is None and [n for n, _ in m.named_parameters()] == ["sub.weight", "sub.bias"]
    with pytest.raises(KeyError):
        m.register_buffer("a.b", fg.zeros(1))
    with pytest.raises(TypeError):
        m.register_buffer("c", 3)
    with pytest.raises(KeyError):
        m.register_parameter("sub", None)
    with pytest.raises(AttributeError):
        m.nothing
    del m.sub
    assert list(m.children()) == []
    shared = nn.Linear(2, 2)
    s = nn.Sequential(shared, nn.ReLU(), shared)
    assert len(list(s.parameters())) == 2 and len(list(s.modules())) == 3
    with pytest.raises(NotImplementedError):
        nn.Module()(1)


def test_containers():
    seq = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    tseq = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    assert repr(seq) == repr(tseq)
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear) and isinstance(seq[1:], nn.Sequential)
    assert [n for n, _ in seq[1:].named_children()] == ["1", "2"]
    seq.append(nn.Tanh())
    assert len(seq) == 4
    with pytest.raises(IndexError):
        seq[10]
    from collections import OrderedDict
    od = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.ReLU())]))
    assert [n for n, _ in od.named_parameters()] == ["fc.weight", "fc.bias"]
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    ml.append(nn.ReLU())
    ml.insert(1, nn.Tanh())
    assert [type(m).__name__ for m in ml] == ["Linear", "Tanh", "Linear", "Linear", "ReLU"]
    assert len(list(ml.parameters())) == 6
    tml = torch.nn.ModuleList([torch.nn.Linear(2, 2), torch.nn.ReLU()])
    assert repr(nn.ModuleList([nn.Linear(2, 2), nn.ReLU()])) == repr(tml)
    md = nn.ModuleDict({"a": nn.Linear(2, 3), "b": nn.ReLU()})
    assert list(md.keys()) == ["a", "b"] and "a" in md and len(md) == 2
    assert repr(md) == repr(torch.nn.ModuleDict({"a": torch.nn.Linear(2, 3), "b": torch.nn.ReLU()}))
    md.pop("b")
    assert list(md) == ["a"]


def test_module_misc():
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    x = fg.randn(5, 3)
    m(x).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0 for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    m.requires_grad_()
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "BatchNorm1d", "Sequential"]
    m.double()
    assert m[0].weight.dtype == fg.float64 and isinstance(m[0].weight, nn.Parameter) and m[0].weight.requires_grad
    assert m[1].running_mean.dtype == fg.float64 and m[1].num_batches_tracked.dtype == fg.int64
    m.float()
    assert m[0].weight.dtype == fg.float32
    m.to(fg.float64)
    assert m[0].bias.dtype == fg.float64
    m.float()
    calls = []
    h = m[0].register_forward_hook(lambda mod, inp, out: calls.append(tuple(out.shape)))
    m(x)
    h.remove()
    m(x)
    assert calls == [(5, 4)]
    p = nn.Parameter(fg.ones(2))
    assert p.requires_grad and repr(p).startswith("Parameter containing:")
    assert not nn.Parameter(fg.ones(2), requires_grad=False).requires_grad


def test_mlp_training_matches_torch():
    def build(mod):
        return mod.Sequential(mod.Linear(6, 16), mod.Tanh(), mod.Linear(16, 16), mod.GELU(), mod.Linear(16, 3))
    t, f = build(torch.nn), build(nn)
    _twin(t, f)
    tl, fl = torch.nn.CrossEntropyLoss(), nn.CrossEntropyLoss()
    rng = np.random.default_rng(0)
    lr = 0.1
    for step in range(10):
        x = rng.standard_normal((8, 6)).astype(np.float32)
        y = rng.integers(0, 3, 8)
        tloss = tl(t(torch.tensor(x)), torch.tensor(y))
        floss = fl(f(fg.tensor(x)), fg.tensor(y))
        _close(floss, tloss, rtol=1e-4, atol=1e-5)
        t.zero_grad()
        f.zero_grad()
        tloss.backward()
        floss.backward()
        with torch.no_grad():
            for p in t.parameters():
                p -= lr * p.grad
        with fg.no_grad():
            for p in f.parameters():
                p -= lr * p.grad
    for k, v in f.state_dict().items():
        _close(v, t.state_dict()[k], rtol=1e-4, atol=1e-5)


def test_conv_pool_are_recorded_ops():
    x = fg.randn(1, 2, 6, 6, requires_grad=True)
    tx = torch.randn(1, 2, 6, 6, requires_grad=True)
    for fm, tm in [(nn.Conv2d(2, 3, 3, bias=False), torch.nn.Conv2d(2, 3, 3, bias=False)),
                   (nn.MaxPool2d(2), torch.nn.MaxPool2d(2)), (nn.AvgPool2d(2), torch.nn.AvgPool2d(2))]:
        assert type(fm(x).grad_fn).__name__ == type(tm(tx).grad_fn).__name__
    # and funcgrad.func transforms differentiate through them
    from funcgrad import func
    w, xx = _randn(3, 2, 3, 3), _randn(1, 2, 5, 5, seed=2)
    g = func.grad(lambda w_, x_: F.max_pool2d(F.conv2d(x_, w_, padding=1), 2).sum())(fg.tensor(w), fg.tensor(xx))
    tw = torch.tensor(w, requires_grad=True)
    torch.nn.functional.max_pool2d(torch.nn.functional.conv2d(torch.tensor(xx), tw, padding=1), 2).sum().backward()
    _close(g, tw.grad)


def test_float64_conv_pool_tight():
    t = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1, groups=1).double()
    f = _twin(t, nn.Conv2d(3, 4, 3, stride=2, padding=1).double())
    assert f.weight.dtype == fg.float64
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 7))
    tx, fx = torch.tensor(x, requires_grad=True), fg.tensor(x, requires_grad=True)
    ty = torch.nn.functional.avg_pool2d(t(tx), 2, padding=1, count_include_pad=False)
    fy = F.avg_pool2d(f(fx), 2, padding=1, count_include_pad=False)
    _close(fy, ty, 1e-12, 1e-12)
    ty.sum().backward()
    fy.sum().backward()
    _close(fx.grad, tx.grad, 1e-12, 1e-12)
    _close(f.weight.grad, t.weight.grad, 1e-12, 1e-12)


def test_deepcopy_prehook_and_init_errors():
    import copy
    m = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    m2 = copy.deepcopy(m)
    assert isinstance(m2[0].weight, nn.Parameter) and m2[0].weight is not m[0].weight
    np.testing.assert_array_equal(_np(m2[0].weight), _np(m[0].weight))
    assert repr(m2) == repr(m)
    import pickle
    m3 = pickle.loads(pickle.dumps(m))
    assert isinstance(m3[0].weight, nn.Parameter) and m3[0].weight.requires_grad
    np.testing.assert_array_equal(_np(m3[1].running_var), _np(m[1].running_var))
    h = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    out = m[0](fg.zeros(4, 2))
    m.eval()
    _close(m(fg.ones(4, 2)), m(fg.zeros(4, 2)))
    h.remove()
    assert out.shape == (4, 3)

    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(fg.ones(1))
    with pytest.raises(AttributeError):
        Bad()


def test_functional_forms_match_torch():
    TF = torch.nn.functional
    x, w, b = _randn(4, 3, 5, 5), _randn(3, seed=2), _randn(3, seed=3)
    rm, rv = _randn(3, seed=4), np.abs(_randn(3, seed=5)) + 0.5
    T, G = torch.tensor, fg.tensor
    _close(F.batch_norm(G(x), G(rm), G(rv), G(w), G(b)), TF.batch_norm(T(x), T(rm), T(rv), T(w), T(b)))
    trm, frm, trv, frv = T(rm), G(rm), T(rv), G(rv)
    _close(F.batch_norm(G(x), frm, frv, training=True, momentum=0.2),
           TF.batch_norm(T(x), trm, trv, training=True, momentum=0.2))
    _close(frm, trm)
    _close(frv, trv)
    _close(F.layer_norm(G(x), (5, 5)), TF.layer_norm(T(x), (5, 5)))
    lw, lb = _randn(4, 2), _randn(2, seed=9)
    _close(F.linear(G(x[0, 0, :, :4]), G(lw.T.copy()), G(lb)), TF.linear(T(x[0, 0, :, :4]), T(lw.T.copy()), T(lb)))
    idx = np.array([[1, 0], [3, 3]])
    _close(F.embedding(G(idx), G(lw)), TF.embedding(T(idx), T(lw)))
    tgt = np.array([0, 2, 1, 2])
    _close(F.cross_entropy(G(x[:, :, 0, 0]), G(tgt)), TF.cross_entropy(T(x[:, :, 0, 0]), T(tgt)))
    _close(F.mse_loss(G(x), G(x * 2)), TF.mse_loss(T(x), T(x * 2)))
    with pytest.raises(RuntimeError):
        F.layer_norm(G(x), (4,))
    with pytest.raises(ValueError):
        F.batch_norm(fg.ones(1, 3), None, None, training=True)
