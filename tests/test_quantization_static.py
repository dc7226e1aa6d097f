"""Static quantization's operators and modules (funcgrad/_torch/_quantized.py kernels, funcgrad/ao/nn/quantized):
pooling, batch norm, activations, FloatFunctional / QFunctional and the quantized add / mul / cat ops, checked
against exact integer math and against torch 2.13's QuantizedCPU kernels (bit-identical integer
representations), plus an end-to-end static PTQ of a MobileNetV2-like block and its state_dict round trip."""
from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.ao.nn.quantized as fgnnq
from funcgrad._torch import _quantized as Q
from funcgrad.ao import quantization as fgq

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
F = fg.nn.functional


def _torch():
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", category=UserWarning)
    return torch


def _q(ints, scale=0.1, zp=10, dtype=fg.quint8):
    """A quantized tensor with the given integer representation."""
    ints = np.asarray(ints)
    return Q.make_qtensor(ints.astype(dtype.dtype), Q._QParams(dtype, fg.per_tensor_affine, scale, zp))


# --- exact integer math ------------------------------------------------------------------------------------
def test_max_pool2d_keeps_qparams_and_takes_the_largest_integer():
    v = np.arange(16).reshape(1, 1, 4, 4)[:, :, ::-1]
    out = F.max_pool2d(_q(v), 2)
    assert out.int_repr().tolist() == [[[[13, 15], [5, 7]]]]   # rows reversed: 12..15 on top
    assert (out.q_scale(), out.q_zero_point(), out.dtype) == (0.1, 10, fg.quint8)
    # padding never wins, even against integers below the zero point
    out = F.max_pool2d(_q(np.full((1, 1, 2, 2), 3)), 3, 1, 1)
    assert out.int_repr().tolist() == [[[[3, 3], [3, 3]]]]


def test_avg_pool2d_integer_math():
    v = np.array([[[[10, 12], [13, 14]]]])   # zero point 10: values 0, 2, 3, 4 (steps)
    assert F.avg_pool2d(_q(v), 2).int_repr().tolist() == [[[[12]]]]     # 9 / 4 = 2.25 -> 2 (+ zp)
    # count_include_pad: a corner window of a 3x3 pool sees 4 values and 5 pad positions
    out = F.avg_pool2d(_q(v), 3, 1, 1)
    assert out.int_repr().tolist() == [[[[11, 11], [11, 11]]]]          # 9 / 9 = 1
    out = F.avg_pool2d(_q(v), 3, 1, 1, count_include_pad=False)
    assert out.int_repr().tolist() == [[[[12, 12], [12, 12]]]]          # 9 / 4 = 2.25
    assert F.avg_pool2d(_q(v), 2, divisor_override=2).int_repr().tolist() == [[[[14]]]]   # 9 / 2 = 4.5 -> 4
    assert F.avg_pool2d(_q(v), 2).q_scale() == 0.1


def test_adaptive_avg_pool2d_integer_math():
    v = np.array([[[[1, 2, 3], [4, 5, 6], [7, 8, 10]]]])
    out = F.adaptive_avg_pool2d(_q(v, zp=0), 1)
    assert out.int_repr().tolist() == [[[[5]]]]                         # 46 / 9 = 5.1
    out = F.adaptive_avg_pool2d(_q(v, zp=0), (2, 2))                    # bins [0, 2) and [1, 3)
    assert out.int_repr().tolist() == [[[[3, 4], [6, 7]]]]              # 12/4, 16/4, 24/4, 29/4 = 7.25


def test_relu6_leaky_relu_sigmoid_exact():
    q = _q([0, 5, 10, 60, 80, 200], scale=0.1, zp=10)                  # q(6) = 70
    assert F.relu6(q).int_repr().tolist() == [10, 10, 10, 60, 70, 70]
    assert F.leaky_relu(q, 0.5).int_repr().tolist() == [5, 8, 10, 60, 80, 200]   # -1 -> -0.5, -0.5 -> -0.25
    s = fg.sigmoid(q)
    assert (s.q_scale(), s.q_zero_point()) == (1 / 256, 0)
    assert s.int_repr().tolist()[2] == 128                               # sigmoid(0) = 0.5


def test_batch_norm_exact():
    q = _q(np.array([[[[10, 20]], [[0, 30]]]]), scale=0.1, zp=10)        # channel 0: 0, 1; channel 1: -1, 2
    w, b, m, v = fg.tensor([2.0, 1.0]), fg.tensor([0.5, 0.0]), fg.tensor([0.0, 1.0]), fg.tensor([1.0, 4.0])
    out = Q.q_batch_norm(q, w, b, m, v, 0.0, 0.5, 3)
    # channel 0: 2 x + 0.5 -> 0.5, 2.5 -> /0.5 -> 1, 5; channel 1: (x - 1) / 2 -> -1, 0.5 -> -2, 1
    assert out.int_repr().tolist() == [[[[4, 8]], [[1, 4]]]]


