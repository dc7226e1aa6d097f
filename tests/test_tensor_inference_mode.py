"""Part-1 gaps: inference tensors, diag_embed(offset, dim1, dim2), scatter_reduce (mean, include_self=False),
nuclear and other matrix norms (torch.norm, torch.linalg), against real torch (values and gradients)."""
import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")


def err_or_val(f, m):
    try:
        r = f(m)
    except Exception as e:  # noqa: BLE001
        return ("raise", type(e), str(e)[:60])
    return ("value", repr(r) if not isinstance(r, tuple) else r)


INFERENCE = {
    "flags": lambda m: (lambda x: (x.is_inference(), m.ones(2).is_inference()))(_inf(m)),
    "saved": lambda m: m.ones(3, requires_grad=True) * _inf(m),
    "linear": lambda m: m.nn.functional.linear(_inf(m)[None], m.ones(1, 3, requires_grad=True)),
    "add ok": lambda m: m.ones(3, requires_grad=True) + _inf(m),
    "inplace outside": lambda m: _inf(m).add_(1),
    "setitem outside": lambda m: _inf(m).__setitem__(0, 2.0),
    "fill outside": lambda m: _inf(m).fill_(2.0),
    "copy outside": lambda m: _inf(m).copy_(m.zeros(3)),
    "inplace in no_grad": lambda m: _no_grad_add(m),
    "requires_grad_": lambda m: _inf(m).requires_grad_(),
    "derived": lambda m: (lambda x: (x.clone().is_inference(), (x * 2).is_inference(), x.view(3).is_inference(),
                                     x.detach().is_inference(), x.data.is_inference(), x[1:].is_inference()))(_inf(m)),
    "inside": lambda m: _inside(m),
    "mode False": lambda m: _mode_false(m),
    "normal view": lambda m: _normal_view(m),
    "no_grad ok": lambda m: _with_no_grad(m),
}


def _inf(m):
    with m.inference_mode():
        return m.ones(3)


def _no_grad_add(m):
    x = _inf(m)
    with m.no_grad():
        x.add_(1)


def _inside(m):
    x = m.ones(3)
    with m.inference_mode():
        y = m.ones(3)
        y.add_(1)
        x.add_(1)
        z = x * 2
    return y.tolist(), x.is_inference(), z.is_inference(), z.requires_grad


def _mode_false(m):
    with m.inference_mode():
        with m.inference_mode(False):
            return m.ones(2).is_inference()


def _normal_view(m):
    x = m.ones(3)
    with m.inference_mode():
        return x.view(3).is_inference()


def _with_no_grad(m):
    with m.no_grad():
        x = m.ones(3)
    w = m.ones(3, requires_grad=True)
    (w * x).sum().backward()
    return w.grad.tolist(), x.is_inference()


@pytest.mark.parametrize("case", list(INFERENCE))
def test_inference_tensors(case):
    assert err_or_val(INFERENCE[case], torch) == err_or_val(INFERENCE[case], fg)


