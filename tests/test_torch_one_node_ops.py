"""Ops that torch records as ONE graph node (AddmmBackward0, LerpBackward1, StdMeanBackward0, ...) are one node
here too: the node's name, the graph's node count, the values, the gradient and the second gradient
(create_graph=True) against torch 2.13, in float64."""
import warnings

import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")

_R = np.random.default_rng(7)


def _a(*shape):
    return _R.uniform(-1.5, 1.5, shape)


# name -> (function of the library and its input tensors, the inputs' values)
_CASES = {
    "addmm": (lambda t, c, a, b: t.addmm(c, a, b), (_a(2, 2), _a(2, 3), _a(3, 2))),
    "addmm_ba": (lambda t, c, a, b: t.addmm(c, a, b, beta=0.5, alpha=-2), (_a(2), _a(2, 3), _a(3, 2))),
    "addmm_b0": (lambda t, c, a, b: t.addmm(c, a, b, beta=0), (_a(2, 2), _a(2, 3), _a(3, 2))),
    "addmm_": (lambda t, c, a, b: (c * 1).addmm_(a, b, alpha=3), (_a(2, 2), _a(2, 3), _a(3, 2))),
    "addmv": (lambda t, c, a, b: t.addmv(c, a, b, beta=2, alpha=0.5), (_a(2), _a(2, 3), _a(3))),
    "addr": (lambda t, c, a, b: t.addr(c, a, b, beta=0.5, alpha=1.5), (_a(2, 3), _a(2), _a(3))),
    "addr_b0": (lambda t, c, a, b: t.addr(c, a, b, beta=0), (_a(3), _a(2), _a(3))),
    "baddbmm": (lambda t, c, a, b: t.baddbmm(c, a, b, beta=-1, alpha=2), (_a(2, 2, 2), _a(2, 2, 3), _a(2, 3, 2))),
    "addbmm": (lambda t, c, a, b: t.addbmm(c, a, b, beta=0.5, alpha=2), (_a(2, 2), _a(3, 2, 3), _a(3, 3, 2))),
    "addbmm_row": (lambda t, c, a, b: t.addbmm(c, a, b), (_a(2), _a(3, 2, 3), _a(3, 3, 2))),
    "addcmul": (lambda t, c, a, b: t.addcmul(c, a, b), (_a(2, 3), _a(2, 3), _a(3))),
    "addcmul_v": (lambda t, c, a, b: t.addcmul(c, a, b, value=-0.7), (_a(3), _a(2, 3), _a(2, 1))),
    "addcmul_same": (lambda t, c: t.addcmul(c, c, c, value=2), (_a(2, 3),)),
    "addcmul_": (lambda t, c, a, b: (c * 1).addcmul_(a, b, value=3), (_a(2, 3), _a(2, 3), _a(3))),
    "addcdiv": (lambda t, c, a, b: t.addcdiv(c, a, b + 2), (_a(2, 3), _a(2, 3), _a(3))),
    "addcdiv_eq": (lambda t, c, a, b: t.addcdiv(c, a, b + 2, value=0.3), (_a(2, 3), _a(2, 3), _a(2, 3))),
    "addcmul_eq": (lambda t, c, a, b: t.addcmul(c, a, b, value=-0.7), (_a(2, 3), _a(2, 3), _a(2, 3))),
    "lerp_hi_eq": (lambda t, a, b: t.lerp(a, b, 0.5), (_a(2, 3), _a(2, 3))),
    "addcdiv_v": (lambda t, c, a, b: t.addcdiv(c, a, b + 2, value=0.25), (_a(3), _a(2, 3), _a(2, 1))),
    "addcdiv_": (lambda t, c, a, b: (c * 1).addcdiv_(a, b + 2, value=-2), (_a(2, 3), _a(2, 3), _a(3))),
    "lerp": (lambda t, a, b: t.lerp(a, b, 0.3), (_a(2, 3), _a(2, 3))),
    "lerp_hi": (lambda t, a, b: t.lerp(a, b, 0.8), (_a(2, 3), _a(3))),
    "lerp_neg": (lambda t, a, b: t.lerp(a, b, -0.75), (_a(2, 3), _a(2, 3))),
    "lerp_t": (lambda t, a, b, w: t.lerp(a, b, w), (_a(2, 3), _a(2, 3), _R.uniform(-1, 2, (2, 3)))),
    "lerp_t0": (lambda t, a, b, w: t.lerp(a, b, w), (_a(2, 3), _a(3), np.array(0.6))),
    "lerp_tc": (lambda t, a, b: t.lerp(a, b, t.tensor([0.2, 0.7, -0.6], dtype=t.float64)), (_a(2, 3), _a(2, 3))),
    "lerp_": (lambda t, a, b: (a * 1).lerp_(b, 0.6), (_a(2, 3), _a(2, 3))),
    "lerp_t_": (lambda t, a, b, w: (a * 1).lerp_(b, w), (_a(2, 3), _a(2, 3), _R.uniform(-1, 2, (3,)))),
    "var_mean": (lambda t, x: t.var_mean(x), (_a(2, 3),)),
    "var_mean_d": (lambda t, x: t.var_mean(x, (0, 2), keepdim=True, correction=0), (_a(2, 3, 4),)),
    "std_mean": (lambda t, x: t.std_mean(x, 1), (_a(2, 3),)),
    "std_mean_u": (lambda t, x: t.std_mean(x, unbiased=False), (_a(4),)),
    "std_mean_var": (lambda t, x: t.std_mean(x, -1)[0], (_a(2, 3),)),  # (the mean unused: its node still one)
    "cummax": (lambda t, x: t.cummax(x, 1), (_a(2, 5),)),
    "cummin_ties": (lambda t, x: t.cummin(x, 0), (np.array([[2.0, 1.0], [1.0, 3.0], [1.0, 3.0], [0.5, -1.0]]),)),
    "cummax_0d": (lambda t, x: t.cummax(x, 0), (np.array(1.5),)),
    "cummax_": (lambda t, x: x.cummax(-1).values, (_a(3, 4),)),
    "embedding": (lambda t, w: t.nn.functional.embedding(t.tensor([[0, 2], [2, 1]]), w), (_a(3, 4),)),
    "embedding_pad_freq": (lambda t, w: t.nn.functional.embedding(t.tensor([0, 2, 2, 1, 2]), w, padding_idx=1,
                                                                  scale_grad_by_freq=True), (_a(3, 4),)),
    "deg2rad": (lambda t, x: t.deg2rad(x), (_a(2, 3) * 100,)),
    "rad2deg": (lambda t, x: x.rad2deg(), (_a(2, 3),)),
    "rad2deg_": (lambda t, x: (x * 1).rad2deg_(), (_a(2, 3),)),
    "dist": (lambda t, a, b: t.dist(a, b), (_a(2, 3), _a(3))),
    "dist_p1": (lambda t, a, b: t.dist(a, b, 1), (_a(2, 3), _a(2, 3))),
    "dist_p3": (lambda t, a, b: t.dist(a, b, 3), (_a(4), _a(2, 4))),
    "dist_inf": (lambda t, a, b: t.dist(a, b, float("inf")), (_a(2, 3), _a(2, 3))),
    "dist_half": (lambda t, a, b: t.dist(a, b, 0.5), (_a(2, 3), _a(2, 3))),
    "renorm": (lambda t, x: x.renorm(2, 0, 1.0), (_a(3, 4),)),
    "renorm_p1": (lambda t, x: t.renorm(x, 1, 1, 0.8), (_a(3, 4, 2),)),
    "renorm_": (lambda t, x: (x * 1).renorm_(1.5, -1, 0.7), (_a(3, 4),)),
    "matrix_exp": (lambda t, x: t.linalg.matrix_exp(x), (_a(3, 3),)),
    "matrix_exp_scaled": (lambda t, x: t.matrix_exp(x), (_a(2, 3, 3) * 6,)),  # (scaling and squaring)
    "unfold": (lambda t, x: x.unfold(1, 2, 1), (_a(2, 4, 3),)),
    "unfold_step": (lambda t, x: x.unfold(-1, 2, 3), (_a(3, 7),)),
    "unfold_0d": (lambda t, x: x.unfold(0, 1, 1), (np.array(0.5),)),
    "unfold_view": (lambda t, x: x.t().unfold(0, 2, 1), (_a(2, 4),)),
    "kron": (lambda t, a, b: t.kron(a, b), (_a(2, 3), _a(3, 2))),
    "kron_ranks": (lambda t, a, b: t.kron(a, b), (_a(3), _a(2, 1, 2))),
    "T": (lambda t, x: x.T, (_a(2, 3),)),
    "i0e": (lambda t, x: t.special.i0e(x), (_a(2, 3),)),
    "i1": (lambda t, x: t.special.i1(x), (_a(2, 3),)),
    "i1e": (lambda t, x: t.special.i1e(x), (_a(2, 3),)),
    "ndtri": (lambda t, x: t.special.ndtri(x), (_R.uniform(0.05, 0.95, (2, 3)),)),
    "log_ndtr": (lambda t, x: t.special.log_ndtr(x), (_a(2, 3) * 3,)),
    "erfcx": (lambda t, x: t.special.erfcx(x), (_a(2, 3),)),
    "entr": (lambda t, x: t.special.entr(x), (_R.uniform(0.1, 2, (2, 3)),)),
    "xlog1py": (lambda t, x, y: t.special.xlog1py(x, y), (_a(2, 3), _R.uniform(0.1, 2, (3,)))),
    "xlog1py_2": (lambda t, x: t.special.xlog1py(x, 2.5), (_a(2, 3),)),
    "xlogy_1": (lambda t, y: t.xlogy(1.5, y), (_R.uniform(0.1, 2, (2, 3)),)),
    "mvlgamma": (lambda t, x: t.mvlgamma(x, 3), (_R.uniform(1.2, 4, (2, 3)),)),
    "mvlgamma_": (lambda t, x: (x * 1).mvlgamma_(2), (_R.uniform(1.2, 4, (2, 3)),)),
    "pdist": (lambda t, x: t.nn.functional.pdist(x), (_a(4, 3),)),
    "pdist_p3": (lambda t, x: t.nn.functional.pdist(x, 3), (_a(3, 2),)),
    "pdist_inf": (lambda t, x: t.nn.functional.pdist(x, float("inf")), (_a(3, 4),)),
    "block_diag": (lambda t, a, b, c: t.block_diag(a, b, c), (_a(2, 3), _a(3), np.array(0.5))),
    "prod_d": (lambda t, x: x.prod(1), (_a(2, 4),)),
    "tensordot": (lambda t, a, b: t.tensordot(a, b, ([0, 2], [1, 0])), (_a(2, 3, 4), _a(4, 2, 5))),
    "trapezoid": (lambda t, y: t.trapezoid(y), (_a(2, 5),)),
    "trapezoid_dx": (lambda t, y: t.trapz(y, dx=0.3, dim=0), (_a(4, 3),)),
}
_NAMES = list(_CASES)
# ops torch records as a chain, here one node named as the chain's last (kron: views, a product, an unsafe view;
# tensordot: permutes, reshapes, an mm, a view; trapezoid: a sum, selects, an add, products)
_CHAINS = {"kron", "kron_ranks", "tensordot", "trapezoid", "trapezoid_dx"}
# (matrix_exp: torch picks a Taylor polynomial of degree up to 18 by the norm, funcgrad the degree-13 Pade
# approximant of Higham 2005 after scaling: both exact to rounding, their roundings differ)
_RTOL = {"matrix_exp": 1e-12, "matrix_exp_scaled": 1e-12}
# (second derivatives: mvlgamma's is a sum of trigammas, and torch's trigamma is off by ~5e-10 relative
# (psi(1, 1.3): mpmath 1.13425343499662, torch 1.13425343554, funcgrad 1.1342534349966))
_RTOL2 = {"mvlgamma": 1e-8, "mvlgamma_": 1e-8}
# (torch has no second derivative for pdist: '_pdist_backward' is not implemented; here its binds' own)
_FIRST_ONLY = {"pdist", "pdist_p3", "pdist_inf"}