def test_add_mul_cat_scalars_exact():
    a, b = _q([10, 20, 30]), _q([12, 14, 0], scale=0.5, zp=10)       # a: 0, 1, 2; b: 1, 2, -5
    assert Q.q_add(a, b, 0.25, 0).int_repr().tolist() == [4, 12, 0]  # 1, 3, -3 (clamped)
    assert Q.q_add_relu(a, b, 0.25, 4).int_repr().tolist() == [8, 16, 4]
    assert Q.q_mul(a, b, 0.5, 20).int_repr().tolist() == [20, 24, 0]  # 0, 2, -10
    c = Q.q_cat([a, b], 0, 0.5, 10)
    assert c.int_repr().tolist() == [10, 12, 14, 12, 14, 0]
    r = Q.q_add_scalar(a, 0.3)                                        # zero point shifts by round(3) = 3
    assert (r.q_zero_point(), r.int_repr().tolist()) == (7, [10, 20, 30])
    r = Q.q_add_scalar(a, 100.0)                                      # out of range: the scale widens
    assert (r.q_zero_point(), r.q_scale()) == (0, (255 + 990) / 255 * 0.1)
    r = Q.q_mul_scalar(a, -2.0)
    assert (r.q_scale(), r.q_zero_point(), r.int_repr().tolist()) == (0.2, 245, [245, 235, 225])
    with pytest.raises(NotImplementedError):
        Q.q_add(fg.tensor([1.0]), b, 1.0, 0)


# --- against torch ------------------------------------------------------------------------------------------
def _pair(torch, x, scale, zp, dtype):
    return (torch.quantize_per_tensor(torch.tensor(x), scale, zp, getattr(torch, dtype)),
            fg.quantize_per_tensor(fg.tensor(x), scale, zp, getattr(fg, dtype)))


def _same(a, b, step=0):
    assert (a.q_scale(), a.q_zero_point()) == (b.q_scale(), b.q_zero_point())
    ai, bi = a.int_repr().numpy().astype(int), b.int_repr().numpy().astype(int)
    assert ai.shape == bi.shape
    assert np.abs(ai - bi).max(initial=0) <= step


