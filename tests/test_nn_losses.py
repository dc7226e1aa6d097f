"""funcgrad.nn losses against torch.nn: every loss module and functional form, each reduction, weights and
options, values and gradients (inputs and targets where differentiable), legacy size_average/reduce, errors;
ctc_loss and CTCLoss."""
import warnings

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import nn
from funcgrad.nn import functional as F

torch = pytest.importorskip("torch")
from torch_check import check, r  # noqa: E402
TF = torch.nn.functional
REDUCTIONS = ["mean", "sum", "none"]

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
    if grad_inputs:
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


def _both(name, *args, **kw):
    """(torch module, funcgrad module) built from the same arguments (numpy arrays become tensors)."""
    ta = [torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    fa = [fg.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    tk = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    fk = {k: fg.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    t, f = getattr(torch.nn, name)(*ta, **tk), getattr(nn, name)(*fa, **fk)
    assert repr(f) == repr(t)
    return t, f


def _sign(shape, seed=3):
    return np.where(np.random.default_rng(seed).random(shape) > 0.5, 1.0, -1.0).astype(np.float32)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_regression_losses(reduction, dtype):
    x, y = randn(4, 5, dtype=dtype) * 2, randn(4, 5, seed=2, dtype=dtype) * 2
    for name, kw in [("MSELoss", {}), ("L1Loss", {}), ("SmoothL1Loss", {}), ("SmoothL1Loss", {"beta": 0.5}),
                     ("SmoothL1Loss", {"beta": 0.0}), ("HuberLoss", {}), ("HuberLoss", {"delta": 2.5}),
                     ("SoftMarginLoss", {})]:
        t, f = _both(name, reduction=reduction, **kw)
        tgt = y if name != "SoftMarginLoss" else _sign((4, 5)).astype(dtype)
        compare(f, t, [x, tgt], torch, grad_inputs=(0, 1) if name != "SoftMarginLoss" else (0,), dtype=dtype)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_weighted_regression_functionals(reduction):
    x, y, w = randn(3, 4), randn(3, 4, seed=2), np.abs(randn(3, 4, seed=3))
    for name in ("mse_loss", "l1_loss", "huber_loss"):
        compare(lambda a, b, c: getattr(F, name)(a, b, reduction=reduction, weight=c),
                lambda a, b, c: getattr(TF, name)(a, b, reduction=reduction, weight=c), [x, y, w], torch,
                grad_inputs=(0, 1, 2))
        with pytest.raises(ValueError, match="Weights and input must have the same size."):
            getattr(F, name)(fg.tensor(x), fg.tensor(y), weight=fg.ones(4))


def test_target_size_warning_and_broadcast():
    x, y = randn(3, 4), randn(4, seed=2)
    for name in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"):
        with pytest.warns(UserWarning, match=r"Using a target size \(torch.Size\(\[4\]\)\) that is different to the "
                                             r"input size \(torch.Size\(\[3, 4\]\)\)"):
            r = getattr(F, name)(fg.tensor(x), fg.tensor(y))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            close(r, getattr(TF, name)(torch.tensor(x), torch.tensor(y)))


@pytest.mark.parametrize("size_average,reduce", [(None, False), (False, None), (True, True), (False, True)])
def test_legacy_size_average_reduce(size_average, reduce):
    x, y = randn(3, 4), randn(3, 4, seed=2)
    with warnings.catch_warnings(record=True) as tw:
        warnings.simplefilter("always")
        t = torch.nn.MSELoss(size_average, reduce)
        tr = TF.l1_loss(torch.tensor(x), torch.tensor(y), size_average, reduce)
    with warnings.catch_warnings(record=True) as fw:
        warnings.simplefilter("always")
        f = nn.MSELoss(size_average, reduce)
        fr = F.l1_loss(fg.tensor(x), fg.tensor(y), size_average, reduce)
    assert [str(w.message) for w in fw] == [str(w.message) for w in tw]
    assert f.reduction == t.reduction
    close(fr, tr)
    close(f(fg.tensor(x), fg.tensor(y)), t(torch.tensor(x), torch.tensor(y)))
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        close(F.nll_loss(fg.tensor(x), fg.tensor([0, 1, 3]), size_average=False),
              TF.nll_loss(torch.tensor(x), torch.tensor([0, 1, 3]), reduction="sum"))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kw", [dict(), dict(weight=True), dict(ignore_index=1), dict(label_smoothing=0.2),
                                dict(weight=True, ignore_index=2, label_smoothing=0.1)])
@pytest.mark.parametrize("shape", [(5, 4), (3, 4, 2, 3), (4,)])
def test_cross_entropy_nll(reduction, kw, shape):
    x = randn(*shape)
    tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    tgt = np.asarray(np.random.default_rng(3).integers(0, 4, size=tshape))
    kw = dict(kw)
    w = randn(4, seed=5) ** 2 + 0.1 if kw.pop("weight", False) else None
    if w is not None:
        kw["weight"] = w
    t, f = _both("CrossEntropyLoss", reduction=reduction, **kw)
    compare(f, t, [x, tgt], torch, grad_inputs=(0,))
    kw.pop("label_smoothing", None)
    t, f = _both("NLLLoss", reduction=reduction, **kw)
    compare(f, t, [np_(torch.log_softmax(torch.tensor(x), -1 if len(shape) == 1 else 1)), tgt], torch)


@pytest.mark.parametrize("shape", [(5, 4), (2, 4, 3), (4,)])
@pytest.mark.parametrize("ls", [0.0, 0.3])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_probabilities(shape, ls, reduction):
    x, p = randn(*shape), np.abs(randn(*shape, seed=2))
    cdim = 0 if len(shape) == 1 else 1
    p = p / p.sum(cdim, keepdims=True)
    w = np.abs(randn(4, seed=4)) + 0.5
    t, f = _both("CrossEntropyLoss", label_smoothing=ls, reduction=reduction)
    compare(f, t, [x, p], torch, grad_inputs=(0, 1))
    t, f = _both("CrossEntropyLoss", weight=w, label_smoothing=ls, reduction=reduction)
    compare(f, t, [x, p], torch, grad_inputs=(0, 1))


def test_classification_errors():
    x = fg.randn(3, 4)
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        F.nll_loss(x, fg.tensor([0, 1, 5]))
    with pytest.raises(IndexError, match="Target -2 is out of bounds."):
        F.cross_entropy(x, fg.tensor([0, -2, 1]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)."):
        F.cross_entropy(x, fg.tensor([0, 1]))
    with pytest.raises(RuntimeError, match=r"Expected target size \[3, 5\], got \[3, 4\]"):
        F.nll_loss(fg.randn(3, 4, 5), fg.tensor(np.zeros((3, 4), np.int64)))
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected, multi-target not supported"):
        F.nll_loss(x, fg.tensor(np.zeros((3, 2), np.int64)))
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0. Got: 1.5"):
        F.cross_entropy(x, fg.tensor([0, 1, 2]), label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 4 classes"):
        F.nll_loss(x, fg.tensor([0, 1, 2]), weight=fg.ones(3))
    with pytest.raises(ValueError, match="bogus is not a valid value for reduction"):
        F.cross_entropy(x, fg.tensor([0, 1, 2]), reduction="bogus")
    # all targets ignored: 0/0 as in torch
    assert np.isnan(float(F.cross_entropy(x, fg.tensor([-100, -100, -100]))))


@pytest.mark.parametrize("si,st", [((1, 5), ()), ((3, 5), ()), ((3, 5, 4), ()), ((3, 5), (1,)),
                                   ((3, 5, 4, 2), (3, 4)), ((3, 5, 4, 2), (3, 4, 3)), ((3, 5, 4, 2, 2), (3, 4, 2))])
def test_class_target_shape_errors_as_torch(si, st):
    """torch's nll_loss_nd order: the batch sizes first (a 0-d target's is 0: the old char_rnn_generation
    tutorial's per-step nll_loss(output[1, C], target[()]) gets torch's ValueError), then nll_loss2d's checks
    for 4-D input."""
    x = np.random.default_rng(0).standard_normal(si).astype(np.float32)
    t = np.zeros(st, np.int64)
    for name in ("nll_loss", "cross_entropy"):
        with pytest.raises(Exception) as want:
            getattr(torch.nn.functional, name)(torch.from_numpy(x), torch.from_numpy(t))
        with pytest.raises(type(want.value)) as got:
            getattr(F, name)(fg.tensor(x), fg.tensor(t))
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce(reduction):
    x = randn(4, 3)
    tgt = (np.random.default_rng(3).random((4, 3)) > 0.5).astype(np.float32)
    soft = np.random.default_rng(4).random((4, 3)).astype(np.float32)
    prob = 1 / (1 + np.exp(-x))
    w, pw = np.abs(randn(3, seed=4)) + 0.1, np.abs(randn(3, seed=5)) + 0.5
    for kw in (dict(), dict(weight=w)):
        t, f = _both("BCELoss", reduction=reduction, **kw)
        compare(f, t, [prob, tgt], torch)
        compare(f, t, [prob, soft], torch, grad_inputs=(0, 1))
    for kw in (dict(), dict(weight=w), dict(pos_weight=pw), dict(weight=w, pos_weight=pw)):
        t, f = _both("BCEWithLogitsLoss", reduction=reduction, **kw)
        compare(f, t, [x * 3, soft], torch, grad_inputs=(0, 1))
    # saturated probabilities: torch clamps the logs at -100 (values) and keeps gradients finite
    edge = np.array([0.0, 1.0, 0.5, 1e-30], np.float32)
    compare(lambda a, b: F.binary_cross_entropy(a, b, reduction=reduction),
            lambda a, b: TF.binary_cross_entropy(a, b, reduction=reduction),
            [edge, np.array([1.0, 0.0, 1.0, 1.0], np.float32)], torch, grad_inputs=())


def test_bce_errors():
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(fg.tensor([1.5]), fg.tensor([1.0]))
    with pytest.raises(ValueError, match="that is different to the input size"):
        F.binary_cross_entropy(fg.tensor([0.5, 0.2]), fg.tensor([1.0]))
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(fg.tensor([0.5, 0.2]), fg.tensor([1.0]))


@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target):
    x = np_(torch.log_softmax(torch.tensor(randn(4, 5)), 1))
    p = np.abs(randn(4, 5, seed=2))
    p = p / p.sum(1, keepdims=True)
    p[0, 0] = 0.0  # 0 * log 0 = 0
    tgt = np.log(p + 1e-3).astype(np.float32) if log_target else p
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, f = _both("KLDivLoss", reduction=reduction, log_target=log_target)
        compare(f, t, [x, tgt], torch, grad_inputs=(0, 1) if log_target else (0,))
    if reduction == "mean":
        with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
            F.kl_div(fg.tensor(x), fg.tensor(tgt))
    with pytest.raises(ValueError, match="bogus is not a valid value for reduction"):
        F.kl_div(fg.tensor(x), fg.tensor(tgt), reduction="bogus")


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kw", [dict(), dict(log_input=False), dict(full=True), dict(log_input=False, full=True,
                                                                                     eps=1e-4)])
