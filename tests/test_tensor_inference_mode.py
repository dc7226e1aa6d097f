"""Inference tensors (torch.inference_mode): which tensors are inference tensors, what may be done with them
inside and outside the mode, and the errors, compared case by case with real torch."""
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")
from torch_check import err_or_val  # noqa: E402


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
