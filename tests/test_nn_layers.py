"""funcgrad.nn layers against torch.nn: activations (incl. in-place forms), normalisation (SyncBatchNorm, the
training batch_norm node), dropout variants, embeddings, Bilinear, Unflatten, lazy modules, nn.Buffer and
AdaptiveLogSoftmaxWithLoss, and their functional forms; values and gradients, train and eval mode."""
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import funcgrad as fg
from funcgrad import nn
from funcgrad.nn import functional as F

torch = pytest.importorskip("torch")
from torch_check import r  # noqa: E402
TF = torch.nn.functional

TOL = {np.float32: (2e-4, 2e-5), np.float64: (1e-7, 1e-9)}


def np_(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t)


def close(a, b, dtype=np.float32, rtol=None, atol=None):
    r, a_ = TOL.get(dtype, TOL[np.float32])
    np.testing.assert_allclose(np_(a), np_(b), rtol=rtol or r, atol=atol or a_)


def randn(*shape, seed=1, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def compare(ffn, tfn, inputs, torch, grad_inputs=(0,), dtype=np.float32, rtol=None, atol=None, seed=0):
    """ffn(*fg tensors) vs tfn(*torch tensors): outputs, then gradients of <out, random cotangent>."""
    tin = [torch.tensor(x, requires_grad=(i in grad_inputs)) for i, x in enumerate(inputs)]
    fin = [fg.tensor(x, requires_grad=(i in grad_inputs)) for i, x in enumerate(inputs)]
    tout, fout = tfn(*tin), ffn(*fin)
    assert tuple(fout.shape) == tuple(tout.shape)
    assert np_(fout).dtype == np_(tout).dtype
    close(fout, tout, dtype, rtol, atol)
    if tout.requires_grad:
        ct = np.random.default_rng(seed).standard_normal(tuple(tout.shape)).astype(np_(tout).dtype)
        (tout * torch.tensor(ct)).sum().backward()
        (fout * fg.tensor(ct)).sum().backward()
        for i in grad_inputs:
            close(fin[i].grad, tin[i].grad, dtype, rtol, atol)
    return fout, tout


def twin(tmod, fmod):
    """Copy torch's parameters and buffers into our module (a state_dict round trip)."""
    res = fmod.load_state_dict(tmod.state_dict())
    assert res.missing_keys == [] and res.unexpected_keys == []
    return fmod


def check_module(tmod, fmod, inputs, torch, grad_inputs=(0,), modes=("train", "eval"), dtype=np.float32,
                 rtol=None, atol=None):
    """Module forward/backward in each mode: outputs, input and parameter gradients, buffers afterwards."""
    for mode in modes:
        getattr(tmod, mode)()
        getattr(fmod, mode)()
        compare(fmod, tmod, inputs, torch, grad_inputs, dtype, rtol, atol)
        tp = dict(tmod.named_parameters())
        for name, p in fmod.named_parameters():
            if p.requires_grad:
                close(p.grad, tp[name].grad, dtype, rtol, atol)
        tmod.zero_grad()
        fmod.zero_grad()
        tb = dict(tmod.named_buffers())
        for name, b in fmod.named_buffers():
            close(b, tb[name], dtype, rtol, atol)


def _away_from_kinks(x, kinks=(0.0,), gap=1e-2):
    """Nudge values off the points where the activation is not differentiable."""
    x = x.copy()
    for k in kinks:
        near = np.abs(x - k) < gap
        x[near] = k + 2 * gap
    return x


# --- activations ----------------------------------------------------------------------------------
ACTS = [  # (functional name, kwargs, module name, module args, kinks)
    ("relu", {}, "ReLU", (), (0,)),
    ("relu6", {}, "ReLU6", (), (0, 6)),
    ("leaky_relu", {"negative_slope": 0.2}, "LeakyReLU", (0.2,), (0,)),
    ("elu", {"alpha": 0.7}, "ELU", (0.7,), (0,)),
    ("selu", {}, "SELU", (), (0,)),
    ("celu", {"alpha": 1.5}, "CELU", (1.5,), (0,)),
    ("gelu", {}, "GELU", (), ()),
    ("gelu", {"approximate": "tanh"}, "GELU", ("tanh",), ()),
    ("silu", {}, "SiLU", (), ()),
    ("mish", {}, "Mish", (), ()),
    ("sigmoid", {}, "Sigmoid", (), ()),
    ("tanh", {}, "Tanh", (), ()),
    ("hardtanh", {"min_val": -0.5, "max_val": 1.5}, "Hardtanh", (-0.5, 1.5), (-0.5, 1.5)),
    ("hardsigmoid", {}, "Hardsigmoid", (), (-3, 3)),
    ("hardswish", {}, "Hardswish", (), (-3, 3)),
    ("softplus", {"beta": 2.0, "threshold": 1.5}, "Softplus", (2.0, 1.5), (0.75,)),
    ("softsign", {}, "Softsign", (), ()),
    ("softshrink", {"lambd": 0.3}, "Softshrink", (0.3,), (-0.3, 0.3)),
    ("hardshrink", {"lambd": 0.3}, "Hardshrink", (0.3,), (-0.3, 0.3)),
    ("tanhshrink", {}, "Tanhshrink", (), ()),
    ("logsigmoid", {}, "LogSigmoid", (), ()),
    ("threshold", {"threshold": 0.1, "value": 2.0}, "Threshold", (0.1, 2.0), (0.1,)),
    ("glu", {"dim": 1}, "GLU", (1,), ()),
    ("softmax", {"dim": 1}, "Softmax", (1,), ()),
    ("log_softmax", {"dim": -1}, "LogSoftmax", (-1,), ()),
    ("softmin", {"dim": 0}, "Softmin", (0,), ()),
]


@pytest.mark.parametrize("fname,kw,mname,margs,kinks", ACTS, ids=[f"{a[2]}{a[3]}" for a in ACTS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_functional_and_module(fname, kw, mname, margs, kinks, dtype):
    x = _away_from_kinks(randn(3, 4, 5, dtype=dtype) * 3, kinks)
    compare(lambda a: getattr(F, fname)(a, **kw), lambda a: getattr(TF, fname)(a, **kw), [x], torch, dtype=dtype)
    t, f = getattr(torch.nn, mname)(*margs), getattr(nn, mname)(*margs)
    assert repr(f) == repr(t)
    compare(f, t, [x], torch, dtype=dtype)


INPLACE = [("relu_", {}, (0,)), ("elu_", {"alpha": 0.5}, (0,)), ("leaky_relu_", {"negative_slope": 0.1}, (0,)),
           ("hardtanh_", {"min_val": -1.0, "max_val": 0.5}, (-1, 0.5)), ("selu_", {}, (0,)), ("celu_", {}, (0,)),
           ("threshold_", {"threshold": 0.2, "value": -1.0}, (0.2,)), ("rrelu_", {}, (0,))]


@pytest.mark.parametrize("name,kw,kinks", INPLACE)
def test_inplace_functional_variants(name, kw, kinks):
    x = _away_from_kinks(randn(4, 6) * 2, kinks)
    tx = torch.tensor(x, requires_grad=True)
    fx = fg.tensor(x, requires_grad=True)
    ty, fy = tx * 1.5, fx * 1.5  # a non-leaf to modify in place
    tr, fr = getattr(TF, name)(ty, **kw), getattr(F, name)(fy, **kw)
    assert fr is fy
    close(fy, ty)
    (ty * torch.tensor(x)).sum().backward()
    (fy * fg.tensor(x)).sum().backward()
    close(fx.grad, tx.grad)
    assert tr is ty
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        getattr(F, name)(fg.tensor(x, requires_grad=True), **kw)


@pytest.mark.parametrize("mname,margs", [("ReLU", (True,)), ("ReLU6", (True,)), ("LeakyReLU", (0.3, True)),
                                         ("ELU", (1.0, True)), ("CELU", (0.5, True)), ("SELU", (True,)),
                                         ("SiLU", (True,)), ("Mish", (True,)), ("Hardtanh", (-1.0, 1.0, True)),
                                         ("Hardsigmoid", (True,)), ("Hardswish", (True,)),
                                         ("Threshold", (0.1, 0.0, True))])
def test_inplace_modules_write_in_place(mname, margs):
    x = _away_from_kinks(randn(5, 7) * 3, (0, 0.1, -1, 1, 6, -3, 3))
    t, f = getattr(torch.nn, mname)(*margs), getattr(nn, mname)(*margs)
    assert repr(f) == repr(t)
    tx, fx = torch.tensor(x, requires_grad=True), fg.tensor(x, requires_grad=True)
    ty, fy = tx + 0.0, fx + 0.0
    view = fy[1:3]
    out_t, out_f = t(ty), f(fy)
    assert out_f is fy
    close(fy, ty)
    close(view, ty[1:3])  # the write reached every view of the storage
    (out_t ** 2).sum().backward()
    (out_f ** 2).sum().backward()
    close(fx.grad, tx.grad)


def test_inplace_no_grad_and_view():
    x = randn(4, 5)
    f = fg.tensor(x)
    r = F.relu(f, inplace=True)
    assert r is f
    np.testing.assert_array_equal(np_(f), np.maximum(x, 0))
    base = fg.tensor(x)
    F.elu_(base[:, 1:3])
    exp = x.copy()
    exp[:, 1:3] = np_(TF.elu(torch.tensor(x[:, 1:3])))
    close(base, exp)


def test_prelu():
    x = _away_from_kinks(randn(4, 3, 5))
    for n, init in ((1, 0.25), (3, 0.1)):
        t, f = torch.nn.PReLU(n, init), nn.PReLU(n, init)
        close(f.weight, t.weight)
        assert repr(f) == repr(t)
        with torch.no_grad():
            t.weight.copy_(torch.tensor(randn(n, seed=4)))
        check_module(t, twin(t, f), [x], torch)
    compare(F.prelu, TF.prelu, [_away_from_kinks(randn(6)), randn(1, seed=2)], torch, grad_inputs=(0, 1))
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers"):
        F.prelu(fg.randn(2, 4), fg.randn(3))


def test_rrelu_train_and_eval():
    x = _away_from_kinks(randn(50, 40))
    t, f = torch.nn.RReLU(0.1, 0.3), nn.RReLU(0.1, 0.3)
    assert repr(f) == repr(t)
    f.eval()
    t.eval()
    compare(f, t, [x], torch)
    f.train()
    fx = fg.tensor(x, requires_grad=True)
    y = f(fx)
    y.sum().backward()
    slope = np_(y)[x < 0] / x[x < 0]
    assert slope.min() >= 0.1 - 1e-6 and slope.max() <= 0.3 + 1e-6 and slope.std() > 0.03
    np.testing.assert_allclose(np_(fx.grad)[x < 0], slope, rtol=1e-5)
    np.testing.assert_array_equal(np_(y)[x >= 0], x[x >= 0])


def test_softmax_dtype_and_implicit_dim_warning():
    x = randn(3, 4)
    for fn in ("softmax", "log_softmax", "softmin"):
        tr = getattr(TF, fn)(torch.tensor(x), 1, dtype=torch.float64)
        fr = getattr(F, fn)(fg.tensor(x), 1, dtype=fg.float64)
        assert fr.dtype == fg.float64
        close(fr, tr, np.float64)
        for shape in ((5,), (2, 3), (2, 3, 4), (2, 3, 4, 5)):
            xx = randn(*shape)
            with pytest.warns(UserWarning, match=f"Implicit dimension choice for {fn}"):
                fr = getattr(F, fn)(fg.tensor(xx))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                close(fr, getattr(TF, fn)(torch.tensor(xx)))


def test_softmax2d_and_errors():
    x = randn(2, 3, 4, 5)
    compare(nn.Softmax2d(), torch.nn.Softmax2d(), [x], torch)
    compare(nn.Softmax2d(), torch.nn.Softmax2d(), [x[0]], torch)
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D"):
        nn.Softmax2d()(fg.randn(3, 4))
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is size 3"):
        F.glu(fg.randn(2, 3), 1)
    with pytest.raises(RuntimeError, match="lambda must be in range"):
        F.softshrink(fg.randn(3), -1.0)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(fg.randn(3), 2.0, 1.0)
    with pytest.raises(RuntimeError):
        F.gelu(fg.randn(3), approximate="bogus")


def test_gumbel_softmax():
    fg.manual_seed(0)
    logits = fg.tensor(randn(6, 5), requires_grad=True)
    y = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(np_(y.sum(-1)), 1, rtol=1e-5)
    h = F.gumbel_softmax(logits, hard=True)
    assert set(np.unique(np_(h))) <= {0.0, 1.0} and np.all(np_(h).sum(-1) == 1)
    (h * fg.tensor(randn(6, 5, seed=3))).sum().backward()
    assert logits.grad is not None and float(logits.grad.abs().sum()) > 0


# --- normalisation --------------------------------------------------------------------------------
@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (4, 3)), ("BatchNorm1d", (4, 3, 5)),
                                       ("BatchNorm2d", (4, 3, 5, 2)), ("BatchNorm3d", (2, 3, 2, 3, 2))])