def _both(f, x, grad=True):
    xt = torch.tensor(x, requires_grad=grad)
    xf = fg.tensor(x, requires_grad=grad)
    rt, rf = f(torch, xt), f(fg, xf)
    np.testing.assert_allclose(rf.detach().numpy(), rt.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert rf.shape == rt.shape and str(rf.dtype) == str(rt.dtype)
    if grad:
        w = np.random.RandomState(1).randn(*rt.shape)
        rt.backward(torch.tensor(w, dtype=rt.dtype))
        rf.backward(fg.tensor(w, dtype=rf.dtype))
        np.testing.assert_allclose(xf.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape,offset,d1,d2", [((3,), 0, -2, -1), ((3,), 2, 0, 1), ((2, 3), 1, 0, 2),
                                                ((2, 3), -1, 1, 0), ((2, 3), 2, -1, 0), ((2, 2, 3), 0, 1, 3),
                                                ((4,), -3, 1, 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_diag_embed(shape, offset, d1, d2, dtype):
    x = np.random.RandomState(0).randn(*shape).astype(dtype)
    _both(lambda m, t: m.diag_embed(t, offset=offset, dim1=d1, dim2=d2), x)
    _both(lambda m, t: t.diag_embed(offset, d1, d2), x)


@pytest.mark.parametrize("args", [(0, 0, 0), (0, 0, 3), (0, -3, 0)])
def test_diag_embed_errors(args):
    a = err_or_val(lambda m: m.diag_embed(m.ones(3), *args), torch)
    b = err_or_val(lambda m: m.diag_embed(m.ones(3), *args), fg)
    assert a[:2] == b[:2]


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin", "prod"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_reduce(reduce, include_self, dim):
    rs = np.random.RandomState(3)
    inp = rs.randn(4, 5)
    src = rs.randn(3, 5) if dim == 0 else rs.randn(4, 3)
    idx = rs.randint(0, 4 if dim == 0 else 5, size=src.shape)
    for grad in (False, True):
        if grad and reduce == "prod":
            continue  # prod's gradient with repeated indices: see test below
        st, it = torch.tensor(src, requires_grad=grad), torch.tensor(inp, requires_grad=grad)
        sf, i_f = fg.tensor(src, requires_grad=grad), fg.tensor(inp, requires_grad=grad)
        rt = it.scatter_reduce(dim, torch.tensor(idx), st, reduce=reduce, include_self=include_self)
        rf = i_f.scatter_reduce(dim, fg.tensor(idx), sf, reduce=reduce, include_self=include_self)
        np.testing.assert_allclose(rf.detach().numpy(), rt.detach().numpy(), rtol=1e-6, atol=1e-12)
        if grad:
            w = rs.randn(*rt.shape)
            rt.backward(torch.tensor(w))
            rf.backward(fg.tensor(w))
            np.testing.assert_allclose(i_f.grad.numpy(), it.grad.numpy(), rtol=1e-6, atol=1e-12)
            np.testing.assert_allclose(sf.grad.numpy(), st.grad.numpy(), rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_int_mean_and_errors(include_self):
    def f(m):
        src, idx, inp = m.tensor([1, 2, 3, 4, 5, 6]), m.tensor([0, 1, 0, 1, 2, 1]), m.tensor([1, 2, 3, 4])
        return inp.scatter_reduce(0, idx, src, reduce="mean", include_self=include_self).tolist()
    assert f(torch) == f(fg)
    a = err_or_val(lambda m: m.ones(3).scatter_reduce(0, m.tensor([0]), m.ones(1), reduce="foo"), torch)
    b = err_or_val(lambda m: m.ones(3).scatter_reduce(0, m.tensor([0]), m.ones(1), reduce="foo"), fg)
    assert a[:2] == b[:2]


def test_scatter_reduce_prod_gradient_repeated_index():
    for m in (torch, fg):
        src = m.tensor([1., 5., 3.], requires_grad=True)
        m.tensor([2., 0.]).scatter_reduce(0, m.tensor([0, 0, 1]), src, reduce="prod").sum().backward()
        if m is torch:
            want = src.grad.tolist()
    assert src.grad.tolist() == want


NORMS = [
    lambda m, t: m.norm(t, p="nuc"), lambda m, t: m.linalg.norm(t, ord="nuc"), lambda m, t: t.norm(p="nuc"),
    lambda m, t: m.linalg.matrix_norm(t, ord="nuc"), lambda m, t: m.linalg.norm(t),
    lambda m, t: m.linalg.norm(t, ord=2), lambda m, t: m.linalg.norm(t, ord=-2), lambda m, t: m.linalg.norm(t, ord=1),
    lambda m, t: m.linalg.norm(t, ord=float("inf")), lambda m, t: m.linalg.norm(t, ord="fro"),
    lambda m, t: m.linalg.vector_norm(t, ord=3), lambda m, t: m.linalg.svdvals(t),
]


@pytest.mark.parametrize("case", range(len(NORMS)))
@pytest.mark.parametrize("shape", [(3, 2), (2, 4)])
def test_matrix_norms(case, shape):
    x = np.random.RandomState(case).randn(*shape)
    _both(NORMS[case], x)


def test_batched_nuclear_norm_dims():
    x = np.random.RandomState(0).randn(2, 3, 4)
    _both(lambda m, t: m.linalg.norm(t, ord="nuc", dim=(1, 2)), x)
    _both(lambda m, t: m.norm(t, p="nuc", dim=(0, 2)), x)
    _both(lambda m, t: m.linalg.matrix_norm(t, ord="nuc", dim=(0, 2), keepdim=True), x)
    _both(lambda m, t: m.linalg.det(t[:, :3, :3]), x)
    for expr in ("m.linalg.norm(m.ones(3), ord='nuc')", "m.norm(m.ones(3), p='nuc')",
                 "m.linalg.norm(m.ones(2, 2, 2), ord='nuc')", "m.norm(m.ones(2, 2, 2), p='nuc')",
                 "m.linalg.matrix_norm(m.ones(2, 2), dim=(0, 0))"):
        a, b = err_or_val(lambda m: eval(expr), torch), err_or_val(lambda m: eval(expr), fg)
        assert a[:2] == b[:2], expr
