"""torch.nested: nested tensors of both layouts, the tutorials' attention path, autograd to the components."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg

A = np.arange(12.0).reshape(2, 6)
B = np.arange(18.0).reshape(3, 6)


def _pair(layout=None):
    kw = {} if layout is None else {"layout": getattr(fg, layout)}
    return fg.nested.nested_tensor([fg.tensor(A), fg.tensor(B)], **kw)


def test_strided_metadata_and_errors():
    nt = _pair()
    assert nt.is_nested and nt.layout is fg.strided and nt.dim() == 3
    assert nt.size(0) == 2 and nt.size(2) == 6 and nt.size(-1) == 6 and nt.numel() == 30
    with pytest.raises(RuntimeError, match="Given dimension 1 is irregular and does not have a size."):
        nt.size(1)
    with pytest.raises(RuntimeError, match="NestedTensorImpl doesn't support sizes"):
        nt.shape
    with pytest.raises(RuntimeError, match="Nested tensor dimension 0 cannot be transposed"):
        nt.transpose(0, 1)
    with pytest.raises(RuntimeError, match="Expected both self and other to be nested"):
        nt + fg.ones(6)
    with pytest.raises(RuntimeError, match="NestedTensor always requires keepdim=True"):
        nt.sum(-1)
    with pytest.raises(RuntimeError, match="Found dimension 2 for Tensor at index 1 and dimension 1"):
        fg.nested.nested_tensor([fg.ones(2), fg.ones(2, 2)])
    assert repr(nt).startswith("nested_tensor([\n  tensor([[ 0.,  1.,")
    assert not fg.ones(2).is_nested


def test_jagged_metadata():
    nj = _pair("jagged")
    assert nj.layout is fg.jagged and nj.dim() == 3 and nj._ragged_idx == 1
    j = nj.size(1)
    assert repr(nj.shape) == f"torch.Size([2, {j}, 6])" and repr(j).startswith("j")
    assert nj.size(1) == nj.size(1) and (nj + 1).size(1) == j
    np.testing.assert_array_equal(nj.offsets().numpy(), [0, 2, 5])
    np.testing.assert_array_equal(nj.values().numpy(), np.concatenate([A, B]))
    assert nj.lengths() is None and nj.is_contiguous()
    assert repr(nj) == f"NestedTensor(size=(2, {j}, 6), offsets=tensor([0, 2, 5]), contiguous=True)"
    # the ragged dimension found where the components differ
    nt2 = fg.nested.nested_tensor([fg.ones(2, 3), fg.ones(2, 2)], layout=fg.jagged)
    assert nt2._ragged_idx == 2 and nt2.size(1) == 2
    with pytest.raises(RuntimeError, match="zero-dim tensors"):
        fg.nested.nested_tensor([fg.tensor(1.0), fg.tensor(2.0)], layout=fg.jagged)
    with pytest.raises(ValueError, match="Transpose is not supported on the batch dimension for jagged NT"):
        nj.transpose(0, 1)


def test_padded_and_reductions_exact():
    nj = _pair("jagged")
    pad = fg.nested.to_padded_tensor(nj, -1.0).numpy()
    want = np.full((2, 3, 6), -1.0)
    want[0, :2], want[1] = A, B
    np.testing.assert_array_equal(pad, want)
    assert tuple(nj.to_padded_tensor(0.0, (2, 4, 7)).shape) == (2, 4, 7)
    np.testing.assert_array_equal(nj.sum(1).numpy(), np.stack([A.sum(0), B.sum(0)]))
    np.testing.assert_array_equal(nj.mean(1).numpy(), np.stack([A.mean(0), B.mean(0)]))
    np.testing.assert_array_equal(nj.amax(1).numpy(), np.stack([A.max(0), B.max(0)]))
    s = nj.sum(-1)
    assert s.dim() == 2 and s.size(1) == nj.size(1)
    np.testing.assert_array_equal(s.values().numpy(), np.concatenate([A, B]).sum(-1))
    assert float(nj.sum()) == A.sum() + B.sum()
    with pytest.raises(RuntimeError, match="reducing along the batch dimension but not the ragged"):
        nj.sum(0)
    with pytest.raises(RuntimeError, match="reducing along a ragged and non-batch dimension"):
        nj.sum((1, 2))


def test_elementwise_and_dense_broadcast():
    nj = _pair("jagged")
    r = (nj * 2 + fg.ones(6)).sin()
    np.testing.assert_allclose(r.values().numpy(), np.sin(np.concatenate([A, B]) * 2 + 1))
    per_seq = fg.tensor([[[1.0]], [[10.0]]])  # (B, 1, 1): one value per sequence
    np.testing.assert_array_equal((nj * per_seq).values().numpy(), np.concatenate([A, 10 * B]))
    other = fg.nested.nested_tensor([fg.tensor(B), fg.tensor(A)], layout=fg.jagged)
    with pytest.raises(RuntimeError, match="cannot call binary pointwise function add.Tensor with inputs of shapes"):
        nj + other


def _attention_np(q, k, v, causal=False):
    """softmax(q k^T / sqrt(E)) v for one sequence (heads, L, E)."""
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def _mha(x, w_in, w_out, heads, causal=False, lib=fg):
    """The tutorial's multi-head attention over a nested (B, j, E) input."""
    q, k, v = (lib.nn.functional.linear(x, w) for w in w_in.chunk(3, 0))
    e = q.size(-1) // heads
    q, k, v = (t.unflatten(-1, [heads, e]).transpose(1, 2) for t in (q, k, v))
    o = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return lib.nn.functional.linear(o.transpose(1, 2).flatten(-2), w_out)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_exact(causal):
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((n, 8)) for n in (3, 5, 1)]
    w_in, w_out = rng.standard_normal((24, 8)), rng.standard_normal((8, 8))
    nt = fg.nested.nested_tensor([fg.tensor(x) for x in xs], layout=fg.jagged)
    out = _mha(nt, fg.tensor(w_in), fg.tensor(w_out), 2, causal)
    assert out.size(1) == nt.size(1)
    for x, o in zip(xs, out.unbind()):
        q, k, v = np.split(x @ w_in.T, 3, -1)
        q, k, v = (t.reshape(len(x), 2, 4).transpose(1, 0, 2) for t in (q, k, v))
        want = _attention_np(q, k, v, causal).transpose(1, 0, 2).reshape(len(x), 8) @ w_out.T
        np.testing.assert_allclose(o.numpy(), want, rtol=1e-12, atol=1e-12)


