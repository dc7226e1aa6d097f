"""Fixes and fast paths in the indexing, control-flow and max/min primitive cards.

- scatter-mul's derivative with respect to the updates when an index repeats (and with zeros);
- the grouped fast path for scatter's ufunc.at (gather/take vjp, embedding and interpolate backward),
  which must stay bit-for-bit ufunc.at;
- the scan vjp's backward body, traced and compiled once per (body jaxpr, avals);
- max/min derivatives at ties (split evenly, as JAX and torch.maximum).
"""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import lax
from funcgrad._src.prims import indexing

torch = pytest.importorskip("torch")


def _both_prod(src, x, idx, dim, include_self, w):
    """Gradients of sum(w * x.scatter_reduce(dim, idx, src, 'prod')) for torch and funcgrad."""
    res = []
    for m in (torch, fg):
        s = m.tensor(src, requires_grad=True)
        t = m.tensor(x, requires_grad=True)
        out = t.scatter_reduce(dim, m.tensor(idx), s, reduce="prod", include_self=include_self)
        (out * m.tensor(w)).sum().backward()
        res.append((out.detach().numpy(), s.grad.numpy(), t.grad.numpy()))
    return res


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", range(4))
def test_scatter_prod_gradient_repeated_indices_and_zeros(include_self, dtype, seed):
    rng = np.random.default_rng(seed)
    n, m, cols = 3, 7, 4
    src = rng.uniform(0.5, 2.0, (m, cols)) * rng.choice([-1, 1], (m, cols))
    src[rng.random((m, cols)) < 0.25] = 0.0  # zeros: one or several at a position
    x = rng.uniform(0.5, 2.0, (n, cols))
    x[rng.random((n, cols)) < 0.2] = 0.0
    idx = rng.integers(0, n, (m, cols))  # many repeats
    w = rng.standard_normal((n, cols))
    (to, ts, tx), (fo, fs, fx) = _both_prod(src.astype(dtype), x.astype(dtype), idx, 0, include_self,
                                            w.astype(dtype))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(fo, to, rtol=tol, atol=tol)
    np.testing.assert_allclose(fs, ts, rtol=tol, atol=tol)
    np.testing.assert_allclose(fx, tx, rtol=tol, atol=tol)


def test_scatter_prod_gradient_the_reported_case():
    (_, ts, _), (_, fs, _) = _both_prod(np.array([1., 5., 3.]), np.array([2., 0.]), np.array([0, 0, 1]), 0,
                                        True, np.ones(2))
    assert fs.tolist() == ts.tolist() == [10., 2., 0.]


def _scatter_mul(x, upd, idx):
    return lax.scatter_mul(x, idx, upd, axes=(0,))


@pytest.mark.parametrize("zero_rows", [(), (1,), (1, 3), (0, 1, 3)])
def test_scatter_mul_jvp_and_vjp_with_repeats_match_finite_differences(zero_rows):
    """Forward and reverse mode, orders 1 and 2, with repeated and out-of-range rows and 0 to 3 zero
    updates at one position."""
    rng = np.random.default_rng(0)
    x = fg.asarray(rng.uniform(-2, 2, (3, 2)))
    upd = rng.uniform(-2, 2, (6, 2))
    upd[list(zero_rows), 0] = 0.0
    upd = fg.asarray(upd)
    idx = np.array([[0], [0], [2], [0], [5], [2]])  # row 4 is out of range: dropped
    fg.testing.check_grads(lambda a, b: _scatter_mul(a, b, idx), (x, upd), order=2, modes=("fwd", "rev"))


