"""What the torch face's graph keeps alive: a node keeps only the values its vjp rules read (as torch saves only
what its derivative formulas use), so intermediates that no backward formula needs are freed during the forward
pass; after backward (without retain_graph) the graph's values are freed, so memory stays flat over steps. The
values dropped must not change any gradient: first, second and third derivatives through such nodes are checked
against their exact values (and torch where installed)."""
import gc
import tracemalloc

import numpy as np
import pytest

import funcgrad as fg

B, H, STEPS = 64, 128, 40
ROW = B * H * 8  # bytes of one (B, H) float64 value


def _rnn(lib, W, b, h0, steps=STEPS):
    """A tanh RNN: h <- tanh(h @ W + b). torch saves per step h (the matmul's input; the previous step's
    tanh output) and nothing else new: the matmul's and the add's outputs are read by no formula."""
    h = h0
    for _ in range(steps):
        h = lib.tanh(h @ W + b)
    return h


def _params():
    rng = np.random.default_rng(0)
    W = fg.tensor(rng.standard_normal((H, H)) / np.sqrt(H), requires_grad=True)
    b = fg.tensor(rng.standard_normal(H) * 0.1, requires_grad=True)
    h0 = fg.tensor(rng.standard_normal((B, H)))
    return W, b, h0


def test_graph_keeps_only_values_backward_reads():
    W, b, h0 = _params()
    _rnn(fg, W, b, h0, 2).sum().backward()  # warm caches (the analysis of each rule, placeholders)
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        loss = _rnn(fg, W, b, h0).sum()
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    # one (B, H) value per step is needed (each tanh output, read by tanh's rule and the next matmul's);
    # keeping the matmul's and the add's outputs too would be 3 per step
    assert held < 1.3 * STEPS * ROW, (held / ROW, STEPS)
    assert held > 0.9 * STEPS * ROW, (held / ROW, STEPS)  # (the measurement sees the graph at all)
    loss.backward()


def test_memory_flat_over_training_steps():
    W, b, h0 = _params()
    opt = fg.optim.SGD([W, b], lr=1e-3)

    def step():
        opt.zero_grad()
        loss = _rnn(fg, W, b, h0).pow(2).mean()
        loss.backward()
        opt.step()

    step()
    gc.collect()
    tracemalloc.start()
    try:
        step()
        gc.collect()
        after1, peak1 = tracemalloc.get_traced_memory()
        for _ in range(5):
            step()
        gc.collect()
        after6, peak6 = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after6 - after1 < ROW, (after1, after6)  # nothing accumulates across steps
    assert peak1 < 1.5 * STEPS * ROW and peak6 < 1.5 * STEPS * ROW, (peak1 / ROW, peak6 / ROW)


def test_intermediate_freed_when_no_rule_reads_it():
    import weakref
    x = fg.tensor(np.linspace(-1, 1, 1000), requires_grad=True)
    a = x @ fg.ones(1000, 1000, dtype=fg.float64)  # read by no rule below: add's rule reads nothing
    ref = weakref.ref(a._v)
    y = (a + 1.0).exp()
    del a
    gc.collect()
    assert ref() is None
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(np.linspace(-1, 1, 1000).sum() + 1.0) * 1000, rtol=1e-12)


def test_higher_derivatives_through_nodes_keeping_only_outputs():
    """tanh's and exp's rules read only their outputs, whose tensors are gone here (sum reads nothing):
    create_graph's backward uses the saved outputs as tensors whose grad_fn is the node (torch's saved
    outputs), so the derivatives of the derivative are right."""
    xs = np.array([-1.3, -0.2, 0.4, 1.1])
    x = fg.tensor(xs, requires_grad=True)
    y = fg.tanh(x).sum() + fg.exp(2 * x).sum() + (x.sigmoid() * x).sum()
    g1, = fg.autograd.grad(y, x, create_graph=True)
    g2, = fg.autograd.grad(g1.sum(), x, create_graph=True)
    g3, = fg.autograd.grad(g2.sum(), x)
    t, s, e = np.tanh(xs), 1 / (1 + np.exp(-xs)), np.exp(2 * xs)
    ds = s * (1 - s)
    d2s = ds * (1 - 2 * s)
    d3s = d2s * (1 - 2 * s) - 2 * ds * ds
    np.testing.assert_allclose(g1.detach().numpy(), (1 - t ** 2) + 2 * e + s + xs * ds, rtol=1e-12)
    np.testing.assert_allclose(g2.detach().numpy(), -2 * t * (1 - t ** 2) + 4 * e + 2 * ds + xs * d2s, rtol=1e-12)
    np.testing.assert_allclose(g3.numpy(), -2 * (1 - t ** 2) ** 2 + 4 * t ** 2 * (1 - t ** 2) + 8 * e
                               + 3 * d2s + xs * d3s, rtol=1e-10)


def test_in_place_change_of_a_value_no_rule_reads_is_allowed():
    """As in torch: add saves nothing, so modifying its input in place before backward is fine; mul
    saves its inputs, so modifying one raises."""
    for lib in (fg, pytest.importorskip("torch")) if _has_torch() else (fg,):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a = x * 1
        y = a + 2
        a.mul_(3)
        y.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a = x * 1
        y = a * x
        a.mul_(3)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def _has_torch():
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


def test_higher_derivatives_match_torch():
    torch = pytest.importorskip("torch")
    xs = np.array([-0.7, 0.3, 0.9])
    res = []
    for lib in (fg, torch):
        x = lib.tensor(xs, requires_grad=True)
        w = lib.tensor(xs[::-1].copy(), requires_grad=True)
        y = (lib.tanh(x * w + 1).exp().sum() + (x.sigmoid() / (w * w + 1)).sum())
        g1 = lib.autograd.grad(y, (x, w), create_graph=True)
        g2 = lib.autograd.grad((g1[0] * g1[1]).sum(), (x, w), create_graph=True)
        g3 = lib.autograd.grad(g2[0].sum() + g2[1].pow(2).sum(), (x, w))
        res.append([t.detach().numpy() for t in g1 + g2 + g3])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
