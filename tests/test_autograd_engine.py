"""The backward engine hands gradients on without copying where nothing else can see them (as torch's
AccumulateGrad steals a gradient whose use count allows it). These tests check that no gradient a user can
still reach is ever shared with a .grad that later accumulates in place, and that .grad keeps torch's
layout, against torch where it is installed."""
import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")


def _both(fn):
    """fn(lib) for funcgrad and torch; results as NumPy arrays (lists of them)."""
    out = []
    for lib in (fg, torch):
        r = fn(lib)
        out.append([np.array(x.detach().numpy() if hasattr(x, "detach") else x) for x in r])
    return out


def _check(fn):
    ours, theirs = _both(fn)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_hook_kept_gradient_is_not_the_accumulated_grad():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        kept = []
        x.register_hook(lambda g: kept.append(g))
        (x * 2).sum().backward()
        (x * 3).sum().backward()  # accumulates into x.grad in place
        return [x.grad, kept[0], kept[1]]
    _check(run)


def test_user_gradient_passed_through_is_not_modified():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        g = lib.tensor([5.0, 7.0])
        (x + 1).backward(g)  # add's backward passes g through to x
        (x + 1).backward(g)
        return [x.grad, g]
    _check(run)


def test_one_gradient_reaching_two_leaves_gives_two_buffers():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, 4.0], requires_grad=True)
        (x + y).backward(lib.tensor([1.0, 1.0]))
        (x + y).sum().backward()
        x.grad.mul_(10)
        return [x.grad, y.grad]
    _check(run)
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    y = fg.tensor([3.0, 4.0], requires_grad=True)
    (x + y).sum().backward()
    assert x.grad.data_ptr() != y.grad.data_ptr()


def test_retained_intermediate_grad_is_not_shared_with_leaf_grad():
    def run(lib):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        y = x + 0.5
        y.retain_grad()
        z = y * 1.0
        z.retain_grad()
        z.sum().backward(retain_graph=True)
        z.sum().backward()
        x.grad.add_(100.0)
        return [x.grad, y.grad, z.grad]
    _check(run)


def test_autograd_grad_results_are_not_shared_with_leaf_grads():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        gx, = lib.autograd.grad(y, x, retain_graph=True)
        y.backward()
        x.grad.mul_(3)
        return [gx, x.grad]
    _check(run)


def test_weight_grads_are_contiguous_and_viewable_as_torch():
    """Gradients of transposed / convolved weights arrive as contiguous tensors (torch's layout contract),
    so .view(-1) on them works."""
    def run(lib):
        lib.manual_seed(0)
        conv = lib.nn.Conv2d(2, 3, 3)
        lin = lib.nn.Linear(4, 5)
        with lib.no_grad():
            conv.weight.copy_(lib.tensor(np.linspace(-1, 1, 54, dtype=np.float32).reshape(3, 2, 3, 3)))
            conv.bias.zero_()
            lin.weight.copy_(lib.tensor(np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4)))
            lin.bias.zero_()
        x = lib.tensor(np.linspace(0, 1, 2 * 2 * 5 * 5, dtype=np.float32).reshape(2, 2, 5, 5))
        (conv(x).sum() + lin(lib.ones(3, 4)).pow(2).sum()).backward()
        grads = [conv.weight.grad, lin.weight.grad, conv.bias.grad]
        assert all(g.is_contiguous() for g in grads)
        return [g.view(-1) for g in grads]
    _check(run)


def test_accumulated_grad_after_in_place_edit_of_stolen_grad():
    """A .grad the engine handed over without a copy is the user's to modify; later backward calls keep
    accumulating into it."""
    def run(lib):
        w = lib.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), requires_grad=True)
        x = lib.tensor(np.ones((4, 2), np.float32))
        (x @ w).sum().backward()
        w.grad.mul_(0.5)
        (x @ w).pow(2).sum().backward()
        return [w.grad]
    _check(run)


