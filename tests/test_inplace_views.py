"""In-place view ops (t_, transpose_, swapaxes_, swapdims_, squeeze_, unsqueeze_, as_strided_) and in-place writes
into the outputs of multi-view ops (split, chunk, unbind, split_with_sizes) under autograd, against torch: values,
grad_fn names, gradients, and torch's errors with their messages."""
import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")

INPLACE_VIEW_OPS = {
    "t_": lambda x: x.t_(),
    "transpose_": lambda x: x.transpose_(0, 1),
    "swapaxes_": lambda x: x.swapaxes_(0, 1),
    "swapdims_": lambda x: x.swapdims_(1, 0),
    "unsqueeze_": lambda x: x.unsqueeze_(0),
    "unsqueeze_-1": lambda x: x.unsqueeze_(-1),
    "squeeze_": lambda x: x.squeeze_(),
    "squeeze_dim": lambda x: x.squeeze_(0),
    "squeeze_dims": lambda x: x.squeeze_((0, 1)),
    "as_strided_": lambda x: x.as_strided_((2,), (1,)),
    "as_strided_offset": lambda x: x.as_strided_((2, 1), (1, 1), 1),
}


def _run(lib, op, prefix):
    """x (1x3, requires grad) -> y = prefix(x * 2); op(y) in place; backward of sum(y * weights)."""
    x = lib.tensor([[1.0, 2.0, 3.0]], dtype=lib.float64, requires_grad=True)
    y = prefix(x * 2)
    out = op(y)
    assert out is y
    w = lib.arange(float(y.numel()), dtype=lib.float64).reshape(y.shape) + 1
    (y * w).sum().backward()
    return (tuple(y.shape), y.grad_fn.name(), y.is_leaf, y._base is None, y._version, y.detach().numpy().tolist(),
            x.grad.numpy().tolist())


@pytest.mark.parametrize("prefix", [lambda t: t, lambda t: t[:]], ids=["nonview", "view"])
@pytest.mark.parametrize("opname", list(INPLACE_VIEW_OPS))
def test_inplace_view_op_on_non_leaf_matches_torch(opname, prefix):
    op = INPLACE_VIEW_OPS[opname]
    assert _run(fg, op, prefix) == _run(torch, op, prefix)


def _error(lib, f):
    with pytest.raises(RuntimeError) as e:
        f(lib)
    return str(e.value)


@pytest.mark.parametrize("opname", list(INPLACE_VIEW_OPS))
def test_inplace_view_op_on_leaf_or_view_of_leaf_raises_as_torch(opname):
    op = INPLACE_VIEW_OPS[opname]
    for make in (lambda lib: op(lib.ones(1, 3, requires_grad=True)),
                 lambda lib: op(lib.ones(1, 3, requires_grad=True)[:])):
        msg = _error(torch, make)
        assert _error(fg, make) == msg
        assert "leaf Variable that requires grad is being used in an in-place operation" in msg


@pytest.mark.parametrize("opname", list(INPLACE_VIEW_OPS))
def test_inplace_view_op_on_leaf_under_no_grad_matches_torch(opname):
    op = INPLACE_VIEW_OPS[opname]

    def run(lib):
        x = lib.arange(3.0).reshape(1, 3).requires_grad_()
        with lib.no_grad():
            op(x)
        return tuple(x.shape), x.requires_grad, x.is_leaf, x.grad_fn, x._version, x.detach().numpy().tolist()
    assert run(fg) == run(torch)


def test_inplace_view_op_bumps_the_version_so_saved_values_are_checked():
    def run(lib):
        x = lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
        y = x * 1
        z = y * y  # saves y
        y.t_()
        with pytest.raises(RuntimeError) as e:
            z.sum().backward()
        return y._version, "modified by an inplace operation" in str(e.value)
    assert run(fg) == run(torch) == (1, True)


def test_inplace_view_op_on_a_multi_view_output_raises_as_torch():
    def f(lib):
        b = lib.arange(4.0, requires_grad=True) * 1
        b.split(2)[0].unsqueeze_(0)
    assert _error(fg, f) == _error(torch, f)


# --- in-place writes into the outputs of multi-view ops ---------------------------------------------------------