def test_scatter_mul_updates_gradient_with_two_zeros_is_zero():
    # d/du0 of x * u0 * u1 * u2 with u1 == u2 == 0 is 0; d/du1 = x * u0 * u2 = 0 as well
    g = fg.grad(lambda u: _scatter_mul(fg.asarray(np.array([[3.0]])), u, np.zeros((3, 1), int)).sum())(
        fg.asarray(np.array([[2.0], [0.0], [0.0]])))
    assert np.asarray(g).tolist() == [[0.0], [0.0], [0.0]]
    g = fg.grad(lambda u: _scatter_mul(fg.asarray(np.array([[3.0]])), u, np.zeros((3, 1), int)).sum())(
        fg.asarray(np.array([[2.0], [0.0], [5.0]])))
    assert np.asarray(g).tolist() == [[0.0], [30.0], [0.0]]


def test_scatter_mul_updates_gradient_under_jit_and_vmap():
    idx = np.array([[0], [0], [2], [0], [5], [2]])  # row 4 is out of range
    x = fg.asarray(np.array([[2., 1.], [3., 1.], [0.5, 2.]]))
    u = np.array([[1., 0.], [5., 2.], [3., 0.], [2., 1.], [7., 7.], [0., 0.]])
    # by hand: x[p] times the product of the other rows at p
    want = np.array([[2 * 5 * 2, 1 * 2 * 1], [2 * 1 * 2, 0], [0.5 * 0, 0], [2 * 1 * 5, 0], [0, 0], [0.5 * 3, 0]])

    def f(u, i):
        return lax.scatter_mul(x, i, u, axes=(0,)).sum()

    g = fg.grad(f)
    np.testing.assert_array_equal(np.asarray(g(fg.asarray(u), idx)), want)
    np.testing.assert_array_equal(np.asarray(fg.jit(g)(fg.asarray(u), fg.asarray(idx))), want)
    batched = fg.vmap(g, in_axes=(0, None))(fg.asarray(np.stack([u, 2 * u])), idx)
    np.testing.assert_array_equal(np.asarray(batched)[0], want)


# --- the grouped ufunc.at fast path ----------------------------------------------------------------

@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.minimum, np.maximum])
@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("seed", range(3))
def test_grouped_ufunc_at_is_bitwise_ufunc_at(ufunc, k, seed):
    rng = np.random.default_rng(seed)
    sizes = tuple(rng.integers(1, 6, k))
    n_rows = int(rng.integers(2, 40))
    rows = np.stack([rng.integers(0, s, n_rows) for s in sizes], 1)
    if seed == 0:
        rows = np.sort(rows, 0)  # the already-sorted path
    base = rng.standard_normal((4,) + sizes + (7, 3)).astype(np.float32)
    upd = rng.standard_normal((n_rows, 4, 7, 3)).astype(np.float32)
    # a transposed view, as the scatter impl uses: indexed axes first
    axes = list(range(1, 1 + k))
    perm = axes + [d for d in range(base.ndim) if d not in axes]
    want, got = base.copy(), base.copy()
    ufunc.at(np.transpose(want, perm), tuple(rows[:, j] for j in range(k)), upd)
    indexing._ufunc_at_by_rank(ufunc, np.transpose(got, perm), rows, upd, sizes)
    assert np.array_equal(want, got)


@pytest.mark.parametrize("mode", ["add", "mul", "min", "max"])
def test_scatter_many_values_per_row_matches_numpy(mode):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 4, indexing._AT_MIN_ROW))  # enough values per row for the fast path
    idx = np.array([[3, 1], [0, 0], [3, 1], [7, 0], [-1, 2], [3, 1], [2, 3], [0, 0]])  # repeats, out of range
    upd = rng.standard_normal((8, indexing._AT_MIN_ROW))
    want = x.copy()
    ok = (idx[:, 0] >= 0) & (idx[:, 0] < 5)
    uf = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}[mode]
    uf.at(want, (idx[ok, 0], idx[ok, 1]), upd[ok])
    got = lax.scatter(fg.asarray(x), idx, fg.asarray(upd), axes=(0, 1), mode=mode)
    assert np.array_equal(np.asarray(got), want)


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_backward_matches_torch(padding_idx):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((50, 32)).astype(np.float32)
    tok = rng.integers(0, 50, (6, 9))
    tok[0, :3] = 2
    g = rng.standard_normal((6, 9, 32)).astype(np.float32)
    grads = []
    for m in (torch, fg):
        e = m.nn.Embedding(50, 32, padding_idx=padding_idx)
        with m.no_grad():
            e.weight.copy_(m.tensor(w))
        (e(m.tensor(tok)) * m.tensor(g)).sum().backward()
        grads.append(e.weight.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode,kw", [("bilinear", {"align_corners": False}),
                                     ("bilinear", {"align_corners": True}), ("nearest", {})])