@pytest.mark.parametrize("kw", [dict(), dict(affine=False), dict(momentum=None), dict(track_running_stats=False)])
def test_batchnorm_nd(cls, shape, kw):
    t = getattr(torch.nn, cls)(3, **kw)
    f = twin(t, getattr(nn, cls)(3, **kw))
    assert repr(f) == repr(t)
    x = randn(*shape) * 2 + 1
    for _ in range(2):
        check_module(t, f, [x], torch)


def test_batchnorm_errors():
    with pytest.raises(ValueError, match=r"expected 5D input \(got 3D input\)"):
        nn.BatchNorm3d(4)(fg.randn(2, 4, 5))
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(4)(fg.randn(2, 4, 5, 3))
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        nn.BatchNorm1d(4)(fg.randn(2, 3, 5))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        nn.BatchNorm1d(3)(fg.randn(1, 3))


@pytest.mark.parametrize("groups,shape", [(1, (2, 6, 5)), (3, (2, 6, 4, 3)), (6, (3, 6, 5)), (2, (2, 6, 2, 2, 2))])
@pytest.mark.parametrize("affine", [True, False])
def test_groupnorm(groups, shape, affine):
    t = torch.nn.GroupNorm(groups, 6, affine=affine)
    if affine:
        with torch.no_grad():
            t.weight.copy_(torch.tensor(randn(6, seed=5)))
            t.bias.copy_(torch.tensor(randn(6, seed=6)))
    f = twin(t, nn.GroupNorm(groups, 6, affine=affine))
    assert repr(f) == repr(t)
    check_module(t, f, [randn(*shape) * 3 + 2], torch)
    compare(lambda x: F.group_norm(x, groups), lambda x: TF.group_norm(x, groups), [randn(*shape, dtype=np.float64)],
            torch, dtype=np.float64)
    with pytest.raises(ValueError, match=r"num_channels \(6\) must be divisible by num_groups \(4\)"):
        nn.GroupNorm(4, 6)
    with pytest.raises(RuntimeError, match="Expected number of channels in input to be divisible by num_groups"):
        F.group_norm(fg.randn(2, 6, 4), 4)


