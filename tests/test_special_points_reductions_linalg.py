"""Reductions, scans and linear algebra at the points where derivatives go wrong: zeros in products, ties of
max / median / sort, -inf in logsumexp, zero vectors in norms, singular matrices in det / inv / solve / pinv.

Two tables, one per face. Each row is (name, function, point, exact): the value and the first and second
derivatives, forward and reverse, are compared with JAX (JAX face, float64) or torch (torch face, float64,
create_graph) where installed, and with `exact` values written from the math (so the suite checks something
without them). A row's `skip_ref` names the orders where funcgrad deliberately gives the mathematical value
and the reference does not (a reason beside it).
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

A = np.array
INF = math.inf
E = math.e


# --- exact derivatives of det, from the Leibniz formula ------------------------------------------

def _perms(n):
    for p in itertools.permutations(range(n)):
        inv = sum(1 for i in range(n) for j in range(i + 1, n) if p[i] > p[j])
        yield p, (-1) ** inv


def det_grad(a):
    """d det / d a_ij = sum over permutations p with p(i) = j of sgn(p) prod_{r != i} a_{r p(r)}."""
    n = a.shape[0]
    g = np.zeros((n, n))
    for p, s in _perms(n):
        for i in range(n):
            g[i, p[i]] += s * math.prod(a[r, p[r]] for r in range(n) if r != i)
    return g


def det_hess(a):
    """d^2 det / d a_ij d a_kl (i != k): the permutations through both entries, without those two factors."""
    n = a.shape[0]
    h = np.zeros((n, n, n, n))
    for p, s in _perms(n):
        for i in range(n):
            for k in range(n):
                if i != k:
                    h[i, p[i], k, p[k]] += s * math.prod(a[r, p[r]] for r in range(n) if r not in (i, k))
    return h


S2 = A([[1.0, 2.0], [2.0, 4.0]])  # rank 1
S3 = A([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])  # rank 2: zero pivot last
S4 = A([[1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0], [1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 1.0, 3.0]])  # rank 3
SOFT = np.array([1.0, 0.0, E]) / (1 + E)  # softmax([0, -inf, 1])


def _lse_hess(p):
    return np.diag(p) - np.outer(p, p)


def _var_hess(n):
    return 2.0 / n * (np.eye(n) - np.ones((n, n)) / n)


# --- the JAX face ---------------------------------------------------------------------------------
# fn(np, lax, nn, special, x); exact: {"val", "grad", "hess"} (grad/hess of the output, or of its sum for
# vector outputs where noted by "sum": True).

JAX_ROWS = [
    ("prod_xx(x+2)_at_0", lambda np_, lax, nn, sp, x: np_.prod(np_.stack([x[0], x[0], x[0] + 2])), A([0.0]),
     {"val": 0.0, "grad": [0.0], "hess": [[4.0]]}),
    ("prod_two_zeros", lambda np_, lax, nn, sp, x: np_.prod(x), A([0.0, 0.0, 2.0]),
     {"val": 0.0, "grad": [0.0, 0.0, 0.0], "hess": [[0, 2, 0], [2, 0, 0], [0, 0, 0]]}),
    ("prod_one_zero", lambda np_, lax, nn, sp, x: np_.prod(x), A([0.0, 3.0, 2.0]),
     {"val": 0.0, "grad": [6.0, 0.0, 0.0], "hess": [[0, 2, 3], [2, 0, 0], [3, 0, 0]]}),
    ("prod_axis1", lambda np_, lax, nn, sp, x: np_.prod(x, axis=1), A([[0.0, 0.0, 2.0], [1.0, 0.0, 3.0]]), {}),
    ("prod_axis0_keepdims", lambda np_, lax, nn, sp, x: np_.prod(x, axis=0, keepdims=True),
     A([[0.0, 0.0], [0.0, 3.0], [2.0, 0.0]]), {}),
    ("cumprod_zeros", lambda np_, lax, nn, sp, x: np_.sum(np_.cumprod(x)), A([0.0, 0.0, 2.0]),
     {"val": 0.0, "grad": [1.0, 0.0, 0.0], "hess": [[0, 3, 0], [3, 0, 0], [0, 0, 0]]}),
    ("cumprod_vector", lambda np_, lax, nn, sp, x: np_.cumprod(x), A([2.0, 0.0, 3.0, 0.0]), {}),
    ("det_2x2_rank1", lambda np_, lax, nn, sp, x: np_.linalg.det(x), S2,
     {"val": 0.0, "grad": det_grad(S2), "hess": det_hess(S2)}),
    ("det_3x3_rank2", lambda np_, lax, nn, sp, x: np_.linalg.det(x), S3,
     {"val": 0.0, "grad": det_grad(S3), "hess": det_hess(S3)}),
    ("det_3x3_zero", lambda np_, lax, nn, sp, x: np_.linalg.det(x), np.zeros((3, 3)),
     {"val": 0.0, "grad": np.zeros((3, 3)), "hess": np.zeros((3, 3, 3, 3))}),
    ("det_4x4_identity", lambda np_, lax, nn, sp, x: np_.linalg.det(x), np.eye(4),
     {"val": 1.0, "grad": np.eye(4), "hess": det_hess(np.eye(4))}),
    # JAX's LU-based cofactor solve gives 0 here (its zero pivot is not the last one) and NaN second
    # derivatives at the zero 4x4 matrix; the adjugate is the math (and torch's answer for S4).
    ("det_4x4_rank3", lambda np_, lax, nn, sp, x: np_.linalg.det(x), S4,
     {"val": 0.0, "grad": det_grad(S4), "hess": det_hess(S4), "skip_ref": ("grad", "hess")}),
    ("det_4x4_zero", lambda np_, lax, nn, sp, x: np_.linalg.det(x), np.zeros((4, 4)),
     {"val": 0.0, "grad": np.zeros((4, 4)), "hess": np.zeros((4, 4, 4, 4)), "skip_ref": ("hess",)}),
    ("inv_singular", lambda np_, lax, nn, sp, x: np_.linalg.inv(x), S2, {"val": [[-INF, INF], [INF, -INF]]}),
    ("solve_singular", lambda np_, lax, nn, sp, x: np_.linalg.solve(x, A([1.0, 2.0])), S2, {}),
    ("pinv_rank1", lambda np_, lax, nn, sp, x: np_.linalg.pinv(x), S2, {"val": S2 / 25.0}),
    ("pinv_3x3_rank2", lambda np_, lax, nn, sp, x: np_.linalg.pinv(x), S3, {}),
    ("norm2_at_0", lambda np_, lax, nn, sp, x: np_.linalg.norm(x), A([0.0, 0.0]), {"val": 0.0}),
    ("norm2_smooth", lambda np_, lax, nn, sp, x: np_.linalg.norm(x), A([3.0, 0.0]),
     {"val": 3.0, "grad": [1.0, 0.0], "hess": [[0, 0], [0, 1 / 3]]}),
    ("norm_inf_tie", lambda np_, lax, nn, sp, x: np_.linalg.norm(x, np.inf), A([2.0, -2.0, 1.0]),
     {"val": 2.0, "grad": [0.5, -0.5, 0.0]}),
    ("norm_-inf_tie", lambda np_, lax, nn, sp, x: np_.linalg.norm(x, -np.inf), A([2.0, -2.0, 3.0]),
     {"val": 2.0, "grad": [0.5, -0.5, 0.0]}),
    ("norm_0", lambda np_, lax, nn, sp, x: np_.linalg.norm(x, 0), A([0.0, 2.0]), {"val": 1.0, "grad": [0, 0]}),
    ("norm_3_at_0", lambda np_, lax, nn, sp, x: np_.linalg.norm(x, 3), A([0.0, 0.0]), {"val": 0.0}),
    ("norm_3_zero_entry", lambda np_, lax, nn, sp, x: np_.linalg.norm(x, 3), A([0.0, 2.0]),
     {"val": 2.0, "grad": [0.0, 1.0]}),
    ("norm_fro_at_0", lambda np_, lax, nn, sp, x: np_.linalg.norm(x, "fro"), np.zeros((2, 2)), {"val": 0.0}),
    ("norm_nuc_rank1", lambda np_, lax, nn, sp, x: np_.linalg.norm(x, "nuc"), S2, {"val": 5.0}),
    ("norm_nuc_tie", lambda np_, lax, nn, sp, x: np_.linalg.norm(x, "nuc"), 2 * np.eye(2),
     {"val": 4.0, "grad": np.eye(2)}),
    ("norm_2_tie", lambda np_, lax, nn, sp, x: np_.linalg.norm(x, 2), 2 * np.eye(2), {"val": 2.0}),
    ("norm_1_tie", lambda np_, lax, nn, sp, x: np_.linalg.norm(x, 1), A([[1.0, 2.0], [2.0, 1.0]]),
     {"val": 3.0, "grad": np.full((2, 2), 0.5)}),
    ("logsumexp_-inf", lambda np_, lax, nn, sp, x: nn.logsumexp(x), A([0.0, -INF, 1.0]),
     {"val": math.log(1 + E), "grad": SOFT, "hess": _lse_hess(SOFT)}),
    ("logsumexp_ties", lambda np_, lax, nn, sp, x: sp.logsumexp(x), A([1.0, 1.0, 1.0]),
     {"val": 1 + math.log(3), "grad": [1 / 3] * 3, "hess": _lse_hess(np.full(3, 1 / 3))}),
    ("logsumexp_b", lambda np_, lax, nn, sp, x: sp.logsumexp(x, b=A([1.0, 0.0, 2.0])), A([1.0, 1.0, 1.0]),
     {"val": 1 + math.log(3), "grad": [1 / 3, 0, 2 / 3]}),
    ("logsumexp_where", lambda np_, lax, nn, sp, x: nn.logsumexp(x, where=A([True, False, True])),
     A([1.0, 5.0, 1.0]), {"val": 1 + math.log(2), "grad": [0.5, 0, 0.5]}),
    ("logsumexp_all_-inf", lambda np_, lax, nn, sp, x: sp.logsumexp(x), A([-INF, -INF]),
     {"val": -INF, "grad": [math.nan] * 2}),
    ("max_tie", lambda np_, lax, nn, sp, x: np_.max(x), A([1.0, 3.0, 3.0]),
     {"val": 3.0, "grad": [0, 0.5, 0.5], "hess": np.zeros((3, 3))}),
    ("min_tie", lambda np_, lax, nn, sp, x: np_.min(x), A([1.0, 1.0, 3.0]), {"val": 1.0, "grad": [0.5, 0.5, 0]}),
    ("amax_axis_tie", lambda np_, lax, nn, sp, x: np_.amax(x, axis=0), A([[1.0, 3.0], [1.0, 2.0]]), {}),
    ("median_tie", lambda np_, lax, nn, sp, x: np_.median(x), A([1.0, 2.0, 2.0, 3.0]), {"val": 2.0}),
    ("median_all_tied", lambda np_, lax, nn, sp, x: np_.median(x), A([2.0, 2.0, 2.0]), {"val": 2.0}),
    ("quantile_tie", lambda np_, lax, nn, sp, x: np_.quantile(x, 0.3), A([1.0, 2.0, 2.0, 3.0]), {}),
    ("sort_tie", lambda np_, lax, nn, sp, x: np_.sort(x), A([2.0, 1.0, 2.0]), {"val": [1.0, 2.0, 2.0]}),
    ("top_k_tie", lambda np_, lax, nn, sp, x: lax.top_k(x, 2)[0], A([2.0, 1.0, 2.0]), {"val": [2.0, 2.0]}),
    ("var_constant", lambda np_, lax, nn, sp, x: np_.var(x), A([2.0, 2.0, 2.0]),
     {"val": 0.0, "grad": [0, 0, 0], "hess": _var_hess(3)}),
    ("std_constant", lambda np_, lax, nn, sp, x: np_.std(x), A([2.0, 2.0, 2.0]), {"val": 0.0}),
    ("std_constant_ddof1", lambda np_, lax, nn, sp, x: np_.std(x, ddof=1), A([2.0, 2.0, 2.0]), {"val": 0.0}),
    ("mean_sum", lambda np_, lax, nn, sp, x: np_.mean(x * x) + np_.sum(x), A([2.0, 2.0, 2.0]),
     {"val": 10.0, "grad": [7 / 3] * 3, "hess": np.eye(3) * 2 / 3}),
]


@pytest.fixture
def x64():
    with fg.enable_x64(True):
        yield


def _fg_mods():
    import funcgrad.lax as flax
    import funcgrad.nn as fnn
    import funcgrad.scipy.special as fsp
    return fnp, flax, fnn, fsp


def _derivs(tr, f, x):
    """value, jacrev, jacfwd, and the Hessian by jacrev(jacrev), jacfwd(jacrev), jacfwd(jacfwd)."""
    return {"val": f(x), "rev": tr.jacrev(f)(x), "fwd": tr.jacfwd(f)(x),
            "rr": tr.jacrev(tr.jacrev(f))(x), "fr": tr.jacfwd(tr.jacrev(f))(x), "ff": tr.jacfwd(tr.jacfwd(f))(x)}


def _close(got, want, what):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("name,fn,x,exact", JAX_ROWS, ids=[r[0] for r in JAX_ROWS])
def test_jax_face_exact(name, fn, x, exact, x64):
    got = _derivs(fg, lambda v: fn(*_fg_mods(), v), x)
    if "val" in exact:
        _close(got["val"], exact["val"], "value")
    for k in ("rev", "fwd"):
        if "grad" in exact:
            _close(got[k], exact["grad"], k)
    for k in ("rr", "fr", "ff"):
        if "hess" in exact:
            _close(got[k], exact["hess"], k)


@pytest.mark.parametrize("name,fn,x,exact", JAX_ROWS, ids=[r[0] for r in JAX_ROWS])
def test_jax_face_matches_jax(name, fn, x, exact, x64):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    import jax.scipy.special as jsp
    with jax.enable_x64(True):
        want = _derivs(jax, lambda v: fn(jnp, jax.lax, jax.nn, jsp, v), x)
        got = _derivs(fg, lambda v: fn(*_fg_mods(), v), x)
    skip = exact.get("skip_ref", ())
    for k in want:
        if (k in ("rev", "fwd") and "grad" in skip) or (k in ("rr", "fr", "ff") and "hess" in skip):
            continue
        _close(got[k], want[k], k)


def test_jax_face_singular_solve_and_slogdet(x64):
    # JAX's LU solve: inf / NaN, no error; slogdet: sign 0, log -inf, a non-finite gradient
    assert np.isnan(np.asarray(fnp.linalg.solve(S2, A([1.0, 2.0])))).all()
    sign, logdet = fnp.linalg.slogdet(S2)
    assert float(sign) == 0.0 and float(logdet) == -INF
    g = np.asarray(fg.grad(lambda a: fnp.linalg.slogdet(a)[1])(S3))
    assert not np.isfinite(g).all()  # no derivative there (JAX and torch: inf / NaN entries too)
    # a stack with one singular member: the others are solved exactly
    stack = np.stack([S2, A([[2.0, 0.0], [0.0, 4.0]])])
    out = np.asarray(fnp.linalg.inv(stack))
    assert not np.isfinite(out[0]).any()
    np.testing.assert_allclose(out[1], [[0.5, 0.0], [0.0, 0.25]])


def test_adjugate_primitive_exact(x64):
    from funcgrad._src.prims.det import adjugate
    for a in (S2, S3, S4, np.zeros((3, 3)), np.eye(3), A([[0.0, 1.0], [0.0, 1.0]])):
        _close(adjugate(a), det_grad(a).T, "adjugate")
    # its derivative (det's second): d adj(A)^T [T]_ij = sum_kl H_ijkl T_kl
    t = np.arange(16.0).reshape(4, 4) / 7
    _, dadj = fg.jvp(adjugate, (S4,), (t,))
    _close(np.asarray(dadj).T, np.einsum("ijkl,kl->ij", det_hess(S4), t), "jvp")
    batch = np.stack([S3, np.eye(3), np.zeros((3, 3))])
    _close(fg.vmap(fg.grad(fnp.linalg.det))(batch), np.stack([det_grad(m) for m in batch]), "vmap")
    _close(fg.jit(fg.hessian(fnp.linalg.det))(S3), det_hess(S3), "jit")


def test_prod_derivatives_complex_and_empty(x64):
    z = A([0.0 + 0.0j, 1.0 + 2.0j, 0.0 + 0.0j])
    g = fg.grad(lambda v: fnp.real(fnp.prod(v)))(z)
    np.testing.assert_allclose(np.asarray(g), [0, 0, 0])
    h = fg.jacfwd(fg.grad(lambda v: fnp.prod(v)))(A([0.0, 5.0, 0.0]))
    _close(h, [[0, 0, 5], [0, 0, 0], [5, 0, 0]], "hess")
    _close(fg.grad(lambda v: fnp.sum(fnp.prod(v, axis=0)))(np.zeros((0, 2))), np.zeros((0, 2)), "empty")


# --- the torch face -------------------------------------------------------------------------------
# fn(lib, x); gradients are of sum(out * w), w = linspace(1, 2); exact: {"val", "grad", "hess"} for that.

TORCH_ROWS = [
    ("prod_xx(x+2)_at_0", lambda t, x: t.stack([x[0], x[0], x[0] + 2]).prod(), A([0.0]),
     {"val": 0.0, "grad": [0.0], "hess": [[4.0]]}),
    ("prod_two_zeros", lambda t, x: t.prod(x), A([0.0, 0.0, 2.0]),
     {"val": 0.0, "grad": [0, 0, 0], "hess": [[0, 2, 0], [2, 0, 0], [0, 0, 0]]}),
    ("prod_dim", lambda t, x: t.prod(x, dim=1), A([[0.0, 0.0, 2.0], [1.0, 0.0, 3.0]]), {}),
    ("Tensor.prod", lambda t, x: x.prod(0), A([[0.0, 0.0, 2.0], [1.0, 0.0, 3.0]]), {}),
    ("cumprod_zeros", lambda t, x: t.cumprod(x, 0), A([2.0, 0.0, 3.0, 0.0]), {}),
    ("cumprod_dim", lambda t, x: t.cumprod(x, 1), A([[0.0, 0.0, 2.0], [1.0, 0.0, 3.0]]), {}),
    ("linalg.det_rank1", lambda t, x: t.linalg.det(x), S2,
     {"val": 0.0, "grad": det_grad(S2), "hess": det_hess(S2)}),
    ("det_rank2", lambda t, x: t.det(x), S3, {"val": 0.0, "grad": det_grad(S3), "hess": det_hess(S3)}),
    ("Tensor.det_rank3", lambda t, x: x.det(), S4, {"val": 0.0, "grad": det_grad(S4), "hess": det_hess(S4)}),
    ("det_identity", lambda t, x: t.linalg.det(x), np.eye(3), {"val": 1.0, "grad": np.eye(3)}),
    # torch's SVD formula has 1 / (s_i^2 - s_j^2) for the two zero singular values: NaN; the math is 0
    ("det_zero", lambda t, x: t.linalg.det(x), np.zeros((3, 3)),
     {"val": 0.0, "grad": np.zeros((3, 3)), "hess": np.zeros((3, 3, 3, 3)), "skip_ref": ("hess",)}),
    ("pinv_rank1", lambda t, x: t.linalg.pinv(x), S2, {"val": S2 / 25.0}),
    ("pinv_rank2", lambda t, x: t.linalg.pinv(x), S3, {}),
    ("vector_norm_smooth", lambda t, x: t.linalg.vector_norm(x), A([3.0, 0.0]),
     {"val": 3.0, "grad": [1.0, 0.0], "hess": [[0, 0], [0, 1 / 3]]}),
    ("vector_norm_at_0_first_order", lambda t, x: t.linalg.vector_norm(x), A([0.0, 0.0]),
     {"val": 0.0, "grad": [0.0, 0.0], "skip_ref": ("hess",)}),
    ("vector_norm_1", lambda t, x: t.linalg.vector_norm(x, 1), A([0.0, 2.0]), {"val": 2.0, "grad": [0, 1]}),
    ("vector_norm_inf_tie", lambda t, x: t.linalg.vector_norm(x, INF), A([2.0, -2.0, 1.0]),
     {"val": 2.0, "grad": [0.5, -0.5, 0]}),
    ("vector_norm_-inf_tie", lambda t, x: t.linalg.vector_norm(x, -INF), A([2.0, -2.0, 3.0]), {"val": 2.0}),
    ("vector_norm_inf_at_0", lambda t, x: t.linalg.vector_norm(x, INF), A([0.0, 0.0]), {"val": 0.0}),
    ("vector_norm_0", lambda t, x: t.linalg.vector_norm(x, 0), A([0.0, 2.0]), {"val": 1.0}),
    ("vector_norm_3_at_0", lambda t, x: t.linalg.vector_norm(x, 3), A([0.0, 0.0]), {"val": 0.0}),
    ("vector_norm_3_zero_entry", lambda t, x: t.linalg.vector_norm(x, 3), A([0.0, 2.0]), {"val": 2.0}),
    # p < 1: torch gives zero entries a zero gradient (|x|^p's slope is infinite there; the Hessian is NaN in
    # torch, funcgrad's is 0: no second derivative exists)
    ("vector_norm_0.5_zero_entry", lambda t, x: t.linalg.vector_norm(x, 0.5), A([0.0, 2.0]),
     {"val": 2.0, "grad": [0.0, 1.0], "skip_ref": ("hess",)}),
    ("vector_norm_0.5_at_0", lambda t, x: t.linalg.vector_norm(x, 0.5), A([0.0, 0.0]),
     {"val": 0.0, "grad": [0.0, 0.0], "skip_ref": ("hess",)}),
    ("vector_norm_-1_zero_entry", lambda t, x: t.linalg.vector_norm(x, -1), A([0.0, 2.0]),
     {"val": 0.0, "grad": [0.0, 0.0], "skip_ref": ("hess",)}),
    ("torch.norm_p3_at_0", lambda t, x: t.norm(x, p=3), A([0.0, 0.0]), {"val": 0.0}),
    ("normalize_smooth", lambda t, x: t.nn.functional.normalize(x, dim=0), A([3.0, 0.0]), {"val": [1.0, 0.0]}),
    ("matrix_norm_nuc_rank1", lambda t, x: t.linalg.matrix_norm(x, "nuc"), S2, {"val": 5.0}),
    ("matrix_norm_nuc_tie", lambda t, x: t.linalg.matrix_norm(x, "nuc"), 2 * np.eye(2), {"val": 4.0}),
    ("matrix_norm_2_tie", lambda t, x: t.linalg.matrix_norm(x, 2), 2 * np.eye(2), {"val": 2.0}),
    ("matrix_norm_2_rank1", lambda t, x: t.linalg.matrix_norm(x, 2), S2, {"val": 5.0}),
    ("matrix_norm_1_tie", lambda t, x: t.linalg.matrix_norm(x, 1), A([[1.0, 2.0], [2.0, 1.0]]), {"val": 3.0}),
    ("matrix_norm_inf_tie", lambda t, x: t.linalg.matrix_norm(x, INF), A([[1.0, 2.0], [2.0, 1.0]]), {"val": 3.0}),
    ("logsumexp_-inf", lambda t, x: t.logsumexp(x, 0), A([0.0, -INF, 1.0]),
     {"val": math.log(1 + E), "grad": SOFT, "hess": _lse_hess(SOFT)}),
    ("logsumexp_ties", lambda t, x: t.logsumexp(x, 0), A([1.0, 1.0, 1.0]), {"val": 1 + math.log(3)}),
    ("logsumexp_all_-inf", lambda t, x: t.logsumexp(x, 0), A([-INF, -INF]), {"val": -INF, "grad": [math.nan] * 2}),
    ("max_tie_evenly", lambda t, x: t.max(x), A([1.0, 3.0, 3.0]), {"val": 3.0, "grad": [0, 0.5, 0.5]}),
    ("amax_tie_evenly", lambda t, x: t.amax(x, 0), A([1.0, 3.0, 3.0]), {"val": 3.0, "grad": [0, 0.5, 0.5]}),
    ("amin_tie_evenly", lambda t, x: t.amin(x, 0), A([1.0, 1.0, 3.0]), {"val": 1.0, "grad": [0.5, 0.5, 0]}),
    ("max_dim_to_index", lambda t, x: t.max(x, 0)[0], A([1.0, 3.0, 3.0]), {"val": 3.0}),
    ("min_dim_to_index", lambda t, x: t.min(x, 0).values, A([1.0, 1.0, 3.0]), {"val": 1.0}),
    ("median_tie_evenly", lambda t, x: t.median(x), A([1.0, 2.0, 2.0, 3.0]),
     {"val": 2.0, "grad": [0, 0.5, 0.5, 0]}),
    ("median_all_tied", lambda t, x: t.median(x), A([2.0, 2.0, 2.0]), {"val": 2.0, "grad": [1 / 3] * 3}),
    ("nanmedian_tie_evenly", lambda t, x: t.nanmedian(x), A([2.0, math.nan, 2.0, 1.0, 3.0, 2.0]),
     {"val": 2.0, "grad": [1 / 3, 0, 1 / 3, 0, 0, 1 / 3]}),
    ("median_dim_to_index", lambda t, x: t.median(x, 0).values, A([2.0, 1.0, 2.0, 2.0]), {"val": 2.0}),
    ("quantile_tie", lambda t, x: t.quantile(x, 0.3), A([1.0, 2.0, 2.0, 3.0]), {}),
    ("quantile_all_tied", lambda t, x: t.quantile(x, 0.5), A([2.0, 2.0, 2.0]), {"val": 2.0}),
    ("sort_tie", lambda t, x: t.sort(x).values, A([2.0, 1.0, 2.0]), {"val": [1.0, 2.0, 2.0]}),
    ("topk_tie", lambda t, x: t.topk(x, 2).values, A([2.0, 1.0, 2.0]), {"val": [2.0, 2.0]}),
    ("cummax_tie", lambda t, x: t.cummax(x, 0).values, A([1.0, 1.0, 3.0, 3.0]), {}),
    ("cummin_tie", lambda t, x: t.cummin(x, 0).values, A([1.0, 1.0, 0.0, 0.0]), {}),
    ("var_constant", lambda t, x: t.var(x, correction=0), A([2.0, 2.0, 2.0]),
     {"val": 0.0, "grad": [0, 0, 0]}),
    ("std_constant", lambda t, x: t.std(x), A([2.0, 2.0, 2.0]), {"val": 0.0}),
    ("std_dim", lambda t, x: t.std(x, 0), A([[2.0, 1.0], [2.0, 3.0]]), {}),
    ("mean", lambda t, x: (x * x).mean(), A([2.0, 2.0, 2.0]), {"val": 4.0}),
]


def _torch_derivs(lib, fn, x):
    xx = lib.tensor(x, dtype=lib.float64, requires_grad=True)
    y = fn(lib, xx)
    out = {"val": np.array(y.detach().tolist())}
    w = lib.tensor(np.linspace(1.0, 2.0, max(y.numel(), 1)).reshape(tuple(y.shape)), dtype=lib.float64)
    g, = lib.autograd.grad((y * w).sum(), xx, create_graph=True, allow_unused=True)
    if g is None:  # the output does not depend on x (a count of non-zeros)
        g = lib.zeros(x.shape, dtype=lib.float64)
    out["grad"] = np.array((g.detach() + lib.zeros(tuple(g.shape), dtype=lib.float64)).tolist())
    rows = []
    for i in range(g.numel()):
        h = None
        if g.requires_grad:
            h, = lib.autograd.grad(g.reshape(-1)[i], xx, retain_graph=True, allow_unused=True)
        rows.append(np.zeros(x.shape) if h is None else
                    np.array((h.detach() + lib.zeros(tuple(h.shape), dtype=lib.float64)).tolist()))
    out["hess"] = np.array(rows).reshape(x.shape + x.shape)
    return out


@pytest.mark.parametrize("name,fn,x,exact", TORCH_ROWS, ids=[r[0] for r in TORCH_ROWS])
def test_torch_face_exact(name, fn, x, exact):
    got = _torch_derivs(fg, fn, x)
    for k in ("val", "grad", "hess"):
        if k in exact:
            want = np.asarray(exact[k], dtype=float)
            if k != "val" and got["val"].size > 1:  # gradients of sum(out * w): weight the exact Jacobian
                w = np.linspace(1.0, 2.0, got["val"].size).reshape(got["val"].shape)
                want = np.tensordot(w, want, axes=w.ndim)
            _close(got[k], want, k)


@pytest.mark.parametrize("name,fn,x,exact", TORCH_ROWS, ids=[r[0] for r in TORCH_ROWS])
def test_torch_face_matches_torch(name, fn, x, exact):
    torch = pytest.importorskip("torch")
    want = _torch_derivs(torch, fn, x)
    got = _torch_derivs(fg, fn, x)
    for k in want:
        if k in exact.get("skip_ref", ()):
            continue
        _close(got[k], want[k], k)


def test_torch_face_singular_inv_and_solve_raise():
    torch = pytest.importorskip("torch")
    for lib in (torch, fg):
        a = lib.tensor(S2, dtype=lib.float64)
        with pytest.raises(lib.linalg.LinAlgError, match="singular"):
            lib.linalg.inv(a)
        with pytest.raises(lib.linalg.LinAlgError, match="singular"):
            lib.linalg.solve(a, lib.ones(2, dtype=lib.float64))
        with pytest.raises(RuntimeError, match=r"Batch element 0"):
            lib.inverse(lib.zeros(2, 2, 2, dtype=lib.float64))
        r = lib.linalg.inv_ex(a)
        assert int(r.info) != 0


def test_torch_face_singular_errors_without_torch():
    a = fg.tensor(S2, dtype=fg.float64)
    with pytest.raises(fg.linalg.LinAlgError, match="diagonal element 2 is zero"):
        fg.linalg.inv(a)
    with pytest.raises(RuntimeError, match="solver failed because the input matrix is singular"):
        fg.linalg.solve(a, fg.ones(2, dtype=fg.float64))
    np.testing.assert_allclose(fg.linalg.inv(fg.tensor([[2.0, 0.0], [0.0, 4.0]])).numpy(), [[0.5, 0], [0, 0.25]])