def test_poisson_nll(reduction, kw):
    x = randn(4, 5) if kw.get("log_input", True) else np.abs(randn(4, 5)) + 0.1
    tgt = np.random.default_rng(2).poisson(2.0, (4, 5)).astype(np.float32)
    t, f = _both("PoissonNLLLoss", reduction=reduction, **kw)
    compare(f, t, [x, tgt], torch, grad_inputs=(0, 1) if not kw.get("full") else (0,))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("vshape", [(4, 3), (4,), (4, 1)])
@pytest.mark.parametrize("full", [False, True])
def test_gaussian_nll(reduction, vshape, full):
    x, y = randn(4, 3), randn(4, 3, seed=2)
    var = np.abs(randn(*vshape, seed=3)) + 0.1
    var.flat[0] = 1e-8  # below eps: the value is clamped, the gradient still flows to var
    t, f = _both("GaussianNLLLoss", full=full, reduction=reduction)
    compare(f, t, [x, y, var], torch, grad_inputs=(0, 1, 2))
    compare(lambda a, b: F.gaussian_nll_loss(a, b, 0.5), lambda a, b: TF.gaussian_nll_loss(a, b, 0.5), [x, y], torch,
            grad_inputs=(0, 1))


def test_gaussian_nll_errors():
    x = fg.randn(3, 4)
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(x, x, fg.ones(2))
    with pytest.raises(ValueError, match="var has negative entry/entries"):
        F.gaussian_nll_loss(x, x, -fg.ones(3, 4))
    with pytest.raises(ValueError, match="bogus is not valid"):
        F.gaussian_nll_loss(x, x, fg.ones(3, 4), reduction="bogus")


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_embedding_and_ranking_losses(reduction):
    a, b = randn(5, 4), randn(5, 4, seed=2)
    y = _sign((5,))
    for margin in (0.0, 0.3):
        t, f = _both("CosineEmbeddingLoss", margin=margin, reduction=reduction)
        compare(f, t, [a, b, y], torch, grad_inputs=(0, 1))
        t, f = _both("MarginRankingLoss", margin=margin, reduction=reduction)
        compare(f, t, [a[:, 0], b[:, 0], y], torch, grad_inputs=(0, 1))
    compare(lambda u, v, w: F.cosine_embedding_loss(u, v, w), lambda u, v, w: TF.cosine_embedding_loss(u, v, w),
            [a[0], b[0], np.array(-1.0, np.float32)], torch, grad_inputs=(0, 1))
    for margin in (1.0, 0.5):
        t, f = _both("HingeEmbeddingLoss", margin=margin, reduction=reduction)
        compare(f, t, [a, _sign((5, 4))], torch)
    for kw in (dict(), dict(margin=2.0, p=1.0), dict(swap=True), dict(p=3.0, eps=1e-3)):
        t, f = _both("TripletMarginLoss", reduction=reduction, **kw)
        compare(f, t, [a, b, randn(5, 4, seed=4)], torch, grad_inputs=(0, 1, 2))
    for kw in (dict(), dict(distance_function="cos", swap=True, margin=0.5)):
        if kw.get("distance_function"):
            kw = dict(kw)
            tk, fk = dict(kw), dict(kw)
            tk["distance_function"] = lambda u, v: 1 - TF.cosine_similarity(u, v)
            fk["distance_function"] = lambda u, v: 1 - F.cosine_similarity(u, v)
        else:
            tk = fk = kw
        t = torch.nn.TripletMarginWithDistanceLoss(reduction=reduction, **tk)
        f = nn.TripletMarginWithDistanceLoss(reduction=reduction, **fk)
        compare(f, t, [a, b, randn(5, 4, seed=4)], torch, grad_inputs=(0, 1, 2))