@pytest.mark.parametrize("dtype", ["quint8", "qint8"])
def test_pooling_matches_torch(dtype):
    torch = _torch()
    rng = np.random.default_rng(1)
    for _ in range(40):
        H, W = int(rng.integers(3, 10)), int(rng.integers(3, 10))
        k, s = int(rng.integers(1, 4)), int(rng.integers(1, 3))
        p, ceil, cip = int(rng.integers(0, k // 2 + 1)), bool(rng.integers(0, 2)), bool(rng.integers(0, 2))
        x = (rng.standard_normal((2, 3, H, W)) * 2).astype(np.float32)
        a, b = _pair(torch, x, float(rng.uniform(0.01, 0.1)), int(rng.integers(0, 20)), dtype)
        _same(torch.nn.functional.avg_pool2d(a, k, s, p, ceil, cip), F.avg_pool2d(b, k, s, p, ceil, cip))
        _same(torch.nn.functional.max_pool2d(a, k, s, p, 1, ceil), F.max_pool2d(b, k, s, p, 1, ceil))
        o = (int(rng.integers(1, H + 1)), int(rng.integers(1, W + 1)))
        _same(torch.nn.functional.adaptive_avg_pool2d(a, o), F.adaptive_avg_pool2d(b, o))


@pytest.mark.parametrize("dtype", ["quint8", "qint8"])
def test_quantized_ops_match_torch(dtype):
    torch = _torch()
    rng = np.random.default_rng(2)
    tq = torch.ops.quantized
    for _ in range(20):
        x, y = (rng.standard_normal((2, 3, 8, 8)) * 2).astype(np.float32), rng.standard_normal((2, 3, 8, 8))
        a, b = _pair(torch, x, float(rng.uniform(0.01, 0.1)), int(rng.integers(0, 20)), dtype)
        a2, b2 = _pair(torch, y.astype(np.float32), 0.03, 7, dtype)
        for name in ("add", "mul", "add_relu"):
            _same(getattr(tq, name)(a, a2, 0.07, 9), getattr(Q, "q_" + name)(b, b2, 0.07, 9))
        _same(tq.cat([a, a2], 1, 0.07, 9), Q.q_cat([b, b2], 1, 0.07, 9))
        c = float(rng.standard_normal() * 5)
        _same(tq.add_scalar(a, c), Q.q_add_scalar(b, c))
        _same(tq.mul_scalar(a, c), Q.q_mul_scalar(b, c))
        _same(tq.hardswish(a, 0.07, 9), Q.q_hardswish(b, 0.07, 9))
        _same(tq.leaky_relu(a, 0.1, False, 0.07, 9), Q.q_leaky_relu(b, 0.1, False, 0.07, 9))
        _same(tq.sigmoid(a, 0.004, 3), Q.q_sigmoid(b, 0.004, 3))
        _same(torch.sigmoid(a), fg.sigmoid(b))
        _same(torch.nn.functional.relu6(a), F.relu6(b))
        # (torch's scalar tail of the vectorised loop rounds differently at ties: one step at most)
        _same(torch.nn.functional.leaky_relu(a, 0.1), F.leaky_relu(b, 0.1), step=1)
        w, bb, m = (rng.standard_normal(3).astype(np.float32) for _ in range(3))
        v = np.abs(rng.standard_normal(3)).astype(np.float32) + 0.5
        _same(tq.batch_norm2d(a, *map(torch.tensor, (w, bb, m, v)), 1e-5, 0.07, 9),
              Q.q_batch_norm(b, *map(fg.tensor, (w, bb, m, v)), 1e-5, 0.07, 9))


def test_modules_match_torch():
    torch = _torch()
    tnnq = torch.ao.nn.quantized
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((2, 4, 5, 5)) * 2).astype(np.float32)
    a, b = _pair(torch, x, 0.05, 60, "quint8")
    # 200 elements: torch's vectorised loop leaves a scalar tail, which rounds ties differently (one step)
    _same(tnnq.Hardswish(0.04, 20)(a), fgnnq.Hardswish(0.04, 20)(b), step=1)
    _same(tnnq.LeakyReLU(0.04, 20, 0.2)(a), fgnnq.LeakyReLU(0.04, 20, 0.2)(b), step=1)
    _same(tnnq.ReLU6()(a), fgnnq.ReLU6()(b))
    _same(tnnq.Sigmoid(0.004, 0)(a), fgnnq.Sigmoid(0.004, 0)(b), step=1)
    tb, fb = tnnq.BatchNorm2d(4), fgnnq.BatchNorm2d(4)
    for name in ("weight", "bias", "running_mean"):
        val = rng.standard_normal(4).astype(np.float32)
        getattr(tb, name).data.copy_(torch.tensor(val))
        getattr(fb, name).data.copy_(fg.tensor(val))
    tb.scale, tb.zero_point, fb.scale, fb.zero_point = (torch.tensor(0.06), torch.tensor(30), fg.tensor(0.06),
                                                        fg.tensor(30))
    _same(tb(a), fb(b))
    with pytest.raises(ValueError):
        fb(fg.quantize_per_tensor(fg.ones(2, 4), 0.1, 0, fg.quint8))
    qf, tf = fgnnq.QFunctional(), tnnq.QFunctional()
    qf.scale, qf.zero_point, tf.scale, tf.zero_point = 0.08, 5, 0.08, 5
    _same(tf.add(a, a), qf.add(b, b), step=1)   # (the scalar tail again)
    _same(tf.cat([a, a], 1), qf.cat([b, b], 1))
    _same(tf.add_scalar(a, 1.5), qf.add_scalar(b, 1.5))


def test_float_functional_observes_and_converts():
    ff = fgnnq.FloatFunctional()
    x, y = fg.tensor([1.0, -2.0]), fg.tensor([0.5, 0.5])
    assert ff.add(x, y).tolist() == [1.5, -1.5] and ff.add_relu(x, y).tolist() == [1.5, 0.0]
    assert ff.mul_scalar(x, 2.0).tolist() == [2.0, -4.0] and ff.cat([x, y]).shape == (4,)
    with pytest.raises(RuntimeError):
        ff(x)

    class M(fg.nn.Module):
        def __init__(self):
            super().__init__()
            self.quant, self.dequant, self.f = fgq.QuantStub(), fgq.DeQuantStub(), fgnnq.FloatFunctional()

        def forward(self, x):
            q = self.quant(x)
            return self.dequant(self.f.add(q, q))

    m = M()
    m.qconfig = fgq.default_qconfig
    p = fgq.prepare(m)
    assert isinstance(p.f.activation_post_process, fgq.MinMaxObserver)
    p(fg.tensor([-1.0, 2.0]))
    assert p.f.activation_post_process.min_val.item() == -2.0 and p.f.activation_post_process.max_val.item() == 4.0
    c = fgq.convert(p)
    assert type(c.f) is fgnnq.QFunctional and c.f.zero_point == 42 and c.f.scale == pytest.approx(6 / 127)
    assert c(fg.tensor([-1.0, 2.0])).tolist() == pytest.approx([-2.0, 4.0], abs=6 / 127 / 2)


# --- end to end: static PTQ of a MobileNetV2-like network --------------------------------------------------
def _build(T, nnq):
    nn = T.nn

    class ConvBNReLU(nn.Sequential):
        def __init__(self, i, o, k=3, s=1, g=1):
            super().__init__(nn.Conv2d(i, o, k, s, (k - 1) // 2, groups=g, bias=False), nn.BatchNorm2d(o),
                             nn.ReLU())

    class InvertedResidual(nn.Module):
        def __init__(self, i, o, s, e):
            super().__init__()
            self.use_res = s == 1 and i == o
            self.conv = nn.Sequential(ConvBNReLU(i, i * e, 1), ConvBNReLU(i * e, i * e, s=s, g=i * e),
                                      nn.Conv2d(i * e, o, 1, bias=False), nn.BatchNorm2d(o))
            self.skip_add = nnq.FloatFunctional()

        def forward(self, x):
            return self.skip_add.add(x, self.conv(x)) if self.use_res else self.conv(x)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant, self.dequant = T.ao.quantization.QuantStub(), T.ao.quantization.DeQuantStub()
            self.features = nn.Sequential(ConvBNReLU(3, 8, s=2), InvertedResidual(8, 8, 1, 2), nn.MaxPool2d(2),
                                          InvertedResidual(8, 12, 2, 2))
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(12, 5)

        def forward(self, x):
            x = self.features(self.quant(x))
            return self.dequant(self.fc(T.flatten(self.pool(x), 1)))
    return Net()


def _fuse(m, fuse_modules):
    fuse_modules(m.features[0], ["0", "1", "2"], inplace=True)
    for ir in (m.features[1], m.features[3]):
        fuse_modules(ir.conv[0], ["0", "1", "2"], inplace=True)
        fuse_modules(ir.conv[1], ["0", "1", "2"], inplace=True)
        fuse_modules(ir.conv, ["2", "3"], inplace=True)


def _ptq(T, nnq, aoq, state, calib):
    m = _build(T, nnq)
    m.load_state_dict({k: T.tensor(v) for k, v in state.items()})
    m.eval()
    _fuse(m, aoq.fuse_modules)
    m.qconfig = aoq.get_default_qconfig("x86")
    m = aoq.prepare(m)
    for c in calib:
        m(T.tensor(c))
    return aoq.convert(m)


def test_static_ptq_mobilenet_block_matches_torch_and_round_trips():
    torch = _torch()
    torch.manual_seed(0)
    tm = _build(torch, torch.ao.nn.quantized)
    for mod in tm.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.2, 0.2)
            mod.running_var.uniform_(0.5, 1.5)
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.2, 0.2)
    state = {k: v.numpy().copy() for k, v in tm.state_dict().items()}
    rng = np.random.default_rng(0)
    calib = [rng.standard_normal((2, 3, 16, 16)).astype(np.float32) for _ in range(3)]
    tq = _ptq(torch, torch.ao.nn.quantized, torch.ao.quantization, state, calib)
    fq = _ptq(fg, fgnnq, fgq, state, calib)
    assert type(fq.features[1].skip_add) is fgnnq.QFunctional
    assert fq.features[1].skip_add.zero_point == tq.features[1].skip_add.zero_point
    x = rng.standard_normal((2, 3, 16, 16)).astype(np.float32)
    ref = tq(torch.tensor(x)).numpy()
    out = fq(fg.tensor(x)).numpy()
    step = tq.fc.scale
    assert np.abs(out - ref).max() <= step * 1.01
    assert sorted(fq.state_dict()) == sorted(tq.state_dict())
    # save / load the converted model's state_dict under weights_only
    buf = io.BytesIO()
    fg.save(fq.state_dict(), buf)
    buf.seek(0)
    sd = fg.load(buf, weights_only=True)
    fresh = _ptq(fg, fgnnq, fgq, state, calib[:1])
    fresh.load_state_dict(sd)
    np.testing.assert_array_equal(fresh(fg.tensor(x)).numpy(), out)
    assert fresh.features[1].skip_add.scale == fq.features[1].skip_add.scale


