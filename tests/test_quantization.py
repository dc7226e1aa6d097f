"""Quantized tensors (funcgrad/_torch/_quantized.py), their save/load, and torch.ao.quantization's eager workflow
(funcgrad/ao): exact values, plus comparisons with torch 2.13 where it is installed."""
from __future__ import annotations

import copy
import io
import pathlib
import pickle
import warnings

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.ao import quantization as fq

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
DATA = pathlib.Path(__file__).parent / "data"


def _torch():
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", category=UserWarning)
    return torch


# --- quantized tensors: exact values ---------------------------------------------------------------------
def test_quantize_per_tensor_exact():
    q = fg.quantize_per_tensor(fg.tensor([-1.0, 0.0, 0.26, 1.5, 100.0]), 0.1, 10, fg.quint8)
    assert q.is_quantized and q.dtype is fg.quint8 and q.qscheme() is fg.per_tensor_affine
    assert q.int_repr().tolist() == [0, 10, 13, 25, 255]          # clamped at 0 and 255
    assert q.q_scale() == 0.1 and q.q_zero_point() == 10
    np.testing.assert_array_equal(q.dequantize().numpy(), np.float32([-1.0, 0.0, 0.3, 1.5, 24.5]))
    assert repr(q) == ("tensor([-1.0000,  0.0000,  0.3000,  1.5000, 24.5000], size=(5,),\n"
                       "       dtype=torch.quint8, quantization_scheme=torch.per_tensor_affine,\n"
                       "       scale=0.1, zero_point=10)")


def test_quantize_per_channel_exact():
    x = fg.tensor([[0.5, -1.7, 1.3], [1.2, 0.4, -0.8]])
    q = fg.quantize_per_channel(x, fg.tensor([0.1, 0.2]), fg.tensor([0, 1]), 0, fg.qint8)
    assert q.int_repr().tolist() == [[5, -17, 13], [7, 3, -3]]
    assert q.q_per_channel_scales().dtype == fg.float64 and q.q_per_channel_axis() == 0
    assert q.q_per_channel_zero_points().tolist() == [0, 1]
    with pytest.raises(RuntimeError):
        q.q_scale()


def test_dynamic_qparams_exact():
    q = fg.quantize_per_tensor_dynamic(fg.tensor([-1.0, 0.0, 1.5, 100.0]), fg.quint8, False)
    assert q.q_scale() == 101 / 255 and q.q_zero_point() == 3
    q = fg.quantize_per_tensor_dynamic(fg.tensor([-1.0, 0.0, 1.5, 100.0]), fg.qint8, True)   # range -64..63
    assert q.q_scale() == 101 / 127 and q.q_zero_point() == -63


def test_quantized_ops_and_refusals():
    q = fg.quantize_per_tensor(fg.tensor([[-1.0, 0.5], [2.0, -0.2]]), 0.1, 10, fg.quint8)
    assert q.reshape(4).int_repr().tolist() == [0, 15, 30, 8]
    assert q[1].int_repr().tolist() == [30, 8] and q.t().int_repr().tolist() == [[0, 30], [15, 8]]
    assert fg.nn.functional.relu(q).int_repr().tolist() == [[10, 15], [30, 10]]
    assert q.relu().q_zero_point() == 10
    for bad in (lambda: q + q, lambda: q.sum(), lambda: q.float(), lambda: fg.exp(q)):
        with pytest.raises(NotImplementedError, match="QuantizedCPU"):
            bad()
    with pytest.raises(RuntimeError, match="require gradients"):
        q.requires_grad_()
    with pytest.raises(NotImplementedError):
        fg.tensor([1.0]).q_scale()
    assert copy.deepcopy(q).int_repr().tolist() == q.int_repr().tolist()
    r = pickle.loads(pickle.dumps(q))
    assert r.q_scale() == 0.1 and r.int_repr().tolist() == q.int_repr().tolist()
    with pytest.raises(RuntimeError, match="isSignedType"):
        fg.quint8.is_signed
    assert fg.quint8 != fg.uint8 and fg.qint8.itemsize == 1 and fg.qint32.itemsize == 4


def test_fake_quantize_values_and_straight_through_gradient():
    x = fg.tensor([-2.0, -0.04, 0.26, 1.0, 30.0], requires_grad=True)
    y = fg.fake_quantize_per_tensor_affine(x, 0.1, 10, 0, 255)
    np.testing.assert_allclose(y.detach().numpy(), np.float32([-1.0, 0.0, 0.3, 1.0, 24.5]), rtol=1e-6)
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]      # zero where clamped
    w = fg.tensor([[0.3, -5.0], [0.26, 1.0]], requires_grad=True)
    z = fg.fake_quantize_per_channel_affine(w, fg.tensor([0.1, 0.5]), fg.tensor([0, 0], dtype=fg.int32), 0, -8, 7)
    np.testing.assert_allclose(z.detach().numpy(), np.float32([[0.3, -0.8], [0.5, 1.0]]), rtol=1e-6)
    z.sum().backward()
    assert w.grad.tolist() == [[1.0, 0.0], [1.0, 1.0]]