def test_ranking_errors():
    with pytest.raises(RuntimeError, match="margin_ranking_loss : All input tensors should have same dimension"):
        F.margin_ranking_loss(fg.randn(3), fg.randn(3, 1), fg.randn(3))
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        F.multi_margin_loss(fg.randn(3, 4), fg.tensor([0, 1, 2]), p=3)
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(fg.randn(3, 4), fg.tensor([0, 1, 5]))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_classification_losses(reduction):
    x = randn(5, 4)
    tgt = np.array([0, 3, 1, 1, 2])
    w = np.abs(randn(4, seed=3)) + 0.2
    for kw in (dict(), dict(p=2), dict(margin=0.4, weight=w), dict(p=2, weight=w)):
        t, f = _both("MultiMarginLoss", reduction=reduction, **kw)
        compare(f, t, [x, tgt], torch)
    compare(lambda u, v: F.multi_margin_loss(u, v), TF.multi_margin_loss, [x[0], tgt[:1]], torch)
    multi = (np.random.default_rng(5).random((5, 4)) > 0.5).astype(np.float32)
    for kw in (dict(), dict(weight=w)):
        t, f = _both("MultiLabelSoftMarginLoss", reduction=reduction, **kw)
        compare(f, t, [x, multi], torch, grad_inputs=(0, 1))
    mt = np.array([[3, 0, -1, 1], [0, 1, 2, 3], [1, -1, 2, 2], [-1, 0, 0, 0], [2, 2, 0, -1]])
    t, f = _both("MultiLabelMarginLoss", reduction=reduction)
    compare(f, t, [x, mt], torch)
    compare(f, t, [x[0], mt[0]], torch)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(), (1,), (3, 4)])