def test_autograd_to_components_exact():
    a, b = fg.tensor(A, requires_grad=True), fg.tensor(B, requires_grad=True)
    nt = fg.nested.as_nested_tensor([a, b], layout=fg.jagged)
    (nt * nt).sum(1).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), 2 * A)
    np.testing.assert_array_equal(b.grad.numpy(), 2 * B)
    leaf = fg.nested.nested_tensor([fg.tensor(A), fg.tensor(B)], requires_grad=True)
    assert leaf.requires_grad and leaf.is_leaf
    fg.nested.to_padded_tensor(leaf.exp(), 0.0).sum().backward()
    np.testing.assert_allclose(leaf.grad.unbind()[1].numpy(), np.exp(B))


def test_from_jagged_and_narrow():
    values = fg.tensor(np.arange(10.0).reshape(5, 2), requires_grad=True)
    nt = fg.nested.nested_tensor_from_jagged(values, fg.tensor([0, 2, 5]))
    assert nt.values() is values and nt.size(2) == 2
    np.testing.assert_array_equal(nt.unbind()[1].detach().numpy(), np.arange(4.0, 10.0).reshape(3, 2))
    (nt.to_padded_tensor(0.0) * 3).sum().backward()
    np.testing.assert_array_equal(values.grad.numpy(), np.full((5, 2), 3.0))
    nl = fg.nested.nested_tensor_from_jagged(values, lengths=fg.tensor([2, 3]))
    np.testing.assert_array_equal(nl.offsets().numpy(), [0, 2, 5])
    x = fg.tensor(np.arange(12.0).reshape(3, 4))
    nr = fg.nested.narrow(x, 1, fg.tensor([0, 1, 2]), fg.tensor([3, 2, 1]), layout=fg.jagged)
    np.testing.assert_array_equal(nr.offsets().numpy(), [0, 5, 10, 11])
    np.testing.assert_array_equal(nr.lengths().numpy(), [3, 2, 1])
    assert not nr.is_contiguous()
    assert [c.tolist() for c in nr.unbind()] == [[0.0, 1.0, 2.0], [5.0, 6.0], [10.0]]
    with pytest.raises(RuntimeError, match="jagged layout only supports dim=1"):
        fg.nested.narrow(x, 0, 1, 2, layout=fg.jagged)
    with pytest.raises(RuntimeError, match="start and length must be integers for the strided layout"):
        fg.nested.narrow(x, 0, fg.tensor([0]), 1)