def test_save_load_roundtrip_and_committed_torch_file():
    d = fg.load(DATA / "torch_quantized.pt", weights_only=True)      # written by torch 2.13's torch.save
    assert d["q"].int_repr().tolist() == [0, 10, 13, 25, 255] and d["q"].q_scale() == 0.1
    assert d["p"].q_per_channel_axis() == 1 and d["p"].q_per_channel_zero_points().tolist() == [0, 1, -2]
    assert d["p"].int_repr().tolist() == [[5, -8, 2], [12, 3, -5]]
    assert d["i32"].dtype is fg.qint32 and d["i32"].int_repr().tolist() == [200007, 1]
    buf = io.BytesIO()
    fg.save(d, buf)
    buf.seek(0)
    e = fg.load(buf)
    for k in d:
        assert e[k].dtype is d[k].dtype and e[k].int_repr().tolist() == d[k].int_repr().tolist()
    assert e["p"].q_per_channel_scales().tolist() == d["p"].q_per_channel_scales().tolist()


# --- against torch ----------------------------------------------------------------------------------------
def test_quantize_bit_identical_to_torch():
    torch = _torch()
    rng = np.random.default_rng(0)
    x = np.concatenate([(rng.standard_normal(20000) * 3).astype(np.float32), np.arange(-300, 300, dtype=np.float32) * 0.05])
    for scale, zp in [(0.1, 10), (1 / 3, 7), (0.0123, 3)]:
        for dt in ("quint8", "qint8"):
            z = zp if dt != "qint8" else zp - 20
            a = torch.quantize_per_tensor(torch.from_numpy(x), scale, z, getattr(torch, dt))
            b = fg.quantize_per_tensor(fg.tensor(x), scale, z, getattr(fg, dt))
            np.testing.assert_array_equal(a.int_repr().numpy(), b.int_repr().numpy())
            np.testing.assert_array_equal(a.dequantize().numpy(), b.dequantize().numpy())
    xs = x[:20000].reshape(4, -1)
    s, z = np.array([0.1, 1 / 3, 0.05, 0.2]), np.array([0, 3, 100, -5])
    a = torch.quantize_per_channel(torch.from_numpy(xs), torch.from_numpy(s), torch.from_numpy(z), 0, torch.qint8)
    b = fg.quantize_per_channel(fg.tensor(xs), fg.tensor(s), fg.tensor(z), 0, fg.qint8)
    np.testing.assert_array_equal(a.int_repr().numpy(), b.int_repr().numpy())
    np.testing.assert_array_equal(a.dequantize().numpy(), b.dequantize().numpy())
    for rr in (False, True):
        a = torch.quantize_per_tensor_dynamic(torch.from_numpy(xs), torch.quint8, rr)
        b = fg.quantize_per_tensor_dynamic(fg.tensor(xs), fg.quint8, rr)
        assert (a.q_scale(), a.q_zero_point()) == (b.q_scale(), b.q_zero_point())
    assert repr(a) == repr(b)


def test_fake_quantize_matches_torch():
    torch = _torch()
    x = (np.random.default_rng(1).standard_normal((3, 40)) * 4).astype(np.float32)
    tx, fx = torch.tensor(x, requires_grad=True), fg.tensor(x, requires_grad=True)
    ty = torch.fake_quantize_per_tensor_affine(tx, 0.03, 100, 0, 255)
    fy = fg.fake_quantize_per_tensor_affine(fx, 0.03, 100, 0, 255)
    np.testing.assert_array_equal(ty.detach().numpy(), fy.detach().numpy())
    (ty * torch.arange(40.0)).sum().backward()
    (fy * fg.arange(40.0)).sum().backward()
    np.testing.assert_array_equal(tx.grad.numpy(), fx.grad.numpy())
    s, z = np.float32([0.1, 0.02, 0.5]), np.int32([0, 3, -1])
    ty = torch.fake_quantize_per_channel_affine(torch.from_numpy(x), torch.from_numpy(s), torch.from_numpy(z), 0, -128, 127)
    fy = fg.fake_quantize_per_channel_affine(fg.tensor(x), fg.tensor(s), fg.tensor(z), 0, -128, 127)
    np.testing.assert_array_equal(ty.numpy(), fy.numpy())


