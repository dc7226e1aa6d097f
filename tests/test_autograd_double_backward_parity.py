"""Double backward through activations and pools as torch (issue #26): whether the gradient taken with
create_graph=True requires grad, and what a second autograd.grad through it returns, compared with torch."""
import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")

_X = np.array([-3.0, -1.5, -0.7, -0.2, 0.0, 0.3, 0.6, 1.0, 2.5, 7.0])
_W = np.linspace(0.5, 1.5, 10)
_V = np.linspace(-1.0, 2.0, 10)


def _ops(t):
    F = t.nn.functional
    return {
        "hardtanh": lambda x: F.hardtanh(x),
        "relu6": lambda x: F.relu6(x),
        "leaky_relu": lambda x: F.leaky_relu(x, 0.1),
        "softshrink": lambda x: F.softshrink(x, 0.5),
        "hardshrink": lambda x: F.hardshrink(x, 0.5),
        "threshold": lambda x: F.threshold(x, 0.5, -1.0),
        "rrelu_eval": lambda x: F.rrelu(x, training=False),
        "prelu": lambda x: F.prelu(x, t.tensor([0.25], dtype=t.float64)),
        "relu": lambda x: F.relu(x),
        "avg_pool1d": lambda x: F.avg_pool1d(x.reshape(1, 1, 10), 2).reshape(-1),
        "avg_pool2d": lambda x: F.avg_pool2d(x.reshape(1, 1, 2, 5), (1, 2)).reshape(-1),
        "avg_pool3d": lambda x: F.avg_pool3d(x.reshape(1, 1, 1, 2, 5), (1, 1, 2)).reshape(-1),
        "hardsigmoid": lambda x: F.hardsigmoid(x),
        "adaptive_avg_pool1d": lambda x: F.adaptive_avg_pool1d(x.reshape(1, 1, 10), 4).reshape(-1),
        "adaptive_avg_pool2d": lambda x: F.adaptive_avg_pool2d(x.reshape(1, 1, 2, 5), (1, 3)).reshape(-1),
        "adaptive_avg_pool3d": lambda x: F.adaptive_avg_pool3d(x.reshape(1, 1, 1, 2, 5), (1, 2, 3)).reshape(-1),
        "adaptive_max_pool1d": lambda x: F.adaptive_max_pool1d(x.reshape(1, 1, 10), 4).reshape(-1),
        "adaptive_max_pool2d": lambda x: F.adaptive_max_pool2d(x.reshape(1, 1, 2, 5), (1, 3)).reshape(-1),
        "adaptive_max_pool3d": lambda x: F.adaptive_max_pool3d(x.reshape(1, 1, 1, 2, 5), (1, 2, 3)).reshape(-1),
        "hardtanh_inplace": lambda x: F.hardtanh(x * 1, inplace=True),
        "leaky_relu_inplace": lambda x: F.leaky_relu(x * 1, 0.1, inplace=True),
        "threshold_inplace": lambda x: F.threshold(x * 1, 0.5, -1.0, inplace=True),
        "rrelu_eval_inplace": lambda x: F.rrelu(x * 1, training=False, inplace=True),
    }


_NAMES = list(_ops(fg))


def _first_grad(t, name):
    x = t.tensor(_X.copy(), requires_grad=True)
    y = _ops(t)[name](x)
    w = t.tensor(_W[:y.numel()].copy()).reshape(y.shape)
    g, = t.autograd.grad((y * w).sum(), x, create_graph=True)
    return x, g


@pytest.mark.parametrize("name", _NAMES)
def test_first_gradient_requires_grad_as_torch(name):
    _, g_ref = _first_grad(torch, name)
    _, g = _first_grad(fg, name)
    assert g.requires_grad == g_ref.requires_grad
    # (torch's hardsigmoid_backward kernel takes its 1/6 in float32 even for float64)
    rtol = 1e-7 if name == "hardsigmoid" else 1e-12
    np.testing.assert_allclose(g.detach().numpy(), g_ref.detach().numpy(), rtol=rtol, atol=0)


@pytest.mark.parametrize("name", [n for n in _NAMES if n != "hardsigmoid"])  # torch: not implemented
def test_second_gradient_as_torch(name):
    x_ref, g_ref = _first_grad(torch, name)
    x, g = _first_grad(fg, name)
    assert g_ref.requires_grad
    r_ref, = torch.autograd.grad((g_ref * torch.tensor(_V)).sum(), x_ref, allow_unused=True)
    r, = fg.autograd.grad((g * fg.tensor(_V)).sum(), x, allow_unused=True)
    assert (r is None) == (r_ref is None)
    if r_ref is not None:
        np.testing.assert_allclose(r.numpy(), r_ref.numpy(), rtol=1e-12, atol=0)


def test_prelu_second_gradient_reaches_weight_as_torch():
    # (away from x = 0, where torch's first gradient takes the slope but its double backward w.r.t. the
    # weight masks x < 0 only)
    def run(t):
        x = t.tensor(np.where(_X == 0, -0.1, _X).reshape(2, 5), requires_grad=True)
        a = t.tensor([0.25], dtype=t.float64, requires_grad=True)
        g, = t.autograd.grad(t.nn.functional.prelu(x, a).sum(), x, create_graph=True)
        return g.requires_grad, [r.numpy() for r in t.autograd.grad((g * t.tensor(_V.reshape(2, 5))).sum(),
                                                                       (x, a))]
    rg_ref, ref = run(torch)
    rg, got = run(fg)
    assert rg == rg_ref
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)


