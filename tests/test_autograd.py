"""The define-by-run autograd engine against real PyTorch: gradients of every op family (Hypothesis shapes,
float32 and float64), in-place ops and views inside graphs, the saved-tensor version checks and other
errors, graph freeing, higher order with create_graph, hooks, retain_grad, autograd.grad, custom
Functions, grad modes, anomaly detection, gradcheck, a training loop step by step, and funcgrad.func."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg

torch = pytest.importorskip("torch")

FLOATS = [np.float32, np.float64]


def host(t):
    if t is None:
        return None
    return t.detach().numpy()


def close(a, b, dtype=np.float32, tol=None):
    if a is None or b is None:
        assert a is None and b is None, (a, b)
        return
    ha, hb = host(a), host(b)
    assert ha.shape == hb.shape and ha.dtype == hb.dtype, (ha.shape, hb.shape, ha.dtype, hb.dtype)
    tol = tol or (dict(rtol=1e-4, atol=1e-5) if np.dtype(dtype) == np.float32 else dict(rtol=1e-9, atol=1e-10))
    np.testing.assert_allclose(ha, hb, **tol, equal_nan=True)


def data(seed, shape, dtype, positive=False):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    return np.abs(x) + 0.5 if positive else x


def run(f, arrays, seed=0):
    """f(lib, *leaves) for funcgrad and torch; backward with a random cotangent; (outputs, grads) pairs."""
    res = []
    for lib in (fg, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = f(lib, *xs)
        g = data(seed + 99, tuple(out.shape), np.dtype(str(out.dtype).split(".")[1]))
        out.backward(lib.tensor(g))
        res.append((out, [x.grad for x in xs]))
    return res


def check(f, arrays, dtype, tol=None, seed=0):
    (of, gf), (ot, gt) = run(f, arrays, seed)
    close(of, ot, dtype, tol)
    for a, b in zip(gf, gt):
        close(a, b, dtype, tol)


shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)

UNARY = {
    "exp": lambda t, x: x.exp(), "log": lambda t, x: x.abs().add(0.5).log(), "sqrt": lambda t, x: (x * x + 1).sqrt(),
    "sigmoid": lambda t, x: t.sigmoid(x), "tanh": lambda t, x: x.tanh(), "relu": lambda t, x: x.relu(),
    "abs": lambda t, x: x.abs(), "sin_cos": lambda t, x: x.sin() * x.cos(), "pow2": lambda t, x: x ** 2,
    "pow3.5": lambda t, x: x.abs() ** 3.5, "rpow": lambda t, x: 2 ** x, "neg_div": lambda t, x: -x / 3,
    "rdiv": lambda t, x: 1 / (x * x + 1), "clamp": lambda t, x: x.clamp(-0.3, 0.4), "erf": lambda t, x: t.erf(x),
    "log1p_expm1": lambda t, x: x.abs().log1p() + x.expm1(), "square_rsqrt": lambda t, x: x.square() + (x * x + 1).rsqrt(),
    "softmax": lambda t, x: x.softmax(-1), "log_softmax": lambda t, x: t.log_softmax(x, dim=0),
    "where": lambda t, x: t.where(x > 0, x * 2, x * x), "masked_fill": lambda t, x: x.masked_fill(x > 0.5, 0.0),
    "mixed": lambda t, x: (x.sigmoid() * 3 - x.tanh()).exp().mean() * x,
}


@pytest.mark.parametrize("name", list(UNARY))
@given(shape=shapes, dtype=st.sampled_from(FLOATS), seed=st.integers(0, 2 ** 16))
def test_unary_gradients(name, shape, dtype, seed):
    check(UNARY[name], [data(seed, shape, dtype)], dtype, seed=seed)


BINARY = {
    "add": lambda t, x, y: x + y, "sub": lambda t, x, y: x - y, "mul": lambda t, x, y: x * y,
    "div": lambda t, x, y: x / (y * y + 1), "pow": lambda t, x, y: (x * x + 1) ** y,
    "maximum": lambda t, x, y: t.maximum(x, y), "minimum": lambda t, x, y: t.minimum(x, y),
    "atan2": lambda t, x, y: t.atan2(x, y), "add_alpha": lambda t, x, y: t.add(x, y, alpha=0.5),
    "where": lambda t, x, y: t.where(x > y, x, y), "clamp_t": lambda t, x, y: t.clamp(x, min=y),
}


@pytest.mark.parametrize("name", list(BINARY))
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4),
       dtype=st.sampled_from(FLOATS), seed=st.integers(0, 2 ** 16))
def test_binary_gradients_with_broadcasting(name, shapes, dtype, seed):
    s1, s2 = shapes.input_shapes
    check(BINARY[name], [data(seed, s1, dtype), data(seed + 1, s2, dtype)], dtype, seed=seed)


REDUCTIONS = {
    "sum": lambda t, x, d: x.sum(d), "sum_keep": lambda t, x, d: x.sum(d, keepdim=True), "sum_all": lambda t, x, d: x.sum(),
    "mean": lambda t, x, d: x.mean(d), "mean_all": lambda t, x, d: x.mean(), "prod": lambda t, x, d: x.prod(d),
    "std": lambda t, x, d: x.std(d) if x.shape[d] > 1 else x.sum(d), "var0": lambda t, x, d: x.var(d, unbiased=False),
    "max_d": lambda t, x, d: x.max(d).values, "min_keep": lambda t, x, d: x.min(d, keepdim=True)[0],
    "amax": lambda t, x, d: x.amax(d), "max_all": lambda t, x, d: x.max(), "logsumexp": lambda t, x, d: x.logsumexp(d),
    "norm": lambda t, x, d: x.norm(dim=d), "norm_all": lambda t, x, d: x.norm(), "norm1": lambda t, x, d: x.norm(1, d),
    "cumsum": lambda t, x, d: x.cumsum(d), "cumprod": lambda t, x, d: x.cumprod(d),
    "sort": lambda t, x, d: x.sort(d).values, "topk": lambda t, x, d: x.topk(1, d).values,
    "median": lambda t, x, d: x.median(d).values, "softmax": lambda t, x, d: x.softmax(d),
}


@pytest.mark.parametrize("name", list(REDUCTIONS))
@given(shape=shapes, dtype=st.sampled_from(FLOATS), seed=st.integers(0, 2 ** 16), data_=st.data())
def test_reduction_gradients(name, shape, dtype, seed, data_):
    d = data_.draw(st.integers(-len(shape), len(shape) - 1))
    check(lambda t, x: REDUCTIONS[name](t, x, d), [data(seed, shape, dtype)], dtype, seed=seed)


SHAPE_OPS = {
    "reshape": lambda t, x: x.reshape(-1), "view": lambda t, x: x.view(x.shape[0], -1), "t": lambda t, x: x[0].t(),
    "T2": lambda t, x: x.permute(1, 0, 2), "transpose": lambda t, x: x.transpose(0, 2),
    "flatten": lambda t, x: x.flatten(1), "unsqueeze": lambda t, x: x.unsqueeze(1).squeeze(1),
    "expand": lambda t, x: x[:, :1].expand(-1, 5, -1), "repeat": lambda t, x: x.repeat(2, 1, 1),
    "index": lambda t, x: x[1:, ::2], "index_int": lambda t, x: x[0, 1], "adv": lambda t, x: x[[0, 1, 1]],
    "adv2": lambda t, x: x[:, [2, 0], [1, 1]], "mask": lambda t, x: x[x > 0], "narrow": lambda t, x: x.narrow(2, 1, 2),
    "select": lambda t, x: x.select(1, -1), "unbind": lambda t, x: x.unbind(0)[1] * 2,
    "split": lambda t, x: x.split(1, 2)[1] + x.split([2, 1], 2)[1], "chunk": lambda t, x: x.chunk(2, 1)[0],
    "cat": lambda t, x: t.cat([x, x * 2], 1), "stack": lambda t, x: t.stack([x, x.exp()], -1),
    "gather": lambda t, x: x.gather(2, t.tensor([[[0, 2]] * 3] * 2)),
    "index_select": lambda t, x: x.index_select(1, t.tensor([0, 2, 2])),
    "scatter": lambda t, x: x.scatter(2, t.tensor([[[1], [0], [2]]] * 2), x[..., :1] * 3),
    "scatter_add": lambda t, x: x.scatter_add(2, t.tensor([[[1, 1]] * 3] * 2), x[..., :2]),
    "index_add": lambda t, x: x.index_add(1, t.tensor([0, 0]), x[:, :2] * 2),
    "masked_select": lambda t, x: x.masked_select(x > 0), "flip": lambda t, x: x.flip(0, 2),
    "roll": lambda t, x: x.roll(1, 2), "tril": lambda t, x: x[0].tril(), "diag": lambda t, x: x[0, :, :2].diag() if False else x[0, :2, :2].diag(),
    "contiguous": lambda t, x: x.transpose(0, 1).contiguous(), "clone": lambda t, x: x.clone(),
    "to64": lambda t, x: x.double() * 2, "mT": lambda t, x: x.mT, "movedim": lambda t, x: x.movedim(0, 2),
}


@pytest.mark.parametrize("name", list(SHAPE_OPS))
@pytest.mark.parametrize("dtype", FLOATS)
def test_shape_and_index_gradients(name, dtype):
    check(SHAPE_OPS[name], [data(3, (2, 3, 3), dtype)], dtype)


@given(m=st.integers(1, 4), k=st.integers(1, 4), n=st.integers(1, 4), dtype=st.sampled_from(FLOATS),
       seed=st.integers(0, 2 ** 16))
def test_matmul_gradients(m, k, n, dtype, seed):
    A, B, bA = data(seed, (m, k), dtype), data(seed + 1, (k, n), dtype), data(seed + 2, (2, m, k), dtype)
    v = data(seed + 3, (k,), dtype)
    for f, arrs in [(lambda t, a, b: a @ b, [A, B]), (lambda t, a, b: t.mm(a, b).tanh(), [A, B]),
                    (lambda t, a, b: t.bmm(a, b.expand(2, k, n)), [bA, B]), (lambda t, a, b: a @ b, [bA, B]),
                    (lambda t, a, b: a.mv(b), [A, v]), (lambda t, a, b: b @ a, [A, data(seed, (m,), dtype)]),
                    (lambda t, a, b: a.dot(b), [v, v]), (lambda t, a, b: t.outer(a, b), [v, v]),
                    (lambda t, a, b: t.einsum("ik,kj->ij", a, b), [A, B]),
                    (lambda t, a, b: t.addmm(b[0], a, b, beta=0.5, alpha=2), [A, B])]:
        check(f, arrs, dtype, seed=seed)


# --- graph semantics ----------------------------------------------------------------------------------

def test_leaf_accumulation_and_zeroing():
    for lib in (fg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        g = x.grad
        (x * 3).sum().backward()          # accumulates in place into the same tensor
        assert g is x.grad and x.grad.tolist() == [5.0, 7.0]
        x.grad.zero_()
        assert x.grad.tolist() == [0.0, 0.0]
        x.grad = None
        x.sum().backward()
        assert x.grad.tolist() == [1.0, 1.0] and x.is_leaf and x.grad_fn is None
        y = x * 2
        assert not y.is_leaf and y.requires_grad and type(y.grad_fn).__name__ == "MulBackward0"
        assert y.grad_fn.next_functions[0][0].__class__.__name__ == "AccumulateGrad"


def test_shared_leaf_and_diamond():
    def f(t, x, w):
        h = x * w
        return (h.sin() + h.cos() * x + w).sum()
    check(lambda t, x, w: f(t, x, w), [data(1, (3,), np.float64), data(2, (3,), np.float64)], np.float64)


def test_second_backward_raises_and_retain_graph():
    for lib in (fg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        assert x.grad.tolist() == [4.0, 8.0]
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.backward()


def test_backward_errors():
    for lib in (fg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
            (x * 2).backward()
        with pytest.raises(RuntimeError, match="does not require grad"):
            lib.ones(2).sum().backward()
        with pytest.raises(RuntimeError):
            (x * 2).backward(lib.ones(3))
        with pytest.raises(RuntimeError):
            lib.tensor([1, 2], requires_grad=True)
        with pytest.raises(RuntimeError):
            (x * 2).requires_grad_(False)
        with pytest.raises(RuntimeError):
            x.numpy()


def test_inplace_on_leaf_raises():
    for lib in (fg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        for op in (lambda: x.add_(1), lambda: x.mul_(2), lambda: x.zero_(), lambda: x.__setitem__(0, 5.0),
                   lambda: x[0].mul_(2), lambda: x.clamp_(0, 1), lambda: x.copy_(lib.ones(2))):
            with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
                op()
        with lib.no_grad():
            x.add_(1)                         # allowed under no_grad
        assert x.tolist() == [2.0, 3.0] and x._version == 1


def test_saved_tensor_modified_inplace_raises():
    for lib in (fg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a = x * 1
        b = a * a                              # saves a (version 0)
        a.add_(1)
        with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*version 1; expected version 0"):
            b.sum().backward()
        s = x.sigmoid()                        # saves its output
        s.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            s.sum().backward()
        w = lib.tensor([3.0], requires_grad=True)
        y = (w * x).sum()
        with lib.no_grad():
            x.mul_(2)                          # a leaf saved by the mul node
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()


def test_inplace_where_torch_allows_it():
    """In-place ops on values backward does not read (add's inputs, mul's output) are fine, as in torch."""
    def f(t, x, w):
        h = x * 2
        h.add_(1)                    # mul does not save its output
        a = x * 1
        out = a + w
        a.mul_(3)                    # add does not save its inputs
        return (h * h + out).sum() + a.sum()
    check(f, [data(0, (3,), np.float64), data(1, (3,), np.float64)], np.float64)


INPLACE = {
    "add_": lambda t, x, w: (x * 1).add_(w), "mul_": lambda t, x, w: (x * 1).mul_(w),
    "div_": lambda t, x, w: (x * 1).div_(w * w + 1), "chain": lambda t, x, w: (x * 1).mul_(2).add_(w).tanh_(),
    "exp_": lambda t, x, w: (x * w).exp_(), "relu_": lambda t, x, w: (x + w).relu_(),
    "clamp_": lambda t, x, w: (x + w).clamp_(-0.5, 0.5), "copy_": lambda t, x, w: (x * 1).copy_(w),
    "masked_fill_": lambda t, x, w: (x * w).masked_fill_(x > 0, 0.0),
    "view_mul_": lambda t, x, w: (lambda h: (h[1:].mul_(w[1:]), h)[1])(x * 1),
    "t_add_": lambda t, x, w: (lambda h: (h.t().add_(w.t()), h)[1])(x * 1),
    "setitem": lambda t, x, w: (lambda h: (h.__setitem__((slice(None), 0), w[:, 1] * 3), h)[1])(x * 2),
    "setitem_adv": lambda t, x, w: (lambda h: (h.__setitem__([0, 2], w[:2]), h)[1])(x * 2),
    "setitem_mask": lambda t, x, w: (lambda h: (h.__setitem__(h > 1, 0.0), h)[1])(x * w),
    "iadd_index": lambda t, x, w: (lambda h: (h[:, 1].__iadd__(w[:, 0]), h)[1])(x * 1),
    "zeros_setitem": lambda t, x, w: (lambda z: (z.__setitem__(1, x[0] * w[0]), z)[1])(t.zeros(3, 3)),
    "zeros_rows": lambda t, x, w: (lambda z: ([z.__setitem__(i, x[i] + w[i]) for i in range(3)], z)[1])(t.zeros(3, 3)),
    "base_after_view": lambda t, x, w: (lambda h: (h[0].mul_(w[0]), h.sum(0))[1])(x * 1),
    "view_after_base": lambda t, x, w: (lambda h, v: (h.mul_(w), v * v)[1])(*(lambda h: (h, h[1]))(x * 1)),
    "sibling_views": lambda t, x, w: (lambda h: (lambda a, b: (a.add_(w[0]), b * a)[1])(h[0], h[0]))(x * 1),
    "detach_copy": lambda t, x, w: (lambda z: (z.copy_(x), z * w)[1])(t.zeros(3, 3)),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_in_graph(name):
    check(INPLACE[name], [data(5, (3, 3), np.float64), data(6, (3, 3), np.float64)], np.float64)


CREATE_GRAPH_INPLACE = [
    lambda t, x: (lambda h: (h[1:].mul_(x[:2]), (h ** 2).sum())[1])(x * 1),
    lambda t, x: (lambda z: (z.__setitem__(0, x[1] ** 2), (z * x).sum())[1])(t.zeros(3, dtype=t.float64)),
    lambda t, x: (lambda h: (h.mul_(x), h.exp_(), h.sum())[2])(x * 1),
    lambda t, x: x.view(3, 1).expand(3, 2).t().reshape(-1).pow(3).sum(),
    lambda t, x: x[[0, 2, 2]].sin().sum() * x.max(),
    lambda t, x: t.stack([x, x * x]).softmax(0)[1].sum(),
    lambda t, x: (x.unsqueeze(0) @ x.unsqueeze(1)).sum() * x.norm(),
]


@pytest.mark.parametrize("k", range(len(CREATE_GRAPH_INPLACE)))
def test_create_graph_through_views_and_inplace(k):
    res = []
    for lib in (fg, torch):
        x = lib.tensor([0.3, -1.2, 0.7], dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(CREATE_GRAPH_INPLACE[k](lib, x), x, create_graph=True)
        h, = lib.autograd.grad((g * g).sum(), x)
        res.append((g, h))
    for a, b in zip(*res):
        close(a, b, np.float64)


def test_rnn_style_slice_assignment_loop():
    """out[t] = h inside a loop: each step records a slice-sized CopySlices node (no copy of the buffer)."""
    rng = np.random.default_rng(3)
    W, X = rng.standard_normal((4, 4)) * 0.5, rng.standard_normal((6, 2, 4))
    res = []
    for lib in (fg, torch):
        w = lib.tensor(W, requires_grad=True)
        xs = lib.tensor(X)
        out = lib.zeros(6, 2, 4, dtype=lib.float64)
        h = lib.zeros(2, 4, dtype=lib.float64)
        for step in range(6):
            h = (xs[step] + h @ w).tanh()
            out[step] = h
        out[:, :, 0] *= 2
        loss = (out ** 2).sum()
        loss.backward()
        res.append((loss, w.grad))
    for a, b in zip(*res):
        close(a, b, np.float64)


def test_version_counter_shared_by_views():
    for lib in (fg, torch):
        x = lib.zeros(3, 4)
        v = x[1]
        v.add_(1)
        assert x._version == v._version == 1
        x.t().mul_(2)
        assert v._version == 2
        d = x.data
        d.add_(1)                               # .data has its own version counter
        assert x._version == 2


def test_higher_order_create_graph():
    for f in [lambda t, x: (x ** 3).sum(), lambda t, x: (x.sin() * x).sum(), lambda t, x: (x.exp() / (1 + x * x)).sum(),
              lambda t, x: (x.tanh() @ x).sum() if False else (x.tanh() * x.sigmoid()).sum(),
              lambda t, x: x.softmax(0)[0] * x.norm()]:
        res = []
        for lib in (fg, torch):
            x = lib.tensor(data(4, (3,), np.float64), requires_grad=True)
            y = f(lib, x)
            g1, = lib.autograd.grad(y, x, create_graph=True)
            g2, = lib.autograd.grad(g1.sum(), x, create_graph=True)
            g3, = lib.autograd.grad((g2 * g2).sum(), x, retain_graph=True)
            x.grad = None
            g1.pow(2).sum().backward()
            res.append((g1, g2, g3, x.grad))
        for a, b in zip(*res):
            close(a, b, np.float64)


def test_graph_freeing_after_higher_order_matches_torch():
    """Which graphs a non-retaining backward frees (and so which later backward raises) matches torch."""
    fs = [lambda t, x: (x ** 3).sum(), lambda t, x: (x.sin() * x).sum(), lambda t, x: (x.exp() * x).sum()]
    for f in fs:
        outcome = []
        for lib in (fg, torch):
            x = lib.tensor([0.3, -0.2, 0.5], dtype=lib.float64, requires_grad=True)
            g1, = lib.autograd.grad(f(lib, x), x, create_graph=True)
            g2, = lib.autograd.grad(g1.sum(), x, create_graph=True, allow_unused=True)
            if g2 is not None:
                lib.autograd.grad((g2 * g2).sum(), x, allow_unused=True)
            try:
                g1.pow(2).sum().backward()
                outcome.append("ok")
            except RuntimeError:
                outcome.append("freed")
        assert outcome[0] == outcome[1]


def test_hessian_vector_product_and_mixed_partials():
    res = []
    for lib in (fg, torch):
        x = lib.tensor([0.3, -1.2], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([[1.0, 2.0], [0.5, -1.0]], dtype=lib.float64, requires_grad=True)
        y = ((w @ x).tanh() ** 2).sum()
        gx, = lib.autograd.grad(y, x, create_graph=True)
        v = lib.tensor([1.0, 0.5], dtype=lib.float64)
        hv, hw = lib.autograd.grad((gx * v).sum(), [x, w])
        res.append((gx, hv, hw))
    for a, b in zip(*res):
        close(a, b, np.float64)


def test_hooks_and_retain_grad():
    res = []
    for lib in (fg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        calls = []
        x.register_hook(lambda g: calls.append("x") or g * 2)
        y = x * 3
        y.retain_grad()
        h = y.register_hook(lambda g: calls.append("y") or g + 1)
        z = y.exp()
        z.register_hook(lambda g: calls.append("z"))
        (z * 2).sum().backward()
        h.remove()
        res.append((x.grad, y.grad, tuple(calls), y.retains_grad))
    (xg, yg, ca, ra), (xt, yt, ct, rt) = res
    close(xg, xt)
    close(yg, yt)
    assert ca == ct and ra == rt


def test_post_accumulate_grad_hook():
    for lib in (fg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.tolist()))
        (x * x).sum().backward()
        assert seen == [[2.0, 4.0]]


def test_autograd_grad_options():
    for lib in (fg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0], requires_grad=True)
        y = (x * 2).sum()
        with pytest.raises(RuntimeError, match="not have been used in the graph"):
            lib.autograd.grad(y, [x, w], retain_graph=True)
        gx, gw = lib.autograd.grad(y, [x, w], allow_unused=True, retain_graph=True)
        assert gx.tolist() == [2.0, 2.0] and gw is None
        gx, gw = lib.autograd.grad(y, [x, w], allow_unused=True, materialize_grads=True)
        assert gw.tolist() == [0.0]
        assert x.grad is None                       # autograd.grad does not accumulate
        h = x * x
        out = (h * 3).sum()
        gh, = lib.autograd.grad(out, h)             # with respect to a non-leaf
        assert gh.tolist() == [3.0, 3.0]
        a, b = x * 2, x * 3
        ga, = lib.autograd.grad([a.sum(), b.sum()], [x])
        assert ga.tolist() == [5.0, 5.0]
        gv, = lib.autograd.grad(x * x, x, grad_outputs=lib.tensor([1.0, -1.0]))
        assert gv.tolist() == [2.0, -4.0]
        with pytest.raises(RuntimeError, match="does not require grad"):
            lib.autograd.grad((x * 2).sum(), lib.ones(2))


def test_backward_inputs_argument():
    for lib in (fg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0], requires_grad=True)
        h = x * w
        (h * h).sum().backward(inputs=[w])
        assert x.grad is None and w.grad.item() == pytest.approx(2 * 3 * (1 + 4))
        h2 = x * w
        lib.autograd.backward([(h2 * 2).sum()], inputs=[x])
        assert x.grad.tolist() == [6.0, 6.0] and w.grad.item() == pytest.approx(30.0)


def test_detach_and_no_grad_cut_the_graph():
    for lib in (fg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        d = x.detach()
        assert not d.requires_grad and d.grad_fn is None
        y = (x * d).sum()
        y.backward()
        assert x.grad.tolist() == [1.0, 2.0]
        with lib.no_grad():
            z = x * 2
        assert not z.requires_grad and z.grad_fn is None
        e = x * 1
        e.detach_()
        assert e.grad_fn is None and not e.requires_grad
        assert (x.argmax()).requires_grad is False and (x > 1).requires_grad is False


# --- custom Functions -------------------------------------------------------------------------------

def _functions(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x ** 3 * k

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            assert ctx.needs_input_grad == (True, False)
            return g * 3 * x ** 2 * ctx.k, None

    class SortWithIdx(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            v, i = x.sort()
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            return v, i

        @staticmethod
        def backward(ctx, gv, gi):
            i, = ctx.saved_tensors
            return lib.zeros_like(gv).scatter(0, i, gv)

    class NoMaterialize(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            assert g2 is None
            return g1 * 2

    class SetupCtx(lib.autograd.Function):
        @staticmethod
        def forward(x, y):
            return x * y

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y, g * x
    return Cube, SortWithIdx, NoMaterialize, SetupCtx


def test_custom_function():
    res = []
    for lib in (fg, torch):
        Cube, SortWithIdx, NoMaterialize, SetupCtx = _functions(lib)
        x = lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([2.0, 1.0, 3.0], dtype=lib.float64, requires_grad=True)
        c = Cube.apply(x, 2.0)
        v, i = SortWithIdx.apply(x * 1)
        a, _ = NoMaterialize.apply(x)
        s = SetupCtx.apply(x, y)
        assert not i.requires_grad and v.requires_grad and type(c.grad_fn).__name__ == "CubeBackward"
        (c.sum() + (v * lib.arange(3.0, dtype=lib.float64)).sum() + a.sum() + s.sum()).backward()
        g2, = lib.autograd.grad(Cube.apply(x, 1.0).sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g2.sum(), x)
        res.append((c, x.grad, y.grad, g2, gg))
    for a, b in zip(*res):
        close(a, b, np.float64)


def test_custom_function_errors():
    for lib in (fg, torch):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.save_for_backward(x)
                return x * y

            @staticmethod
            def backward(ctx, g):
                return (g,)
        x = lib.tensor([1.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="incorrect number of gradients"):
            Bad.apply(x, x * 2).sum().backward()
        Cube = _functions(lib)[0]
        a = x * 1
        c = Cube.apply(a, 1.0)
        a.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            c.sum().backward()
        c = Cube.apply(x * 1, 1.0)
        c.sum().backward()
        with pytest.raises(RuntimeError, match="second time"):
            c.sum().backward()


# --- anomaly mode, gradcheck --------------------------------------------------------------------------

def test_detect_anomaly_reports_forward_trace():
    for lib in (fg, torch):
        x = lib.tensor([0.0, 1.0], requires_grad=True)
        with pytest.warns(UserWarning):
            with lib.autograd.detect_anomaly():
                y = (x.sqrt() * 0) / x
                with pytest.raises(RuntimeError, match="returned nan values"):
                    y.sum().backward()
    fg.autograd.set_detect_anomaly(True)
    try:
        assert fg.autograd.is_anomaly_enabled()
        x = fg.tensor([0.0], requires_grad=True)
        y = x / x
        with pytest.raises(RuntimeError, match="DivBackward0"), pytest.warns(UserWarning, match="test_autograd.py"):
            y.backward()
    finally:
        fg.autograd.set_detect_anomaly(False)
    x = fg.tensor([0.0], requires_grad=True)
    (x / x).backward()                         # no anomaly mode: NaN gradients pass silently, as in torch
    assert np.isnan(x.grad.item())


def test_gradcheck_and_gradgradcheck():
    x = fg.tensor(data(8, (3,), np.float64), requires_grad=True)
    w = fg.tensor(data(9, (3, 3), np.float64), requires_grad=True)
    assert fg.autograd.gradcheck(lambda a, b: (b @ a).tanh(), (x, w))
    assert fg.autograd.gradgradcheck(lambda a: (a.sin() * a).sum(), (x,))
    assert not fg.autograd.gradcheck(lambda a: _wrong(a), (x,), raise_exception=False)


def _wrong(a):
    class Wrong(fg.autograd.Function):
        @staticmethod
        def forward(ctx, v):
            return v * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3
    return Wrong.apply(a)


def test_autograd_functional():
    def f(v):
        return (v ** 2).sin()
    x = data(10, (3,), np.float64)
    jf = fg.autograd.functional.jacobian(f, fg.tensor(x))
    jt = torch.autograd.functional.jacobian(f, torch.tensor(x))
    close(jf, jt, np.float64)
    hf = fg.autograd.functional.hessian(lambda v: f(v).sum(), fg.tensor(x))
    ht = torch.autograd.functional.hessian(lambda v: f(v).sum(), torch.tensor(x))
    close(hf, ht, np.float64)


_FUNCTIONAL_ERRORS = {
    "jacobian_strict": lambda L: L.autograd.functional.jacobian(lambda a: L.ones(3), L.ones(3), strict=True),
    "vjp_strict": lambda L: L.autograd.functional.vjp(lambda a: L.ones(3), L.ones(3), L.ones(3), strict=True),
    "vjp_v_none": lambda L: L.autograd.functional.vjp(lambda a: a.sin(), L.ones(3)),
    "hvp_v_none": lambda L: L.autograd.functional.hvp(lambda a: a.sin().sum(), L.ones(3)),
    "hvp_vector_output": lambda L: L.autograd.functional.hvp(lambda a: a.sin(), L.ones(3), L.ones(3)),
    "jvp_v_none": lambda L: L.autograd.functional.jvp(lambda a: a, L.ones(3)),
    "func_grad_int": lambda L: L.func.grad(lambda a: a.sum())(L.tensor([1, 2])),
    "func_grad_and_value_int": lambda L: L.func.grad_and_value(lambda a, b: (a * b).sum(), argnums=1)(
        L.ones(2), L.tensor([1, 2])),
}


@pytest.mark.parametrize("case", sorted(_FUNCTIONAL_ERRORS))
def test_autograd_functional_and_func_errors_as_torch(case):
    """torch.autograd.functional's strict mode and its v=None rules, and torch.func.grad of an integer tensor:
    torch's RuntimeError and message (ours returned zeros / ones, or raised a TypeError)."""
    got = []
    for L in (fg, torch):
        with pytest.raises(Exception) as info:
            _FUNCTIONAL_ERRORS[case](L)
        got.append((type(info.value).__name__, str(info.value).split("\n")[0]))
    assert got[0] == got[1]