@pytest.mark.parametrize("beta", [1.0, 0.3])
def test_smooth_l1_one_node(reduction, shape, beta):
    """smooth_l1_loss on two float tensors of one shape is one node (torch's SmoothL1LossBackward0) with the exact
    piecewise values (0.5 d^2 / beta inside the band, |d| - beta / 2 outside), torch's gradients, and second
    derivatives 1 / beta inside the band and 0 outside."""
    x = randn(*shape, dtype=np.float64)
    y = np.where(np.arange(x.size).reshape(shape) % 2 == 0, x + beta * 0.4, x - beta * 3.0) if shape else x - 2 * beta
    d = x - y
    per = np.where(np.abs(d) < beta, 0.5 * d * d / beta, np.abs(d) - 0.5 * beta)
    want = per.mean() if reduction == "mean" else per.sum() if reduction == "sum" else per
    fx, tx = fg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    fl = F.smooth_l1_loss(fx, fg.tensor(y), reduction=reduction, beta=beta)
    tl = TF.smooth_l1_loss(tx, torch.tensor(y), reduction=reduction, beta=beta)
    assert type(fl.grad_fn).__name__ == type(tl.grad_fn).__name__ == "SmoothL1LossBackward0"
    np.testing.assert_allclose(np_(fl), want, rtol=1e-14, atol=1e-15)
    (fg_,) = fg.autograd.grad(fl.sum(), fx, create_graph=True)
    (tg,) = torch.autograd.grad(tl.sum(), tx, create_graph=True)
    close(fg_, tg, np.float64)
    (fh,) = fg.autograd.grad(fg_.sum(), fx)
    scale = 1.0 / x.size if reduction == "mean" else 1.0
    np.testing.assert_allclose(np_(fh), np.where(np.abs(d) < beta, scale / beta, 0.0), rtol=1e-14)