def test_modules_accept_nested():
    fg.manual_seed(0)
    nt = _pair("jagged")
    lin, ln = fg.nn.Linear(6, 4).double(), fg.nn.LayerNorm(4).double()
    y = fg.nn.functional.relu(ln(lin(nt)))
    for x, o in zip((A, B), y.unbind()):
        h = x @ lin.weight.detach().numpy().T + lin.bias.detach().numpy()
        h = (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + 1e-5)
        np.testing.assert_allclose(o.detach().numpy(), np.maximum(h, 0), rtol=1e-12, atol=1e-12)


# --- against torch ----------------------------------------------------------------------------------------
def test_attention_and_grads_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal((n, 8)) for n in (4, 2, 6)]
    w_in, w_out = rng.standard_normal((24, 8)), rng.standard_normal((8, 8))
    res = []
    for lib in (fg, torch):
        comps = [lib.tensor(x, requires_grad=True) for x in xs]
        wi, wo = lib.tensor(w_in, requires_grad=True), lib.tensor(w_out, requires_grad=True)
        nt = lib.nested.as_nested_tensor(comps, layout=lib.jagged)
        out = _mha(nt, wi, wo, 2, lib=lib)
        pad = lib.nested.to_padded_tensor(out, 0.0)
        (pad ** 2).sum().backward()
        res.append([pad.detach().numpy(), wi.grad.numpy(), wo.grad.numpy()] + [c.grad.numpy() for c in comps])
    for mine, theirs in zip(*res):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-10)


def test_strided_ops_match_torch():
    torch = pytest.importorskip("torch")
    outs = []
    for lib in (fg, torch):
        nt = lib.nested.nested_tensor([lib.tensor(A), lib.tensor(B)])
        r = nt.transpose(1, 2).softmax(-1)
        outs.append([t.numpy() for t in r.unbind()] + [lib.nested.to_padded_tensor(nt.reshape(2, -1, 2, 3), 0.0)
                                                        .numpy()])
    for mine, theirs in zip(*outs):
        np.testing.assert_allclose(mine, theirs, rtol=1e-6)


@pytest.mark.parametrize("layout", ["strided", "jagged"])
def test_nested_tensor_is_a_tensor(layout):
    nt = _pair(layout)
    assert isinstance(nt, fg.Tensor) and nt.is_nested
    assert not fg.tensor(A).is_nested
    # indexing: an int, or an int then the component's own index (the tutorial's nt[1, :, -1])
    np.testing.assert_array_equal(nt[1, :, -1].numpy(), B[:, -1])
    np.testing.assert_array_equal(nt[0, 1].numpy(), A[1])
    np.testing.assert_array_equal(nt[-1].numpy(), B)
    err = RuntimeError if layout == "jagged" else NotImplementedError
    with pytest.raises(err, match="slice"):
        nt[0:1]
    with pytest.raises(err, match="slice"):
        nt[:, 0]
    # Tensor methods it does not implement refuse, naming the operation, instead of reading a missing buffer
    with pytest.raises(NotImplementedError, match="cumsum"):
        nt.cumsum(1)
    with pytest.raises(NotImplementedError, match="__setitem__"):
        nt[0] = 1.0
    # the elementwise ops, softmax and matmul of the tutorial stay nested, component by component
    if layout == "jagged":  # (torch's strided layout refuses a dense operand)
        y = fg.nn.functional.softmax((nt * 2.0 + 1.0) @ fg.ones(6, 2, dtype=fg.float64), dim=-1)
        assert isinstance(y, fg.nested.NestedTensor)
        np.testing.assert_allclose(y[0].numpy(), np.full((2, 2), 0.5))
    w = nt.matmul(nt.transpose(1, 2))
    np.testing.assert_allclose(w[1].numpy(), B @ B.T)


def test_nested_is_a_tensor_in_torch_too():
    torch = pytest.importorskip("torch")
    nt = torch.nested.nested_tensor([torch.tensor(A), torch.tensor(B)])
    assert isinstance(nt, torch.Tensor)
    np.testing.assert_array_equal(nt[1, :, -1].numpy(), _pair()[1, :, -1].numpy())
    with pytest.raises(NotImplementedError):
        nt[0:1]


def test_nested_deepcopy_and_pickle():
    import copy
    import pickle
    nt = _pair("jagged")
    for c in (copy.deepcopy(nt), pickle.loads(pickle.dumps(nt))):
        assert isinstance(c, fg.nested.NestedTensor) and c.layout is fg.jagged
        np.testing.assert_array_equal(c[1].numpy(), B)
        assert c[1] is not nt[1]