def test_autograd_functional_v_none_for_one_element():
    """v may be omitted where the input (jvp, hvp) or the output (vjp) has one element: ones, as torch."""
    res = []
    for L in (fg, torch):
        x = L.tensor([0.7], dtype=L.float64)
        F = L.autograd.functional
        res.append([t.numpy() for t in (F.jvp(lambda a: a.sin() * 3, x)[1], F.hvp(lambda a: a.sin().sum(), x)[1],
                                        F.vjp(lambda a: a.exp().sum(), x)[1])])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12)


# --- a training loop, step by step -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
def test_linear_regression_sgd_matches_torch(dtype):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((64, 3)).astype(dtype)
    Y = (X @ np.array([[1.5], [-2.0], [0.5]], dtype) + 0.3 + 0.01 * rng.standard_normal((64, 1))).astype(dtype)
    traces = []
    for lib in (fg, torch):
        x, y = lib.tensor(X), lib.tensor(Y)
        w = lib.zeros(3, 1, dtype=getattr(lib, np.dtype(dtype).name), requires_grad=True)
        b = lib.zeros(1, dtype=getattr(lib, np.dtype(dtype).name), requires_grad=True)
        losses = []
        for step in range(30):
            pred = x @ w + b
            loss = ((pred - y) ** 2).mean()
            loss.backward()
            with lib.no_grad():
                w -= 0.1 * w.grad
                b -= 0.1 * b.grad
            w.grad.zero_()
            b.grad.zero_()
            losses.append(loss.item())
        traces.append((np.array(losses), w.detach().numpy().copy(), b.detach().numpy().copy()))
    (lf, wf, bf), (lt, wt, bt) = traces
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(lf, lt, rtol=tol, atol=tol)
    np.testing.assert_allclose(wf, wt, rtol=tol, atol=tol)
    np.testing.assert_allclose(bf, bt, rtol=tol, atol=tol)
    assert lf[-1] < 0.01 * lf[0]