def test_lean_recording_paths_match_torch_semantics():
    """The direct operator paths (+,-,*,/ and @ on tensors of one float dtype, a float tensor and a Python number,
    x.sum(), torch.cat of one dtype) record one node each with torch's names and exact gradients; operands they do
    not take (mixed dtypes, bool matmul, x * x) go through the general path with torch's promotion and errors."""
    import numpy as np
    import funcgrad as torch
    a = np.array([1.0, -2.0, 3.0], np.float32)
    bv = np.array([0.5, 4.0, -1.0], np.float32)
    x = torch.tensor(a, requires_grad=True)
    w = torch.nn.Parameter(torch.tensor(bv))
    y = x * w
    assert type(y.grad_fn).__name__ == "MulBackward0"
    z = ((y + x) - w / 2.0) / w + 3 * x - 1
    assert [type(t.grad_fn).__name__ for t in (y + x, 3 * x, x / w)] == ["AddBackward0", "MulBackward0", "DivBackward0"]
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 + 1 / bv, rtol=1e-6)  # z = 4x + x/w - 3/2
    np.testing.assert_allclose(w.grad.numpy(), -a / bv ** 2, rtol=1e-6)
    m = torch.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), requires_grad=True)
    r = m @ x
    r.sum().backward()
    np.testing.assert_allclose(m.grad.numpy(), np.tile(a, (2, 1)))
    c = torch.cat([x, w, x])
    assert type(c.grad_fn).__name__ == "CatBackward0"
    x.grad = None
    (c * torch.arange(9.0)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0 + 6, 1 + 7, 2 + 8])
    sq = x * x
    assert type(sq.grad_fn).__name__ == "MulBackward0"
    x.grad = None
    sq.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * a)
    d = x * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    assert d.dtype == torch.float64
    with pytest.raises(NotImplementedError, match="addmm_impl_cpu_"):
        torch.ones(2, 2, dtype=torch.bool) @ torch.ones(2, 2, dtype=torch.bool)
    with pytest.raises(RuntimeError, match="must match the size"):
        x * torch.ones(4, requires_grad=True)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["leaf", "nonleaf", "view"])
def test_one_tensor_as_both_operands_records_as_torch(name, dtype, kind):
    """torch.add(x, x), x * x, ...: one node with two edges to x's grad_fn (the same node, as torch's), its
    values and gradient torch's, on a leaf, an op's output and a view alike."""
    a = np.array([0.5, -2.0, 3.0, 1.25], dtype)
    r = np.array([1.0, -0.5, 2.0, 3.0], dtype)
    res = {}
    for lib in (fg, torch):
        leaf = lib.tensor(a, requires_grad=True)
        x = leaf if kind == "leaf" else leaf * 1.5 if kind == "nonleaf" else leaf[1:]
        y = getattr(lib, name)(x, x)
        nf = y.grad_fn.next_functions
        (y * lib.tensor(r[:y.shape[0]])).sum().backward()
        res[lib] = (y.detach().numpy(), leaf.grad.numpy(), type(y.grad_fn).__name__, len(nf),
                    nf[0][0] is nf[1][0], type(nf[0][0]).__name__, y.dtype)
    ours, theirs = res[fg], res[torch]
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6, atol=1e-6)  # (x / x: torch's 0 has rounding noise)
    assert ours[2:6] == theirs[2:6]
    assert str(ours[6]) == str(theirs[6])


def test_one_tensor_as_both_operands_keeps_what_torch_saves():
    """x * x saves x (modifying it in place then fails backward with torch's error); x + x saves nothing."""
    for lib in (fg, torch):
        h = lib.tensor([1.0, 2.0], requires_grad=True) * 1
        y = h * h
        h.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
        leaf = lib.tensor([1.0, 2.0], requires_grad=True)
        h = leaf * 1
        z = h + h
        h.add_(1)
        z.sum().backward()
        np.testing.assert_array_equal(leaf.grad.numpy(), [2.0, 2.0])


@pytest.mark.parametrize("op,raises", [(lambda lib, x: x + x, False), (lambda lib, x: lib.sum(x * 1), False),
                                       (lambda lib, x: lib.exp(x), True), (lambda lib, x: lib.relu(x), True)])
