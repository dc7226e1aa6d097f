"""torch.linalg and the legacy linear-algebra names of the torch face (solve, lu, matrix_exp, eig,
householder_product, geqrf / ormqr, nuclear and other matrix norms, ...) against real PyTorch: values, dtypes,
gradients and errors."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")
from torch_check import check, check_one, err_or_val, r, spd  # noqa: E402


# --- linear algebra: legacy names ----------------------------------------------------------------------

def test_linalg_legacy():
    a = r(3, 3)
    s = spd(3)
    check(lambda L, t: (L.det(t), L.logdet(t @ t.mT), L.slogdet(t), L.inverse(t), t.inverse()), a)
    check(lambda L, t: L.logdet(t), np.diag([-1.0, 2.0, 3.0]), grad=False)
    check(lambda L, t: (L.pinverse(t), L.matrix_power(t, 3), t.matrix_power(-2)), a)
    # (gradients through a symmetric input: torch symmetrises the cotangent of cholesky's input)
    check(lambda L, t: (L.cholesky(t @ t.mT + 3 * L.eye(3, dtype=t.dtype)),
                        L.cholesky(t @ t.mT + 3 * L.eye(3, dtype=t.dtype), upper=True)), a)
    L_ = np.linalg.cholesky(s)
    # (factors through tril/triu: torch's gradient also reaches the triangle the solve never reads)
    check(lambda L, l_, b: (L.cholesky_solve(b, l_.tril()), L.cholesky_inverse(l_.tril())), L_, r(3, 2))
    check(lambda L, u, b: (L.cholesky_solve(b, u.triu(), upper=True), L.cholesky_inverse(u.triu(), upper=True)),
          L_.T.copy(), r(3, 2))
    check(lambda L, t, b: L.triangular_solve(b, t), np.triu(a) + 3 * np.eye(3), r(3, 2))
    check(lambda L, t, b: L.triangular_solve(b, t, upper=False, transpose=True, unitriangular=True),
          np.tril(a), r(3, 2))
    with pytest.raises(RuntimeError, match="removed"):
        fg.solve(fg.ones(2, 2), fg.ones(2, 2))
    with pytest.raises(RuntimeError, match="removed"):
        fg.lstsq(fg.ones(2, 2), fg.ones(2, 2))


def test_qr_svd_legacy():
    a = r(4, 3)
    q, rr = fg.qr(fg.tensor(a))
    np.testing.assert_allclose((q @ rr).numpy(), a, atol=1e-12)
    q2, r2 = fg.qr(fg.tensor(a), some=False)
    assert q2.shape == (4, 4) and r2.shape == (4, 3)
    u, sv, v = fg.svd(fg.tensor(a))
    np.testing.assert_allclose((u * sv @ v.mT).numpy(), a, atol=1e-12)
    check(lambda L, t: L.svd(t).S, a)
    check(lambda L, t: L.svd(t, compute_uv=False), a, grad=False)


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (5, 3), (3, 5)])
def test_lu(shape):
    a = r(*shape)
    check(lambda L, t: L.linalg.lu_factor(t), a)
    check(lambda L, t: L.linalg.lu(t), a)
    check(lambda L, t: L.lu_unpack(*L.linalg.lu_factor(t)), a)
    if shape[-1] == shape[-2]:
        b = r(*shape[:-1], 2)
        check(lambda L, t, bb: L.linalg.lu_solve(*L.linalg.lu_factor(t), bb), a, b)
        check(lambda L, t, bb: L.linalg.lu_solve(*L.linalg.lu_factor(t), bb, adjoint=True), a, b)
        check(lambda L, t, bb: L.lu_solve(bb, *L.linalg.lu_factor(t)), a, b)
        bt = r(*shape[:-2], 2, shape[-1])
        check(lambda L, t, bb: L.linalg.lu_solve(*L.linalg.lu_factor(t), bb, left=False), a, bt)


def test_matrix_exp():
    for scale in (0.1, 1.0, 10.0):
        check(lambda L, t: (L.matrix_exp(t), L.linalg.matrix_exp(t)), r(2, 4, 4) * scale, rtol=1e-9)
    check(lambda L, t: t.matrix_exp(), r(3, 3).astype(np.float32), rtol=2e-5, atol=1e-5)


def test_linalg_more():
    check(lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True), np.triu(r(3, 3)) + 3 * np.eye(3), r(3, 2))
    check(lambda L, a, b: L.linalg.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
          np.tril(r(3, 3)), r(2, 3))
    check(lambda L, a, b, c: L.linalg.multi_dot([a, b, c]), r(3), r(3, 4), r(4))
    check(lambda L, a, b: L.linalg.vecdot(a, b), r(3, 4), r(4))
    check(lambda L, a: (L.linalg.cond(a), L.linalg.diagonal(a), L.linalg.tensorinv(a.reshape(4, 2, 2), 1)),
          r(4, 4))
    check(lambda L, a, b: L.linalg.lstsq(a, b), r(5, 3), r(5, 2))
    check(lambda L, a, b: L.linalg.lstsq(a, b), r(2, 5, 3), r(2, 5, 2))
    check(lambda L, a: (L.linalg.inv_ex(a).inverse, L.linalg.cholesky_ex(a).L), spd(3))
    check(lambda L: (L.chain_matmul(L.ones(2, 3), L.ones(3, 4), L.ones(4, 1)),), grad=False)
    check(lambda L, a: (L.frobenius_norm(a, (0, 1)), L.nuclear_norm(a)), r(3, 4))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linalg_eig(dtype):
    a = r(2, 4, 4).astype(dtype)
    w, v = fg.linalg.eig(fg.tensor(a))
    tw = torch.linalg.eigvals(torch.tensor(a))
    assert str(w.dtype) == str(tw.dtype) and str(v.dtype) == str(tw.dtype)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for b in range(2):
        np.testing.assert_allclose(np.sort_complex(fg.linalg.eigvals(fg.tensor(a[b])).numpy()),
                                   np.sort_complex(tw[b].numpy()), rtol=tol, atol=tol)
        np.testing.assert_allclose(a[b] @ v[b].numpy(), v[b].numpy() * w[b].numpy(), atol=tol * 10)
    x, tx = fg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    fg.linalg.eigvals(x).real.sum().backward()  # differentiable now: d(sum w) = tr(dA)
    torch.linalg.eigvals(tx).real.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=tol)
    with pytest.raises(RuntimeError):
        fg.linalg.eig(fg.ones(2, 3))


def test_householder_product():
    check(lambda L, a, t: (L.linalg.householder_product(a, t), L.orgqr(a, t[..., :2])), r(2, 5, 3),
          np.abs(r(2, 3)))
    check(lambda L, a, t: a.orgqr(t), r(4, 4), np.abs(r(4)))
    with pytest.raises(RuntimeError):
        fg.linalg.householder_product(fg.ones(2, 3), fg.ones(2))
    with pytest.raises(fg.linalg.LinAlgError):
        fg.linalg.inv(fg.zeros(2, 2))


def test_geqrf_ormqr():
    check(lambda L, a: L.geqrf(a), r(2, 5, 3), grad=False)
    check(lambda L, a: a.geqrf(), r(3, 3), grad=False)
    a = r(5, 3)
    for left, tr, c in ((True, False, r(5, 2)), (True, True, r(5, 2)), (False, False, r(2, 5)), (False, True, r(2, 5))):
        check(lambda L, cc: L.ormqr(*L.geqrf(L.tensor(a)), cc, left=left, transpose=tr), c)


NORMS = [
    lambda m, t: m.norm(t, p="nuc"), lambda m, t: m.linalg.norm(t, ord="nuc"), lambda m, t: t.norm(p="nuc"),
    lambda m, t: m.linalg.matrix_norm(t, ord="nuc"), lambda m, t: m.linalg.norm(t),
    lambda m, t: m.linalg.norm(t, ord=2), lambda m, t: m.linalg.norm(t, ord=-2), lambda m, t: m.linalg.norm(t, ord=1),
    lambda m, t: m.linalg.norm(t, ord=float("inf")), lambda m, t: m.linalg.norm(t, ord="fro"),
    lambda m, t: m.linalg.vector_norm(t, ord=3), lambda m, t: m.linalg.svdvals(t),
]


@pytest.mark.parametrize("case", range(len(NORMS)))
@pytest.mark.parametrize("shape", [(3, 2), (2, 4)])
def test_matrix_norms(case, shape):
    x = np.random.RandomState(case).randn(*shape)
    check_one(NORMS[case], x)


def test_batched_nuclear_norm_dims():
    x = np.random.RandomState(0).randn(2, 3, 4)
    check_one(lambda m, t: m.linalg.norm(t, ord="nuc", dim=(1, 2)), x)
    check_one(lambda m, t: m.norm(t, p="nuc", dim=(0, 2)), x)
    check_one(lambda m, t: m.linalg.matrix_norm(t, ord="nuc", dim=(0, 2), keepdim=True), x)
    check_one(lambda m, t: m.linalg.det(t[:, :3, :3]), x)
    for expr in ("m.linalg.norm(m.ones(3), ord='nuc')", "m.norm(m.ones(3), p='nuc')",
                 "m.linalg.norm(m.ones(2, 2, 2), ord='nuc')", "m.norm(m.ones(2, 2, 2), p='nuc')",
                 "m.linalg.matrix_norm(m.ones(2, 2), dim=(0, 0))"):
        a, b = err_or_val(lambda m: eval(expr), torch), err_or_val(lambda m: eval(expr), fg)
        assert a[:2] == b[:2], expr


@pytest.mark.parametrize("how", ["vector_norm", "linalg_norm", "method"])
def test_vector_norm_ord_0_has_an_undefined_gradient(how):
    """torch's backward of the nonzero count (ord 0) returns an undefined gradient: backward leaves a leaf's
    .grad None, autograd.grad raises that the input was not used (or gives None with allow_unused), and a
    sum with another term still gets that term's gradient."""
    res = []
    for m in (fg, torch):
        x = m.tensor([[0.0, 1.5, -2.0], [0.0, 0.0, 3.0]], requires_grad=True)
        f = {"vector_norm": lambda t: m.linalg.vector_norm(t, ord=0, dim=1),
             "linalg_norm": lambda t: m.linalg.norm(t, ord=0, dim=1), "method": lambda t: t.norm(p=0, dim=1)}[how]
        y = f(x)
        y.sum().backward()
        with pytest.raises(RuntimeError) as info:
            m.autograd.grad(f(x * 2).sum(), x)
        (none,) = m.autograd.grad(f(x).sum(), x, allow_unused=True)
        (g,) = m.autograd.grad(f(x).sum() + (x * x).sum(), x)
        res.append((y.grad_fn.name(), x.grad, str(info.value), none, g.detach().numpy()))
    (fn, fgrad, fmsg, fnone, fg_), (tn, tgrad, tmsg, tnone, tg_) = res
    assert fn == tn and fgrad is None and tgrad is None and fmsg == tmsg and fnone is None and tnone is None
    np.testing.assert_array_equal(fg_, tg_)