def _run(t, name):
    """The inputs and the differentiable outputs (one, or several of one node: std_mean, cummax's values)."""
    f, vals = _CASES[name]
    xs = [t.tensor(v.copy(), requires_grad=True) for v in vals]
    y = f(t, *xs)
    ys = list(y) if isinstance(y, tuple) else [y]
    return xs, [o for o in ys if o.requires_grad]


def test_deg2rad_half_precision_rounds_once_as_torch():
    # (torch multiplies float16 / bfloat16 in float32 and rounds once: 33.3 degrees -> 1909, not 1908)
    for dt in ("float16", "bfloat16"):
        x = np.array([1.0, -200.5, 33.3, 0.7])
        for f in ("deg2rad", "rad2deg"):
            a = getattr(fg, f)(fg.tensor(x, dtype=getattr(fg, dt))).float().numpy()
            b = getattr(torch, f)(torch.tensor(x, dtype=getattr(torch, dt))).float().numpy()
            np.testing.assert_array_equal(a, b)


def test_renorm_zero_slice_first_gradient_as_torch():
    # (a slice of norm 0 is left as it is and passes the gradient through; torch's second derivative there is
    # NaN (0 / 0 in its double backward), ours 0: not compared)
    x0 = _a(3, 4) * np.array([[1.0], [0.0], [1.0]])
    w = _a(3, 4)
    out = []
    for t in (fg, torch):
        x = t.tensor(x0.copy(), requires_grad=True)
        y = t.renorm(x, 3, 0, 0.5)
        g, = t.autograd.grad(y, x, t.tensor(w))
        out.append((y.grad_fn.name(), y.detach().numpy(), g.numpy()))
    assert out[0][0] == out[1][0]
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(out[0][2], out[1][2], rtol=1e-13, atol=1e-14)