@pytest.mark.parametrize("cls,shape", [("InstanceNorm1d", (3, 4, 6)), ("InstanceNorm1d", (4, 6)),
                                       ("InstanceNorm2d", (4, 3, 5)), ("InstanceNorm3d", (2, 4, 2, 3, 2))])
@pytest.mark.parametrize("kw", [dict(), dict(affine=True), dict(affine=True, track_running_stats=True, momentum=0.3)])
def test_instancenorm(cls, shape, kw):
    t = getattr(torch.nn, cls)(4, **kw)
    if kw.get("affine"):
        with torch.no_grad():
            t.weight.copy_(torch.tensor(randn(4, seed=5)))
            t.bias.copy_(torch.tensor(randn(4, seed=6)))
    f = twin(t, getattr(nn, cls)(4, **kw))
    assert repr(f) == repr(t)
    x = randn(*shape) * 2 + 0.5
    for _ in range(2):
        check_module(t, f, [x], torch)


def test_instancenorm_errors_and_functional():
    x = randn(2, 3, 5)
    rm, rv = randn(3, seed=2), np.abs(randn(3, seed=3)) + 0.5
    trm, trv, frm, frv = torch.tensor(rm), torch.tensor(rv), fg.tensor(rm), fg.tensor(rv)
    compare(lambda a: F.instance_norm(a, frm, frv, momentum=0.2), lambda a: TF.instance_norm(a, trm, trv, momentum=0.2),
            [x], torch)
    close(frm, trm)
    close(frv, trv)
    compare(lambda a: F.instance_norm(a, frm, frv, use_input_stats=False),
            lambda a: TF.instance_norm(a, trm, trv, use_input_stats=False), [x], torch)
    with pytest.raises(ValueError, match="Expected more than 1 spatial element when training"):
        F.instance_norm(fg.randn(2, 3))
    with pytest.raises(ValueError, match=r"expected input's size at dim=1 to match num_features \(4\), but got: 3"):
        nn.InstanceNorm1d(4, affine=True)(fg.randn(2, 3, 5))
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm1d(4)(fg.randn(2, 3, 5))
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.InstanceNorm2d(4)(fg.randn(4, 5))