# --- cat / stack / mean / flatten of quantized tensors --------------------------------------------------------
def test_mean_cat_flatten_exact():
    x = _q(np.array([[[[10, 11], [12, 14]], [[20, 20], [20, 21]]]]))      # (1, 2, 2, 2), zero point 10
    m = x.mean([2, 3])                    # inner dims: rint(47 / 4 = 11.75) = 12, rint(81 / 4 = 20.25) = 20
    assert m.int_repr().tolist() == [[12, 20]] and (m.q_scale(), m.q_zero_point()) == (0.1, 10)
    assert fg.mean(x, [3, 2], keepdim=True).int_repr().tolist() == [[[[12]], [[20]]]]
    assert _q(np.array([10, 11, 12, 13])).mean().int_repr().item() == 12   # 46 / 4 = 11.5: half to even
    # the outer dim: float mean of the values, quantized again: (0 + 1) / 2 -> 0.05 -> 0.5 steps -> even 0
    assert x.mean(1).int_repr().tolist() == [[[15, 16], [16, 18]]]
    c = fg.cat([x, _q(np.full((1, 1, 2, 2), 30), scale=0.2, zp=20)], 1)   # 30 at (0.2, 20) is 2.0: 30 at (0.1, 10)
    assert c.shape == (1, 3, 2, 2) and c.int_repr()[0, 2].tolist() == [[30, 30], [30, 30]] and c.q_scale() == 0.1
    s = fg.stack([x[0], x[0]], 1)
    assert s.shape == (2, 2, 2, 2) and s.int_repr()[:, 1].tolist() == x.int_repr()[0].tolist()
    assert fg.flatten(x, 1).int_repr().tolist() == [[10, 11, 12, 14, 20, 20, 20, 21]]
    with pytest.raises(NotImplementedError, match="quantized and float"):
        fg.cat([x, fg.zeros(1, 2, 2, 2)])