def test_unfold_is_a_view_as_torch():
    for t in (fg, torch):
        x = t.tensor(np.arange(12.0).reshape(3, 4))
        y = x.unfold(1, 2, 2)
        assert y._base is x and y.stride() == (4, 2, 1) and y.shape == (3, 2, 2)
        y[1, 0, 1] = -1.0
        assert x[1, 1].item() == -1.0


@pytest.mark.parametrize("shape", [(), (3,), (2, 3, 4)])
def test_T_of_other_ranks_warns_as_torch(shape):
    # (torch warns once per process (TORCH_WARN_ONCE), so only its node is compared; the messages are torch's)
    msg = "Tensor.T is deprecated on 0-D tensors" if not shape else "The use of `x.T` on tensors of dimension other"
    with pytest.warns(UserWarning, match=msg):
        y = fg.zeros(shape, requires_grad=True).T
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y_ref = torch.zeros(shape, requires_grad=True).T
    assert y.grad_fn.name() == y_ref.grad_fn.name() == "PermuteBackward0"
    assert tuple(y.shape) == tuple(y_ref.shape) == shape[::-1]


def _nodes(y) -> int:
    """The number of graph nodes from y's grad_fn to the leaves (AccumulateGrad not counted)."""
    seen, todo = set(), [y.grad_fn]
    while todo:
        n = todo.pop()
        if n is None or id(n) in seen or type(n).__name__ == "AccumulateGrad":
            continue
        seen.add(id(n))
        todo.extend(e[0] for e in n.next_functions)
    return len(seen)


