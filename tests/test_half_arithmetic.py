"""float16 and bfloat16 on the torch face as torch's CPU kernels compute them: reductions, linear, sigmoid,
softmax and gelu in float32 with one rounding at the end; bfloat16 tensors carry gradients of their own dtype."""
import numpy as np
import pytest

import funcgrad as ft

REDUCED = ["float16", "bfloat16"]


def _t(v, dn, lib=ft, grad=False):
    t = lib.tensor(np.asarray(v, np.float32)).to(getattr(lib, dn))
    return t.requires_grad_() if grad else t


def _np(t):
    return t.detach().float().numpy()


@pytest.mark.parametrize("dn", REDUCED)
def test_sums_accumulate_in_float32(dn):
    big = 2048.0 if dn == "float16" else 256.0   # (its spacing there is 2: adding 1 in the dtype is lost)
    v = _t([big] + [1.0] * 8, dn)
    assert _np(v.sum()) == big + 8
    assert _np(v.cumsum(0))[-1] == big + 8
    np.testing.assert_array_equal(_np(v.reshape(3, 3).sum(1)), [big + 2, 3, 3])
    m = np.float32(big + 8) / np.float32(9)
    assert _np(v.mean()) == _np(ft.tensor(m).to(getattr(ft, dn)))


@pytest.mark.parametrize("dn", REDUCED)
def test_linear_rounds_once(dn):
    big = 2048.0 if dn == "float16" else 256.0
    x, w, b = _t([[big, 1.0]], dn), _t([[1.0, 1.0]], dn), _t([1.0], dn)
    # x W^T + b = big + 2 exactly (representable); rounding x W^T first would lose both ones
    assert _np(ft.nn.functional.linear(x, w, b))[0, 0] == big + 2
    assert _np(ft.addmm(b, x, w.T))[0, 0] == big + 2


@pytest.mark.parametrize("dn", REDUCED)
def test_sigmoid_softmax_gelu_in_float32(dn):
    x = np.linspace(-6, 6, 97).astype(np.float32)
    xr = _np(_t(x, dn))                                  # the values as the reduced dtype holds them
    dt = getattr(ft, dn)
    ref = ft.tensor(1 / (1 + np.exp(-xr.astype(np.float32)))).to(dt)
    np.testing.assert_array_equal(_np(_t(x, dn).sigmoid()), _np(ref))
    e = np.exp(xr - xr.max())
    np.testing.assert_array_equal(_np(ft.softmax(_t(x, dn), 0)), _np(ft.tensor(e / e.sum()).to(dt)))
    g = ft.nn.functional.gelu(_t(x, dn))
    np.testing.assert_array_equal(_np(g), _np(ft.nn.functional.gelu(ft.tensor(xr)).to(dt)))


@pytest.mark.parametrize("dn", REDUCED)
def test_values_are_torchs(dn):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 200)).astype(np.float32)
    b = rng.standard_normal((200, 12)).astype(np.float32)
    v = rng.standard_normal(3000).astype(np.float32)
    ops = {
        "add": lambda L, a, b, v: a[:, :12] + b[:16], "mul": lambda L, a, b, v: a[:, :12] * b[:16],
        "div": lambda L, a, b, v: a[:, :12] / b[:16], "sum": lambda L, a, b, v: v.sum(),
        "sum_dim": lambda L, a, b, v: a.sum(1), "mean": lambda L, a, b, v: v.mean(),
        "mean_dim": lambda L, a, b, v: a.mean(0), "cumsum": lambda L, a, b, v: v.cumsum(0),
        "var": lambda L, a, b, v: v.var(), "matmul": lambda L, a, b, v: a @ b,
        "linear": lambda L, a, b, v: L.nn.functional.linear(a, b.T, v[:12]),
        "sigmoid": lambda L, a, b, v: a.sigmoid(), "softmax": lambda L, a, b, v: L.softmax(a, 1),
        "exp": lambda L, a, b, v: a.exp(), "tanh": lambda L, a, b, v: a.tanh(),
        "logsumexp": lambda L, a, b, v: a.logsumexp(1),
    }
    for name, f in ops.items():
        res = [_np(f(L, *[_t(x, dn, L) for x in (a, b, v)])) for L in (torch, ft)]
        np.testing.assert_array_equal(res[1], res[0], err_msg=name)


def test_bfloat16_gradients():
    x = _t([0.5, -1.25, 3.0], "bfloat16", grad=True)
    (x * x).sum().backward()
    assert x.grad.dtype == ft.bfloat16
    np.testing.assert_array_equal(_np(x.grad), [1.0, -2.5, 6.0])
    w = _t([[1.0, 2.0], [3.0, -4.0]], "bfloat16", grad=True)
    b = _t([0.5, 0.25], "bfloat16", grad=True)
    inp = _t([[1.0, 1.0], [2.0, 0.5]], "bfloat16")
    ft.nn.functional.linear(inp, w, b).sum().backward()
    assert w.grad.dtype == b.grad.dtype == ft.bfloat16
    np.testing.assert_array_equal(_np(w.grad), [[3.0, 1.5], [3.0, 1.5]])
    np.testing.assert_array_equal(_np(b.grad), [2.0, 2.0])
    with pytest.raises(RuntimeError, match="floating point"):
        ft.ones(2, dtype=ft.int64).requires_grad_()


def test_bfloat16_gradients_are_torchs():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    a, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((8, 30), (5, 30), (5,)))
    fs = {
        "linear": lambda L, a, w, b: L.nn.functional.linear(a, w, b).sum(),
        "mul": lambda L, a, w, b: (a * a).sum(),
        "exp_mean": lambda L, a, w, b: a.exp().mean(),
        "matmul": lambda L, a, w, b: (a @ w.T).pow(2).sum(),
        "relu_div": lambda L, a, w, b: (L.relu(a) / (1 + a.abs())).sum(),
        "gelu": lambda L, a, w, b: L.nn.functional.gelu(a).sum(),
    }
    for name, f in fs.items():
        grads = []
        for L in (torch, ft):
            ts = [_t(x, "bfloat16", L, grad=True) for x in (a, w, b)]
            f(L, *ts).backward()
            grads.append([(str(t.grad.dtype).split(".")[-1], _np(t.grad)) if t.grad is not None else None for t in ts])
        for g_t, g_f in zip(*grads):
            assert (g_t is None) == (g_f is None), name
            if g_t is not None:
                assert g_t[0] == g_f[0] == "bfloat16", name
                np.testing.assert_array_equal(g_f[1], g_t[1], err_msg=name)