@pytest.mark.parametrize("dtype", ["quint8", "qint8"])
def test_mean_cat_stack_match_torch(dtype):
    torch = _torch()
    rng = np.random.default_rng(3)
    v, u = rng.standard_normal((3, 5, 6, 7)).astype(np.float32), rng.standard_normal((3, 2, 6, 7)).astype(np.float32)
    zp = 100 if dtype == "quint8" else -3
    mk = (lambda lib, a, s, z: lib.quantize_per_tensor(lib.tensor(a), s, z, getattr(lib, dtype)))
    pairs = [(mk(fg, v, 0.03, zp), mk(torch, v, 0.03, zp)), (mk(fg, u, 0.05, zp + 7), mk(torch, u, 0.05, zp + 7))]
    (a, at), (b, bt) = pairs
    calls = [lambda L, p, q: p.mean([2, 3]), lambda L, p, q: p.mean(-1), lambda L, p, q: p.mean(),
             lambda L, p, q: p.mean(1, keepdim=True), lambda L, p, q: L.mean(p, [1, 3]),
             lambda L, p, q: p.transpose(2, 3).mean([2, 3]),
             lambda L, p, q: L.cat([p, q], 1), lambda L, p, q: L.cat([q, p], dim=1),
             lambda L, p, q: L.stack([p, p], 2), lambda L, p, q: L.flatten(p, 1, 2)]
    for call in calls:
        got, want = call(fg, a, b), call(torch, at, bt)
        assert got.shape == tuple(want.shape) and got.dtype is getattr(fg, dtype)
        assert (got.q_scale(), got.q_zero_point()) == (want.q_scale(), want.q_zero_point())
        np.testing.assert_array_equal(got.int_repr().numpy(), want.int_repr().numpy())


# --- weight-only quantized Embedding / EmbeddingBag ---------------------------------------------------------
def _packed(rows):
    """A quint8 weight with per-row float qparams from (ints, scale, zero point) rows."""
    ints = np.array([r[0] for r in rows], np.uint8)
    qp = Q._QParams(fg.quint8, fg.per_channel_affine_float_qparams, np.array([r[1] for r in rows], np.float32),
                    np.array([r[2] for r in rows], np.float32), 0)
    return Q.make_qtensor(ints, qp)


def test_quantized_embedding_exact():
    w = _packed([([0, 4, 8], 0.5, 2.0), ([1, 2, 3], 0.25, 0.0), ([10, 20, 30], 0.125, 8.0)])
    emb = fgnnq.Embedding(3, 3, _weight=w)
    # row r: (q - zero_point) * scale
    assert emb(fg.tensor([2, 0])).tolist() == [[0.25, 1.5, 2.75], [-1.0, 1.0, 3.0]]
    assert emb(fg.tensor([[1], [1]])).shape == (2, 1, 3)
    bag = fgnnq.EmbeddingBag(3, 3, _weight=w, mode="mean")      # (bags summed, whatever the mode, as torch's)
    out = bag(fg.tensor([0, 1, 2, 1]), fg.tensor([0, 1, 1]))
    assert out.tolist() == [[-1.0, 1.0, 3.0], [0.0, 0.0, 0.0], [0.75, 2.5, 4.25]]   # bag 2: rows 1, 2, 1
    out = bag(fg.tensor([0, 1]), fg.tensor([0]), per_sample_weights=fg.tensor([2.0, 4.0]))
    assert out.tolist() == [[-1.0, 4.0, 9.0]]
    assert fg.ops.quantized.embedding_bag_byte(emb._packed_params._packed_weight, fg.tensor([[0, 1], [2, 2]])) \
        .tolist() == [[-0.75, 1.5, 3.75], [0.5, 3.0, 5.5]]
    with pytest.raises(RuntimeError, match="Index 0 is out of bounds: 3, range 0 to 3"):
        emb(fg.tensor([3]))
    with pytest.raises(RuntimeError, match="expects offsets to be set for 1D indices"):
        bag(fg.tensor([0, 1]))


