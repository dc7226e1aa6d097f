"""repr/str of tensors and set_printoptions, character for character against real torch."""
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")

CASES = [
    "m.tensor([1.5, 2.25, -3.0])", "m.tensor([1., 2., 3.])", "m.tensor(3.5)", "m.tensor(3.)", "m.tensor(-0.0)",
    "m.tensor([1.5, 2.], dtype=m.float64)", "m.tensor([1.5, 2.], dtype=m.float16)", "m.tensor([1, -20, 300])",
    "m.tensor([1, -20, 300], dtype=m.int32)", "m.tensor([1, 20, 255], dtype=m.uint8)", "m.tensor([True, False])",
    "m.tensor(True)", "m.tensor([])", "m.zeros(0, 3)", "m.zeros(0, dtype=m.long)", "m.zeros(2, 0, dtype=m.float64)",
    "m.arange(6.).reshape(2, 3) / 7", "m.arange(24.).reshape(2, 3, 4) / 7", "m.arange(2000.)",
    "m.arange(10000.).reshape(100, 100) / 3", "m.arange(2000)", "m.tensor([1e10, 1.0, 2.5])",
    "m.tensor([1e-10, 1.0, 2.5])", "m.tensor([0.001, 10.5])", "m.tensor([0.0001, 10.5])", "m.tensor([1e8, 1.])",
    "m.tensor([1e9, 1.])", "m.tensor([float('inf'), float('nan'), 1.5, -float('inf')])",
    "m.tensor([float('inf'), float('nan'), 1., -float('inf')])", "m.tensor([float('nan')])", "m.arange(30.) / 3",
    "m.arange(100) * 1000", "m.tensor([1+2j, 3.5-1j])", "m.tensor([1+2j, 3-1j])", "m.tensor([-1234.5678, 0.001])",
    "m.tensor([123456.789])", "m.tensor([0.00012345, 0.5])", "m.tensor([123456789., 1.])", "m.zeros(2, 0, 3)",
    "m.tensor(5)", "m.arange(1500).to(m.uint8)", "m.arange(40.).reshape(2, 20) / 3",
    "m.arange(1200.).reshape(2, 3, 10, 20)", "m.tensor([1., 2.], requires_grad=True)",
    "m.tensor([1., 2.], requires_grad=True, dtype=m.float64)", "m.tensor(5., requires_grad=True)",
    "m.arange(300.).reshape(3, 100) / 7",
]


@pytest.mark.parametrize("expr", CASES)
def test_repr_matches_torch(expr):
    t, f = eval(expr, {"m": torch}), eval(expr, {"m": fg})
    assert repr(f) == repr(t)
    assert str(f) == str(t)


GRAD_FNS = [
    "x * 2", "x + 2", "x - 3", "x / 3", "x ** 2", "-x", "x.exp()", "x.sum()", "x.mean()", "x.max()",
    "x.view(2, 2)", "x.reshape(4)", "x[0]", "x[:1]", "x[0, 1:]", "x[None]", "x[:, 0]", "x.t()", "x.transpose(0, 1)",
    "x.permute(1, 0)", "x.unsqueeze(0)", "x.squeeze()", "x.clone()", "x.abs()", "x.sqrt()", "x.log()",
    "x.sigmoid()", "x.tanh()", "x.relu()", "x @ x", "m.cat([x, x])", "m.stack([x, x])", "x.expand(2, 2, 2)",
    "x.clone().mul_(2)", "x.double()", "m.where(x > 0, x, x)", "x.softmax(0)",
]


@pytest.mark.parametrize("expr", GRAD_FNS)
def test_grad_fn_names_in_repr(expr):
    x_t = torch.ones(2, 2, requires_grad=True)
    x_f = fg.ones(2, 2, requires_grad=True)
    t, f = eval(expr, {"m": torch, "x": x_t}), eval(expr, {"m": fg, "x": x_f})
    assert repr(f) == repr(t)


OPTS = [dict(precision=2), dict(precision=8), dict(threshold=5), dict(threshold=5, edgeitems=1),
        dict(sci_mode=True), dict(sci_mode=False), dict(linewidth=20), dict(profile="short"), dict(profile="full")]
VALUES = ["m.tensor([1.123456789, 2.5, 1e-3])", "m.arange(20.)", "m.tensor([1e10, 1.])", "m.arange(12.).reshape(3, 4) / 7",
          "m.arange(12).reshape(3, 4)"]


@pytest.mark.parametrize("opts", OPTS)
def test_printoptions(opts):
    out = []
    for m in (torch, fg):
        m.set_printoptions(**opts)
        try:
            out.append([repr(eval(v, {"m": m})) for v in VALUES])
        finally:
            m.set_printoptions(profile="default")
            m.set_printoptions(sci_mode=None)
    assert out[0] == out[1]
