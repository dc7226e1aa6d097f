"""nn.functional additions (affine_grid, grid_sample, ctc_loss, lp_pool, 3-d adaptive pooling and unpooling,
channel_shuffle) and their modules, against real PyTorch: values, gradients, warnings and errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")
from torch_check import check, pos, r  # noqa: E402

RNG = np.random.default_rng(2)


@pytest.mark.parametrize("align", [True, False])
def test_affine_grid(align):
    check(lambda L, th: L.nn.functional.affine_grid(th, (2, 3, 4, 5), align_corners=align), r(2, 2, 3))
    check(lambda L, th: L.nn.functional.affine_grid(th, (1, 1, 3, 4, 2), align_corners=align), r(1, 3, 4))
    check(lambda L, th: L.nn.functional.affine_grid(th, (2, 3, 1, 5), align_corners=align), r(2, 2, 3))
    with pytest.raises(ValueError):
        fg.nn.functional.affine_grid(fg.ones(2, 3, 3), (2, 3, 4, 5), align_corners=False)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fg.nn.functional.affine_grid(fg.ones(1, 2, 3), (1, 1, 2, 2))
    assert any("align_corners" in str(x.message) for x in w)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [True, False])
def test_grid_sample_2d(mode, padding, align):
    x = r(2, 3, 5, 6)
    grid = RNG.uniform(-1.4, 1.4, (2, 4, 7, 2))
    check(lambda L, a, g: L.nn.functional.grid_sample(a, g, mode=mode, padding_mode=padding, align_corners=align),
          x, grid, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_grid_sample_3d(padding):
    x = r(1, 2, 3, 4, 5)
    grid = RNG.uniform(-1.2, 1.2, (1, 2, 3, 4, 3))
    check(lambda L, a, g: L.nn.functional.grid_sample(a, g, padding_mode=padding, align_corners=False), x, grid,
          rtol=1e-7, atol=1e-9)


def test_grid_sample_errors():
    F = fg.nn.functional
    with pytest.raises(ValueError, match="mode"):
        F.grid_sample(fg.ones(1, 1, 2, 2), fg.zeros(1, 1, 1, 2), mode="cubic", align_corners=False)
    with pytest.raises(ValueError, match="padding_mode"):
        F.grid_sample(fg.ones(1, 1, 2, 2), fg.zeros(1, 1, 1, 2), padding_mode="wrap", align_corners=False)
    with pytest.raises(RuntimeError):
        F.grid_sample(fg.ones(1, 1, 2, 2), fg.zeros(1, 1, 1, 3), align_corners=False)
    with pytest.raises(RuntimeError):
        torch.nn.functional.grid_sample(torch.ones(1, 1, 2, 2), torch.zeros(1, 1, 1, 3), align_corners=False)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_loss(reduction):
    # (through log_softmax: torch's gradient with respect to log_probs themselves assumes they are normalised)
    T, N, C = 8, 3, 5
    lp = r(T, N, C)
    targets = np.array([[1, 2, 2, 0], [3, 1, 4, 4], [2, 0, 0, 0]])
    tl = [3, 4, 1]
    il = [8, 7, 5]
    check(lambda L, x, t: L.nn.functional.ctc_loss(x.log_softmax(2), t, il, tl, reduction=reduction), lp, targets,
          rtol=1e-8, atol=1e-10)
    flat = np.array([1, 2, 2, 3, 1, 4, 4, 2])
    check(lambda L, x, t: L.nn.functional.ctc_loss(x.log_softmax(2), t, L.tensor(il), L.tensor(tl), reduction=reduction), lp, flat,
          rtol=1e-8, atol=1e-10)
    check(lambda L, x, t: L.nn.CTCLoss(blank=0, reduction=reduction)(x.log_softmax(2), t, il, tl), lp, targets,
          rtol=1e-8, atol=1e-10)


def test_ctc_loss_impossible_and_blank():
    T, C = 3, 4
    lp = r(T, 1, C)
    tg = np.array([[1, 1, 1]])  # needs 5 frames: impossible in 3
    check(lambda L, x, t: L.nn.functional.ctc_loss(x.log_softmax(2), t, [3], [3], reduction="none"), lp, tg, grad=False)
    check(lambda L, x, t: L.nn.functional.ctc_loss(x.log_softmax(2), t, [3], [3], reduction="sum", zero_infinity=True), lp, tg)
    check(lambda L, x, t: L.nn.functional.ctc_loss(x.log_softmax(2), t, [3], [2], blank=3, reduction="sum"), lp, np.array([[1, 2]]))
    check(lambda L, x, t: L.ctc_loss(x.log_softmax(2), t, [3], [2]), lp, np.array([[1, 2]]))


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_lp_pool(p):
    x = pos(2, 3, 8, 7, 6)
    check(lambda L, a: L.nn.functional.lp_pool1d(a[0, :, 0, 0], p, 3), x)
    check(lambda L, a: (L.nn.functional.lp_pool2d(a[0], p, 2), L.nn.functional.lp_pool2d(a[0], p, (3, 2), 2,
                                                                                           ceil_mode=True)), x)
    check(lambda L, a: L.nn.functional.lp_pool3d(a, p, 2, 2), x)
    check(lambda L, a: (L.nn.LPPool2d(p, 2)(a[0]), L.nn.LPPool1d(p, 2)(a[0, :, 0, 0])), x)


def test_pool3d_and_shuffle():
    x = r(2, 3, 6, 5, 7)
    check(lambda L, a: (L.nn.functional.adaptive_avg_pool3d(a, (2, 3, 4)), L.nn.AdaptiveAvgPool3d((3, None, 2))(a)),
          x)
    check(lambda L, a: (L.nn.functional.adaptive_max_pool3d(a, 2, return_indices=True),
                        L.nn.AdaptiveMaxPool3d((1, 2, 3))(a)), x)
    check(lambda L, a: L.nn.functional.max_pool3d_with_indices(a, 2), x)
    y = x[..., :4, :6].copy()
    check(lambda L, a: L.nn.functional.max_unpool3d(*L.nn.functional.max_pool3d(a, 2, return_indices=True), 2), y)
    check(lambda L, a: L.nn.MaxUnpool3d(2)(*L.nn.functional.max_pool3d(a, 2, return_indices=True)), y)
    check(lambda L, a: (L.nn.functional.channel_shuffle(a, 3), L.nn.ChannelShuffle(3)(a), L.channel_shuffle(a, 1)),
          r(2, 6, 3))
    with pytest.raises(RuntimeError, match="divisible"):
        fg.nn.functional.channel_shuffle(fg.ones(1, 5, 2), 2)


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


def test_dataparallel_fractional_modules_nllloss2d():
    keys = {L: list(L.nn.DataParallel(L.nn.Linear(2, 3)).state_dict()) for L in (fg, torch)}
    assert keys[fg] == keys[torch] == ["module.weight", "module.bias"]
    x, s = r(2, 3, 7, 9), np.random.default_rng(6).random((2, 3, 2))
    check(lambda L, t, u: L.nn.FractionalMaxPool2d((2, 3), output_size=(3, 4), _random_samples=u.detach())(t), x, s)
    lp = r(2, 4, 3, 3)
    y = np.random.default_rng(7).integers(0, 4, (2, 3, 3))
    check(lambda L, a, t: L.nn.NLLLoss2d()(a.log_softmax(1), t), lp, y)
    with pytest.raises(ValueError):
        fg.nn.FractionalMaxPool2d(2)


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
