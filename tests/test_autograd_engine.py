"""The backward engine hands gradients on without copying where nothing else can see them (as torch's
AccumulateGrad steals a gradient whose use count allows it). These tests check that no gradient a user can
still reach is ever shared with a .grad that later accumulates in place, and that .grad keeps torch's
layout, against torch where it is installed."""
import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")


def _both(fn):
    """fn(lib) for funcgrad and torch; results as NumPy arrays (lists of them)."""
    out = []
    for lib in (fg, torch):
        r = fn(lib)
        out.append([np.array(x.detach().numpy() if hasattr(x, "detach") else x) for x in r])
    return out


def _check(fn):
    ours, theirs = _both(fn)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_hook_kept_gradient_is_not_the_accumulated_grad():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        kept = []
        x.register_hook(lambda g: kept.append(g))
        (x * 2).sum().backward()
        (x * 3).sum().backward()  # accumulates into x.grad in place
        return [x.grad, kept[0], kept[1]]
    _check(run)


def test_user_gradient_passed_through_is_not_modified():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        g = lib.tensor([5.0, 7.0])
        (x + 1).backward(g)  # add's backward passes g through to x
        (x + 1).backward(g)
        return [x.grad, g]
    _check(run)


def test_one_gradient_reaching_two_leaves_gives_two_buffers():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, 4.0], requires_grad=True)
        (x + y).backward(lib.tensor([1.0, 1.0]))
        (x + y).sum().backward()
        x.grad.mul_(10)
        return [x.grad, y.grad]
    _check(run)
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    y = fg.tensor([3.0, 4.0], requires_grad=True)
    (x + y).sum().backward()
    assert x.grad.data_ptr() != y.grad.data_ptr()


def test_retained_intermediate_grad_is_not_shared_with_leaf_grad():
    def run(lib):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        y = x + 0.5
        y.retain_grad()
        z = y * 1.0
        z.retain_grad()
        z.sum().backward(retain_graph=True)
        z.sum().backward()
        x.grad.add_(100.0)
        return [x.grad, y.grad, z.grad]
    _check(run)


def test_autograd_grad_results_are_not_shared_with_leaf_grads():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        gx, = lib.autograd.grad(y, x, retain_graph=True)
        y.backward()
        x.grad.mul_(3)
        return [gx, x.grad]
    _check(run)


def test_weight_grads_are_contiguous_and_viewable_as_torch():
    """Gradients of transposed / convolved weights arrive as contiguous tensors (torch's layout contract),
    so .view(-1) on them works."""
    def run(lib):
        lib.manual_seed(0)
        conv = lib.nn.Conv2d(2, 3, 3)
        lin = lib.nn.Linear(4, 5)
        with lib.no_grad():
            conv.weight.copy_(lib.tensor(np.linspace(-1, 1, 54, dtype=np.float32).reshape(3, 2, 3, 3)))
            conv.bias.zero_()
            lin.weight.copy_(lib.tensor(np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4)))
            lin.bias.zero_()
        x = lib.tensor(np.linspace(0, 1, 2 * 2 * 5 * 5, dtype=np.float32).reshape(2, 2, 5, 5))
        (conv(x).sum() + lin(lib.ones(3, 4)).pow(2).sum()).backward()
        grads = [conv.weight.grad, lin.weight.grad, conv.bias.grad]
        assert all(g.is_contiguous() for g in grads)
        return [g.view(-1) for g in grads]
    _check(run)


def test_accumulated_grad_after_in_place_edit_of_stolen_grad():
    """A .grad the engine handed over without a copy is the user's to modify; later backward calls keep
    accumulating into it."""
    def run(lib):
        w = lib.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), requires_grad=True)
        x = lib.tensor(np.ones((4, 2), np.float32))
        (x @ w).sum().backward()
        w.grad.mul_(0.5)
        (x @ w).pow(2).sum().backward()
        return [w.grad]
    _check(run)


def test_lean_recording_paths_match_torch_semantics():
    """The direct operator paths (+,-,*,/ and @ on tensors of one float dtype, a float tensor and a Python number,
    x.sum(), torch.cat of one dtype) record one node each with torch's names and exact gradients; operands they do
    not take (mixed dtypes, bool matmul, x * x) go through the general path with torch's promotion and errors."""
    import numpy as np
    import funcgrad as torch
    a = np.array([1.0, -2.0, 3.0], np.float32)
    bv = np.array([0.5, 4.0, -1.0], np.float32)
    x = torch.tensor(a, requires_grad=True)
    w = torch.nn.Parameter(torch.tensor(bv))
    y = x * w
    assert type(y.grad_fn).__name__ == "MulBackward0"
    z = ((y + x) - w / 2.0) / w + 3 * x - 1
    assert [type(t.grad_fn).__name__ for t in (y + x, 3 * x, x / w)] == ["AddBackward0", "MulBackward0", "DivBackward0"]
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 + 1 / bv, rtol=1e-6)  # z = 4x + x/w - 3/2
    np.testing.assert_allclose(w.grad.numpy(), -a / bv ** 2, rtol=1e-6)
    m = torch.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), requires_grad=True)
    r = m @ x
    r.sum().backward()
    np.testing.assert_allclose(m.grad.numpy(), np.tile(a, (2, 1)))
    c = torch.cat([x, w, x])
    assert type(c.grad_fn).__name__ == "CatBackward0"
    x.grad = None
    (c * torch.arange(9.0)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0 + 6, 1 + 7, 2 + 8])
    sq = x * x
    assert type(sq.grad_fn).__name__ == "MulBackward0"
    x.grad = None
    sq.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * a)
    d = x * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    assert d.dtype == torch.float64
    with pytest.raises(NotImplementedError, match="addmm_impl_cpu_"):
        torch.ones(2, 2, dtype=torch.bool) @ torch.ones(2, 2, dtype=torch.bool)
    with pytest.raises(RuntimeError, match="must match the size"):
        x * torch.ones(4, requires_grad=True)