@pytest.mark.parametrize("shape,ns", [((3, 4), 4), ((2, 3, 4), (3, 4)), ((5, 6), [6])])
@pytest.mark.parametrize("eps", [None, 1e-3])
def test_rmsnorm(shape, ns, eps):
    t, f = torch.nn.RMSNorm(ns, eps=eps), nn.RMSNorm(ns, eps=eps)
    assert repr(f) == repr(t)
    with torch.no_grad():
        t.weight.copy_(torch.tensor(randn(*t.weight.shape, seed=7)))
    check_module(t, twin(t, f), [randn(*shape) * 0.1], torch)
    compare(lambda a: F.rms_norm(a, ns), lambda a: TF.rms_norm(a, (ns,) if isinstance(ns, int) else tuple(ns)), [randn(*shape, dtype=np.float64)], torch,
            dtype=np.float64)
    with pytest.raises(RuntimeError, match="Given normalized_shape"):
        F.rms_norm(fg.randn(3, 4), (3,))


@pytest.mark.parametrize("size", [1, 2, 3, 5])
@pytest.mark.parametrize("shape", [(2, 6, 4), (2, 5, 3, 3), (1, 4, 2, 2, 3)])
def test_local_response_norm(size, shape):
    t = torch.nn.LocalResponseNorm(size, alpha=0.3, beta=0.6, k=1.5)
    f = nn.LocalResponseNorm(size, alpha=0.3, beta=0.6, k=1.5)
    assert repr(f) == repr(t)
    compare(f, t, [randn(*shape) * 2], torch)
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality"):
        F.local_response_norm(fg.randn(2, 6), 2)


def test_normalize_cosine_pairwise_pdist():
    x1, x2 = randn(4, 5), randn(4, 5, seed=2)
    for p, dim in ((2.0, 1), (1.0, 0), (3.0, -1)):
        compare(lambda a: F.normalize(a, p, dim), lambda a: TF.normalize(a, p, dim), [x1], torch)
    tiny = np.zeros((2, 3), np.float32)
    tiny[1] = [1e-14, 0, 0]
    compare(lambda a: F.normalize(a), lambda a: TF.normalize(a), [tiny], torch, grad_inputs=())
    for dim in (0, 1, -1):
        compare(lambda a, b: F.cosine_similarity(a, b, dim), lambda a, b: TF.cosine_similarity(a, b, dim),
                [x1, x2], torch, grad_inputs=(0, 1))
    compare(F.cosine_similarity, TF.cosine_similarity, [randn(3, 1, 4), randn(1, 2, 4, seed=4)], torch,
            grad_inputs=(0, 1))
    small = np.array([[1e-9, 0.0], [3.0, 4.0]], np.float32)
    compare(F.cosine_similarity, TF.cosine_similarity, [small, np.array([[1.0, 0.0], [1e-9, 0.0]], np.float32)],
            torch, grad_inputs=())
    for p in (2.0, 1.0, 3.0):
        compare(lambda a, b: F.pairwise_distance(a, b, p), lambda a, b: TF.pairwise_distance(a, b, p), [x1, x2],
                torch, grad_inputs=(0, 1))
        compare(lambda a: F.pdist(a, p), lambda a: TF.pdist(a, p), [x1], torch)
    compare(lambda a, b: F.pairwise_distance(a, b, keepdim=True), lambda a, b: TF.pairwise_distance(a, b, keepdim=True),
            [x1[0], x2[0]], torch, grad_inputs=(0, 1))
    compare(nn.CosineSimilarity(), torch.nn.CosineSimilarity(), [x1, x2], torch, grad_inputs=(0, 1)) \
        if hasattr(nn, "CosineSimilarity") else None