def _mask_ops(t):
    F = t.nn.functional
    c = t.tensor(0.5, dtype=t.float64)
    sign = t.tensor([1.0, -1.0] * 5, dtype=t.float64)
    return {
        "clamp": lambda x: t.clamp(x, -1, 1),
        "clamp_tensor_min": lambda x: t.clamp(x, min=c),
        "clamp_inplace": lambda x: (x * 1).clamp_(-1, 1),
        "clamp_min": lambda x: t.clamp_min(x, 0.5),
        "clamp_max": lambda x: t.clamp_max(x, 0.5),
        "max": lambda x: t.max(x),
        "max_dim": lambda x: t.max(x.reshape(2, 5), 1)[0],
        "min": lambda x: t.min(x),
        "amax": lambda x: t.amax(x.reshape(2, 5), 1),
        "amin": lambda x: t.amin(x.reshape(2, 5), 1),
        "median": lambda x: t.median(x),
        "maximum": lambda x: t.maximum(x, c),
        "minimum": lambda x: t.minimum(x, c),
        "fmax": lambda x: t.fmax(x, c),
        "fmin": lambda x: t.fmin(x, c),
        "hinge_embedding_loss": lambda x: F.hinge_embedding_loss(x, sign),
        "margin_ranking_loss": lambda x: F.margin_ranking_loss(x, t.full((10,), 0.4, dtype=t.float64), sign),
    }


_MASK_NAMES = list(_mask_ops(fg))


def _mask_grad(t, name, v_requires_grad=False):
    x = t.tensor(_X.copy(), requires_grad=True)
    y = _mask_ops(t)[name](x)
    v = t.tensor(_W[:y.numel()].reshape(y.shape), requires_grad=v_requires_grad)
    g, = t.autograd.grad(y, x, grad_outputs=v, create_graph=True)
    return x, v, g


@pytest.mark.parametrize("name", _MASK_NAMES)
def test_mask_backward_gradient_requires_grad_as_torch(name):
    x_ref, _, g_ref = _mask_grad(torch, name)
    x, _, g = _mask_grad(fg, name)
    assert g_ref.requires_grad is False
    assert g.requires_grad is False
    np.testing.assert_allclose(g.numpy(), g_ref.numpy(), rtol=1e-12, atol=0)
    with pytest.raises(RuntimeError, match="does not require grad"):
        torch.autograd.grad(g_ref.sum(), x_ref)
    with pytest.raises(RuntimeError, match="does not require grad"):
        fg.autograd.grad(g.sum(), x)


@pytest.mark.parametrize("name", _MASK_NAMES)
def test_mask_backward_differentiates_through_grad_output_as_torch(name):
    _, v_ref, g_ref = _mask_grad(torch, name, True)
    _, v, g = _mask_grad(fg, name, True)
    assert g.requires_grad and g_ref.requires_grad
    r_ref, = torch.autograd.grad((g_ref * torch.tensor(_V)).sum(), v_ref)
    r, = fg.autograd.grad((g * fg.tensor(_V)).sum(), v)
    np.testing.assert_allclose(r.numpy(), r_ref.numpy(), rtol=1e-12, atol=0)


def _node_names(t):
    """grad_fn names of activations and dropouts, in place and not, as a user sees them (torch's in-place
    variants with their own backward formula are ...Backward1; in-place dropouts are the mul_/add_ they are)."""
    F = t.nn.functional
    x = t.tensor(_X.copy(), requires_grad=True)
    ops = {
        "threshold_": lambda y: F.threshold_(y, 0.1, 0.0), "leaky_relu_": lambda y: F.leaky_relu_(y),
        "elu_": lambda y: F.elu_(y), "celu_": lambda y: F.celu_(y), "selu_": lambda y: t.selu_(y),
        "rrelu_": lambda y: F.rrelu_(y), "rrelu_train": lambda y: F.rrelu(y, training=True),
        "rrelu_train_": lambda y: F.rrelu_(y, training=True), "hardtanh_": lambda y: F.hardtanh_(y),
        "dropout_": lambda y: F.dropout(y, 0.5, True, True), "dropout_p1_": lambda y: F.dropout(y, 1.0, True, True),
        "alpha_dropout_": lambda y: F.alpha_dropout(y, 0.5, True, True),
        "alpha_dropout_p1_": lambda y: F.alpha_dropout(y, 1.0, True, True),
    }
    return {k: f(x * 1).grad_fn.name() for k, f in ops.items()}


def test_inplace_activation_node_names_as_torch():
    assert _node_names(fg) == _node_names(torch)


def test_rrelu_training_is_one_node_with_torch_values_and_gradients():
    out = []
    for t in (fg, torch):
        t.manual_seed(3)
        x = t.tensor(_X.copy(), requires_grad=True)
        y = t.nn.functional.rrelu(x, training=True)
        y.backward(t.tensor(_W[:y.numel()].copy()))
        out.append((y.grad_fn.name(), y.detach().numpy(), x.grad.numpy()))
    assert out[0][0] == out[1][0] == "RreluWithNoiseBackward0"
    np.testing.assert_array_equal(out[0][1], out[1][1])
    np.testing.assert_array_equal(out[0][2], out[1][2])