MULTI = {
    "split": lambda b: b.split(2),
    "split_list": lambda b: b.split([1, 3]),
    "split_with_sizes": lambda b: b.split_with_sizes([1, 3]),
    "chunk": lambda b: b.chunk(2),
    "chunk1": lambda b: b.chunk(1),
    "unbind": lambda b: b.reshape(2, 2).unbind(1),
    "tensor_split": lambda b: b.tensor_split(2),
    "tensor_split_idx": lambda b: b.tensor_split([1]),
    "hsplit": lambda b: b.reshape(2, 2).hsplit(2),
    "vsplit": lambda b: b.reshape(2, 2).vsplit(2),
}

WRITES = {
    "mul_": lambda o: o.mul_(2),
    "setitem": lambda o: o.__setitem__(0, 5.0),
    "slice_add_": lambda o: o[1:].add_(1),
    "unsqueeze_view_mul_": lambda o: o.unsqueeze(0).mul_(3),
}


def _outcome(lib, multi, which, write, base_rg=True, other_rg=False, grad=True):
    """The error message of the write, or (the base's values, the gradient of the leaf) when torch allows it."""
    x = lib.arange(4.0, dtype=lib.float64, requires_grad=base_rg)
    b = x * 1 if base_rg else x.clone()
    outs = multi(b)
    o = outs[which]
    p = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
    try:
        with lib.set_grad_enabled(grad):
            if other_rg:
                o.mul_(p)
            else:
                write(o)
    except RuntimeError as e:
        return str(e)
    if not grad or not b.requires_grad:
        return b.detach().numpy().tolist()
    (b * lib.arange(1.0, 5.0, dtype=lib.float64)).sum().backward()
    leaf = x if base_rg else p
    return b.detach().numpy().tolist(), None if leaf.grad is None else leaf.grad.numpy().tolist()


@pytest.mark.parametrize("write", list(WRITES))
@pytest.mark.parametrize("which", [0, -1])
@pytest.mark.parametrize("multi", list(MULTI))
def test_inplace_write_into_multi_view_output_matches_torch(multi, which, write):
    f, w = MULTI[multi], WRITES[write]
    expected = _outcome(torch, f, which, w)
    assert _outcome(fg, f, which, w) == expected


@pytest.mark.parametrize("unsafe", [lambda b: b.unsafe_split(2), lambda b: b.unsafe_chunk(2),
                                    lambda b: b.unsafe_split_with_sizes([1, 3])])
@pytest.mark.parametrize("write", list(WRITES))
def test_unsafe_split_outputs_accept_inplace_writes(unsafe, write):
    """torch's unsafe_split / unsafe_chunk outputs are not tracked as views of a multi-view op: the write is
    allowed and lands in the base. (Their gradients differ by design: torch's autograd does not see the aliasing,
    funcgrad's treats them as ordinary views.)"""
    def run(lib):
        x = lib.arange(4.0, dtype=lib.float64, requires_grad=True)
        b = x * 1
        WRITES[write](unsafe(b)[0])
        return b.detach().numpy().tolist()
    assert run(fg) == run(torch)


@pytest.mark.parametrize("multi", ["split", "unbind", "tensor_split"])
def test_inplace_write_into_multi_view_output_under_no_grad_is_allowed(multi):
    f = MULTI[multi]
    expected = _outcome(torch, f, 0, WRITES["mul_"], grad=False)
    assert isinstance(expected, list)
    assert _outcome(fg, f, 0, WRITES["mul_"], grad=False) == expected


@pytest.mark.parametrize("multi", ["split", "chunk", "unbind", "split_list", "tensor_split"])
def test_multi_view_of_base_not_requiring_grad(multi):
    """No error when nothing requires grad; torch's no_grad-mode wording when the written value requires grad."""
    f = MULTI[multi]
    assert _outcome(fg, f, 0, WRITES["mul_"], base_rg=False) == _outcome(torch, f, 0, WRITES["mul_"], base_rg=False)
    assert _outcome(fg, f, 0, None, base_rg=False, other_rg=True) == \
        _outcome(torch, f, 0, None, base_rg=False, other_rg=True)