def test_interpolate_backward_matches_torch(mode, kw):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
    g = rng.standard_normal((2, 3, 14, 15)).astype(np.float32)
    grads = []
    for m in (torch, fg):
        t = m.tensor(x, requires_grad=True)
        (m.nn.functional.interpolate(t, size=(14, 15), mode=mode, **kw) * m.tensor(g)).sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-5)


# --- scan: the backward body is built once -----------------------------------------------------------

def test_lstm_backward_compiles_once_and_matches_torch(monkeypatch):
    from funcgrad._src.interpreters import compiler
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3, 4)).astype(np.float32)
    tm = torch.nn.LSTM(4, 6)
    fm = fg.nn.LSTM(4, 6)
    fm.load_state_dict({k: fg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    tx = torch.tensor(x, requires_grad=True)
    tm(tx)[0].sum().backward()
    compiles = []
    real = compiler.compile_jaxpr
    monkeypatch.setattr(compiler, "compile_jaxpr", lambda *a, **k: compiles.append(1) or real(*a, **k))
    for step in range(3):
        fx = fg.tensor(x, requires_grad=True)
        fm.zero_grad()
        before = len(compiles)
        fm(fx)[0].sum().backward()
        if step > 0:
            assert len(compiles) == before, "a later step traced and compiled a scan body again"
        np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
        for (n, a), (_, b) in zip(tm.named_parameters(), fm.named_parameters()):
            np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=n)


def test_scan_vjp_cache_distinguishes_shapes():
    def loss(c0, xs):
        c, ys = lax.scan(lambda c, x: (c * x + 1.0, c * c), c0, xs)
        return c.sum() + ys.sum()

    g = fg.jit(fg.grad(loss, argnums=(0, 1)))
    for n in (3, 5):  # the same body traced at two carry shapes
        c0 = np.linspace(0.5, 1.0, n)
        xs = np.linspace(-1.0, 1.0, 4 * n).reshape(4, n)
        gc, gx = g(fg.asarray(c0), fg.asarray(xs))
        tc, tx = torch.tensor(c0, requires_grad=True), torch.tensor(xs, requires_grad=True)
        c, tot = tc, 0
        for i in range(4):
            tot = tot + (c * c).sum()
            c = c * tx[i] + 1.0
        (tot + c.sum()).backward()
        np.testing.assert_allclose(np.asarray(gc), tc.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(gx), tx.grad.numpy(), rtol=1e-12)


# --- max/min at ties ------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_max_min_gradients_split_ties_like_torch(op):
    x = np.array([1.0, 2.0, 3.0, -1.0, 0.0, np.inf])
    y = np.array([1.0, 1.0, 4.0, -1.0, 0.0, np.inf])
    g = np.array([1.0, 2.0, 3.0, 4.0, -5.0, 6.0])
    res = []
    for m in (torch, fg):
        a, b = m.tensor(x, requires_grad=True), m.tensor(y, requires_grad=True)
        (getattr(m, op)(a, b) * m.tensor(g)).sum().backward()
        res.append((a.grad.numpy(), b.grad.numpy()))
    np.testing.assert_array_equal(res[1][0], res[0][0])
    np.testing.assert_array_equal(res[1][1], res[0][1])

