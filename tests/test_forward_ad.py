"""funcgrad.autograd.forward_ad (dual tensors) against torch.autograd.forward_ad, and against funcgrad.func.jvp."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import funcgrad as fg
import funcgrad.nn.functional as fF
from funcgrad.autograd import forward_ad as fgAD

torch = pytest.importorskip("torch")
import torch.autograd.forward_ad as tAD  # noqa: E402
import torch.nn.functional as tF  # noqa: E402

RNG = np.random.default_rng(0)


def _run(lib, AD, f, xs, ts, dual=None):
    """f(lib, *inputs) with inputs i in `dual` (all by default) made dual with tangent ts[i]: the
    (primal, tangent) numpy pairs of its outputs."""
    dual = range(len(xs)) if dual is None else dual
    with AD.dual_level():
        ins = []
        for i, (x, t) in enumerate(zip(xs, ts)):
            p = lib.tensor(x)
            ins.append(AD.make_dual(p, lib.tensor(t)) if i in dual else p)
        out = f(lib, *ins)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        res = []
        for o in outs:
            p, tn = AD.unpack_dual(o)
            res.append((np.array(p.detach().numpy()), None if tn is None else np.array(tn.detach().numpy())))
        return res


def _check(f, shapes, dtype=np.float64, dual=None, rtol=None, xs=None):
    xs = xs if xs is not None else [RNG.standard_normal(s).astype(dtype) for s in shapes]
    ts = [RNG.standard_normal(np.shape(x)).astype(dtype) for x in xs]
    got = _run(fg, fgAD, f, xs, ts, dual)
    want = _run(torch, tAD, f, xs, ts, dual)
    assert len(got) == len(want)
    tol = rtol or (1e-9 if dtype == np.float64 else 2e-4)
    for (gp, gt), (wp, wt) in zip(got, want):
        np.testing.assert_allclose(gp, wp, rtol=tol, atol=tol)
        assert (gt is None) == (wt is None)
        if wt is not None:
            assert gt.dtype == wt.dtype
            np.testing.assert_allclose(gt, wt, rtol=tol, atol=tol)


def _F(lib):
    return fF if lib is fg else tF


OPS = {
    "add": (lambda L, a, b: a + b, [(3, 4), (4,)]),
    "sub_scalar": (lambda L, a: 2.0 - a, [(3,)]),
    "mul": (lambda L, a, b: a * b, [(2, 3), (2, 3)]),
    "div": (lambda L, a, b: a / (b * b + 1), [(3,), (3,)]),
    "pow": (lambda L, a: a ** 3, [(5,)]),
    "pow_tensor": (lambda L, a, b: (a * a + 1) ** b, [(4,), (4,)]),
    "exp_log": (lambda L, a: L.log(L.exp(a) + 1), [(2, 2)]),
    "sin_cos_tanh": (lambda L, a: L.sin(a) * L.cos(a) + L.tanh(a), [(6,)]),
    "sigmoid": (lambda L, a: L.sigmoid(a), [(3, 2)]),
    "sqrt_abs": (lambda L, a: L.sqrt(a.abs() + 1), [(4,)]),
    "sum_dim": (lambda L, a: a.sum(1), [(3, 4)]),
    "sum_all": (lambda L, a: a.sum(), [(3, 4)]),
    "mean_keep": (lambda L, a: a.mean(0, keepdim=True), [(3, 4)]),
    "var_std": (lambda L, a: (a.var(1), a.std()), [(3, 4)]),
    "prod": (lambda L, a: a.prod(1), [(2, 3)]),
    "norm": (lambda L, a: a.norm(), [(5,)]),
    "logsumexp": (lambda L, a: L.logsumexp(a, 1), [(3, 4)]),
    "cumsum": (lambda L, a: L.cumsum(a, 0), [(4, 2)]),
    "max_dim": (lambda L, a: L.max(a, 1), [(3, 4)]),
    "amax_min": (lambda L, a: (a.amax(0), a.min()), [(3, 4)]),
    "maximum": (lambda L, a, b: L.maximum(a, b), [(5,), (5,)]),
    "clamp": (lambda L, a: L.clamp(a, -0.5, 0.5), [(6,)]),
    "where": (lambda L, a, b: L.where(a > 0, a, b), [(5,), (5,)]),
    "matmul": (lambda L, a, b: a @ b, [(3, 4), (4, 2)]),
    "matvec": (lambda L, a, b: L.matmul(a, b), [(3, 4), (4,)]),
    "bmm": (lambda L, a, b: L.bmm(a, b), [(2, 3, 4), (2, 4, 5)]),
    "einsum": (lambda L, a, b: L.einsum("ij,jk->ik", a, b), [(2, 3), (3, 2)]),
    "transpose": (lambda L, a: a.t() * 2, [(2, 3)]),
    "permute_reshape": (lambda L, a: a.permute(2, 0, 1).reshape(4, 6), [(2, 3, 4)]),
    "view_flatten": (lambda L, a: a.view(-1).flatten(), [(2, 3)]),
    "expand": (lambda L, a: a.expand(3, 4) + 0, [(1, 4)]),
    "squeeze_unsqueeze": (lambda L, a: a.unsqueeze(0).squeeze(), [(3, 1)]),
    "index_basic": (lambda L, a: a[1:, ::2], [(3, 4)]),
    "index_adv": (lambda L, a: a[[0, 2, 2]], [(3, 4)]),
    "index_mask": (lambda L, a: a[a > 0], [(8,)]),
    "cat_stack": (lambda L, a, b: (L.cat([a, b]), L.stack([a, b], 1)), [(2, 3), (2, 3)]),
    "split_unbind": (lambda L, a: tuple(a.split(2)) + tuple(a.unbind(1)), [(4, 2)]),
    "chunk": (lambda L, a: a.chunk(2, 1), [(2, 4)]),
    "flip_roll": (lambda L, a: (L.flip(a, [0]), L.roll(a, 1)), [(3, 2)]),
    "gather": (lambda L, a: L.gather(a, 1, L.tensor([[0, 0], [1, 0]])), [(2, 3)]),
    "index_select": (lambda L, a: L.index_select(a, 0, L.tensor([2, 0])), [(3, 2)]),
    "masked_fill": (lambda L, a: a.masked_fill(a > 0, 0.5), [(6,)]),
    "sort_topk": (lambda L, a: (L.sort(a, 1)[0], L.topk(a, 2)[0]), [(3, 4)]),
    "relu": (lambda L, a: _F(L).relu(a), [(3, 4)]),
    "gelu_silu": (lambda L, a: _F(L).gelu(a) + _F(L).silu(a), [(5,)]),
    "softmax": (lambda L, a: _F(L).softmax(a, -1), [(3, 4)]),
    "log_softmax": (lambda L, a: _F(L).log_softmax(a, 0), [(3, 4)]),
    "linear": (lambda L, x, w, b: _F(L).linear(x, w, b), [(2, 3), (4, 3), (4,)]),
    "conv2d": (lambda L, x, w: _F(L).conv2d(x, w, padding=1), [(1, 2, 5, 5), (3, 2, 3, 3)]),
    "max_pool2d": (lambda L, x: _F(L).max_pool2d(x, 2), [(1, 2, 4, 4)]),
    "avg_pool2d": (lambda L, x: _F(L).avg_pool2d(x, 2), [(1, 2, 4, 4)]),
    "layer_norm": (lambda L, x: _F(L).layer_norm(x, (4,)), [(3, 4)]),
    "mse_loss": (lambda L, a, b: _F(L).mse_loss(a, b), [(3, 4), (3, 4)]),
    "cross_entropy": (lambda L, a: _F(L).cross_entropy(a, L.tensor([1, 0, 3])), [(3, 4)]),
    "nll_loss": (lambda L, a: _F(L).nll_loss(_F(L).log_softmax(a, 1), L.tensor([2, 0])), [(2, 3)]),
    "bce_logits": (lambda L, a, b: _F(L).binary_cross_entropy_with_logits(a, L.sigmoid(b)), [(4,), (4,)]),
    "to_float32": (lambda L, a: a.to(L.float32) * 2, [(3,)]),
    "clone_contig": (lambda L, a: a.t().contiguous().clone(), [(2, 3)]),
    "embedding": (lambda L, w: _F(L).embedding(L.tensor([0, 2, 1]), w), [(3, 4)]),
    "batch_norm_train": (lambda L, x: _F(L).batch_norm(x, L.zeros(3, dtype=x.dtype), L.ones(3, dtype=x.dtype),
                                                       training=True), [(4, 3)]),
    "batch_norm_eval": (lambda L, x, w: _F(L).batch_norm(x, L.zeros(3, dtype=x.dtype), L.ones(3, dtype=x.dtype),
                                                         w, None), [(4, 3), (3,)]),
    "dropout0": (lambda L, x: _F(L).dropout(x, 0.0), [(4,)]),
    "pad": (lambda L, x: _F(L).pad(x, (1, 2)), [(2, 3)]),
    "interpolate": (lambda L, x: _F(L).interpolate(x, scale_factor=2, mode="nearest"), [(1, 1, 3)]),
    "conv1d": (lambda L, x, w, b: _F(L).conv1d(x, w, b, stride=2), [(1, 2, 7), (3, 2, 3), (3,)]),
    "conv_transpose2d": (lambda L, x, w: _F(L).conv_transpose2d(x, w), [(1, 2, 3, 3), (2, 1, 2, 2)]),
    "group_norm": (lambda L, x: _F(L).group_norm(x, 2), [(2, 4, 3)]),
    "smooth_l1": (lambda L, a, b: _F(L).smooth_l1_loss(a, b), [(5,), (5,)]),
    "kl_div": (lambda L, a, b: _F(L).kl_div(_F(L).log_softmax(a, 1), _F(L).softmax(b, 1), reduction="batchmean"),
               [(2, 3), (2, 3)]),
    "normalize": (lambda L, a: _F(L).normalize(a, dim=1), [(2, 3)]),
    "cosine_sim": (lambda L, a, b: _F(L).cosine_similarity(a, b), [(2, 3), (2, 3)]),
    "linalg_inv": (lambda L, a: L.linalg.inv(a + 3 * L.eye(3, dtype=a.dtype)), [(3, 3)]),
    "det_solve": (lambda L, a, b: (L.linalg.det(a), L.linalg.solve(a + 3 * L.eye(3, dtype=a.dtype), b)),
                  [(3, 3), (3,)]),
    "triu_diag": (lambda L, a: (L.triu(a), L.diagonal(a), a.diag()), [(3, 3)]),
    "repeat_tile": (lambda L, a: (a.repeat(2, 1), L.tile(a, (2,))), [(2, 3)]),
    "narrow_select": (lambda L, a: (a.narrow(1, 1, 2), a.select(0, 1), a.unfold(1, 2, 1)), [(2, 3)]),
    "scatter_add": (lambda L, a, s: a.scatter_add(0, L.tensor([[0, 1, 0]]), s), [(2, 3), (1, 3)]),
    "index_add": (lambda L, a, s: a.index_add(0, L.tensor([1, 1]), s), [(2, 3), (2, 3)]),
    "lerp_addcmul": (lambda L, a, b: (L.lerp(a, b, 0.3), L.addcmul(a, a, b, value=0.5)), [(3,), (3,)]),
    "fft": (lambda L, a: L.fft.rfft(a).abs(), [(8,)]),
    "complex_view": (lambda L, a: L.view_as_real(L.view_as_complex(a) * 2), [(3, 2)]),
    "atan_erf": (lambda L, a: L.atan(a) + L.erf(a) + L.special.expit(a), [(4,)]),
    "addmm_baddbmm": (lambda L, c, a, b: L.addmm(c, a, b), [(2, 2), (2, 3), (3, 2)]),
    "inplace_relu": (lambda L, a: _F(L).relu(a * 1, inplace=True), [(5,)]),
    "inplace_clamp_": (lambda L, a: (a * 1).clamp_(-0.3, 0.3), [(5,)]),
    "index_put_": (lambda L, a, v: (a * 1).index_put_((L.tensor([0, 2]),), v), [(3,), (2,)]),
    "masked_scatter": (lambda L, a, s: a.masked_scatter(a > 0, s), [(4,), (4,)]),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_matches_torch(name):
    f, shapes = OPS[name]
    _check(f, shapes)


@pytest.mark.parametrize("name", ["mul", "matmul", "linear", "softmax", "index_basic", "max_dim"])
def test_op_one_dual_input_float32(name):
    f, shapes = OPS[name]
    _check(f, shapes, dtype=np.float32, dual=[0])


_UNARY = ["exp", "tanh", "sin", "sigmoid", "neg", "square", "abs", "reciprocal"]


@given(shape=st.lists(st.integers(1, 3), min_size=0, max_size=3),
       dtype=st.sampled_from([np.float32, np.float64]), op=st.sampled_from(_UNARY),
       axis=st.integers(0, 2))
def test_hypothesis_unary_then_reduce(shape, dtype, op, axis):
    def f(L, a):
        y = getattr(L, op)(a)
        return (y, y.sum(axis) if a.ndim > axis else y.sum())
    _check(f, [tuple(shape)], dtype=dtype)


@given(shapes=st.sampled_from([((2, 3), (3,)), ((1, 3), (2, 1)), ((), (2,)), ((2, 2), (2, 2))]),
       dtype=st.sampled_from([np.float32, np.float64]), op=st.sampled_from(["add", "mul", "sub", "div", "atan2"]))
def test_hypothesis_binary_broadcast(shapes, dtype, op):
    def f(L, a, b):
        if op == "div":
            return a / (b * b + 1)
        return getattr(L, op)(a, b)
    _check(f, list(shapes), dtype=dtype)


def test_small_model_matches_torch():
    tm = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2))
    fm = fg.nn.Sequential(fg.nn.Linear(3, 5), fg.nn.Tanh(), fg.nn.Linear(5, 2))
    fm.load_state_dict({k: fg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    t = RNG.standard_normal((4, 3)).astype(np.float32)
    got = _run(fg, fgAD, lambda L, a: fm(a), [x], [t])
    want = _run(torch, tAD, lambda L, a: tm(a), [x], [t])
    np.testing.assert_allclose(got[0][0], want[0][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[0][1], want[0][1], rtol=1e-5, atol=1e-6)


def test_conv_model_with_dual_parameter():
    """A tangent on a weight (the directional derivative of the loss along a parameter direction)."""
    x = RNG.standard_normal((2, 1, 6, 6))
    w = RNG.standard_normal((2, 1, 3, 3))
    tw = RNG.standard_normal((2, 1, 3, 3))

    def f(L, w, x):
        F = _F(L)
        h = F.relu(F.conv2d(x, w))
        return F.cross_entropy(h.flatten(1)[:, :3], L.tensor([0, 2]))
    got = _run(fg, fgAD, f, [w, x], [tw, np.zeros_like(x)], dual=[0])
    want = _run(torch, tAD, f, [w, x], [tw, np.zeros_like(x)], dual=[0])
    np.testing.assert_allclose(got[0][0], want[0][0], rtol=1e-9)
    np.testing.assert_allclose(got[0][1], want[0][1], rtol=1e-9)


# --- API semantics -----------------------------------------------------------------------------------

def _both(f):
    return f(fg, fgAD), f(torch, tAD)


def test_unpack_and_level_semantics():
    for lib, AD in ((fg, fgAD), (torch, tAD)):
        p = lib.tensor([1.0, 2.0])
        t = lib.tensor([3.0, 4.0])
        assert AD.unpack_dual(p).tangent is None
        with AD.dual_level() as lvl:
            assert lvl == 0
            d = AD.make_dual(p, t)
            u = AD.unpack_dual(d)
            assert isinstance(u, AD.UnpackedDualTensor) and isinstance(u, tuple)
            assert u.tangent is t
            assert u.primal._base is p and d._base is p
            assert AD.unpack_dual(p).tangent is None  # the primal itself has no tangent
            assert AD.unpack_dual(p, level=5).tangent is None
            assert AD.unpack_dual(p, level=5).primal._base is p
            with pytest.raises(RuntimeError, match="Invalid level given to _fw_primal"):
                AD.unpack_dual(d, level=5)
            assert AD.unpack_dual(d.detach()).tangent is None
            p2 = u.primal
            p2.mul_(1)
            assert AD.unpack_dual(p2).tangent is None
        assert AD.unpack_dual(d).tangent is None  # dropped at exit
        assert AD.unpack_dual(d).primal is d


def test_make_dual_requires_grad_follows_primal():
    def f(lib, AD):
        p = lib.tensor([1.0, 2.0], requires_grad=True)
        with AD.dual_level():
            d = AD.make_dual(p, lib.tensor([3.0, 4.0]))
            return d.requires_grad, type(d.grad_fn).__name__
    assert _both(f)[0] == _both(f)[1] == (True, "ViewBackward0")


ERRORS = {
    "no_level": lambda L, AD: AD.make_dual(L.ones(2), L.ones(2)),
    "exit_none": lambda L, AD: AD.exit_dual_level(),
    "size": lambda L, AD: _in_level(AD, lambda: AD.make_dual(L.ones(3), L.ones(2))),
    "int_primal": lambda L, AD: _in_level(AD, lambda: AD.make_dual(L.arange(3), L.ones(3))),
    "int_tangent": lambda L, AD: _in_level(AD, lambda: AD.make_dual(L.ones(3), L.arange(3))),
    "nested": lambda L, AD: _in_level(AD, AD.enter_dual_level),
    "bad_level": lambda L, AD: _in_level(AD, lambda: AD.make_dual(L.ones(3), L.ones(3), level=3)),
    "exit_other": lambda L, AD: _in_level(AD, lambda: AD.exit_dual_level(level=2)),
    "dual_of_dual": lambda L, AD: _in_level(AD, lambda: AD.make_dual(AD.make_dual(L.ones(2), L.ones(2)),
                                                                      L.ones(2))),
}


def _in_level(AD, f):
    with AD.dual_level():
        f()


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    f = ERRORS[name]
    with pytest.raises(Exception) as want:
        f(torch, tAD)
    with pytest.raises(type(want.value)) as got:
        f(fg, fgAD)
    assert type(got.value) is type(want.value)
    assert str(got.value) == str(want.value)
    for AD in (fgAD, tAD):  # no level is left open by an error
        with AD.dual_level() as lvl:
            assert lvl == 0


# --- in-place ops update tangents as in torch ------------------------------------------------------

INPLACE = {
    "view_mul_": lambda L, d: (d[1:].mul_(3), d)[1],
    "base_mul_after_view": lambda L, d: (lambda v: (d.mul_(d * 2), v)[1])(d[:2]),
    "add_into_view_of_plain": lambda L, d: (lambda z: (z[1:].add_(d), z)[1])(L.zeros(4)),
    "setitem_basic": lambda L, d: (lambda z: (z.__setitem__(slice(1, None), d), z)[1])(L.zeros(4)),
    "setitem_adv": lambda L, d: (lambda z: (z.__setitem__([0, 2, 3], d), z)[1])(L.ones(4, dtype=d.dtype)),
    "fill_zero": lambda L, d: (d[0:1].fill_(2.0), d[2:].zero_(), d)[2],
    "copy_": lambda L, d: (lambda z: (z.copy_(d * d), z)[1])(L.zeros(3, dtype=d.dtype)),
    "div_then_exp_": lambda L, d: d.div_(2.0).exp_(),
    "iadd": lambda L, d: (lambda z: (z.__iadd__(d), z)[1])(L.ones(3)),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_matches_torch(name):
    _check(INPLACE[name], [(3,)])


# --- with reverse mode ---------------------------------------------------------------------------------

def _rev_over_fwd(lib, AD, x, t, f):
    xp = lib.tensor(x, requires_grad=True)
    tp = lib.tensor(t, requires_grad=True)
    with AD.dual_level():
        y = f(lib, AD.make_dual(xp, tp))
        p, tn = AD.unpack_dual(y)
        (tn.sum() + p.sum()).backward()
    return xp.grad.numpy(), tp.grad.numpy()


@pytest.mark.parametrize("name", ["sin_cos_tanh", "norm", "max_dim", "cumsum", "matmul", "linear", "conv2d",
                                  "index_adv"])
def test_reverse_over_forward(name):
    f, shapes = OPS[name]
    x = RNG.standard_normal(shapes[0])
    t = RNG.standard_normal(shapes[0])
    rest = [RNG.standard_normal(s) for s in shapes[1:]]

    def g(L, a):
        r = f(L, a, *[L.tensor(o) for o in rest])
        return r[0] if isinstance(r, tuple) else r
    got = _rev_over_fwd(fg, fgAD, x, t, g)
    want = _rev_over_fwd(torch, tAD, x, t, g)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def _fwd_over_rev(lib, AD, x, t, f, create_graph, wrt_primal):
    xp = lib.tensor(x, requires_grad=True)
    with AD.dual_level():
        d = AD.make_dual(xp, lib.tensor(t))
        y = f(lib, d)
        g, = lib.autograd.grad(y, xp if wrt_primal else d, create_graph=create_graph)
        p, tn = AD.unpack_dual(g)
        return p.detach().numpy(), tn.detach().numpy(), g.requires_grad


@pytest.mark.parametrize("create_graph,wrt_primal", [(True, False), (False, False), (False, True)])
@pytest.mark.parametrize("f", [lambda L, a: (a.sin() * a).sum(), lambda L, a: L.logsumexp(a * a, 0).sum(),
                               lambda L, a: (a @ a.t()).tanh().sum()])
def test_forward_over_reverse_hvp(f, create_graph, wrt_primal):
    x = RNG.standard_normal((3, 2))
    t = RNG.standard_normal((3, 2))
    got = _fwd_over_rev(fg, fgAD, x, t, f, create_graph, wrt_primal)
    want = _fwd_over_rev(torch, tAD, x, t, f, create_graph, wrt_primal)
    for a, b in zip(got[:2], want[:2]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    assert got[2] == want[2]


# --- agreement with funcgrad.func.jvp, which does not see dual levels ----------------------------------

def test_equals_func_jvp_and_func_jvp_unaffected():
    x = fg.tensor(RNG.standard_normal((3, 4)))
    t = fg.tensor(RNG.standard_normal((3, 4)))
    w = fg.tensor(RNG.standard_normal((4, 2)))

    def f(a):
        return fF.softmax(a @ w, 1).log().sum(0)
    out, jt = fg.func.jvp(f, (x,), (t,))
    with fgAD.dual_level():
        p, tn = fgAD.unpack_dual(f(fgAD.make_dual(x, t)))
        out2, jt2 = fg.func.jvp(f, (x,), (t,))  # inside a level, on plain tensors
    np.testing.assert_allclose(p.numpy(), out.numpy(), rtol=1e-12)
    np.testing.assert_allclose(tn.numpy(), jt.numpy(), rtol=1e-12)
    np.testing.assert_allclose(jt2.numpy(), jt.numpy(), rtol=1e-12)


def test_no_tangent_no_overhead_path_and_untouched_ops():
    """Ops on plain tensors inside a level have no tangent; integer results never carry one."""
    with fgAD.dual_level():
        a = fg.ones(3) * 2
        assert fgAD.unpack_dual(a).tangent is None
        d = fgAD.make_dual(fg.ones(3), fg.ones(3))
        idx = fg.argmax(d)
        assert fgAD.unpack_dual(idx).tangent is None
        assert fgAD.unpack_dual(fg.max(d, 0).indices).tangent is None


def test_ops_torch_lacks_forward_ad_for_equal_func_jvp():
    """Ops whose forward AD torch does not implement (its cdist, CPU attention) still get tangents here,
    equal to funcgrad.func.jvp's."""
    q, k, v = (fg.tensor(RNG.standard_normal((1, 2, 3, 4))) for _ in range(3))
    tq = fg.tensor(RNG.standard_normal((1, 2, 3, 4)))
    a, b = fg.tensor(RNG.standard_normal((2, 3))), fg.tensor(RNG.standard_normal((4, 3)))
    ta = fg.tensor(RNG.standard_normal((2, 3)))
    for f, x, t in ((lambda x: fF.scaled_dot_product_attention(x, k, v), q, tq), (lambda x: fg.cdist(x, b), a, ta)):
        _, want = fg.func.jvp(f, (x,), (t,))
        with fgAD.dual_level():
            got = fgAD.unpack_dual(f(fgAD.make_dual(x, t))).tangent
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def _functions(L):
    class NoJvp(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    class TwoTangents(NoJvp):
        @staticmethod
        def jvp(ctx, t):
            return t * 5, t

    class Own(L.autograd.Function):  # a jvp that is deliberately not the forward's derivative
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_forward(x)
            ctx.save_for_backward(y)
            return x * y

        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * y, g

        @staticmethod
        def jvp(ctx, tx, ty):
            x, = ctx.saved_tensors
            return tx * 7 + ty * x
    return NoJvp, TwoTangents, Own


@pytest.mark.parametrize("case", ["nojvp", "count", "own_x", "own_y", "own_grad"])
def test_custom_function_jvp_matches_torch(case):
    def run(L, AD):
        NoJvp, TwoTangents, Own = _functions(L)
        with AD.dual_level():
            x = L.tensor([1.0, 2.0], requires_grad=case == "own_grad")
            d = AD.make_dual(x, L.tensor([1.0, -1.0]))
            y = L.tensor([3.0, 4.0])
            f = {"nojvp": lambda: NoJvp.apply(d), "count": lambda: TwoTangents.apply(d),
                 "own_x": lambda: Own.apply(d, y), "own_y": lambda: Own.apply(y, d),
                 "own_grad": lambda: Own.apply(d, y)}[case]
            try:
                out = f()
            except Exception as e:
                return type(e), str(e)
            p, t = AD.unpack_dual(out)
            if case == "own_grad":
                p.sum().backward()
                return p.tolist(), t.tolist(), x.grad.tolist()
            return p.tolist(), t.tolist()
    assert run(fg, fgAD) == run(torch, tAD)


def test_module_with_batchnorm_and_functional_call_dual_parameters():
    def build(L):
        L.manual_seed(0)
        return L.nn.Sequential(L.nn.Conv2d(1, 2, 3), L.nn.BatchNorm2d(2), L.nn.ReLU(), L.nn.Flatten(),
                               L.nn.Linear(8, 3))
    tm = build(torch)
    fm = build(fg)
    fm.load_state_dict({k: fg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = RNG.standard_normal((2, 1, 4, 4)).astype(np.float32)
    t = RNG.standard_normal((2, 1, 4, 4)).astype(np.float32)
    got = _run(fg, fgAD, lambda L, a: fm(a), [x], [t])  # training mode: batch statistics, running stats
    want = _run(torch, tAD, lambda L, a: tm(a), [x], [t])
    np.testing.assert_allclose(got[0][1], want[0][1], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(fm[1].running_var.numpy(), tm[1].running_var.numpy(), rtol=1e-6)
    res = []
    for L, AD, m in ((fg, fgAD, fm), (torch, tAD, tm)):
        m.eval()
        params = {k: v.detach() for k, v in m.named_parameters()}
        gen = np.random.default_rng(1)
        with AD.dual_level():
            dp = {k: AD.make_dual(v, L.tensor(gen.standard_normal(tuple(v.shape)).astype(np.float32)))
                  for k, v in params.items()}
            out = L.func.functional_call(m, dp, (L.tensor(x),))
            res.append(AD.unpack_dual(out).tangent.detach().numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-4, atol=1e-5)


def test_tangent_layout_and_grad_modes_as_torch():
    def run(L, AD):
        res = []
        with AD.dual_level():
            p, t = L.tensor(RNG.standard_normal((2, 3))), L.tensor(RNG.standard_normal((3, 2))).t()
            u = AD.unpack_dual(AD.make_dual(p, t)).tangent
            res += [u is t, u.stride(), u.tolist() == t.tolist()]
            p2, t2 = L.tensor(RNG.standard_normal((3, 2))).t(), L.tensor(RNG.standard_normal((2, 3)))
            d2 = AD.make_dual(p2, t2)
            u2 = AD.unpack_dual(d2).tangent
            res += [u2 is t2, u2.stride(), AD.unpack_dual(d2[1]).tangent.tolist() == t2[1].tolist()]
            with L.no_grad():
                res.append(AD.unpack_dual(AD.make_dual(L.ones(3), L.ones(3)).exp()).tangent is None)
            with L.inference_mode():
                res.append(AD.unpack_dual(AD.make_dual(L.ones(3), L.ones(3)).exp()).tangent is None)
        return res
    assert run(fg, fgAD) == run(torch, tAD)


@given(n=st.integers(2, 5), start=st.integers(0, 1), step=st.integers(1, 2),
       op=st.sampled_from(["mul_", "add_", "exp_", "zero_", "copy_"]), transpose=st.booleans())
def test_hypothesis_inplace_through_views(n, start, step, op, transpose):
    """An in-place op on a view of a dual tensor (or of a plain tensor, with a dual operand) updates the
    tangents of the base and of the other views as in torch."""
    def f(L, d, e):
        base = d * 1  # a non-leaf dual root
        plain = L.zeros(d.shape, dtype=d.dtype)
        outs = []
        for root, other in ((base, e), (plain, d)):
            r = root.t() if transpose else root
            v = r[start::step]
            w = r[:1]
            o = other.t()[start::step] if transpose else other[start::step]
            if op == "exp_":
                v.exp_()
            elif op == "zero_":
                v.zero_()
            else:
                getattr(v, op)(o)
            outs += [root, w]
        return outs
    _check(f, [(n, n), (n, n)])


def test_tangent_keeps_its_dtype_as_torch():
    def run(L, AD):
        with AD.dual_level():
            d = AD.make_dual(L.tensor([0.5, -1.0]), L.tensor([1.0, 2.0], dtype=L.float64))
            outs = [d * 2, d.exp(), d[0], d.sum(), L.softmax(d, 0), d.to(L.float16)]
            return [(str(AD.unpack_dual(o).tangent.dtype), AD.unpack_dual(o).tangent.double().tolist())
                    for o in outs]
    got, want = run(fg, fgAD), run(torch, tAD)
    assert [g[0] for g in got] == [w[0] for w in want]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g[1], w[1], rtol=1e-3 if g[0].endswith("16") else 1e-6)
