"""The torch face's reductions over dims (sum, mean, max/min along a dim) and gather against torch: values,
grad_fn names (one node per op, as torch's), gradients and second derivatives (create_graph=True), with and
without recording."""
from __future__ import annotations

import warnings

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


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (5,), (4, 1)])
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_min_along_dim_match_torch(shape, op, keepdim, dtype):
    """x.max(d) / x.min(d): torch's values and indices (ties: the first), one MaxBackward0 / MinBackward0 node
    whose gradient goes to the index taken only, and requires grad with create_graph=True only through the
    cotangent (as torch's mask-select backward)."""
    rng = np.random.default_rng(1)
    for d in range(-len(shape), len(shape)):
        x = rng.standard_normal(shape).astype(dtype)
        x.flat[0] = x.flat[-1]  # a tie
        a, b = _pair(x)
        va, ia = getattr(a, op)(d, keepdim=keepdim)
        vb, ib = getattr(b, op)(d, keepdim=keepdim)
        assert va.grad_fn.name() == vb.grad_fn.name() == op.capitalize() + "Backward0"
        np.testing.assert_array_equal(va.detach().numpy(), vb.detach().numpy())
        np.testing.assert_array_equal(ia.numpy(), ib.numpy())
        assert ia.dtype == fg.int64 and tuple(ia.shape) == tuple(ib.shape) and not ia.requires_grad
        g = rng.standard_normal(tuple(vb.shape)).astype(dtype)
        (ga,) = fg.autograd.grad(va, a, fg.tensor(g, requires_grad=True), create_graph=True)
        (gb,) = torch.autograd.grad(vb, b, torch.tensor(g, requires_grad=True), create_graph=True)
        np.testing.assert_array_equal(ga.detach().numpy(), gb.detach().numpy())
        assert ga.requires_grad == gb.requires_grad


def test_max_along_dim_with_nan_matches_torch():
    x = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 5.0, 5.0, 0.0]], np.float32)
    got = []
    for lib in (fg, torch):
        a = lib.tensor(x, requires_grad=True)
        v, i = a.max(1)
        m, j = a.min(0)
        (v.sum() + m.sum()).backward()
        got.append((v.detach().numpy(), i.numpy(), m.detach().numpy(), j.numpy(), a.grad.numpy()))
    for u, w in zip(*got):
        np.testing.assert_array_equal(u, w)