def test_torch_file_loads_and_funcgrad_file_loads_in_torch(tmp_path):
    torch = _torch()
    q = torch.quantize_per_channel(torch.randn(3, 4), torch.rand(4, dtype=torch.float64) + 0.01,
                                   torch.tensor([0, 1, 2, 3]), 1, torch.quint8)
    sd = {"q": q, "v": torch.quantize_per_tensor(torch.randn(5), 0.2, 3, torch.qint8)[1:4], "dt": torch.qint8,
          "qs": torch.per_tensor_affine}
    torch.save(sd, tmp_path / "t.pt")
    d = fg.load(tmp_path / "t.pt", weights_only=True)
    assert repr(d["q"]) == repr(q) and repr(d["v"]) == repr(sd["v"])
    assert d["dt"] is fg.qint8 and d["qs"] is fg.per_tensor_affine
    fg.save(d, tmp_path / "f.pt")
    back = torch.load(tmp_path / "f.pt", weights_only=True)
    assert repr(back["q"]) == repr(q) and repr(back["v"]) == repr(sd["v"]) and back["dt"] is torch.qint8


def _copy_weights(src, dst):
    dst.load_state_dict({k: fg.tensor(v.detach().numpy()) for k, v in src.state_dict().items()})


def test_quantize_dynamic_lstm_linear_matches_torch():
    torch = _torch()

    def build(T):
        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = T.nn.LSTM(5, 7, num_layers=2, bidirectional=True)
                self.fc = T.nn.Linear(14, 3)

            def forward(self, x):
                o, (h, c) = self.lstm(x)
                return self.fc(o), h, c
        return M()
    torch.manual_seed(0)
    m, f = build(torch), build(fg)
    _copy_weights(m, f)
    qm = torch.ao.quantization.quantize_dynamic(m, {torch.nn.Linear, torch.nn.LSTM}, dtype=torch.qint8)
    qf = fq.quantize_dynamic(f, {fg.nn.Linear, fg.nn.LSTM}, dtype=fg.qint8)
    assert repr(qm) == repr(qf)
    assert isinstance(f.fc, fg.nn.Linear)    # (not inplace)
    x = np.random.default_rng(1).standard_normal((6, 4, 5)).astype(np.float32)
    for a, b in zip(qm(torch.from_numpy(x)), qf(fg.tensor(x))):
        np.testing.assert_allclose(a.detach().numpy(), b.numpy(), rtol=0, atol=1e-6)
    assert repr(qm.fc.weight()) == repr(qf.fc.weight())
    # the LSTM's weights are in the state_dict under torch's keys (the dynamic-quantization tutorial saves the
    # quantized model's state_dict to measure its size: the LSTM's weights were missing) and load back
    assert list(qm.state_dict()) == list(qf.state_dict())
    buf = io.BytesIO()
    fg.save(qf.state_dict(), buf)
    buf.seek(0)
    fresh = fq.quantize_dynamic(build(fg), {fg.nn.Linear, fg.nn.LSTM}, dtype=fg.qint8)
    fresh.load_state_dict(fg.load(buf))
    for a, b in zip(qm(torch.from_numpy(x)), fresh(fg.tensor(x))):
        np.testing.assert_allclose(a.detach().numpy(), b.numpy(), rtol=0, atol=1e-6)
    empty = fg.ao.nn.quantized.dynamic.LSTM(5, 7, num_layers=2, bidirectional=True)  # placeholders until loaded
    empty.load_state_dict({k[len("lstm."):]: v for k, v in qf.state_dict().items() if k.startswith("lstm.")})
    for a, b in zip(qm.lstm(torch.from_numpy(x))[0], empty(fg.tensor(x))[0]):
        np.testing.assert_allclose(a.detach().numpy(), b.numpy(), rtol=0, atol=1e-6)
    assert repr(empty) == repr(torch.ao.nn.quantized.dynamic.LSTM(5, 7, num_layers=2, bidirectional=True))


@pytest.mark.parametrize("qconfig,fuse", [("default", False), ("x86", False), ("x86", True)])
def test_static_post_training_quantization_matches_torch(qconfig, fuse):
    torch = _torch()

    def build(T):
        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.quant, self.dequant = T.ao.quantization.QuantStub(), T.ao.quantization.DeQuantStub()
                self.conv, self.relu = T.nn.Conv2d(3, 4, 3, padding=1), T.nn.ReLU()
                self.conv2, self.relu2 = T.nn.Conv2d(4, 4, 3, stride=2), T.nn.ReLU()
                self.fc = T.nn.Linear(36, 5)

            def forward(self, x):
                x = self.relu2(self.conv2(self.relu(self.conv(self.quant(x)))))
                return self.dequant(self.fc(x.reshape(x.shape[0], -1)))
        return M().eval()
    torch.manual_seed(0)
    m, f = build(torch), build(fg)
    _copy_weights(m, f)
    for mod, T in ((m, torch), (f, fg)):
        mod.qconfig = T.ao.quantization.default_qconfig if qconfig == "default" else \
            T.ao.quantization.get_default_qconfig(qconfig)
    if fuse:
        m = torch.ao.quantization.fuse_modules(m, [["conv", "relu"], ["conv2", "relu2"]])
        f = fq.fuse_modules(f, [["conv", "relu"], ["conv2", "relu2"]])
    pm, pf = torch.ao.quantization.prepare(m), fq.prepare(f)
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = rng.standard_normal((4, 3, 8, 8)).astype(np.float32)
        pm(torch.from_numpy(x))
        pf(fg.tensor(x))
    qm, qf = torch.ao.quantization.convert(pm), fq.convert(pf)
    for name in ("conv", "conv2", "fc"):
        assert getattr(qm, name).zero_point == getattr(qf, name).zero_point
        np.testing.assert_allclose(getattr(qm, name).scale, getattr(qf, name).scale, rtol=1e-6)
    x = rng.standard_normal((4, 3, 8, 8)).astype(np.float32)
    a, b = qm(torch.from_numpy(x)).numpy(), qf(fg.tensor(x)).numpy()
    np.testing.assert_allclose(a, b, rtol=0, atol=1.01 * qm.fc.scale)   # one quantization step at most


