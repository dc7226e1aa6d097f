"""The eagerly recorded Tensor autograd path (ops recorded as single primitive binds: broadcasting, views of
leaves, multi-output ops, second order, retain_graph, saved-tensor checks, hooks), checked against real PyTorch."""
import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")


def _grads(lib, f, arrays, seed=0):
    xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = f(lib, *xs)
    g = np.random.default_rng(seed).standard_normal(tuple(out.shape)).astype(np.asarray(arrays[0]).real.dtype)
    out.backward(lib.tensor(g))
    return np.asarray(out.detach()), [np.asarray(x.grad) for x in xs]


def _check(f, arrays, rtol=1e-5, atol=1e-6):
    of, gf = _grads(fg, f, arrays)
    ot, gt = _grads(torch, f, arrays)
    np.testing.assert_allclose(of, ot, rtol=rtol, atol=atol)
    for a, b in zip(gf, gt):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


rng = np.random.default_rng(0)
A = rng.standard_normal((3, 4))
B = rng.standard_normal((3, 4))
S = rng.standard_normal(())

CASES = {
    "mul": (lambda t, x, y: x * y, [A, B]),
    "same_input_twice": (lambda t, x, y: x * x + y, [A, B]),
    "scalar_broadcast": (lambda t, x, y: x.sum() * y, [A, B]),
    "0d_times_matrix": (lambda t, s, y: s * y + s, [S, B]),
    "row_broadcast": (lambda t, x, y: x[:1] * y, [A, B]),
    "chain": (lambda t, x, y: ((x * y).tanh().exp() / (1 + y * y)).sum(-1), [A, B]),
    "mean_mixed": (lambda t, x, y: (x.sigmoid() * 3 - y.tanh()).exp().mean() * x, [A, B]),
    "matmul": (lambda t, x, y: x @ y.T, [A, B]),
    "softmax": (lambda t, x, y: t.softmax(x * y, dim=-1), [A, B]),
    "where": (lambda t, x, y: t.where(x > 0, x * 2, y * y), [A, B]),
    "python_numbers_both_sides": (lambda t, x, y: 2.0 - x / 3 + 1.5 / (y * y + 1) - 0.5 * x + (2 - y) * 3,
                                  [A, B]),
    "views_of_leaves": (lambda t, x, y: x[1] * y[:, 2:].sum() + x.T.exp().sum(1) - y[0].tanh(), [A, B]),
    "unary_family": (lambda t, x, y: ((x * x + 1).sqrt().log() + (y * y + 1).rsqrt() + x.sin() * y.cos()
                                      + x.expm1() - (y * y).log1p() + x.sigmoid()).sum(0), [A, B]),
    "relu_chain": (lambda t, x, y: t.relu(x * y - 0.2) * t.relu(-x) + t.nn.functional.relu(y).sum(0), [A, B]),
    "sub_div_same_tensor": (lambda t, x, y: (x - x * y) / (y * y + 2) + (y / (x * x + 1)).sum(), [A, B]),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_recorded_ops_match_torch(name, dtype):
    f, arrays = CASES[name]
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-10)
    _check(f, [np.asarray(a, dtype) for a in arrays], **tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_second_order_through_direct_ops_matches_torch(dtype):
    """create_graph through ops recorded as single primitive binds (add, mul, exp, tanh, sum, numbers)."""
    out = []
    for lib in (fg, torch):
        x = lib.tensor(np.asarray(A, dtype), requires_grad=True)
        y = lib.tensor(np.asarray(B, dtype), requires_grad=True)
        z = ((x * y).tanh() * 2.0 + (x - 0.5).exp() / (y * y + 1)).sum()
        gx, gy = lib.autograd.grad(z, (x, y), create_graph=True)
        (gx.sum() * 3 + (gy * gy).sum()).backward()
        out.append([np.asarray(v.detach()) for v in (gx, gy, x.grad, y.grad)])
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-10)
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, **tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_special_values_match_torch(dtype):
    """relu's values (+0.0 for negatives, inf, -inf -> 0, NaN stays NaN) and its gradient (0 at 0, passed
    through at NaN) as torch."""
    vals = np.array([-np.inf, -3.5, -1e-30, 0.0, 1e-30, 2.0, np.inf, np.nan], dtype)
    big = np.tile(vals[1:], 400)  # (large arrays take relu's multiply form, small ones its select)
    for data in (vals, vals[1:], big, np.concatenate([big, vals[:1]])):  # with and without -inf
        res = []
        for lib in (fg, torch):
            x = lib.tensor(data, requires_grad=True)
            y = lib.relu(x * 1.0)
            y.backward(lib.tensor(np.arange(1, len(data) + 1, dtype=dtype) % 7))
            res.append((y.detach().numpy(), x.grad.numpy()))
        (yf, gf), (yt, gt) = res
        np.testing.assert_array_equal(yf, yt)
        with fg.no_grad():  # unrecorded: the same values
            np.testing.assert_array_equal(fg.relu(fg.tensor(data, requires_grad=True)).numpy(), yt)
        np.testing.assert_array_equal(fg.tensor(data).relu().numpy(), yt)
        assert not np.signbit(yf[~np.isnan(yf)]).any()
        np.testing.assert_array_equal(gf, gt)