@pytest.mark.parametrize("name,kw", [("smooth_l1_loss", dict(beta=1.0)), ("smooth_l1_loss", dict(beta=0.3)),
                                     ("huber_loss", dict(delta=1.0)), ("huber_loss", dict(delta=0.7)),
                                     ("huber_loss", dict(delta=2.5))])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(), (1,), (3, 4), (2, 3, 5)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_piecewise_losses_one_node_match_torch(name, kw, reduction, shape, dtype):
    """smooth_l1_loss and huber_loss of same-shaped float tensors: torch's one node (SmoothL1LossBackward0,
    HuberLossBackward0), its per-element values exactly (at d == 0 and on the band's edge too), the gradients of
    both operands with create_graph=True (requiring grad as torch's) and the second derivatives."""
    rng = np.random.default_rng(4)
    k = next(iter(kw.values()))
    x = (rng.standard_normal(shape) * 2).astype(dtype)
    y = (rng.standard_normal(shape) * 2).astype(dtype)
    if x.size > 2:
        y.flat[0], y.flat[1] = x.flat[0], x.flat[1] - k  # d == 0 and |d| == the band's edge
    fx, tx = fg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    fy, ty = fg.tensor(y, requires_grad=True), torch.tensor(y, requires_grad=True)
    fl = getattr(F, name)(fx, fy, reduction=reduction, **kw)
    tl = getattr(TF, name)(tx, ty, reduction=reduction, **kw)
    assert fl.grad_fn.name() == tl.grad_fn.name() == ("SmoothL1LossBackward0" if name == "smooth_l1_loss"
                                                      else "HuberLossBackward0")
    tol = 0 if reduction == "none" else 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(np_(fl), tl.detach().numpy(), rtol=tol)
    g = rng.standard_normal(tuple(tl.shape)).astype(dtype)
    fgr = fg.autograd.grad(fl, (fx, fy), fg.tensor(g), create_graph=True)
    tgr = torch.autograd.grad(tl, (tx, ty), torch.tensor(g), create_graph=True)
    for u, w in zip(fgr, tgr):
        np.testing.assert_allclose(np_(u), w.detach().numpy(), rtol=1e-6, atol=1e-7)
        assert u.requires_grad == w.requires_grad
    fh = fg.autograd.grad(fgr[0].sum(), (fx, fy))
    th = torch.autograd.grad(tgr[0].sum(), (tx, ty))
    for u, w in zip(fh, th):
        np.testing.assert_allclose(np_(u), w.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["mse_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(), (1,), (3, 4), (2, 3, 5)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_losses_one_node_match_torch(name, reduction, shape, dtype):
    """mse_loss, binary_cross_entropy and binary_cross_entropy_with_logits of same-shaped float tensors are
    torch's one node (MseLossBackward0 for reduction='none' too, BinaryCrossEntropyBackward0,
    BinaryCrossEntropyWithLogitsBackward0) with torch's values, gradients of input and target (requiring grad
    with create_graph=True as torch's) and second derivatives."""
    rng = np.random.default_rng(5)
    if name == "binary_cross_entropy":
        x = rng.uniform(0.02, 0.98, shape).astype(dtype)
    else:
        x = (rng.standard_normal(shape) * 2).astype(dtype)
    y = rng.uniform(0, 1, shape).astype(dtype)
    fx, tx = fg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    fy, ty = fg.tensor(y, requires_grad=True), torch.tensor(y, requires_grad=True)
    fl = getattr(F, name)(fx, fy, reduction=reduction)
    tl = getattr(TF, name)(tx, ty, reduction=reduction)
    assert fl.grad_fn.name() == tl.grad_fn.name()
    rt = 2e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(np_(fl), tl.detach().numpy(), rtol=rt)
    g = rng.standard_normal(tuple(tl.shape)).astype(dtype)
    fgr = fg.autograd.grad(fl, (fx, fy), fg.tensor(g), create_graph=True)
    tgr = torch.autograd.grad(tl, (tx, ty), torch.tensor(g), create_graph=True)
    for u, w in zip(fgr, tgr):
        np.testing.assert_allclose(np_(u), w.detach().numpy(), rtol=3 * rt, atol=1e-7)
        assert u.requires_grad == w.requires_grad
    fh = fg.autograd.grad(fgr[0].sum(), (fx, fy), allow_unused=True)
    th = torch.autograd.grad(tgr[0].sum(), (tx, ty), allow_unused=True)
    for u, w in zip(fh, th):
        if w is None:
            assert u is None or not np_(u).any()
        else:
            np.testing.assert_allclose(np_(u), w.numpy(force=True), rtol=10 * rt, atol=1e-6)


def test_bce_near_the_ends_and_out_of_range_keep_torchs_gradient_and_error():
    """Entries at or next to 0 and 1 take the general path (torch's (x - t) / max(x (1 - x), 1e-12) gradient);
    an input outside [0, 1] raises torch's error before anything is recorded."""
    x = np.array([0.0, 1e-13, 0.5, 1.0], np.float64)
    y = np.array([0.0, 1.0, 0.3, 1.0], np.float64)
    fx, tx = fg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    fl, tl = F.binary_cross_entropy(fx, fg.tensor(y)), TF.binary_cross_entropy(tx, torch.tensor(y))
    np.testing.assert_allclose(np_(fl), tl.item(), rtol=1e-12)
    fl.backward()
    tl.backward()
    np.testing.assert_allclose(np_(fx.grad), tx.grad.numpy(), rtol=1e-8)  # (the general path: -2.5e11 to 4e-9)
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(fg.tensor([0.5, 1.5], requires_grad=True), fg.tensor([0.0, 1.0]))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        TF.binary_cross_entropy(torch.tensor([0.5, 1.5], requires_grad=True), torch.tensor([0.0, 1.0]))


@pytest.mark.parametrize("fname", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("n,c", [(1, 2), (5, 3), (32, 10)])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ignored", [None, "some", "all"])
def test_nll_rows_match_torch(fname, n, c, reduction, ignored):
    """nll_loss / cross_entropy of (N, C) rows against class indices: torch's NllLossBackward0, values and
    gradients (create_graph=True, requiring grad as torch's) with some or every target ignored."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((n, c)).astype(np.float32)
    t = rng.integers(0, c, n)
    kw = {}
    if ignored == "some":
        t[0] = -100
    elif ignored == "all":
        t[:] = 1
        kw = dict(ignore_index=1)
    fx, tx = fg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    fl = getattr(F, fname)(fx, fg.tensor(t), reduction=reduction, **kw)
    tl = getattr(TF, fname)(tx, torch.tensor(t), reduction=reduction, **kw)
    assert fl.grad_fn.name() == tl.grad_fn.name() == "NllLossBackward0"
    np.testing.assert_allclose(np_(fl), tl.detach().numpy(), rtol=1e-6, atol=1e-6)
    g = rng.standard_normal(tuple(tl.shape)).astype(np.float32)
    (a,) = fg.autograd.grad(fl, fx, fg.tensor(g, requires_grad=True), create_graph=True)
    (b,) = torch.autograd.grad(tl, tx, torch.tensor(g, requires_grad=True), create_graph=True)
    np.testing.assert_allclose(np_(a), b.detach().numpy(), rtol=1e-5, atol=1e-7)
    assert a.requires_grad == b.requires_grad


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


@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("leaf", [False, True])
def test_ctc_loss_infeasible_target_gradients(zero_infinity, reduction, leaf):
    """A sample with no alignment (its target needs more frames than it has): torch's loss is inf and its
    gradient NaN at t < input_length (exp(lp) - exp(-inf + inf - lp)), 0 beyond; zero_infinity zeroes both;
    the feasible samples keep theirs. log_probs a leaf or through log_softmax."""
    lp = randn(6, 3, 5, seed=3, dtype=np.float64)
    tg = np.array([[1, 1, 1, 1], [1, 2, 0, 0], [1, 2, 1, 2]])
    il, tl = [6, 4, 3], [4, 2, 4]
    res = []
    for m in (fg, torch):
        x = m.tensor(lp, requires_grad=True)
        loss = m.nn.functional.ctc_loss(x if leaf else x.log_softmax(2), m.tensor(tg), m.tensor(il), m.tensor(tl),
                                        reduction=reduction, zero_infinity=zero_infinity)
        (g,) = m.autograd.grad(loss.sum(), x)
        res.append((np_(loss), np_(g)))
    (fl, fgr), (tl_, tgr) = res
    np.testing.assert_allclose(fl, tl_, rtol=1e-10)
    np.testing.assert_array_equal(np.isnan(fgr), np.isnan(tgr))
    np.testing.assert_allclose(fgr, tgr, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("target,ignore_index", [
    ([0, 1, 2, 3, 0, 1], -100), ([0, 1, 2, 3, 0, 1], 0), ([0, 1, 2, 3, 0, 1], 3), ([0, 1, 2, 3, 0, -100], -100),
    ([0, 1, 2, 4, 0, 1], -100), ([0, 1, -1, 3, 0, 1], -100), ([-100] * 6, -100), ([], -100)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_rows_targets_against_torch(target, ignore_index, reduction):
    # nll_loss's one-node path over (N, C) rows: every target valid (its one-reduction check), an ignore_index
    # inside [0, C) or on some rows, targets out of range either side (IndexError), all rows ignored, no rows
    x = np.random.default_rng(1).standard_normal((len(target), 4)).astype(np.float32)
    got = []
    for lib in (fg, torch):
        a = lib.tensor(x, requires_grad=True)
        try:
            loss = lib.nn.functional.nll_loss(a, lib.tensor(target, dtype=lib.int64), ignore_index=ignore_index,
                                              reduction=reduction)
        except IndexError as e:
            got.append(("IndexError", str(e)))
            continue
        loss.sum().backward()
        got.append((loss.detach().numpy(), a.grad.numpy()))
    if isinstance(got[1][0], str):
        assert got[0] == got[1]
        return
    np.testing.assert_allclose(got[0][0], got[1][0], rtol=1e-6, equal_nan=True)
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-6)


def test_soft_margin_loss_as_torchs_kernel():
    """torch's soft_margin_loss: log1p(exp(-target * input)) in the input's dtype (inf where exp overflows, NaN
    gradient there), one SoftMarginLossBackward0 node, and a target that requires grad refused under grad mode."""
    x = np.array([100.0, -100.0, 0.0, 3.0, -0.5], np.float32)
    y = np.array([-1.0, 1.0, 1.0, -1.0, 1.0], np.float32)
    for reduction in REDUCTIONS:
        got = []
        for lib in (fg, torch):
            a = lib.tensor(x, requires_grad=True)
            loss = lib.nn.functional.soft_margin_loss(a, lib.tensor(y), reduction=reduction)
            loss.sum().backward()
            got.append((loss.detach().numpy(), a.grad.numpy(), type(loss.grad_fn).__name__))
        np.testing.assert_allclose(got[0][0], got[1][0], rtol=1e-6)
        np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-6)
        assert got[0][2] == got[1][2]
    for lib in (fg, torch):
        with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'target'"):
            lib.nn.functional.soft_margin_loss(lib.tensor(x), lib.tensor(y, requires_grad=True))
        with lib.no_grad():
            lib.nn.functional.soft_margin_loss(lib.tensor(x), lib.tensor(y, requires_grad=True))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_poisson_nll_loss_full_and_label_smoothing_masks_as_torch(reduction):
    """poisson_nll_loss(full=True) masks torch's Stirling term after computing it (so the target's gradient at
    0 is 0 * log 0, NaN, as torch's); cross_entropy's label smoothing masks ignored rows (their gradient is 0
    when every row is ignored: torch's masked_fill, not 0 * inf)."""
    got = []
    for lib in (fg, torch):
        i = lib.tensor([[0.5, 2.0, 1.0, 3.0]], requires_grad=True)
        t = lib.tensor([[0.0, 2.0, 5.0, 1.0]], requires_grad=True)
        loss = lib.nn.functional.poisson_nll_loss(i, t, log_input=False, full=True, reduction=reduction)
        loss.sum().backward()
        x = lib.tensor([[0.5, 1.0, -1.0], [0.1, 0.2, 0.3]], requires_grad=True)
        ce = lib.nn.functional.cross_entropy(x, lib.tensor([0, 0]), ignore_index=0, label_smoothing=0.1,
                                             reduction=reduction)
        ce.sum().backward()
        got.append([loss.detach().numpy(), i.grad.numpy(), t.grad.numpy(), ce.detach().numpy(), x.grad.numpy()])
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b, rtol=1e-6, equal_nan=True)