def test_quantized_embedding_modules_match_torch():
    torch = _torch()
    rng = np.random.default_rng(5)
    wv = (rng.standard_normal((40, 19)) * rng.random((40, 1)) * 3).astype(np.float32)
    idx = rng.integers(0, 40, 64)
    psw = rng.random(64).astype(np.float32)
    for ilo in (False, True):
        offs = [0, 5, 5, 17, 40] + ([64] if ilo else [])
        fe, te = fg.nn.EmbeddingBag(40, 19, mode="mean", include_last_offset=ilo), \
            torch.nn.EmbeddingBag(40, 19, mode="mean", include_last_offset=ilo)
        for e, lib, q in ((fe, fg, fgq), (te, torch, torch.ao.quantization)):
            with lib.no_grad():
                e.weight.copy_(lib.tensor(wv))
            e.qconfig = q.float_qparams_weight_only_qconfig
        fq, tq = fgnnq.EmbeddingBag.from_float(fe), torch.ao.nn.quantized.EmbeddingBag.from_float(te)
        assert repr(fq) == repr(tq)
        fw, tw = fq.weight(), tq.weight()
        np.testing.assert_array_equal(fw.int_repr().numpy(), tw.int_repr().numpy())
        np.testing.assert_array_equal(fw.q_per_channel_scales().numpy(), tw.q_per_channel_scales().numpy())
        np.testing.assert_array_equal(fw.q_per_channel_zero_points().numpy(), tw.q_per_channel_zero_points().numpy())
        for kw in ({}, {"per_sample_weights": psw}):
            got = fq(fg.tensor(idx), fg.tensor(offs), **{k: fg.tensor(v) for k, v in kw.items()})
            want = tq(torch.tensor(idx), torch.tensor(offs), **{k: torch.tensor(v) for k, v in kw.items()})
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    # Embedding through quantize_dynamic, and a static prepare / convert with the weight-only qconfig
    fm, tm = fg.nn.Sequential(fg.nn.Embedding(40, 19)), torch.nn.Sequential(torch.nn.Embedding(40, 19))
    with fg.no_grad():
        fm[0].weight.copy_(fg.tensor(wv))
    with torch.no_grad():
        tm[0].weight.copy_(torch.tensor(wv))
    fd = fgq.quantize_dynamic(fm, {fg.nn.Embedding: fgq.float_qparams_weight_only_qconfig})
    td = torch.ao.quantization.quantize_dynamic(tm, {torch.nn.Embedding: torch.ao.quantization.
                                                     float_qparams_weight_only_qconfig})
    assert repr(fd) == repr(td)
    ii = idx.reshape(8, 8)
    np.testing.assert_array_equal(fd(fg.tensor(ii)).numpy(), td(torch.tensor(ii)).numpy())
    fm.qconfig, tm.qconfig = fgq.float_qparams_weight_only_qconfig, torch.ao.quantization.float_qparams_weight_only_qconfig
    fs = fgq.convert(fgq.prepare(fm))
    ts = torch.ao.quantization.convert(torch.ao.quantization.prepare(tm))
    assert repr(fs) == repr(ts)
    np.testing.assert_array_equal(fs(fg.tensor(ii)).numpy(), ts(torch.tensor(ii)).numpy())
    # state_dict round trip under torch's keys
    sd = fs.state_dict()
    assert list(sd) == list(ts.state_dict()) == ["0._packed_params.dtype", "0._packed_params._packed_weight"]
    buf = io.BytesIO()
    fg.save(sd, buf)
    buf.seek(0)
    fresh = fgnnq.Embedding(40, 19)
    fresh.load_state_dict({k[2:]: v for k, v in fg.load(buf, weights_only=False).items()})
    np.testing.assert_array_equal(fresh(fg.tensor(ii)).numpy(), ts(torch.tensor(ii)).numpy())


def test_embedding_from_float_refuses_other_qconfigs():
    e = fg.nn.Embedding(4, 3)
    e.qconfig = fgq.default_qconfig
    with pytest.raises(AssertionError, match="only supported with float_qparams_weight_only_qconfig"):
        fgnnq.Embedding.from_float(e)


# --- convolutions: Conv1d / 2d / 3d, ConvReLU, ConvTranspose (funcgrad/ao/nn/quantized/conv.py) ----------------
@pytest.fixture
def fbgemm():
    """torch on its fbgemm engine for the test (x86 hands symmetric-weight convolutions to oneDNN on VNNI CPUs,
    whose unpacked weights keep a float64 scale)."""
    torch = _torch()
    engine = torch.backends.quantized.engine
    torch.backends.quantized.engine = "fbgemm"
    yield torch
    torch.backends.quantized.engine = engine


def _conv_model(T, n, kind):
    conv, convt = getattr(T.nn, f"Conv{n}d"), getattr(T.nn, f"ConvTranspose{n}d")
    if kind == "transpose":
        layers = [convt(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2), T.nn.ReLU(),
                  convt(6, 3, 2, dilation=2, bias=False)]
    else:
        mode = "reflect" if kind == "reflect" else "zeros"
        layers = [conv(4, 6, 3, stride=2, padding=1, groups=2, padding_mode=mode), T.nn.ReLU(), conv(6, 3, 2, bias=False)]
    q = T.ao.quantization
    return T.nn.Sequential(q.QuantStub(), *layers, q.DeQuantStub()).eval()