def test_output_modified_in_place_fails_backward_only_where_the_backward_reads_it(op, raises):
    """As torch: exp and relu save their output (modifying it in place then fails backward); add and sum do
    not (the backward runs, with the gradient of the op as recorded)."""
    for lib in (fg, torch):
        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = op(lib, x)
        y.add_(1)
        if raises:
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                y.sum().backward()
        else:
            y.sum().backward()
            assert x.grad is not None


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64])
def test_unrecorded_one_tensor_ops_match_torch(dtype):
    """sum, exp and relu on tensors that record nothing (no requires_grad, or under no_grad) run the
    primitive's impl on the buffer: torch's values, dtypes and signed zeros, no grad_fn."""
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(37) * 4).astype(dtype)
    a[:3] = [-0.0, 0.0, -1.0]
    for rg in (False, True):
        outs = {}
        for lib in (fg, torch):
            x = lib.tensor(a, requires_grad=rg)
            with lib.no_grad():
                ys = [lib.sum(x), lib.exp(x)] + ([] if np.dtype(dtype).kind == "c" else [lib.relu(x)])
            assert all(y.grad_fn is None and not y.requires_grad for y in ys)
            outs[lib] = [(y.detach().numpy(), str(y.dtype)) for y in ys]
        for (u, du), (v, dv) in zip(outs[fg], outs[torch]):
            assert du == dv and u.shape == v.shape
            np.testing.assert_allclose(u, v, rtol=2e-3 if dtype == np.float16 else 1e-6)
        if np.dtype(dtype).kind == "f":
            np.testing.assert_array_equal(np.signbit(outs[fg][2][0]), np.signbit(outs[torch][2][0]))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_relu_zero_keeps_each_conventions_sign_in_every_float_dtype(dtype):
    """torch.relu(-0.0) is -0.0 (torch's clamp) and jax.nn.relu(-0.0) is 0.0 (JAX 0.10 gives +0.0 in float16,
    float32 and bfloat16), in every float dtype: NumPy's maximum keeps a different operand on that tie in
    float16 than in float32/64, which the relu card's impl must not let through."""
    import funcgrad.nn.functional as F
    from funcgrad._jax import nn as jnn
    a = np.array([-0.0, 0.0, -1.0, 2.0], dtype)
    t = torch.relu(torch.tensor(a))
    for x in (fg.tensor(a), fg.tensor(a, requires_grad=True)):
        for y in (fg.relu(x), F.relu(x)):
            np.testing.assert_array_equal(np.signbit(y.detach().numpy()), np.signbit(t.numpy()))
    np.testing.assert_array_equal(np.signbit(np.asarray(jnn.relu(jnp_asarray(a)))), [False] * 4)


def jnp_asarray(a):
    import funcgrad.numpy as jnp
    return jnp.asarray(a)


# --- a leaf's AccumulateGrad: made when the graph is walked, one per leaf per graph (as torch's) -----------

def _acc_semantics(lib):
    """What a user can observe of a leaf's AccumulateGrad when the ops on the leaf were recorded before any
    graph held one: identity across nodes, its variable, a hook on it, and the gradients."""
    x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    w = lib.tensor([0.5, 0.25, 2.0], requires_grad=True)
    y = x * w
    z = x.exp()
    acc_y = y.grad_fn.next_functions[0][0]
    acc_z = z.grad_fn.next_functions[0][0]
    seen = []
    acc_y.register_prehook(lambda g: seen.append(g[0].detach().clone()))
    (y.sum() + z.sum()).backward(retain_graph=True)
    first = x.grad.clone()
    (y.sum() + z.sum()).backward()
    return (acc_y is acc_z, acc_y.variable is x, acc_y.name(), type(acc_y).__name__, len(seen),
            [s.tolist() for s in seen], first.tolist(), x.grad.tolist(), w.grad.tolist(),
            y.grad_fn.next_functions[1][0].variable is w)