def test_prepare_qat_trains_and_converts():
    model = fg.nn.Sequential(fq.QuantStub(), fg.nn.Linear(4, 3), fg.nn.ReLU(), fq.DeQuantStub())
    model.qconfig = fq.get_default_qat_qconfig("x86")
    qat = fq.prepare_qat(model.train())
    assert type(qat[1]).__name__ == "Linear" and hasattr(qat[1], "weight_fake_quant")
    opt = fg.optim.SGD(qat.parameters(), lr=0.1)
    x = fg.randn(8, 4)
    loss = qat(x).pow(2).sum()
    loss.backward()
    assert qat[1].weight.grad is not None and float(qat[1].weight.grad.abs().sum()) > 0
    opt.step()
    q = fq.convert(qat.eval())
    out = q(x)
    assert out.dtype == fg.float32 and out.shape == (8, 3)
    assert isinstance(q[0], fg.ao.nn.quantized.Quantize) and isinstance(q[1], fg.ao.nn.quantized.Linear)


def test_quantization_alias_and_paths():
    import funcgrad.quantization as old
    assert old.quantize_dynamic is fq.quantize_dynamic and old.QuantStub is fq.QuantStub
    assert fg.ao.nn.quantized.dynamic.LSTM.__name__ == "LSTM"


def test_torch_functions_never_compute_on_the_integer_representation():
    """torch.relu(q), torch.reshape(q, ...) and the other functions with buffer fast paths take the quantized
    tensor's methods: a quantized result with the right values, or torch's NotImplementedError; never the raw
    integers as a uint8 tensor."""
    import warnings
    from funcgrad._torch._quantized import _METHOD_FORMS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        q = fg.quantize_per_tensor(fg.tensor([[1.0, -2.0], [3.0, 4.0]]), 0.1, 128, fg.quint8)
    np.testing.assert_allclose(fg.relu(q).dequantize().numpy(), [[1, 0], [3, 4]], atol=1e-6)
    np.testing.assert_allclose(fg.reshape(q, (4,)).dequantize().numpy(), [1, -2, 3, 4], atol=1e-6)
    np.testing.assert_allclose(fg.transpose(q, 0, 1).dequantize().numpy(), [[1, 3], [-2, 4]], atol=1e-6)
    for name in _METHOD_FORMS:
        f = getattr(fg, name, None)
        if f is None:
            continue
        for args in ((), (0,), (0, 1), ((4,),)):
            try:
                r = f(q, *args)
            except NotImplementedError:
                break
            except (TypeError, RuntimeError, IndexError, ValueError):
                continue
            for t in (r if isinstance(r, (tuple, list)) else [r]):
                assert not isinstance(t, fg.Tensor) or t.is_quantized or t.dtype != fg.uint8, name
            break


def test_eager_entry_points_warn_torch_deprecation():
    """torch 2.13 deprecates torch.ao.quantization's eager entry points: each call warns DeprecationWarning at
    its caller (the dynamic-quantization tutorial shows it), nested calls too (quantize_dynamic's convert)."""
    torch = _torch()

    def warned(T, call):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            call(T)
        return [(x.category, str(x.message), x.filename == __file__) for x in w
                if issubclass(x.category, DeprecationWarning)]

    def model(T):
        m = T.nn.Sequential(T.nn.Linear(3, 2))
        m.qconfig = T.ao.quantization.default_qconfig
        return m
    calls = [lambda T: T.ao.quantization.quantize_dynamic(model(T), {T.nn.Linear}, dtype=T.qint8),
             lambda T: T.ao.quantization.convert(T.ao.quantization.prepare(model(T))),
             lambda T: T.quantization.quantize_dynamic(model(T))]
    for call in calls:
        want = warned(torch, call)
        assert want and warned(fg, call) == want
