"""The torch face's reductions over dims (sum, mean, max/min along a dim) and gather against torch: values,
grad_fn names (one node per op, as torch's), gradients and second derivatives (create_graph=True), with and
without recording."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")

DIMS = [((3, 4), 1), ((3, 4), 0), ((3, 4), -1), ((3, 4), (0, 1)), ((2, 3, 4), (0, 2)), ((2, 3, 4), (2, 0)),
        ((5,), 0), ((3, 4), [])]


def _pair(x):
    return fg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)


@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize("shape,dim", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_mean_over_dims_match_torch(op, shape, dim, keepdim, dtype):
    """x.sum(dim) / x.mean(dim) recorded: torch's node (SumBackward1 / MeanBackward1), its values, the gradient
    (which requires grad with create_graph=True only through the cotangent, as torch's) and unrecorded values."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    a, b = _pair(x)
    ra, rb = getattr(a, op)(dim, keepdim=keepdim), getattr(b, op)(dim, keepdim=keepdim)
    assert ra.grad_fn.name() == rb.grad_fn.name() == ("SumBackward1" if op == "sum" else "MeanBackward1")
    assert tuple(ra.shape) == tuple(rb.shape) and str(ra.dtype) == str(rb.dtype)
    tol = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(ra.detach().numpy(), rb.detach().numpy(), rtol=tol, atol=tol)
    g = rng.standard_normal(tuple(rb.shape)).astype(dtype)
    (ga,) = fg.autograd.grad(ra, a, fg.tensor(g, requires_grad=True), create_graph=True)
    (gb,) = torch.autograd.grad(rb, b, torch.tensor(g, requires_grad=True), create_graph=True)
    np.testing.assert_allclose(ga.detach().numpy(), gb.detach().numpy(), rtol=tol, atol=tol)
    assert ga.requires_grad == gb.requires_grad
    with fg.no_grad(), torch.no_grad():
        ua, ub = getattr(a, op)(dim, keepdim=keepdim), getattr(b, op)(dim, keepdim=keepdim)
    assert ua.grad_fn is None and not ua.requires_grad
    np.testing.assert_allclose(ua.numpy(), ub.numpy(), rtol=tol, atol=tol)


def test_whole_mean_and_sum_nodes_and_other_dtypes():
    """mean() is MeanBackward0, sum() SumBackward0; float16 and an explicit dtype keep the general path with
    torch's names too."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    a, b = _pair(x)
    for f in (lambda t: t.mean(), lambda t: t.sum(), lambda t: t.sum(1, dtype=t.dtype),
              lambda t: t.half().sum(0), lambda t: t.half().mean(1, keepdim=True), lambda t: t.sum(dtype=t.dtype)):
        ra, rb = f(a), f(b)
        assert ra.grad_fn.name() == rb.grad_fn.name()
        np.testing.assert_allclose(ra.detach().float().numpy(), rb.detach().float().numpy(), rtol=1e-3)
        (ga,) = fg.autograd.grad(ra.float().sum(), a)
        (gb,) = torch.autograd.grad(rb.float().sum(), b)
        np.testing.assert_allclose(ga.numpy(), gb.numpy(), rtol=1e-6)


def test_sum_mean_errors_match_torch():
    a = fg.ones(3, 4, requires_grad=True)
    b = torch.ones(3, 4, requires_grad=True)
    for f in (lambda t: t.sum(2), lambda t: t.mean((0, 0)), lambda t: t.mean(-3)):
        with pytest.raises(Exception) as ea:
            f(a)
        with pytest.raises(Exception) as eb:
            f(b)
        assert type(ea.value) is type(eb.value) and str(ea.value) == str(eb.value)