def _same_state(tsd, fsd):
    assert list(tsd) == list(fsd)
    for k, v in tsd.items():
        f = fsd[k]
        if v is None or isinstance(v, (float, int)):
            assert f == v, k
        elif v.is_quantized:
            assert repr(f) == repr(v), k
            np.testing.assert_array_equal(f.int_repr().numpy(), v.int_repr().numpy())
        else:
            np.testing.assert_array_equal(f.detach().numpy(), v.detach().numpy())


@pytest.mark.parametrize("n,kind", [(1, "conv"), (2, "conv"), (3, "conv"), (1, "fused"), (2, "fused"), (3, "fused"),
                                    (1, "reflect"), (2, "reflect"), (1, "transpose"), (2, "transpose"),
                                    (3, "transpose")])
def test_conv_modules_match_torch(n, kind, tmp_path, fbgemm):
    torch = fbgemm
    torch.manual_seed(n)
    tm, fm = _conv_model(torch, n, kind), _conv_model(fg, n, kind)
    fm.load_state_dict({k: fg.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    # per-channel weights (x86's qconfig) for the convolutions; per tensor for the transposed ones (fbgemm's)
    for m, lib in ((tm, torch), (fm, fg)):
        q = lib.ao.quantization
        m.qconfig = q.default_qconfig if kind in ("transpose", "reflect") else q.get_default_qconfig("x86")
    if kind == "fused":
        tm, fm = torch.ao.quantization.fuse_modules(tm, [["1", "2"]]), fgq.fuse_modules(fm, [["1", "2"]])
    tp, fp = torch.ao.quantization.prepare(tm), fgq.prepare(fm)
    rng = np.random.default_rng(n)
    shape = (2, 4) + (6,) * n
    for _ in range(2):
        x = rng.standard_normal(shape).astype(np.float32)
        tp(torch.from_numpy(x))
        fp(fg.tensor(x))
    tq, fq = torch.ao.quantization.convert(tp), fgq.convert(fp)
    for i in ("1", "3"):
        a, b = getattr(tq, i), getattr(fq, i)
        assert type(b).__name__ == type(a).__name__ and b._get_name() == a._get_name()
        assert repr(b.weight()) == repr(a.weight())
        np.testing.assert_array_equal(b.weight().int_repr().numpy(), a.weight().int_repr().numpy())
        assert (a.bias() is None) == (b.bias() is None)
        if a.bias() is not None:
            np.testing.assert_array_equal(b.bias().numpy(), a.bias().detach().numpy())
        # (the observers saw float convolutions that may differ in the last bit)
        assert b.zero_point == a.zero_point and b.scale == pytest.approx(a.scale, rel=1e-6)
    # torch's state_dict into funcgrad's: the same repr, state_dict and integers
    torch.save(tq.state_dict(), tmp_path / "t.pt")
    fq.load_state_dict(fg.load(tmp_path / "t.pt", weights_only=True))
    assert repr(fq) == repr(tq)
    _same_state(tq.state_dict(), fq.state_dict())
    x = rng.standard_normal(shape).astype(np.float32)
    tx, fx = tq[0](torch.from_numpy(x)), fq[0](fg.tensor(x))
    _same(tq[1](tx), fq[1](fx))
    np.testing.assert_array_equal(fq(fg.tensor(x)).numpy(), tq(torch.from_numpy(x)).numpy())
    # and funcgrad's into torch's; funcgrad's module pickles
    fg.save(fq.state_dict(), tmp_path / "f.pt")
    tq.load_state_dict(torch.load(tmp_path / "f.pt", weights_only=True))
    fg.save(fq, tmp_path / "m.pt")
    back = fg.load(tmp_path / "m.pt", weights_only=False)
    np.testing.assert_array_equal(back(fg.tensor(x)).numpy(), tq(torch.from_numpy(x)).numpy())


def test_conv_module_construction_repr_and_errors(fbgemm):
    torch = fbgemm
    tnnq, tnniq = torch.ao.nn.quantized, torch.ao.nn.intrinsic.quantized
    cases = [("Conv1d", (4, 6, 3), dict(stride=2, padding=1, dilation=2, groups=2, bias=False)),
             ("Conv3d", (2, 4, (1, 2, 3)), dict(padding=(0, 1, 0))),
             ("ConvTranspose1d", (4, 2, 3), dict(stride=2, output_padding=1)),
             ("ConvTranspose2d", (4, 6, 2), dict(groups=2, dilation=2, output_padding=1)),
             ("ConvTranspose3d", (2, 3, 1), dict(bias=False))]
    for name, args, kw in cases:
        t, f = getattr(tnnq, name)(*args, **kw), getattr(fgnnq, name)(*args, **kw)
        assert repr(f) == repr(t)
        assert list(f.state_dict()) == list(t.state_dict())
        fw, tw = f.weight(), t.weight()      # (torch's placeholder integers are uninitialised memory)
        assert (tuple(fw.shape), str(fw.dtype), str(fw.qscheme()), fw.q_scale(), fw.q_zero_point()) == \
            (tuple(tw.shape), str(tw.dtype), str(tw.qscheme()), tw.q_scale(), tw.q_zero_point())
    for name in ("ConvReLU1d", "ConvReLU2d", "ConvReLU3d"):
        assert repr(getattr(fg.ao.nn.intrinsic.quantized, name)(2, 2, 1)) == repr(getattr(tnniq, name)(2, 2, 1))
    c = fgnnq.ConvTranspose2d(4, 6, 3, padding=1)
    assert c._input_padding(c.kernel_size, c.dilation, c.padding) == [1, 1]
    with pytest.raises(ValueError, match=r"Input shape must be `\(N, C, L\)`!"):
        fgnnq.Conv1d(2, 2, 1)(fg.quantize_per_tensor(fg.ones(1, 2, 3, 3), 0.1, 0, fg.quint8))
    with pytest.raises(ValueError, match=r"Input shape must be `\(N, C, T, H, W\)`!"):
        fgnnq.ConvTranspose3d(2, 2, 1)(fg.quantize_per_tensor(fg.ones(1, 2, 3, 3), 0.1, 0, fg.quint8))
    with pytest.raises(ValueError, match="'padding_mode' circular is not supported by quantized convolution"):
        fgnnq.Conv2d(2, 2, 1, padding_mode="circular")
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose1d'):
        fgnnq.ConvTranspose1d(2, 2, 1, padding_mode="reflect")
    with pytest.raises(AssertionError, match="Conv3d does not support reflection padding"):
        fgnnq.Conv3d(2, 2, 1, padding_mode="reflect")
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        fgnnq.Conv1d(3, 2, 1, groups=2)
    # fbgemm has no per-channel transposed convolution: prepare refuses a per-channel weight observer
    m = fg.nn.Sequential(fg.nn.ConvTranspose2d(2, 2, 1))
    m.qconfig = fgq.get_default_qconfig("x86")
    with pytest.raises(AssertionError, match="Per channel weight observer is not supported yet for ConvTranspose"):
        fgq.prepare(m)
    with pytest.raises(AssertionError, match="from_float only works for Conv1d but got: Conv2d"):
        fgnnq.Conv1d.from_float(fg.nn.Conv2d(2, 2, 1))


def test_conv_from_reference_matches_torch(fbgemm):
    torch = fbgemm
    rng = np.random.default_rng(7)
    w = rng.standard_normal((4, 3, 2)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)

    class Ref:   # (the attributes from_reference reads off a reference quantized convolution)
        in_channels, out_channels, kernel_size, stride, padding, dilation, groups, padding_mode = \
            3, 4, (2,), (2,), (1,), (1,), 1, "zeros"

        def __init__(self, lib):
            self.lib = lib
            self.weight, self.bias = lib.tensor(w), lib.tensor(b)

        def get_quantized_weight(self):
            return self.lib.quantize_per_tensor(self.weight, 0.02, 0, self.lib.qint8)
    t = torch.ao.nn.quantized.Conv1d.from_reference(Ref(torch), 0.1, 7)
    f = fgnnq.Conv1d.from_reference(Ref(fg), 0.1, 7)
    assert repr(f) == repr(t)
    _same_state(t.state_dict(), f.state_dict())
    x = rng.standard_normal((2, 3, 9)).astype(np.float32)
    a, c = _pair(torch, x, 0.03, 120, "quint8")
    _same(t(a), f(c))


@pytest.mark.parametrize("n", [1, 3])
def test_fuse_conv_bn_relu_1d_3d_matches_torch(n):
    torch = _torch()

    def build(T):
        return T.nn.Sequential(getattr(T.nn, f"Conv{n}d")(2, 3, 2), getattr(T.nn, f"BatchNorm{n}d")(3),
                               T.nn.ReLU(), getattr(T.nn, f"Conv{n}d")(3, 3, 1), getattr(T.nn, f"BatchNorm{n}d")(3))
    torch.manual_seed(n)
    tm = build(torch).eval()
    with torch.no_grad():
        for bn in (tm[1], tm[4]):
            bn.running_mean.uniform_(-1, 1)
            bn.running_var.uniform_(0.5, 2)
            bn.weight.uniform_(0.5, 2)
    fm = build(fg).eval()
    fm.load_state_dict({k: fg.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    groups = [["0", "1", "2"], ["3", "4"]]
    tf, ff = torch.ao.quantization.fuse_modules(tm, groups), fgq.fuse_modules(fm, groups)
    assert repr(ff) == repr(tf)
    for k, v in tf.state_dict().items():
        np.testing.assert_array_equal(ff.state_dict()[k].numpy(), v.numpy())
    with pytest.raises(NotImplementedError, match=f"no ConvBn{n}d for quantization-aware training"):
        fgq.fuse_modules(build(fg).train(), [["0", "1"]])