@pytest.mark.parametrize("name", _NAMES)
def test_one_node_named_as_torch(name):
    _, ys_ref = _run(torch, name)
    _, ys = _run(fg, name)
    y, y_ref = ys[0], ys_ref[0]
    assert y.grad_fn.name() == y_ref.grad_fn.name()
    assert len(ys) == len(ys_ref) and all(o.grad_fn is y.grad_fn for o in ys)  # (one node for every output)
    assert [o.output_nr for o in ys] == [o.output_nr for o in ys_ref]
    if name in _CHAINS:
        assert _nodes(y) == 1 < _nodes(y_ref)
        return
    # (an in-place op on a copy (c * 1) leaves the MulBackward0 of the copy behind it, in both)
    assert _nodes(y) == _nodes(y_ref)
    # (one edge per floating input, (None, 0) for those that do not require grad, as torch's)
    assert [type(e[0]).__name__ for e in y.grad_fn.next_functions] == \
        [type(e[0]).__name__ for e in y_ref.grad_fn.next_functions]


@pytest.mark.parametrize("name", _NAMES)
def test_values_and_two_gradients_as_torch(name):
    xs_ref, ys_ref = _run(torch, name)
    xs, ys = _run(fg, name)
    rtol = _RTOL.get(name, 1e-13)
    for y, y_ref in zip(ys, ys_ref):
        np.testing.assert_allclose(y.detach().numpy(), y_ref.detach().numpy(), rtol=rtol, atol=1e-14)
    rng = np.random.default_rng(_NAMES.index(name))  # (the weights of each case its own, whatever ran before)
    ws = [rng.uniform(-1.5, 1.5, y.shape) for y in ys_ref]
    g_ref = torch.autograd.grad(ys_ref, xs_ref, [torch.tensor(w) for w in ws], create_graph=True)
    g = fg.autograd.grad(ys, xs, [fg.tensor(w) for w in ws], create_graph=True)
    for a, b in zip(g, g_ref):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=1e-14)
    if name in _FIRST_ONLY:
        return
    # the second gradient: of sum_i <g_i, v_i> with respect to every input (unused ones: None in both)
    vs = [rng.uniform(-1.5, 1.5, x.shape) for x in xs_ref]
    s_ref = sum((gi * torch.tensor(v)).sum() for gi, v in zip(g_ref, vs) if gi.requires_grad)
    s = sum((gi * fg.tensor(v)).sum() for gi, v in zip(g, vs) if gi.requires_grad)
    # (where torch's gradient requires grad, ours does; the converse not always: with create_graph=True the
    # backward of a node of several binds is one recorded op of all its gradients (autograd.graph), so a
    # gradient torch computes from the cotangent alone, as addmm's beta * grad for input, requires grad here
    # too; its own gradient is zero, checked below against torch's None)
    assert all(a.requires_grad for a, b in zip(g, g_ref) if b.requires_grad)
    h_ref = torch.autograd.grad(s_ref, xs_ref, allow_unused=True) if torch.is_tensor(s_ref) else [None] * len(xs)
    h = fg.autograd.grad(s, xs, allow_unused=True) if fg.is_tensor(s) else [None] * len(xs)
    for a, b in zip(h, h_ref):
        if b is None:
            assert a is None or not np.any(a.numpy())
        else:  # (torch's zero second derivatives may be a ZeroTensor, with no numpy of its own)
            bn = np.zeros(b.shape) if b._is_zerotensor() else b.numpy()
            np.testing.assert_allclose(a.numpy(), bn, rtol=_RTOL2.get(name, rtol), atol=1e-14)