@pytest.mark.parametrize("shape,ishape", [((3, 4), (3, 4)), ((3, 4), (2, 6)), ((2, 3, 4), (2, 2, 4)), ((5,), (7,))])
def test_gather_matches_torch(shape, ishape):
    """gather: one GatherBackward0 node; gradients scatter-add repeated indices; second order through the
    cotangent; a transposed input and int32 indices as torch."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape)
    for d in range(len(shape)):
        if any(ishape[k] > shape[k] for k in range(len(shape)) if k != d):
            continue
        idx = rng.integers(0, shape[d], ishape)
        a, b = _pair(x)
        ra, rb = a.gather(d, fg.tensor(idx)), b.gather(d, torch.tensor(idx))
        assert ra.grad_fn.name() == rb.grad_fn.name() == "GatherBackward0"
        np.testing.assert_array_equal(ra.detach().numpy(), rb.detach().numpy())
        g = rng.standard_normal(ishape)
        (ga,) = fg.autograd.grad(ra, a, fg.tensor(g, requires_grad=True), create_graph=True)
        (gb,) = torch.autograd.grad(rb, b, torch.tensor(g, requires_grad=True), create_graph=True)
        np.testing.assert_allclose(ga.detach().numpy(), gb.detach().numpy(), rtol=1e-14)
        assert ga.requires_grad == gb.requires_grad
    m = np.arange(24.0).reshape(4, 6)
    i = np.array([[0, 3], [1, 1]])
    ra = fg.tensor(m).t().gather(1, fg.tensor(i, dtype=fg.int32))
    rb = torch.tensor(m).t().gather(1, torch.tensor(i, dtype=torch.int32))
    np.testing.assert_array_equal(ra.numpy(), rb.numpy())
    for bad in ([[0, 6]], [[-1, 0]]):
        with pytest.raises(RuntimeError) as ea:
            fg.tensor(m).gather(1, fg.tensor(bad))
        with pytest.raises(RuntimeError) as eb:
            torch.tensor(m).gather(1, torch.tensor(bad))
        assert str(ea.value) == str(eb.value)


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("shape,dim", [((3, 4), None), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), (0, 2)), ((5,), 0),
                                       ((3, 1), 1)])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("correction", [0, 1, 0.5])
def test_var_std_match_torch(op, shape, dim, keepdim, correction):
    """var / std: one VarBackward0 / StdBackward0 node, torch's values, gradients (std's zero where a slice has
    zero variance) and second derivatives; n - correction <= 0 keeps the general path's values."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape)
    if shape == (3, 4):
        x[0] = 1.5  # a row of zero variance
    a, b = _pair(x)
    kw = dict(correction=correction, keepdim=keepdim)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch warns of n - correction <= 0)
        ra, rb = getattr(a, op)(dim, **kw), getattr(b, op)(dim, **kw)
    assert ra.grad_fn.name() == rb.grad_fn.name() == op.capitalize() + "Backward0"
    np.testing.assert_allclose(ra.detach().numpy(), rb.detach().numpy(), rtol=1e-12, atol=1e-14)
    n = np.prod([shape[i] for i in ((dim,) if isinstance(dim, int) else dim or range(len(shape)))])
    if n - correction <= 0:
        return
    g = rng.standard_normal(tuple(rb.shape))
    (ga,) = fg.autograd.grad(ra, a, fg.tensor(g, requires_grad=True), create_graph=True)
    (gb,) = torch.autograd.grad(rb, b, torch.tensor(g, requires_grad=True), create_graph=True)
    np.testing.assert_allclose(ga.detach().numpy(), gb.detach().numpy(), rtol=1e-11, atol=1e-13)
    assert ga.requires_grad == gb.requires_grad
    (ha,) = fg.autograd.grad(ga.sum(), a)
    (hb,) = torch.autograd.grad(gb.sum(), b)
    np.testing.assert_allclose(ha.numpy(), hb.numpy(), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_stack_of_one_dtype_matches_torch(shape):
    """stack of same-dtype tensors (the binds themselves): torch's values, StackBackward0, gradients to each
    input along every dim, also with a tensor given twice."""
    rng = np.random.default_rng(4)
    xs = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]
    for d in range(-len(shape) - 1, len(shape) + 1):
        fa = [fg.tensor(x, requires_grad=True) for x in xs]
        ta = [torch.tensor(x, requires_grad=True) for x in xs]
        rf, rt = fg.stack(fa + [fa[0]], d), torch.stack(ta + [ta[0]], d)
        assert rf.grad_fn.name() == rt.grad_fn.name() == "StackBackward0"
        np.testing.assert_array_equal(rf.detach().numpy(), rt.detach().numpy())
        g = rng.standard_normal(tuple(rt.shape)).astype(np.float32)
        gf = fg.autograd.grad(rf, fa, fg.tensor(g))
        gt = torch.autograd.grad(rt, ta, torch.tensor(g))
        for u, w in zip(gf, gt):
            np.testing.assert_allclose(u.numpy(), w.numpy(), rtol=1e-6)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("x", [np.arange(12.0).reshape(3, 4) % 5, np.array([1.0, 3.0, 3.0, 2.0]),
                               np.array([[np.nan, 1.0], [2.0, np.nan]]), np.array([5.0]), np.array(2.0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_min_of_everything_match_torch(op, x, dtype):
    """x.max() / x.min(): torch's MaxBackward1 / MinBackward1, the gradient shared evenly by ties (and by NaNs),
    requiring grad with create_graph=True only through the cotangent."""
    res = []
    for lib in (fg, torch):
        a = lib.tensor(x.astype(dtype), requires_grad=True)
        r = getattr(a, op)()
        (g,) = lib.autograd.grad(r, a, lib.tensor(np.array(1.5, dtype), requires_grad=True), create_graph=True)
        res.append((r.grad_fn.name(), r.detach().numpy(), g.detach().numpy(), g.requires_grad))
    (nf, vf, gf, rf), (nt, vt, gt, rt) = res
    assert nf == nt and rf == rt
    np.testing.assert_array_equal(vf, vt)
    np.testing.assert_array_equal(gf, gt)