def test_two_layer_mlp_training_matches_torch():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((32, 4)).astype(np.float32)
    labels = rng.integers(0, 3, 32)
    W1, W2 = (rng.standard_normal((4, 8)) * 0.5).astype(np.float32), (rng.standard_normal((8, 3)) * 0.5).astype(np.float32)
    traces = []
    for lib in (fg, torch):
        x, lab = lib.tensor(X), lib.tensor(labels)
        w1, w2 = lib.tensor(W1, requires_grad=True), lib.tensor(W2, requires_grad=True)
        b1 = lib.zeros(8, requires_grad=True)
        params = [w1, b1, w2]
        losses = []
        for _ in range(15):
            h = (x @ w1 + b1).relu()
            logp = (h @ w2).log_softmax(dim=1)
            loss = -logp[lib.arange(32), lab].mean()
            for p in params:
                p.grad = None
            loss.backward()
            with lib.no_grad():
                for p in params:
                    p.add_(p.grad, alpha=-0.5)
            losses.append(loss.item())
        traces.append(np.array(losses))
    np.testing.assert_allclose(traces[0], traces[1], rtol=2e-5, atol=2e-5)


# --- funcgrad.func against torch.func ---------------------------------------------------------------------

def test_func_transforms():
    import torch.func as TF
    from funcgrad import func as F
    w = data(0, (3,), np.float32)
    xs = data(1, (5, 3), np.float32)

    def loss(w, x):
        return (x @ w).tanh().sum()

    pairs = [
        (F.grad(loss)(fg.tensor(w), fg.tensor(xs)), TF.grad(loss)(torch.tensor(w), torch.tensor(xs))),
        (F.grad(loss, argnums=1)(fg.tensor(w), fg.tensor(xs)), TF.grad(loss, argnums=1)(torch.tensor(w), torch.tensor(xs))),
        (F.vmap(F.grad(loss), in_dims=(None, 0))(fg.tensor(w), fg.tensor(xs[:, None])),
         TF.vmap(TF.grad(loss), in_dims=(None, 0))(torch.tensor(w), torch.tensor(xs[:, None]))),
        (F.jacrev(lambda v: (fg.tensor(xs) @ v).sin())(fg.tensor(w)), TF.jacrev(lambda v: (torch.tensor(xs) @ v).sin())(torch.tensor(w))),
        (F.jacfwd(lambda v: (fg.tensor(xs) @ v).sin())(fg.tensor(w)), TF.jacfwd(lambda v: (torch.tensor(xs) @ v).sin())(torch.tensor(w))),
        (F.hessian(loss)(fg.tensor(w), fg.tensor(xs)), TF.hessian(loss)(torch.tensor(w), torch.tensor(xs))),
        (F.vmap(lambda r: r.softmax(0))(fg.tensor(xs)), TF.vmap(lambda r: r.softmax(0))(torch.tensor(xs))),
    ]
    for a, b in pairs:
        close(a, b)
    gf, vf = F.grad_and_value(loss)(fg.tensor(w), fg.tensor(xs))
    gt, vt = TF.grad_and_value(loss)(torch.tensor(w), torch.tensor(xs))
    close(gf, gt)
    close(vf, vt)
    of, fnf = F.vjp(lambda v: v.exp() * 2, fg.tensor(w))
    ot, fnt = TF.vjp(lambda v: v.exp() * 2, torch.tensor(w))
    close(of, ot)
    close(fnf(fg.ones(3))[0], fnt(torch.ones(3))[0])
    pf, tf_ = F.jvp(lambda v: v.sin(), (fg.tensor(w),), (fg.ones(3),))
    pt, tt = TF.jvp(lambda v: v.sin(), (torch.tensor(w),), (torch.ones(3),))
    close(pf, pt)
    close(tf_, tt)

    def with_inplace(v):
        z = v.clone()
        z[0] = 0.0
        z.mul_(2)
        return (z * z).sum()
    close(F.grad(with_inplace)(fg.tensor(w)), TF.grad(with_inplace)(torch.tensor(w)))


def test_func_linearize_and_stack_module_state():
    x = np.random.default_rng(3).standard_normal(4).astype(np.float32)
    for L in (fg, torch):
        out, jvp_fn = L.func.linearize(lambda t: t.sin() * t, L.tensor(x))
        t = L.tensor(np.ones(4, np.float32))
        if L is fg:
            got = (out.numpy(), jvp_fn(t).numpy())
        else:
            want = (out.numpy(), jvp_fn(t).numpy())
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5)
    models = [fg.nn.Linear(3, 2) for _ in range(3)]
    params, buffers = fg.func.stack_module_state(models)
    assert params["weight"].shape == (3, 2, 3) and buffers == {} and params["weight"].requires_grad
    np.testing.assert_array_equal(params["bias"][1].detach().numpy(), models[1].bias.detach().numpy())