def test_leaf_accumulator_is_shared_and_hooked_as_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = _acc_semantics(fg), _acc_semantics(torch)
    assert ours[:5] == theirs[:5]
    np.testing.assert_allclose(ours[5], theirs[5], rtol=1e-6)
    np.testing.assert_allclose(ours[6], theirs[6], rtol=1e-6)
    np.testing.assert_allclose(ours[7], theirs[7], rtol=1e-6)
    np.testing.assert_allclose(ours[8], theirs[8], rtol=1e-6)
    assert ours[9] is True and theirs[9] is True


def test_leaf_used_by_ops_of_dead_graphs_then_grad_wrt_it():
    """Ops on a leaf whose graphs have gone leave no AccumulateGrad behind; autograd.grad with the leaf as input
    (its AccumulateGrad made by grad itself) and backward still meet the graph's edge to that leaf."""
    torch = pytest.importorskip("torch")
    out = {}
    for lib in (fg, torch):
        x = lib.tensor([0.5, 1.5], requires_grad=True)
        for _ in range(3):
            _ = x * 2.0 + x  # graphs that die at once
        y = (x * x).sum() + (x + x).sum()
        (g,) = lib.autograd.grad(y, x, retain_graph=True)
        y.backward()
        out[lib.__name__] = (g.tolist(), x.grad.tolist())
    assert out["funcgrad"] == out["torch"]


def test_cpp_node_names_as_torch():
    torch = pytest.importorskip("torch")
    names = []
    for lib in (fg, torch):
        x = lib.ones(3, requires_grad=True)
        y = x * 1
        y[0:1].mul_(2)
        names.append((y.grad_fn.name(), type(y.grad_fn).__name__,
                      (x * 2).grad_fn.next_functions[0][0].name()))
    assert names[0] == names[1]


_NEXT_CASES = {
    "x * w": lambda L, x, w: x * w, "w * x": lambda L, x, w: w * x, "exp": lambda L, x, w: x.exp(),
    "addmm": lambda L, x, w: L.addmm(L.ones(2, 2, dtype=L.float64), w.reshape(2, 3), x.reshape(3, 2)),
    "where": lambda L, x, w: L.where(x > 0, x, w), "cat": lambda L, x, w: L.cat([x, w]),
    "stack": lambda L, x, w: L.stack([w, x]), "mse_loss": lambda L, x, w: L.nn.functional.mse_loss(x, w),
    "lerp": lambda L, x, w: L.lerp(x, w, 0.3), "index": lambda L, x, w: x[L.tensor([0, 2])],
    "gather": lambda L, x, w: x.gather(0, L.tensor([1, 0])),
    # a Python number in a tensor slot of add/sub/mul/div: torch wraps it as a tensor (an entry); rsub has none
    "x * 0.5": lambda L, x, w: x * 0.5, "0.5 * x": lambda L, x, w: 0.5 * x, "x + 1": lambda L, x, w: x + 1,
    "1 + x": lambda L, x, w: 1 + x, "x - 1": lambda L, x, w: x - 1, "1 - x": lambda L, x, w: 1 - x,
    "x / 2": lambda L, x, w: x / 2, "mul(x, 2)": lambda L, x, w: L.mul(x, 2), "x ** 2": lambda L, x, w: x ** 2,
}


@pytest.mark.parametrize("name", sorted(_NEXT_CASES))
def test_next_functions_list_inputs_not_requiring_grad_as_none(name):
    # torch's next_functions: one entry per floating tensor input of the op, (None, 0) where it does not require
    # grad; integer and bool inputs (an index, a where's condition) have none
    got = []
    for L in (fg, torch):
        x = L.tensor([0.5, -1.0, 2.0, 1.5, 0.3, -0.2], dtype=L.float64, requires_grad=True)
        w = L.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], dtype=L.float64)
        y = _NEXT_CASES[name](L, x, w)
        got.append((y.grad_fn.name(), [None if f is None else f.name() for f, _ in y.grad_fn.next_functions]))
    assert got[0] == got[1]
