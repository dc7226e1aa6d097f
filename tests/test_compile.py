"""torch.compile through funcgrad.jit: outputs and gradients equal eager, BatchNorm's buffers updated, the
eager fallback logged once per call signature, fullgraph=True raising, torch's argument checks."""
from __future__ import annotations

import copy
import logging

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.nn as nn
from funcgrad._torch._compile import OptimizedModule


def _model():
    fg.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Tanh(), nn.Linear(8, 2))
    return m.to(fg.float64)


def _assert_same(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_module_outputs_gradients_and_buffers_equal_eager():
    m = _model()
    ref = copy.deepcopy(m)
    c = fg.compile(m)
    assert isinstance(c, OptimizedModule) and c._orig_mod is m
    for step in range(3):
        x = fg.randn(5, 4, dtype=fg.float64)
        y, y_ref = c(x), ref(x)
        _assert_same(y, y_ref)
        (y ** 2).sum().backward()
        (y_ref ** 2).sum().backward()
        for (name, p), q in zip(m.named_parameters(), ref.parameters()):
            _assert_same(p.grad, q.grad)
        # BatchNorm's running statistics are written back into the module after each call
        _assert_same(m[1].running_mean, ref[1].running_mean)
        _assert_same(m[1].running_var, ref[1].running_var)
        assert int(m[1].num_batches_tracked) == int(ref[1].num_batches_tracked) == step + 1
        with fg.no_grad():  # an optimizer-like update of the parameters is seen by the next compiled call
            for p, q in zip(m.parameters(), ref.parameters()):
                p -= 0.1 * p.grad
                q -= 0.1 * q.grad
                p.grad = q.grad = None
    c.eval()
    ref.eval()
    x = fg.randn(3, 4, dtype=fg.float64)
    _assert_same(c(x), ref(x))
    assert int(m[1].num_batches_tracked) == 3  # eval mode: buffers unchanged


def test_module_matches_torch_batchnorm_statistics():
    torch = pytest.importorskip("torch")
    m = _model()
    t = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.Tanh(),
                            torch.nn.Linear(8, 2)).double()
    t.load_state_dict({k: torch.tensor(v.numpy()) for k, v in m.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((6, 4))
    y = fg.compile(m)(fg.tensor(x))
    y_t = t(torch.tensor(x))
    np.testing.assert_allclose(y.detach().numpy(), y_t.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(m[1].running_var.numpy(), t[1].running_var.numpy(), rtol=1e-12)


def test_function_gradient_equals_derivative():
    def f(a, b):
        return fg.sin(a) * b

    cf = fg.compile(f)
    a = fg.tensor([0.1, 0.7, -1.2], dtype=fg.float64, requires_grad=True)
    b = fg.tensor([2.0, -1.0, 0.5], dtype=fg.float64, requires_grad=True)
    out = cf(a, b)
    out.sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), np.sin(a.detach().numpy()) * b.detach().numpy(), rtol=1e-15)
    np.testing.assert_allclose(a.grad.numpy(), np.cos(a.detach().numpy()) * b.detach().numpy(), rtol=1e-15)
    np.testing.assert_allclose(b.grad.numpy(), np.sin(a.detach().numpy()), rtol=1e-15)


def test_function_closing_over_a_module_trains_it():
    m = _model()
    ref = copy.deepcopy(m)

    def loss(x):
        return (m(x) ** 2).mean()
    cl = fg.compile(loss)
    x = fg.randn(4, 4, dtype=fg.float64)
    cl(x).backward()
    ((ref(x) ** 2).mean()).backward()
    for p, q in zip(m.parameters(), ref.parameters()):
        _assert_same(p.grad, q.grad)


def _records(caplog):
    return [r for r in caplog.records if r.name == "funcgrad.compile"]


@pytest.mark.parametrize("case", ["control_flow", "item", "inplace_input", "dropout"])
def test_fallback_runs_eagerly_and_logs_once(case, caplog):
    def control_flow(x):
        return x * 2 if x.sum() > 0 else x - 1

    def item(x):
        return x * x.max().item()

    def inplace_input(x):
        x.add_(1)
        return x * 2

    drop = nn.Dropout(0.5)

    def dropout(x):
        return drop(x)
    fn = {"control_flow": control_flow, "item": item, "inplace_input": inplace_input, "dropout": dropout}[case]
    reason = {"control_flow": "control flow", "item": "control flow", "inplace_input": "in place to an input",
              "dropout": "random numbers"}[case]
    c = fg.compile(fn)
    with caplog.at_level(logging.WARNING, logger="funcgrad.compile"):
        for _ in range(3):
            x = fg.tensor([1.0, 2.0, 3.0])
            fg.manual_seed(1)
            got = c(fg.tensor([1.0, 2.0, 3.0]))
            fg.manual_seed(1)
            want = fn(x)
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    recs = _records(caplog)
    assert len(recs) == 1 and reason in recs[0].getMessage() and fn.__name__ in recs[0].getMessage()


def test_fallback_is_per_signature(caplog):
    def f(x):
        return x * 2 if x.shape[0] > 2 and x.sum() > 0 else x * 3
    c = fg.compile(f)
    with caplog.at_level(logging.WARNING, logger="funcgrad.compile"):
        np.testing.assert_array_equal(c(fg.ones(2)).numpy(), [3.0, 3.0])  # shapes are static: traced
        np.testing.assert_array_equal(c(fg.ones(3)).numpy(), [2.0, 2.0, 2.0])  # value-dependent: eager
        c(fg.ones(3))
    assert len(_records(caplog)) == 1


def test_fullgraph_raises():
    def f(x):
        return x if x.sum() > 0 else -x
    with pytest.raises(RuntimeError, match="fullgraph=True"):
        fg.compile(f, fullgraph=True)(fg.ones(2))


def test_arguments_checked_as_torch():
    torch = pytest.importorskip("torch")
    for kw in (dict(backend="nope"), dict(mode="fast"), dict(mode="default", options={})):
        with pytest.raises(RuntimeError) as fe:
            fg.compile(lambda x: x, **kw)
        with pytest.raises(RuntimeError) as te:
            torch.compile(lambda x: x, **kw)
        assert str(fe.value) == str(te.value)
    m = nn.Linear(2, 2)
    assert fg.compile(m, disable=True) is m
    assert fg.compiler.list_backends() == torch.compiler.list_backends()
    c = fg.compile(m, backend=lambda gm, inputs: gm, mode="max-autotune", dynamic=True)
    np.testing.assert_array_equal(c(fg.ones(1, 2)).detach().numpy(), m(fg.ones(1, 2)).detach().numpy())
    assert list(c.state_dict()) == list(torch.compile(torch.nn.Linear(2, 2)).state_dict())


def test_decorator_form():
    @fg.compile(mode="reduce-overhead")
    def f(x, k: int = 2):
        return x ** k
    np.testing.assert_array_equal(f(fg.tensor([3.0]), k=3).numpy(), [27.0])
    np.testing.assert_array_equal(f(fg.tensor([3.0])).numpy(), [9.0])
    assert f.__name__ == "f"


_scale = fg.ones(3, dtype=fg.float64)
_factor = 2.0


def _global_reader(x):
    return x * _scale * _factor


def test_changed_closure_globals_and_module_attributes_recompile():
    # what a compiled program froze in as a constant is guarded (as torch's guards): an in-place update or a
    # rebinding of a closed-over or global tensor, a changed global scalar, a module's flag or factor
    global _scale, _factor
    x = fg.ones(3, dtype=fg.float64)
    cf = fg.compile(_global_reader)
    assert cf(x).tolist() == [2.0] * 3
    _scale.mul_(2)
    assert cf(x).tolist() == [4.0] * 3
    _factor = 5.0
    assert cf(x).tolist() == [10.0] * 3
    _scale = fg.full((3,), 10.0, dtype=fg.float64)
    assert cf(x).tolist() == [50.0] * 3
    _scale, _factor = fg.ones(3, dtype=fg.float64), 2.0

    shift = fg.zeros(3, dtype=fg.float64)
    cg = fg.compile(lambda v: v + shift)
    assert cg(x).tolist() == [1.0] * 3
    shift.add_(1.5)
    assert cg(x).tolist() == [2.5] * 3
    shift.data = fg.full((3,), 7.0, dtype=fg.float64)
    assert cg(x).tolist() == [8.0] * 3

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.k, self.use_abs, self.offset = 1.0, False, fg.zeros(3, dtype=fg.float64)

        def forward(self, v):
            y = v * self.k + self.offset
            return y.abs() if self.use_abs else y
    m = M()
    cm = fg.compile(m)
    v = fg.tensor([-1.0, 2.0, -3.0], dtype=fg.float64)
    assert cm(v).tolist() == [-1.0, 2.0, -3.0]
    m.k = 3.0
    assert cm(v).tolist() == [-3.0, 6.0, -9.0]
    m.use_abs = True
    assert cm(v).tolist() == [3.0, 6.0, 9.0]
    m.offset.fill_(-10.0)
    assert cm(v).tolist() == [13.0, 4.0, 19.0]
    built = dict(cm._compiled.cache)
    assert cm(v).tolist() == [13.0, 4.0, 19.0]
    assert all(cm._compiled.cache[k] is e for k, e in built.items())   # nothing changed: nothing rebuilt


def test_jit_of_torch_code_that_draws_random_numbers_refuses():
    """funcgrad.jit over torch-face code with dropout in training mode would freeze one mask into the program:
    it raises, naming the cause; eager grad, torch.compile (eager fallback) and eval mode still work."""
    from funcgrad.func import functional_call
    m = fg.nn.Sequential(fg.nn.Linear(4, 4), fg.nn.Dropout(0.5)).train()
    x = fg.ones(2, 4)
    p = dict(m.named_parameters())
    state = fg.get_rng_state()
    with pytest.raises(RuntimeError, match="draws random numbers"):
        fg.jit(lambda p, x: functional_call(m, p, (x,)))(p, x)
    assert fg.equal(fg.get_rng_state(), state)  # nothing was drawn
    fg.manual_seed(3)
    eager = [m(x) for _ in range(3)]
    fg.manual_seed(3)
    compiled = fg.compile(m)
    assert all(fg.equal(compiled(x), e) for e in eager)  # eager's fresh mask on each call
    m.eval()
    np.testing.assert_allclose(fg.jit(lambda p, x: functional_call(m, p, (x,)))(p, x), m(x).detach().numpy())
