"""funcgrad.utils.checkpoint (torch.utils.checkpoint): recomputation gives the gradients of the plain run,
dropout masks repeat, Module parameters are reachable by autograd.grad, closure leaves accumulate, and the
argument checks match torch's."""
import numpy as np
import pytest

import funcgrad as fg
from funcgrad.utils.checkpoint import checkpoint, checkpoint_sequential

torch = pytest.importorskip("torch")
from torch.utils import checkpoint as TC  # noqa: E402

X = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)


def _models(dropout=0.3):
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Dropout(dropout),
                             torch.nn.Linear(8, 6), torch.nn.ReLU(), torch.nn.Linear(6, 3))
    fm = fg.nn.Sequential(fg.nn.Linear(4, 8), fg.nn.Tanh(), fg.nn.Dropout(dropout),
                          fg.nn.Linear(8, 6), fg.nn.ReLU(), fg.nn.Linear(6, 3))
    for fp, tp in zip(fm.parameters(), tm.parameters()):
        with fg.no_grad():
            fp.copy_(fg.tensor(tp.detach().numpy()))
    return fm, tm


def _grads(model, x):
    return [p.grad.numpy().copy() for p in model.parameters()] + [x.grad.numpy().copy()]


@pytest.mark.parametrize("reentrant", [True, False])
def test_gradients_match_torch_checkpoint(reentrant):
    fm, tm = _models()
    fm.eval(), tm.eval()
    fx, tx = fg.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
    (checkpoint(fm, fx, use_reentrant=reentrant) ** 2).sum().backward()
    (TC.checkpoint(tm, tx, use_reentrant=reentrant) ** 2).sum().backward()
    for a, b in zip(_grads(fm, fx), _grads(tm, tx)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reentrant", [True, False])
def test_recomputation_repeats_the_dropout_mask(reentrant):
    fm, _ = _models(dropout=0.5)
    fm.train()
    fx = fg.tensor(X, requires_grad=True)
    fg.manual_seed(7)
    (checkpoint(fm, fx, use_reentrant=reentrant) ** 2).sum().backward()
    got = _grads(fm, fx)
    after = fg.rand(3).numpy()  # the generator continues from where the forward pass left it
    fm.zero_grad()
    fx2 = fg.tensor(X, requires_grad=True)
    fg.manual_seed(7)
    (fm(fx2) ** 2).sum().backward()
    for a, b in zip(got, _grads(fm, fx2)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(after, fg.rand(3).numpy())


@pytest.mark.parametrize("reentrant", [True, False])
def test_autograd_grad_reaches_module_parameters(reentrant):
    fm, tm = _models()
    fm.eval(), tm.eval()
    fy = checkpoint(fm, fg.tensor(X), use_reentrant=reentrant)
    ty = TC.checkpoint(tm, torch.tensor(X), use_reentrant=False)
    fgs = fg.autograd.grad(fy.square().sum(), list(fm.parameters()))
    tgs = torch.autograd.grad(ty.square().sum(), list(tm.parameters()))
    for a, b in zip(fgs, tgs):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def test_closure_leaves_accumulate_like_torch():
    res = []
    for lib, ck in ((fg, checkpoint), (torch, TC.checkpoint)):
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        a = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = ck(lambda t: (t * w).sin().sum(), a, use_reentrant=True)
        y.backward()
        res.append((w.grad.numpy(), a.grad.numpy()))
    for x, y in zip(*res):
        np.testing.assert_allclose(x, y, rtol=1e-6)


def test_kwargs_and_multiple_outputs():
    def f(a, b, scale=1.0):
        return a * b * scale, (a - b).exp()
    res = []
    for lib, ck in ((fg, checkpoint), (torch, TC.checkpoint)):
        a = lib.tensor([0.5, -1.0], requires_grad=True)
        b = lib.tensor([2.0, 3.0], requires_grad=True)
        p, q = ck(f, a, b, use_reentrant=False, scale=3.0)
        (p.sum() + q.sum()).backward()
        res.append((a.grad.numpy(), b.grad.numpy()))
        with pytest.raises(ValueError, match="Unexpected keyword arguments"):
            ck(f, a, b, use_reentrant=True, scale=3.0)
    for x, y in zip(*res):
        np.testing.assert_allclose(x, y, rtol=1e-6)


def test_warnings_and_no_grad_inputs_match_torch():
    for lib, ck in ((fg, checkpoint), (torch, TC.checkpoint)):
        lin = lambda t: t * 2  # noqa: E731
        with pytest.warns(UserWarning, match="use_reentrant"):
            ck(lin, lib.ones(2, requires_grad=True))
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            out = ck(lin, lib.ones(2), use_reentrant=True)
        assert not out.requires_grad
        with pytest.raises(ValueError, match="determinism_check"):
            ck(lin, lib.ones(2), use_reentrant=False, determinism_check="bogus")


def test_checkpoint_sequential_matches_torch():
    fm, tm = _models()
    fm.eval(), tm.eval()
    fx, tx = fg.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
    fy = checkpoint_sequential(fm, 3, fx, use_reentrant=False)
    ty = TC.checkpoint_sequential(tm, 3, tx, use_reentrant=False)
    np.testing.assert_allclose(fy.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    fy.sum().backward(), ty.sum().backward()
    for a, b in zip(_grads(fm, fx), _grads(tm, tx)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_input_modified_in_place_is_detected():
    a = fg.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    y = checkpoint(lambda t: t.exp().sum(), b, use_reentrant=True)
    with fg.no_grad():
        b.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_reentrant_node_name_as_torch():
    """use_reentrant=True records torch's CheckpointFunction (its node CheckpointFunctionBackward)."""
    names = []
    for lib, ck in ((fg, checkpoint), (torch, TC.checkpoint)):
        y = ck(lambda t: t.sin() * 2, lib.ones(3, requires_grad=True), use_reentrant=True)
        names.append(y.grad_fn.name())
    assert names[0] == names[1] == "CheckpointFunctionBackward"
    assert hasattr(fg.utils.checkpoint, "CheckpointFunction")