def test_buffer_and_sync_batchnorm():
    for L in (fg, torch):
        class M(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = L.nn.Buffer(L.ones(2))
                self.b = L.nn.Buffer(L.zeros(1), persistent=False)
        m = M()
        assert list(m.state_dict()) == ["a"] and [n for n, _ in m.named_buffers()] == ["a", "b"]
        assert not m.a.requires_grad and isinstance(m.a, L.nn.Buffer)
    x = r(4, 3, 5).astype(np.float32)
    outs = {}
    for L in (fg, torch):
        net = L.nn.Sequential(L.nn.Conv1d(3, 3, 1), L.nn.BatchNorm1d(3))
        with L.no_grad():
            net[0].weight.copy_(L.ones(3, 3, 1))
            net[0].bias.zero_()
        sync = L.nn.SyncBatchNorm.convert_sync_batchnorm(net)
        assert type(sync[1]).__name__ == "SyncBatchNorm" and sync[1].weight is net[1].weight
        y = sync(L.tensor(x))
        outs[L] = (y.detach().numpy(), sync[1].running_mean.numpy())
    for a, b in zip(outs[fg], outs[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_batch_norm_training_is_one_node_whose_statistics_update_the_running_ones_as_torch():
    """F.batch_norm in training: one NativeBatchNormBackward0 node whose batch mean and variance (outputs of the
    node, as torch's native_batch_norm's) update the running statistics; values, running statistics, gradients
    and second gradients as torch's."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    xs, gs = rng.standard_normal((2, 6, 4, 3, 5)).astype(np.float32)
    ws, bs, rm = rng.standard_normal((3, 4)).astype(np.float32)
    rv = rng.random(4).astype(np.float32) + 0.5
    out = []
    for t in (fg, torch):
        x, w, b = (t.tensor(a, requires_grad=True) for a in (xs, ws, bs))
        rmt, rvt = t.tensor(rm), t.tensor(rv)
        y = t.nn.functional.batch_norm(x, rmt, rvt, w, b, training=True, momentum=0.3)
        gx, gw = t.autograd.grad(y, (x, w), t.tensor(gs), create_graph=True)
        ggx, = t.autograd.grad((gx * gx).sum() + gw.sum(), x)
        out.append([y.grad_fn.name()] + [a.detach().numpy() for a in (y, rmt, rvt, gx, gw, ggx)])
    assert out[0][0] == out[1][0] == "NativeBatchNormBackward0"
    for a, b in zip(out[0][1:], out[1][1:]):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)


# --- dropout --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,fname,shape,chan", [("Dropout", "dropout", (200, 60), None),
                                                   ("Dropout1d", "dropout1d", (40, 30, 7), 2),
                                                   ("Dropout1d", "dropout1d", (300, 7), 1),
                                                   ("Dropout2d", "dropout2d", (40, 30, 3, 2), 2),
                                                   ("Dropout3d", "dropout3d", (30, 40, 2, 2, 2), 2),
                                                   ("Dropout3d", "dropout3d", (300, 2, 2, 2), 1)])
@pytest.mark.parametrize("inplace", [False, True])
def test_dropout_variants(name, fname, shape, chan, inplace):
    p = 0.3
    f = getattr(nn, name)(p, inplace)
    assert repr(f) == repr(getattr(torch.nn, name)(p, inplace))
    fg.manual_seed(0)
    x = fg.tensor(np.abs(randn(*shape)) + 0.5, requires_grad=True)
    inp = x * 1.0
    y = f(inp)
    if inplace:
        assert y is inp
    v = np_(y)
    kept = v != 0
    np.testing.assert_allclose(v[kept], np_(inp.detach() if not inplace else x.detach())[kept] / (1 - p), rtol=1e-5)
    assert abs((~kept).mean() - p) < 0.05
    if chan is not None:  # whole channels are dropped together
        per_chan = kept.reshape(shape[:chan] + (-1,))
        assert np.all(per_chan.all(-1) | ~per_chan.any(-1))
    y.sum().backward()
    np.testing.assert_allclose(np_(x.grad), kept / (1 - p), rtol=1e-5)
    f.eval()
    z = fg.tensor(randn(*shape))
    tz = torch.tensor(np_(z))
    t = getattr(torch.nn, name)(p, inplace).eval()
    assert (f(z) is z) == (t(tz) is tz)  # unbatched inputs go through unsqueeze/squeeze, as in torch
    close(f(z), tz)


def test_dropout_errors_and_warnings():
    for fn in (F.dropout, F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout, F.feature_alpha_dropout):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
            fn(fg.randn(2, 3, 4), 1.5, True)
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
        F.dropout1d(fg.randn(2, 3, 4, 5))
    with pytest.warns(UserWarning, match="dropout2d: Received a 3D input"):
        F.dropout2d(fg.randn(2, 3, 4))
    with pytest.warns(UserWarning, match="dropout3d: Received a 3-D input"):
        F.dropout3d(fg.randn(2, 3, 4))
    x = fg.randn(3, 4)
    assert F.dropout(x, 1.0).abs().sum().item() == 0


@pytest.mark.parametrize("cls,fname,shape", [("AlphaDropout", "alpha_dropout", (400, 250)),
                                             ("FeatureAlphaDropout", "feature_alpha_dropout", (400, 250, 2))])
def test_alpha_dropout_keeps_selu_statistics(cls, fname, shape):
    p = 0.2
    f = getattr(nn, cls)(p)
    assert repr(f) == repr(getattr(torch.nn, cls)(p))
    fg.manual_seed(1)
    x = fg.tensor(randn(*shape), requires_grad=True)
    y = f(x)
    v = np_(y)
    assert abs(v.mean()) < 0.02 and abs(v.std() - 1) < 0.02  # mean 0 / variance 1 preserved, as torch promises
    a = ((1 - p) * (1 + p * 1.7580993408473766 ** 2)) ** -0.5
    dropped_value = a * -1.7580993408473766 * (1 - p)  # where the dropped units land
    dropped = np.isclose(v, dropped_value, atol=1e-6)
    assert abs(dropped.mean() - p) < 0.02
    np.testing.assert_allclose(v[~dropped], a * np_(x)[~dropped] - a * -1.7580993408473766 * p, rtol=1e-4,
                               atol=1e-5)
    y.sum().backward()
    # a kept unit may land within 1e-6 of the dropped value by chance: its gradient cannot be told by value
    clear = ~(dropped & np.isclose(a * np_(x) - a * -1.7580993408473766 * p, dropped_value, atol=1e-6))
    np.testing.assert_allclose(np_(x.grad)[clear], np.where(dropped, 0, a)[clear], rtol=1e-5)
    f.eval()
    assert f(x) is x
    assert getattr(F, fname)(x, p) is x  # training defaults to False in the functional form


# --- embeddings -----------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [dict(), dict(padding_idx=1), dict(scale_grad_by_freq=True),
                                dict(max_norm=1.0), dict(max_norm=0.8, norm_type=1.0, padding_idx=-2),
                                dict(scale_grad_by_freq=True, padding_idx=0)])
def test_embedding_options(kw):
    t = torch.nn.Embedding(8, 4, **kw)
    f = twin(t, nn.Embedding(8, 4, **kw))
    assert repr(f) == repr(t)
    idx = np.array([[0, 2, 6, 2], [2, 1, 1, 2]])
    for _ in range(2):  # the second pass sees the rows renormalised in place by the first
        check_module(t, f, [idx], torch, grad_inputs=(), modes=("train",))
        close(f.weight, t.weight)


def test_embedding_from_pretrained_and_errors():
    w = randn(5, 3)
    t = torch.nn.Embedding.from_pretrained(torch.tensor(w))
    f = nn.Embedding.from_pretrained(fg.tensor(w))
    assert not f.weight.requires_grad and repr(f) == repr(t)
    idx = np.array([4, 0, 3])
    close(f(fg.tensor(idx)), t(torch.tensor(idx)))
    t = torch.nn.Embedding.from_pretrained(torch.tensor(w), freeze=False, padding_idx=2)
    f = nn.Embedding.from_pretrained(fg.tensor(w), freeze=False, padding_idx=2)
    check_module(t, f, [np.array([2, 0, 2, 4])], torch, grad_inputs=(), modes=("train",))
    with pytest.raises(AssertionError):
        nn.Embedding.from_pretrained(fg.randn(3))
    with pytest.raises(AssertionError):
        nn.Embedding(5, 3, padding_idx=7)
    with pytest.raises(NotImplementedError, match="sparse"):
        nn.Embedding(5, 3, sparse=True)(fg.tensor([1]))
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices'"):
        F.embedding(fg.randn(3), fg.randn(5, 3))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("kw", [dict(), dict(padding_idx=2), dict(include_last_offset=True),
                                dict(max_norm=1.2), dict(scale_grad_by_freq=True)])
def test_embedding_bag(mode, kw):
    if mode == "max" and kw.get("scale_grad_by_freq"):
        with pytest.raises(ValueError, match="max mode does not support scaling"):
            nn.EmbeddingBag(10, 3, mode=mode, **kw)(fg.tensor([[1, 2]]))
        return
    t = torch.nn.EmbeddingBag(10, 3, mode=mode, **kw)
    f = twin(t, nn.EmbeddingBag(10, 3, mode=mode, **kw))
    assert repr(f) == repr(t)
    inp = np.array([1, 2, 4, 5, 4, 3, 2, 9, 2, 2])
    offs = np.array([0, 3, 3, 7, 9]) if not kw.get("include_last_offset") else np.array([0, 3, 3, 7, 10])
    if kw.get("scale_grad_by_freq"):
        # torch's CPU kernel divides by the wrong rows' counts here; the reference is the documented meaning:
        # the embedding lookup with scale_grad_by_freq, then the per-bag reduction
        w = randn(10, 3)
        bag = np.repeat(np.arange(len(offs)), np.diff(np.append(offs, len(inp))))
        tw, fw = torch.tensor(w, requires_grad=True), fg.tensor(w, requires_grad=True)
        e = TF.embedding(torch.tensor(inp), tw, scale_grad_by_freq=True)
        ref = torch.zeros(len(offs), 3).index_add(0, torch.tensor(bag), e)
        if mode == "mean":
            ref = ref / torch.tensor(np.maximum(np.bincount(bag, minlength=len(offs)), 1)[:, None], dtype=torch.float32)
        out = F.embedding_bag(fg.tensor(inp), fw, fg.tensor(offs), mode=mode, scale_grad_by_freq=True)
        close(out, ref)
        ct = randn(len(offs), 3, seed=9)
        (ref * torch.tensor(ct)).sum().backward()
        (out * fg.tensor(ct)).sum().backward()
        close(fw.grad, tw.grad)
        return
    check_module(t, f, [inp, offs], torch, grad_inputs=(), modes=("train",))
    check_module(t, f, [np.array([[1, 2, 4], [2, 2, 2], [5, 9, 9]])], torch, grad_inputs=(), modes=("train",))
    close(f.weight, t.weight)


def test_embedding_bag_per_sample_weights_and_errors():
    w = randn(10, 3)
    inp, offs, psw = np.array([1, 2, 4, 5, 4, 3]), np.array([0, 2, 2]), randn(6, seed=3)
    compare(lambda a, b: F.embedding_bag(fg.tensor(inp), a, fg.tensor(offs), mode="sum", per_sample_weights=b),
            lambda a, b: TF.embedding_bag(torch.tensor(inp), a, torch.tensor(offs), mode="sum", per_sample_weights=b),
            [w, psw], torch, grad_inputs=(0, 1))
    f = nn.EmbeddingBag.from_pretrained(fg.tensor(w), mode="sum")
    t = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(w), mode="sum")
    assert not f.weight.requires_grad and repr(f) == repr(t)
    close(f(fg.tensor(inp), fg.tensor(offs)), t(torch.tensor(inp), torch.tensor(offs)))
    W = fg.tensor(w)
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for mode='sum'"):
        F.embedding_bag(fg.tensor(inp), W, fg.tensor(offs), per_sample_weights=fg.tensor(psw))
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(fg.tensor([[1, 2]]), W, fg.tensor([0, 1]))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(fg.tensor([1, 2]), W)
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(fg.tensor([1, 2]), W, fg.tensor([0]), mode="foo")
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(fg.tensor([1, 2]), W, fg.tensor([1]))


@given(st.integers(1, 5), st.integers(0, 4), st.integers(1, 4), st.sampled_from(["sum", "mean", "max"]))
def test_embedding_bag_random_bags(nbags, maxlen, dim, mode):
    rng = np.random.default_rng(nbags * 100 + maxlen * 10 + dim)
    lengths = rng.integers(0, maxlen + 1, size=nbags)
    inp = rng.integers(0, 6, size=int(lengths.sum()))
    offs = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    w = rng.standard_normal((6, dim)).astype(np.float32)
    compare(lambda a: F.embedding_bag(fg.tensor(inp), a, fg.tensor(offs), mode=mode),
            lambda a: TF.embedding_bag(torch.tensor(inp), a, torch.tensor(offs), mode=mode), [w], torch)


def test_one_hot_checks():
    idx = np.array([[0, 3], [2, 1]])
    np.testing.assert_array_equal(np_(F.one_hot(fg.tensor(idx), 5)), np_(TF.one_hot(torch.tensor(idx), 5)))
    with pytest.raises(RuntimeError, match="Class values must be non-negative."):
        F.one_hot(fg.tensor([-1, 2]))
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        F.one_hot(fg.tensor([1, 2]), 2)
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor"):
        F.one_hot(fg.tensor([1.0]))


# --- linear, bilinear, unflatten ------------------------------------------------------------------
@pytest.mark.parametrize("bias", [True, False])
def test_bilinear(bias):
    t = torch.nn.Bilinear(3, 4, 5, bias=bias)
    f = twin(t, nn.Bilinear(3, 4, 5, bias=bias))
    assert repr(f) == repr(t)
    check_module(t, f, [randn(6, 3), randn(6, 4, seed=2)], torch, grad_inputs=(0, 1))
    check_module(t, f, [randn(2, 6, 3), randn(2, 6, 4, seed=2)], torch, grad_inputs=(0, 1))
    with pytest.raises(RuntimeError, match="bilinear\\(\\): input batch dimensions do not match at dim 0: got 4 and 3"):
        F.bilinear(fg.randn(4, 2), fg.randn(3, 3), fg.randn(5, 2, 3))
    with pytest.raises(RuntimeError, match="input2 size does not match weight size: got 3 but expected 4"):
        F.bilinear(fg.randn(4, 2), fg.randn(4, 3), fg.randn(5, 2, 4))


def test_linear_checks_and_identity():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(4x5 and 3x2\)"):
        F.linear(fg.randn(4, 5), fg.randn(2, 3))
    compare(lambda a, w, b: F.linear(a, w, b), TF.linear, [randn(5), randn(3, 5, seed=2), randn(3, seed=3)], torch,
            grad_inputs=(0, 1, 2))
    i = nn.Identity(3, foo=4)
    x = fg.randn(2)
    assert i(x) is x and repr(i) == repr(torch.nn.Identity(3, foo=4))


@pytest.mark.parametrize("which", ["input", "weight", "bias"])
def test_linear_rejects_a_non_tensor_as_torch(which):
    for lib in (torch, fg):
        args = {"input": lib.ones(1), "weight": lib.ones(2, 1), "bias": lib.ones(2)}
        args[which] = [1.0]
        pos = {"input": 1, "weight": 2, "bias": 3}[which]
        with pytest.raises(TypeError, match=rf"linear\(\): argument '{which}' \(position {pos}\) must be Tensor, not list"):
            lib.nn.functional.linear(*args.values())


@pytest.mark.parametrize("shape", [(5,), (4, 5), (2, 3, 5)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linear_eager_card_matches_torch_and_the_traced_binds(shape, dtype):
    """Eager F.linear with a bias binds the linear card (one AddmmBackward0 node, as torch's for 2-d input); its
    values and gradients (first and second order) are torch's; under funcgrad.func.grad (dot_general and an
    add traced) the gradient is c W; under no_grad the card's impl gives the recorded values."""
    fx, fw, fb = (fg.tensor(randn(*s, seed=k), dtype=getattr(fg, dtype), requires_grad=True)
                  for k, s in ((1, shape), (2, (3, 5)), (3, (3,))))
    tx, tw, tb = (torch.tensor(t.detach().numpy(), requires_grad=True) for t in (fx, fw, fb))
    fy, ty = F.linear(fx, fw, fb), TF.linear(tx, tw, tb)
    assert type(fy.grad_fn).__name__ == "AddmmBackward0"
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(fy.detach().numpy(), ty.detach().numpy(), rtol=tol, atol=tol)
    fgs = fg.autograd.grad((fy.sin() ** 2).sum(), (fx, fw, fb), create_graph=True)
    tgs = torch.autograd.grad((ty.sin() ** 2).sum(), (tx, tw, tb), create_graph=True)
    for a, b in zip(fgs, tgs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)
    f2 = fg.autograd.grad(sum(g.sum() for g in fgs), (fx, fw))
    t2 = torch.autograd.grad(sum(g.sum() for g in tgs), (tx, tw))
    for a, b in zip(f2, t2):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tol * 10, atol=tol * 10)
    c = randn(*(shape[:-1] + (3,)), seed=4).astype(dtype)
    traced = fg.func.grad(lambda x: (F.linear(x, fw.detach(), fb.detach()) * fg.tensor(c)).sum())(fx.detach())
    np.testing.assert_allclose(traced.numpy(), c @ fw.detach().numpy(), rtol=tol, atol=tol)
    with fg.no_grad():
        np.testing.assert_array_equal(F.linear(fx, fw, fb).numpy(), fy.detach().numpy())


def test_unflatten():
    for dim, size in ((1, (2, 3)), (-1, (3, -1)), (0, [2, 1])):
        t, f = torch.nn.Unflatten(dim, size), nn.Unflatten(dim, size)
        assert repr(f) == repr(t)
        x = randn(2, 6) if dim != -1 else randn(4, 6)
        compare(f, t, [x], torch)
    with pytest.raises(TypeError, match="unflattened_size must be tuple of ints, but found element of type float at pos 1"):
        nn.Unflatten(1, (2, 3.0))
    with pytest.raises(RuntimeError, match="don't multiply up to the size of dim 1"):
        nn.Unflatten(1, (2, 3))(fg.randn(2, 5))


# --- lazy modules, AdaptiveLogSoftmaxWithLoss -----------------------------------------------------

@pytest.mark.parametrize("make,shape", [
    (lambda L: L.nn.LazyLinear(4), (3, 5)), (lambda L: L.nn.LazyConv2d(4, 3, padding=1), (2, 3, 5, 5)),
    (lambda L: L.nn.LazyConv1d(2, 2, stride=2), (2, 3, 8)), (lambda L: L.nn.LazyConvTranspose2d(2, 3), (1, 3, 4, 4)),
    (lambda L: L.nn.LazyBatchNorm2d(), (4, 3, 2, 2)), (lambda L: L.nn.LazyInstanceNorm1d(affine=True, track_running_stats=True), (2, 3, 6))])
def test_lazy_modules(make, shape):
    x = r(*shape).astype(np.float32)
    mods = {L: make(L) for L in (fg, torch)}
    opt = fg.optim.SGD(mods[fg].parameters(), lr=0.1)  # built before the parameters are materialised
    assert mods[fg].has_uninitialized_params()
    outs = {L: m(L.tensor(x)) for L, m in mods.items()}
    assert type(mods[fg]).__name__ == type(mods[torch]).__name__
    assert sorted(mods[fg].state_dict()) == sorted(mods[torch].state_dict())
    for (k, a), (_, b) in zip(sorted(mods[fg].state_dict().items()), sorted(mods[torch].state_dict().items())):
        assert tuple(a.shape) == tuple(b.shape), k
    with fg.no_grad():  # same weights -> same outputs
        for k, p in mods[fg].named_parameters():
            p.copy_(fg.tensor(dict(mods[torch].named_parameters())[k].detach().numpy()))
    np.testing.assert_allclose(mods[fg](fg.tensor(x)).detach().numpy(),
                               mods[torch](torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)
    before = [p.detach().clone() for p in opt.param_groups[0]["params"]]
    mods[fg](fg.tensor(x)).square().sum().backward()
    opt.step()
    assert any(not np.allclose(a.numpy(), p.detach().numpy()) for a, p in zip(before, opt.param_groups[0]["params"]))
    assert tuple(outs[fg].shape) == tuple(outs[torch].shape)


def test_adaptive_log_softmax_matches_torch():
    x = r(6, 8).astype(np.float32)
    y = np.array([0, 3, 5, 9, 14, 2])
    res = {}
    for L in (fg, torch):
        L.manual_seed(0)
        m = L.nn.AdaptiveLogSoftmaxWithLoss(8, 15, [4, 10], div_value=2.0, head_bias=True)
        res[L] = m
    with fg.no_grad():
        for (k, p), (_, q) in zip(res[fg].named_parameters(), res[torch].named_parameters()):
            assert tuple(p.shape) == tuple(q.shape), k
            p.copy_(fg.tensor(q.detach().numpy()))
    outs = {}
    for L, m in res.items():
        xt = L.tensor(x, requires_grad=True)
        o = m(xt, L.tensor(y))
        o.loss.backward()
        outs[L] = (o.output.detach().numpy(), o.loss.item(), xt.grad.numpy(), m.log_prob(L.tensor(x)).detach().numpy(),
                   m.predict(L.tensor(x)).numpy(), m(L.tensor(x[0]), L.tensor(y[0])).output.detach().numpy())
    for a, b in zip(outs[fg], outs[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError):
        res[fg](fg.tensor(x), fg.tensor(y + 15))
    with pytest.raises(ValueError):
        fg.nn.AdaptiveLogSoftmaxWithLoss(8, 15, [10, 4])