@pytest.mark.parametrize("base_rg", [True, False])
@pytest.mark.parametrize("write_base", [lambda b, p: b.mul_(p), lambda b, p: b[0:1].mul_(p)], ids=["base", "sibling"])
def test_multi_view_output_after_its_base_is_written_raises_as_torch(write_base, base_rg):
    """Once the base (or another view of it) is modified in place under grad mode, reaching a multi-view output's
    grad_fn (grad_fn, is_leaf, or using it in an op) raises torch's 'its base ... has been modified'."""
    def run(lib, use):
        x = lib.arange(4.0, requires_grad=base_rg)
        b = x * 1 if base_rg else x.clone()
        outs = b.split(2)
        write_base(b, lib.tensor(2.0, requires_grad=True))
        with pytest.raises(RuntimeError) as e:
            use(outs[1])
        return str(e.value)
    for use in (lambda o: o.grad_fn, lambda o: o.is_leaf, lambda o: o * 2):
        assert run(fg, use) == run(torch, use)
    # requires_grad is read without re-making the grad_fn
    for lib in (fg, torch):
        x = lib.arange(4.0, requires_grad=base_rg)
        b = x * 1 if base_rg else x.clone()
        outs = b.split(2)
        write_base(b, lib.tensor(2.0, requires_grad=True))
        assert outs[1].requires_grad


@pytest.mark.parametrize("multi", ["split", "chunk", "unbind", "split_list"])
@pytest.mark.parametrize("write", ["mul_", "setitem", "slice_add_"])
def test_multi_view_made_under_no_grad_written_with_grad_raises_as_torch(multi, write):
    """torch's explanation is then that of views made under no_grad."""
    def f(lib):
        b = lib.arange(4.0, requires_grad=True) * 1
        with lib.no_grad():
            o = MULTI[multi](b)[0]
        WRITES[write](o)
    msg = _error(torch, f)
    assert "Given that this use case is ambiguous" in msg
    assert _error(fg, f) == msg


def test_multi_view_grad_fn_names_match_torch():
    for multi in ("split", "split_list", "split_with_sizes", "chunk", "unbind", "tensor_split"):
        names = [[o.grad_fn.name() for o in MULTI[multi](lib.arange(4.0, requires_grad=True) * 1)]
                 for lib in (fg, torch)]
        assert names[0] == names[1], multi


def test_traced_multi_view_write_message_matches_torch():
    """Inside funcgrad.func.grad (as torch.func.grad) the outputs of split refuse in-place writes too."""
    def f(lib):
        def g(x):
            a, _ = x.split(2)
            a.mul_(2)
            return x.sum()
        lib.func.grad(g)(lib.arange(4.0))
    assert _error(fg, f) == _error(torch, f)


@pytest.mark.parametrize("write", [lambda b, outs: outs[0].mul_(2), lambda b, outs: b.mul_(2),
                                   lambda b, outs: b[1:].add_(1)], ids=["output", "base", "other_view"])
def test_multi_view_output_after_a_no_grad_write_raises_when_used_with_grad(write):
    """A write under no_grad is allowed; the outputs' grad_fns are then stale, and using one raises as torch."""
    def run(lib):
        x = lib.arange(4.0, requires_grad=True)
        b = x * 1
        outs = b.split(2)
        view = b[1:3]
        with lib.no_grad():
            write(b, outs)
        with pytest.raises(RuntimeError) as e:
            outs[1] * 2
        (view * lib.tensor([1.0, 10.0])).sum().backward()
        return str(e.value), view.grad_fn.name(), b.grad_fn.name(), x.grad.tolist()
    assert run(fg) == run(torch)


def test_values_of_multi_view_written_under_no_grad_still_reach_base():
    x = fg.arange(4.0, requires_grad=True)
    b = x * 1
    a, c = b.split(2)
    with fg.no_grad():
        c.mul_(10)
    np.testing.assert_array_equal(b.detach().numpy(), [0.0, 1.0, 20.0, 30.0])


def test_views_of_a_leaf_view_record_as_torch():
    """A leaf that is a view of a tensor without grad (`arange(6.).reshape(2, 3).requires_grad_()`): its views
    and multi-views track gradients back to it, as torch's."""
    torch = pytest.importorskip("torch")
    out = []
    for t in (fg, torch):
        x = t.arange(6.0).reshape(2, 3).requires_grad_()
        y = x[0]
        a, b = x.unbind(1)[:2]
        (y * 2).sum().backward(retain_graph=True)
        (a * b).sum().backward()
        out.append((y.grad_fn.name(), a.grad_fn.name(), x.is_leaf, x.grad.numpy().tolist()))
    assert out[0] == out[1]
