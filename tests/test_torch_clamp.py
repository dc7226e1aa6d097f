"""torch.clamp with number bounds (the clamp_bounds primitive) against torch: values, signed zeros at
the bounds, NaN, min > max, integer tensors, and the inclusive-bounds gradient."""
import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")

X = [-2.0, -1.0, -0.0, 0.0, 0.3, 1.0, 2.5, float("nan"), float("inf"), float("-inf")]
BOUNDS = [(-1.0, 1.0), (0.0, None), (None, -0.0), (1.0, 0.5), (-0.0, 0.0), (float("nan"), None), (None, 2.0)]


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)
    if a.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(a), np.signbit(b))


@pytest.mark.parametrize("lo,hi", BOUNDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_and_gradients_match_torch(lo, hi, dtype):
    x = np.array(X, dtype)
    a = fg.tensor(x, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    ya, yt = fg.clamp(a, lo, hi), torch.clamp(t, lo, hi)
    same(ya.detach().numpy(), yt.detach().numpy())
    w = np.linspace(0.5, 2.0, len(X)).astype(dtype)
    (ya * fg.tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    same(a.grad.numpy(), t.grad.numpy())
    same(a.detach().clamp(lo, hi).numpy(), t.detach().clamp(lo, hi).numpy())


def test_integer_tensors_and_number_kinds():
    x = np.array([1, 5, -3, 0], np.int64)
    for lo, hi in ((0, 2), (0.5, 2.7), (None, -1)):
        same(fg.clamp(fg.tensor(x), lo, hi).numpy(), torch.clamp(torch.tensor(x), lo, hi).numpy())
    with pytest.raises(RuntimeError):
        fg.clamp(fg.tensor(x))
    with pytest.raises(RuntimeError):
        torch.clamp(torch.tensor(x))


def test_it_is_one_recorded_operation_and_works_under_func_transforms():
    a = fg.tensor(np.array([-2.0, 0.5, 3.0]), requires_grad=True)
    y = fg.clamp(a, -1.0, 1.0)
    assert y.grad_fn is not None and "Clamp" in y.grad_fn.name()
    g = fg.func.grad(lambda v: fg.clamp(v, -1.0, 1.0).sum())(fg.tensor(np.array([-2.0, 0.5, 1.0, 3.0])))
    np.testing.assert_array_equal(g.numpy(), [0.0, 1.0, 1.0, 0.0])


def test_clamp_node_names_match_torch():
    """The recorded node of each clamp spelling is torch's: clamp with numbers ClampBackward1, with a Tensor
    bound ClampBackward0, clamp_min/clamp_max with a number ClampMin/MaxBackward0, with a Tensor ...1."""
    got = []
    for lib in (fg, torch):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        lo = lib.tensor([0.0, 0.0, 0.0])
        got.append([r.grad_fn.name() for r in (
            x.clamp(0, 1), x.clamp(min=0), x.clamp(max=1), x.clip(0, 1), x.double().clamp(0, 1), x.clamp(lo),
            x.clamp(lo, lo + 1), x.clamp(min=lo), x.clamp_min(0), x.clamp_max(1), x.clamp_min(lo), x.clamp_max(lo))])
    assert got[0] == got[1]


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_where_of_same_shaped_tensors_matches_torch(shape, dtype):
    """torch.where(c, a, b) of same-shaped tensors of one dtype (one select bind): torch's WhereBackward0, values,
    and gradients of both branches, requiring grad with create_graph=True only through the cotangent."""
    rng = np.random.default_rng(0)
    c = rng.standard_normal(shape) > 0
    a, b = rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)
    res = []
    for lib in (fg, torch):
        ta, tb = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        r = lib.where(lib.tensor(c), ta, tb)
        g = lib.autograd.grad(r, (ta, tb), lib.tensor(a * 2, requires_grad=True), create_graph=True)
        res.append((r.grad_fn.name(), r.detach().numpy(), [x.detach().numpy() for x in g],
                    [x.requires_grad for x in g]))
    (nf, vf, gf, rf), (nt, vt, gt, rt) = res
    assert nf == nt == "WhereBackward0" and rf == rt
    same(vf, vt)
    for u, w in zip(gf, gt):
        same(u, w)