def test_direct_ops_report_bad_shapes_as_torch():
    for lib in (fg, torch):
        x = lib.ones(2, 3, requires_grad=True)
        with pytest.raises(RuntimeError, match=r"size of tensor a \(3\) must match the size of tensor b \(4\)"):
            x + lib.ones(2, 4)
        with pytest.raises(RuntimeError, match=r"size of tensor a \(3\) must match the size of tensor b \(4\)"):
            x.detach() * lib.ones(4)


def test_detached_alias_is_a_constant():
    for lib in (fg, torch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (x * x.detach()).sum().backward()
        res = x.grad if lib is torch else torch.tensor(np.asarray(x.grad))
        if lib is fg:
            got = res
        else:
            want = res
    np.testing.assert_allclose(np.asarray(got), want.numpy())


def test_multi_output_ops():
    x0 = rng.standard_normal((4, 6))
    _check(lambda t, x: t.stack([a * (i + 1) for i, a in enumerate(x.unbind(1))]).sum(0), [x0])
    _check(lambda t, x: x.max(dim=1)[0] * 2, [x0])
    _check(lambda t, x: t.cat(x.split(2, dim=1)[::-1], 1), [x0])


def test_second_order_and_retain_graph():
    for lib in (fg, torch):
        x = lib.tensor([0.3, -1.2, 2.0], requires_grad=True)
        y = (x.tanh() * x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), x)
        if lib is fg:
            gf, hf = np.asarray(g.detach()), np.asarray(h)
        else:
            np.testing.assert_allclose(gf, g.detach().numpy(), rtol=1e-6)
            np.testing.assert_allclose(hf, h.numpy(), rtol=1e-5, atol=1e-6)
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * 2).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(np.asarray(x.grad), 4 * np.exp([1.0, 2.0]), rtol=1e-6)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_saved_tensor_modified_in_place_raises():
    for lib in (fg, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a * 1
        c = b.sin()
        b.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            c.sum().backward()
    # a value the backward does not read may change
    a = fg.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    c = b + 2
    e = b.exp()  # exp's backward reads its result, not its input (as torch's)
    b.add_(1)
    (c + e).sum().backward()
    np.testing.assert_allclose(np.asarray(a.grad), 1 + np.exp([1.0, 2.0]), rtol=1e-6)


def test_hooks_and_no_grad():
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), [30.0, 30.0])
    with fg.no_grad():
        z = x * 2
    assert z.grad_fn is None and not z.requires_grad
    assert (x * 2).grad_fn.name() == "MulBackward0"
