"""torch.masked: MaskedTensor (elementwise ops, reductions, autograd) and the masked reductions on tensors."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg

DATA = np.arange(6.0).reshape(2, 3)
MASK = np.array([[True, False, True], [False, False, True]])


def _mt(lib=fg):
    return lib.masked.masked_tensor(lib.tensor(DATA), lib.tensor(MASK))


def test_reductions_exact():
    mt = _mt()
    s = mt.sum()
    assert float(s.get_data()) == 7.0 and bool(s.get_mask())
    s0 = mt.sum(0)
    np.testing.assert_array_equal(s0.get_data().numpy(), [0.0, 0.0, 7.0])
    np.testing.assert_array_equal(s0.get_mask().numpy(), [True, False, True])
    np.testing.assert_allclose(float(mt.mean().get_data()), 7.0 / 3)
    np.testing.assert_array_equal(mt.amax(1).get_data().numpy(), [2.0, 5.0])
    np.testing.assert_array_equal(mt.argmax(1).get_data().numpy(), [2, 2])
    np.testing.assert_array_equal(mt.to_tensor(-1.0).numpy(), np.where(MASK, DATA, -1.0))
    np.testing.assert_allclose((mt * 2).exp().get_data().numpy()[MASK], np.exp(2 * DATA[MASK]))
    assert repr(mt) == ("MaskedTensor(\n  [\n    [  0.0000,       --,   2.0000],\n"
                        "    [      --,       --,   5.0000]\n  ]\n)")
    assert repr(s) == "MaskedTensor(  7.0000, True)"


def test_errors():
    with pytest.raises(ValueError, match="Input masks must match"):
        _mt() + fg.masked.masked_tensor(fg.tensor(DATA), fg.tensor(~MASK))
    with pytest.raises(ValueError, match="data.dim\\(\\) must equal mask.dim\\(\\)"):
        fg.masked.masked_tensor(fg.tensor(DATA), fg.tensor(MASK[0]))
    with pytest.raises(TypeError, match="mask must have dtype bool."):
        fg.masked.masked_tensor(fg.tensor(DATA), fg.tensor(MASK).float())


def test_autograd_exact():
    x = fg.masked.masked_tensor(fg.tensor([1.0, 2.0, 3.0]), fg.tensor([True, False, True]), requires_grad=True)
    (x * x).sum().backward()
    g = x.grad
    np.testing.assert_array_equal(g.get_data().numpy()[[0, 2]], [2.0, 6.0])
    np.testing.assert_array_equal(g.get_mask().numpy(), [True, False, True])
    d = fg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    fg.masked.as_masked_tensor(d, fg.tensor([True, False, True])).sum().backward()
    np.testing.assert_array_equal(d.grad.numpy(), [1.0, 0.0, 1.0])


def test_functional_exact():
    d, m = fg.tensor(DATA), fg.tensor(MASK)
    np.testing.assert_array_equal(fg.masked.sum(d, 1, mask=m).numpy(), [2.0, 5.0])
    np.testing.assert_array_equal(fg.masked.mean(d, 1, mask=m).numpy(), [1.0, 5.0])
    np.testing.assert_array_equal(fg.masked.amin(d, 1, mask=m).numpy(), [0.0, 5.0])
    sm = fg.masked.softmax(d, 1, mask=m).numpy()
    np.testing.assert_allclose(sm[0], [1 / (1 + np.e ** 2), 0.0, np.e ** 2 / (1 + np.e ** 2)])
    np.testing.assert_array_equal(sm[1], [0.0, 0.0, 1.0])
    np.testing.assert_allclose(fg.masked.var(d, 1, mask=m, correction=0).numpy(), [1.0, 0.0])
    np.testing.assert_allclose(fg.masked.normalize(d, 2.0, 1, mask=m).numpy()[0], [0.0, 0.0, 1.0])


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin", "prod", "logsumexp", "softmax", "log_softmax",
                                  "softmin", "std"])
def test_functional_match_torch(name):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    m = rng.random((3, 4)) > 0.4
    m[:, 0] = True
    outs = [getattr(lib.masked, name)(lib.tensor(x), 1, mask=lib.tensor(m)).numpy() for lib in (fg, torch)]
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12)


def test_masked_tensor_matches_torch():
    torch = pytest.importorskip("torch")
    res = []
    for lib in (fg, torch):
        mt = _mt(lib)
        res.append([repr(mt.sum(0)), repr(mt.amax(1)), repr(mt.mean()), repr((mt + 1).exp()), repr(mt.softmax(1))])
    assert res[0] == res[1]


def test_masked_tensor_is_a_tensor():
    data = fg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    mask = fg.tensor([[True, False, True], [False, False, True]])
    mt = fg.masked.masked_tensor(data, mask)
    assert isinstance(mt, fg.Tensor) and not mt.is_nested
    assert mt.get_data() is not data and mt.get_mask().tolist() == mask.tolist()
    np.testing.assert_array_equal(mt.sum(1).get_data().numpy(), [4.0, 6.0])
    np.testing.assert_array_equal(mt.to_tensor(0.0).numpy(), [[1.0, 0.0, 3.0], [0.0, 0.0, 6.0]])
    np.testing.assert_array_equal((mt * 2).get_data().numpy(), data.numpy() * 2)
    with pytest.raises(NotImplementedError, match="cumsum"):
        mt.cumsum(0)
    with pytest.raises(NotImplementedError, match="__matmul__"):
        mt @ mt
    import copy
    c = copy.deepcopy(mt)
    assert isinstance(c, fg.masked.MaskedTensor) and c.get_mask().tolist() == mask.tolist()


def test_masked_tensor_is_a_tensor_in_torch_too():
    torch = pytest.importorskip("torch")
    mt = torch.masked.masked_tensor(torch.tensor([1.0, 2.0]), torch.tensor([True, False]))
    assert isinstance(mt, torch.Tensor) and isinstance(_mt(), fg.Tensor)
