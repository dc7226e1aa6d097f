"""Linear algebra: the linalg_decomp primitives and funcgrad.numpy.linalg, checked against numpy.linalg
(values, dtypes, errors), central finite differences (first and second order), vmap against a Python
loop, and jit against eager evaluation."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.linalg import LinAlgError

import funcgrad as fg
import funcgrad.numpy as jnp
import funcgrad.numpy.linalg as la
from funcgrad._src.core.primitive import registry
from funcgrad._src.prims import linalg_decomp as ld
from funcgrad._src.prims import det as ld_det
from funcgrad._src.prims import eigen as ld_eigen
from funcgrad._src.prims import svd as ld_svd
from funcgrad.testing import check_grads
from fd import fd_grad


from cases import linalg as linalg_cases  # noqa: E402  (tests/ is on sys.path, as for fd)


# --- inputs and helpers ---------------------------------------------------------------------------

def rand(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


def mT(x):
    return np.swapaxes(x, -1, -2)


def nonsingular(n, batch=(), seed=0):
    """Well-conditioned (..., n, n): singular values in [1, 2], so solves and det are tame."""
    q1 = np.linalg.qr(rand(*batch, n, n, seed=seed))[0]
    q2 = np.linalg.qr(rand(*batch, n, n, seed=seed + 1))[0]
    s = 1 + np.random.default_rng(seed + 2).uniform(size=batch + (n,))
    return (q1 * s[..., None, :]) @ mT(q2)


def spd(n, batch=(), seed=0):
    m = rand(*batch, n, n, seed=seed)
    return m @ mT(m) + n * np.eye(n)


def sym_distinct(n, batch=(), seed=0):
    """Symmetric with eigenvalues at least 0.75 apart (none near zero)."""
    q = np.linalg.qr(rand(*batch, n, n, seed=seed))[0]
    w = np.arange(n) - n / 2 + 0.3 + 0.2 * np.random.default_rng(seed + 1).uniform(size=batch + (n,))
    return (q * w[..., None, :]) @ mT(q)




def weights_like(out, seed=7):
    return [rand(*np.shape(o), seed=seed + i) for i, o in enumerate(out)]


def scalarize(f, args, seed=7):
    """sum_i <C_i, f(*args)_i> for fixed random C_i: a scalar function whose gradient sees every output."""
    outs = f(*args)
    outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
    cs = weights_like([np.asarray(o) for o in outs], seed)

    def g(*a):
        o = f(*a)
        o = list(o) if isinstance(o, (tuple, list)) else [o]
        return sum(jnp.sum(oi * c) for oi, c in zip(o, cs))
    return g


def close(a, b, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


A4 = nonsingular(4)
B42 = rand(4, 2, seed=3)
S4 = spd(4)
E4 = sym_distinct(4)
W53 = nonsingular(3, seed=5)[[0, 1, 2, 0, 1]] + 0.3 * rand(5, 3, seed=6)  # tall, full rank


# --- the primitives: every registered card, from the property-test cases --------------------------

PRIMS = sorted(linalg_cases.CASES)


def _case(name):
    return st.composite(lambda draw: linalg_cases.CASES[name](draw))()


def _outs(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def test_every_primitive_has_a_case_and_every_rule():
    mine = {"cholesky", "triangular_solve", "cholesky_solve", "solve", "det", "adjugate", "slogdet", "eigh", "svd",
            "qr", "eig", "geqrf"}
    assert mine == set(PRIMS)
    for name in mine:
        p = registry[name]
        assert p.abstract_eval is not None and p.batch is not None
        assert p.jvp is not None or p.jvp_full is not None
        assert p.vjp is not None or p.vjp_full is not None


def _reference(name, args, params):
    """numpy.linalg's answer for a primitive (triangular_solve through a solve on the read triangle)."""
    a = args[0]
    if name == "cholesky":
        return [np.linalg.cholesky((a + mT(a)) / 2)]
    if name == "triangular_solve":
        b = args[1]
        t = np.tril(a) if params["lower"] else np.triu(a)
        if params["unit_diagonal"]:
            t = t - np.diagonal(t, axis1=-2, axis2=-1)[..., None] * np.eye(a.shape[-1]) + np.eye(a.shape[-1])
        op = mT(t) if params["transpose_a"] else t
        return [np.linalg.solve(op, b) if params["left_side"] else mT(np.linalg.solve(mT(op), mT(b)))]
    if name == "cholesky_solve":  # A = T T^T (lower) or T^T T from the read triangle T
        t = np.tril(a) if params["lower"] else np.triu(a)
        return [np.linalg.solve(t @ mT(t) if params["lower"] else mT(t) @ t, args[1])]
    if name == "solve":
        return [np.linalg.solve(a, args[1])]
    if name == "det":
        return [np.linalg.det(a)]
    if name == "slogdet":
        return list(np.linalg.slogdet(a))
    if name == "adjugate":  # the cofactors: adj_ij = (-1)^(i+j) det(a without row j and column i)
        n = a.shape[-1]
        adj = np.ones(a.shape)
        for i in range(n):
            for j in range(n):
                minor = np.delete(np.delete(a, j, axis=-2), i, axis=-1)
                adj[..., i, j] = (-1) ** (i + j) * (np.linalg.det(minor) if n > 1 else 1.0)
        return [adj]
    if name == "eigh":
        return list(np.linalg.eigh(a))
    if name == "eig":
        if params["vectors"]:
            return [x.astype(complex) for x in np.linalg.eig(a)]
        return [np.linalg.eigvals(a).astype(complex)]
    if name == "svd":
        if params["compute_uv"]:
            return list(np.linalg.svd(a, full_matrices=params["full_matrices"]))
        return [np.linalg.svd(a, compute_uv=False)]
    if name == "qr":
        return list(np.linalg.qr(a, mode="complete" if params["full_matrices"] else "reduced"))
    if name == "geqrf":   # (NumPy's raw mode hands back LAPACK's array transposed)
        h, tau = np.linalg.qr(a, mode="raw")
        return [np.ascontiguousarray(mT(h)), tau]
    raise AssertionError(name)


@pytest.mark.parametrize("name", PRIMS)
@given(data=st.data())
def test_primitive_values_match_numpy(name, data):
    args, params = data.draw(_case(name))
    out = _outs(registry[name].bind(*[jnp.asarray(a) for a in args], **params))
    ref = _reference(name, args, params)
    assert len(out) == len(ref)
    for o, r in zip(out, ref):
        assert o.shape == r.shape and o.dtype == r.dtype
        close(o, r, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name", [n for n in PRIMS if n != "geqrf"])   # (geqrf: no derivative, as JAX's)
@given(data=st.data())
def test_primitive_derivatives_match_finite_differences(name, data):
    # jvp against central differences and vjp against jvp, to second order.
    args, params = data.draw(_case(name))
    check_grads(lambda *a: registry[name].bind(*a, **params), args, order=2, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name", PRIMS)
@given(data=st.data())
def test_primitive_vmap_matches_loop_and_jit_matches_eager(name, data):
    args, params = data.draw(_case(name))
    # a second example of the same shapes and parameters, still inside the smooth domain
    args2 = [args[0] * 1.5] + [np.flip(b, -1) - 0.5 for b in args[1:]]
    prim = registry[name]
    f = lambda *a: prim.bind(*a, **params)  # noqa: E731
    # batch axis 1 for the first operand; the others batched at 0 or not at all
    stacked = [np.stack([a, b], axis=min(1, a.ndim)) if i == 0 else np.stack([a, b])
               for i, (a, b) in enumerate(zip(args, args2))]
    in_axes = tuple(min(1, a.ndim) if i == 0 else 0 for i, a in enumerate(args))
    got = _outs(fg.vmap(f, in_axes=in_axes)(*stacked))
    for k, each in enumerate((args, args2)):
        for g, e in zip(got, _outs(f(*each))):
            close(np.asarray(g)[k], e)
    if len(args) == 2:  # an unbatched second operand
        got = _outs(fg.vmap(f, in_axes=(min(1, args[0].ndim), None))(stacked[0], args[1]))
        for g, e in zip(got, _outs(f(args2[0], args[1]))):
            close(np.asarray(g)[1], e)
    for g, e in zip(_outs(fg.jit(f)(*args)), _outs(f(*args))):
        close(g, e, rtol=1e-13, atol=0)


def test_shape_rules_name_the_operation_and_shapes():
    with pytest.raises(LinAlgError, match=r"cholesky: last 2 dimensions .* square.*f64\[2,3\]"):
        fg.make_jaxpr(ld.cholesky)(np.zeros((2, 3)))
    with pytest.raises(LinAlgError, match=r"svd: 1-dimensional array given.*f64\[3\]"):
        fg.make_jaxpr(ld_svd.svd)(np.zeros(3))
    with pytest.raises(TypeError, match=r"solve: .*equal batch dimensions.*f64\[2,3,3\] and f64\[3,2\]"):
        fg.make_jaxpr(ld.solve)(np.zeros((2, 3, 3)), np.zeros((3, 2)))
    with pytest.raises(TypeError, match=r"triangular_solve: matrix f64\[3,3\] and right-hand side f64\[2,3"):
        fg.make_jaxpr(lambda a, b: ld.triangular_solve(a, b, left_side=True))(np.zeros((3, 3)),
                                                                              np.zeros((2, 3)))
    with pytest.raises(TypeError, match=r"eigh: .*unsupported dtype int32"):
        ld_eigen.eigh(jnp.asarray(np.eye(3, dtype=np.int32)))
    with pytest.raises(TypeError, match=r"det: .*unsupported dtype float16"):
        ld_det.det(jnp.asarray(np.eye(3, dtype=np.float16)))


def test_triangular_solve_reads_one_triangle_and_gives_inf_nan_at_zero_pivot():
    a = np.triu(rand(3, 3)) + 3 * np.eye(3)
    garbage = a + np.tril(rand(3, 3, seed=1), -1)
    b = rand(3, 2)
    close(ld.triangular_solve(jnp.asarray(garbage), jnp.asarray(b), left_side=True, lower=False),
          np.linalg.solve(a, b))
    # a zero on the diagonal: plain substitution (BLAS trsm, as JAX and torch), every product included:
    # x2 = b2 / 0, x1 = (b1 - a12 x2) / a11 (0 * inf = NaN where a12 = 0; 0 / 0 = NaN)
    sing = np.array([[2.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    rhs = np.array([[1.0, 1.0], [1.0, 0.0], [2.0, 0.0]])
    want = np.array([[np.nan, np.nan], [np.nan, np.nan], [np.inf, np.nan]])
    got = np.asarray(ld.triangular_solve(jnp.asarray(sing), jnp.asarray(rhs), left_side=True, lower=False))
    np.testing.assert_array_equal(got, want)
    up = np.array([[2.0, 1.0], [0.0, 0.0]])  # x2 = inf, x1 = (1 - inf) / 2 = -inf
    np.testing.assert_array_equal(np.asarray(ld.triangular_solve(jnp.asarray(up), jnp.asarray([[1.0], [2.0]]),
                                                                 left_side=True)), [[-np.inf], [np.inf]])
    # lower, from the right, transposed: x op(a) = b with op(a) = a^T upper: the same system transposed
    low = np.asarray(ld.triangular_solve(jnp.asarray(up.T), jnp.asarray([[1.0, 2.0]]), left_side=False,
                                         lower=True, transpose_a=True))
    np.testing.assert_array_equal(low, [[0.5, np.inf]])


# --- numpy.linalg values --------------------------------------------------------------------------

@st.composite
def square_batches(draw, min_n=1):
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    n = draw(st.integers(min_n, 4))
    seed = draw(st.integers(0, 1000))
    return nonsingular(n, batch, seed), seed


@given(square_batches())
def test_solve_inv_det_slogdet_match_numpy(arg):
    a, seed = arg
    n = a.shape[-1]
    b = rand(*a.shape[:-1], 2, seed=seed)
    v = rand(n, seed=seed + 1)
    close(la.solve(a, b), np.linalg.solve(a, b), rtol=1e-9)
    # 1-D b broadcast against the batch (NumPy 2's rule)
    v_ref = np.linalg.solve(a, np.broadcast_to(v[:, None], a.shape[:-1] + (1,)))[..., 0]
    close(la.solve(a, v), v_ref, rtol=1e-9)
    close(la.inv(a), np.linalg.inv(a), rtol=1e-9)
    close(la.det(a), np.linalg.det(a), rtol=1e-9)
    sign, logdet = la.slogdet(a)
    ref = np.linalg.slogdet(a)
    close(sign, ref.sign)
    close(logdet, ref.logabsdet, rtol=1e-9, atol=1e-12)


@given(square_batches())
def test_cholesky_eigh_match_numpy(arg):
    a, seed = arg
    s = a @ mT(a)
    close(la.cholesky(s), np.linalg.cholesky(s), rtol=1e-9)
    close(la.cholesky(s, upper=True), mT(np.linalg.cholesky(s)), rtol=1e-9)
    w, v = la.eigh(s)
    close(w, np.linalg.eigvalsh(s), rtol=1e-9)
    close(la.eigvalsh(s), np.linalg.eigvalsh(s), rtol=1e-9)
    close(np.asarray(v) @ (np.asarray(w)[..., :, None] * mT(np.asarray(v))), s, rtol=1e-9, atol=1e-10)
    close(mT(np.asarray(v)) @ np.asarray(v), np.broadcast_to(np.eye(s.shape[-1]), s.shape), atol=1e-10)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 2), (1, 3)])
def test_svd_qr_match_numpy(shape):
    x = rand(*shape, seed=11)
    for full in (True, False):
        u, s, vh = la.svd(x, full_matrices=full)
        nu, ns, nvh = np.linalg.svd(x, full_matrices=full)
        assert u.shape == nu.shape and vh.shape == nvh.shape
        close(s, ns)
        k = min(shape[-2:])
        u_k, vh_k = np.asarray(u)[..., :k], np.asarray(vh)[..., :k, :]
        close((u_k * np.asarray(s)[..., None, :]) @ vh_k, x, atol=1e-12)
        close(np.abs(u), np.abs(nu), atol=1e-10)  # the same up to signs
    close(la.svd(x, compute_uv=False), np.linalg.svd(x, compute_uv=False))
    close(la.svdvals(x), np.linalg.svd(x, compute_uv=False))
    for mode in ("reduced", "complete"):
        q, r = la.qr(x, mode=mode)
        nq, nr = np.linalg.qr(x, mode=mode)
        close(q, nq)
        close(r, nr)
    close(la.qr(x, mode="r"), np.linalg.qr(x, mode="r"))


def test_result_namedtuples():
    assert la.eigh(E4)._fields == ("eigenvalues", "eigenvectors")
    assert la.svd(W53)._fields == ("U", "S", "Vh")
    assert la.qr(W53)._fields == ("Q", "R")
    assert la.slogdet(A4)._fields == ("sign", "logabsdet")
    out = fg.jit(la.eigh)(E4)  # a pytree through jit
    assert isinstance(out, la.EighResult)
    close(out.eigenvalues, np.linalg.eigvalsh(E4))


def test_lstsq_pinv_match_numpy():
    tall, b1, b2 = W53, rand(5, seed=1), rand(5, 2, seed=2)
    for b in (b1, b2):
        x, res, rank, s = la.lstsq(tall, b)
        nx, nres, nrank, ns = np.linalg.lstsq(tall, b)
        close(x, nx, rtol=1e-9)
        close(res, nres, rtol=1e-9)
        assert res.shape == nres.shape and int(rank) == nrank
        close(s, ns)
    deficient = np.outer(rand(4), rand(3, seed=1))  # rank 1: NumPy gives empty residuals, JAX |b - a x|^2
    x, res, rank, s = la.lstsq(deficient, b2[:4])
    nx, nres, nrank, ns = np.linalg.lstsq(deficient, b2[:4])
    close(x, nx, rtol=1e-9)
    assert int(rank) == nrank == 1
    close(res, np.sum((b2[:4] - deficient @ nx) ** 2, axis=0), rtol=1e-9)
    assert la.lstsq(deficient, b2[:4], numpy_resid=True)[1].shape == nres.shape == (0,)
    wide = mT(W53)
    x, res, rank, s = la.lstsq(wide, b2[:3])
    close(x, np.linalg.lstsq(wide, b2[:3])[0], rtol=1e-9)
    assert res.shape == (2,) and la.lstsq(wide, b2[:3], numpy_resid=True)[1].shape == (0,)
    close(res, np.zeros(2), atol=1e-20)
    assert la.lstsq(tall, b1)[1].shape == la.lstsq(tall, b1, numpy_resid=True)[1].shape == (1,)
    # under jit the rank is unknown while tracing: residuals are always computed, as in JAX
    _, res_jit, rank_jit, _ = fg.jit(la.lstsq)(tall, b2)
    close(res_jit, np.linalg.lstsq(tall, b2)[1], rtol=1e-9)
    for a in (tall, wide, deficient, rand(2, 3, 3)):
        close(la.pinv(a), np.linalg.pinv(a), rtol=1e-9, atol=1e-12)
    close(la.pinv(deficient, rtol=None), np.linalg.pinv(deficient, 4 * np.finfo(float).eps), atol=1e-12)
    with pytest.raises(ValueError, match="can't be both set"):
        la.pinv(tall, rcond=1e-3, rtol=1e-3)


VECTOR_ORDS = [None, np.inf, -np.inf, 0, 1, -1, 2, -2, 3, 0.5]
MATRIX_ORDS = [None, "fro", "nuc", np.inf, -np.inf, 1, -1, 2, -2]


@pytest.mark.parametrize("ord", VECTOR_ORDS)
def test_vector_norms_match_numpy(ord):
    x = rand(2, 3, 4)
    close(la.norm(x[0, 0], ord), np.linalg.norm(x[0, 0], ord))
    for axis in (0, -1, 1):
        for keepdims in (False, True):
            close(la.norm(x, ord, axis=axis, keepdims=keepdims),
                  np.linalg.norm(x, ord, axis=axis, keepdims=keepdims))
    if ord is not None:
        close(la.vector_norm(x, axis=(0, 2), ord=ord, keepdims=True),
              np.linalg.norm(mT(x).reshape(-1, 3), ord, axis=0).reshape(1, 3, 1))
        close(la.vector_norm(x, ord=ord), np.linalg.norm(x.ravel(), ord))


@pytest.mark.parametrize("ord", MATRIX_ORDS)
def test_matrix_norms_match_numpy(ord):
    x = rand(2, 3, 4)
    close(la.norm(x[0], ord), np.linalg.norm(x[0], ord))
    for axis in ((1, 2), (2, 0), (-1, -3)):
        for keepdims in (False, True):
            close(la.norm(x, ord, axis=axis, keepdims=keepdims),
                  np.linalg.norm(x, ord, axis=axis, keepdims=keepdims))
    if ord is not None:
        close(la.matrix_norm(x, ord=ord), np.linalg.norm(x, ord, axis=(-2, -1)))


def test_norm_defaults_and_errors():
    x = rand(2, 3, 4)
    close(la.norm(x), np.linalg.norm(x))
    close(la.norm(x, keepdims=True), np.linalg.norm(x, keepdims=True))
    close(la.norm(np.arange(6).reshape(2, 3)), np.linalg.norm(np.arange(6).reshape(2, 3)), rtol=1e-6)
    with pytest.raises(ValueError, match="Invalid norm order 'fro' for vectors"):
        la.norm(x[0, 0], "fro")
    with pytest.raises(ValueError, match="Invalid norm order"):
        la.norm(x[0], 3)
    with pytest.raises(ValueError, match="Improper number of dimensions"):
        la.norm(x, 2)
    with pytest.raises(ValueError, match="Duplicate axes"):
        la.norm(x, axis=(1, -2))


def test_matrix_power_rank_cond_multi_dot_match_numpy():
    for n in range(-4, 8):
        close(la.matrix_power(A4, n), np.linalg.matrix_power(A4, n), rtol=1e-9)
    ints = np.arange(9).reshape(3, 3) % 4
    assert la.matrix_power(ints, 5).dtype == np.int64
    close(la.matrix_power(ints, 5), np.linalg.matrix_power(ints, 5))
    with pytest.raises(TypeError, match="exponent must be an integer"):
        la.matrix_power(A4, 1.5)
    stack = np.stack([W53, np.outer(rand(5), rand(3)), np.zeros((5, 3))])
    close(la.matrix_rank(stack), np.linalg.matrix_rank(stack))
    assert int(la.matrix_rank(W53, tol=10.0)) == np.linalg.matrix_rank(W53, tol=10.0)
    s = np.linalg.svd(W53, compute_uv=False)
    assert int(la.matrix_rank(W53, rtol=0.5)) == np.sum(s > 0.5 * s.max())
    assert int(la.matrix_rank(np.zeros(3))) == 0 and int(la.matrix_rank(np.ones(3))) == 1
    for p in (None, 2, -2, 1, -1, np.inf, -np.inf, "fro", "nuc"):
        close(la.cond(A4, p), np.linalg.cond(A4, p), rtol=1e-9)
    singular = np.stack([np.eye(3), np.ones((3, 3))])
    for p in (None, 1):
        close(la.cond(singular, p), np.linalg.cond(singular, p))
    chain = [rand(4, seed=1), rand(4, 6), rand(6, 2), rand(2, 3), rand(3, seed=2)]
    for arrays in (chain, chain[1:4], chain[1:], chain[:2], chain[:-1]):
        close(la.multi_dot(arrays), np.linalg.multi_dot(arrays))


@pytest.mark.skipif(not hasattr(np.linalg, "vecdot"), reason="numpy.linalg's Array API names need NumPy 2")
def test_array_api_helpers_match_numpy():
    x = rand(2, 3, 4)
    for k in (-3, -1, 0, 1, 3, 5):
        close(la.diagonal(x, offset=k), np.linalg.diagonal(x, offset=k))
        close(la.trace(x, offset=k), np.linalg.trace(x, offset=k))
    assert la.trace(np.ones((3, 3), np.int32)).dtype == np.linalg.trace(np.ones((3, 3), np.int32)).dtype
    close(la.matrix_transpose(x), np.linalg.matrix_transpose(x))
    close(la.vecdot(x, x[0]), np.linalg.vecdot(x, x[0]))
    close(la.vecdot(x, x[0], axis=-2), np.linalg.vecdot(x, x[0], axis=-2))
    close(la.outer(x[0, 0], x[1, 1, :3]), np.linalg.outer(x[0, 0], x[1, 1, :3]))
    with pytest.raises(ValueError, match="one-dimensional"):
        la.outer(x[0], x[0, 0])
    c1, c2 = rand(4, 3), rand(3, seed=1)
    close(la.cross(c1, c2), np.linalg.cross(c1, c2))
    close(la.cross(mT(c1), c2[:, None], axis=0), np.linalg.cross(mT(c1), c2[:, None], axis=0))
    with pytest.raises(ValueError, match="3-dimensional vectors"):
        la.cross(rand(2), rand(2))
    y = rand(4, 3, 5)
    close(la.tensordot(x, y, axes=([1, 2], [1, 0])), np.linalg.tensordot(x, y, axes=([1, 2], [1, 0])))
    close(la.tensordot(x, rand(3, 4, 2), axes=2), np.linalg.tensordot(x, rand(3, 4, 2), axes=2))
    close(la.matmul(x, rand(4, 5)), np.linalg.matmul(x, rand(4, 5)))
    t, tb = rand(2, 3, 6), rand(2, 3, seed=1)
    close(la.tensorsolve(t, tb), np.linalg.tensorsolve(t, tb), rtol=1e-9)
    t4 = rand(4, 6, 8, 3)
    close(la.tensorinv(t4, 2), np.linalg.tensorinv(t4, 2), rtol=1e-9)


FLOAT32_FUNCS = {
    "solve": lambda a: la.solve(a, a[..., :1]), "inv": la.inv, "det": la.det, "slogdet": la.slogdet,
    "cholesky": lambda a: la.cholesky(a @ mT(a)), "eigh": lambda a: la.eigh(a + mT(a)),
    "svd": la.svd, "qr": la.qr, "pinv": la.pinv,
    "lstsq": lambda a: [r for i, r in enumerate(la.lstsq(a, a[:, 0])) if i != 2],  # not the rank
    "norm": lambda a: (la.norm(a), la.norm(a, 2), la.norm(a, "nuc")), "cond": la.cond,
    "matrix_power": lambda a: la.matrix_power(a, -2),
}


@pytest.mark.parametrize("name", sorted(FLOAT32_FUNCS))
def test_float32_stays_float32_and_integers_become_default_float(name):
    f = FLOAT32_FUNCS[name]
    a32 = A4.astype(np.float32)
    for o in fg.tree_util.tree_leaves(f(a32)):
        assert o.dtype in (np.float32,), (name, o.dtype)
    ints = (np.arange(16).reshape(4, 4) % 5 + 4 * np.eye(4)).astype(np.int64)
    for o in fg.tree_util.tree_leaves(f(ints)):
        assert o.dtype == np.float64  # JAX's to_inexact_dtype of int64 (the module runs with x64 on)
    for o in fg.tree_util.tree_leaves(f(ints.astype(np.int32))):
        assert o.dtype == np.float32  # JAX: integers of up to 32 bits give float32 (NumPy: float64)


def test_complex_values_match_numpy():
    a = A4 + 1j * rand(4, 4, seed=9)
    h = a @ a.conj().T + 4 * np.eye(4)
    close(la.solve(a, B42), np.linalg.solve(a, B42))
    close(la.inv(a), np.linalg.inv(a))
    close(la.det(a), np.linalg.det(a))
    close(la.cholesky(h), np.linalg.cholesky(h))
    close(la.eigvalsh(h), np.linalg.eigvalsh(h))
    close(la.svdvals(a), np.linalg.svd(a, compute_uv=False))
    close(la.qr(a).R, np.linalg.qr(a).R)
    close(la.norm(a, "nuc"), np.linalg.norm(a, "nuc"))
    close(la.vecdot(a, a), np.sum(a.conj() * a, axis=-1))
    # solve and det have complex (holomorphic) derivatives
    g = fg.grad(lambda z: jnp.sum(la.det(z)), holomorphic=True)(a)
    close(g, np.linalg.det(a) * np.linalg.inv(a).T)


def test_errors_match_numpy():
    # solve / inv of an exactly singular matrix: inf / NaN as JAX's LU solve (NumPy raises LinAlgError)
    singular = np.ones((3, 3))
    assert not np.isfinite(np.asarray(la.solve(singular, np.ones(3)))).any()
    assert not np.isfinite(np.asarray(la.inv(singular))).any()
    # cholesky of a matrix that is not positive definite: NaN as JAX (NumPy and torch raise; torch's face does)
    L = np.asarray(la.cholesky(np.stack([-np.eye(3), np.eye(3)])))
    assert np.isnan(L[0][np.tril_indices(3)]).all() and (np.triu(L[0], 1) == 0).all() and (L[1] == np.eye(3)).all()
    with pytest.raises(LinAlgError):
        fg.linalg.cholesky(fg.tensor(-np.eye(3)))
    assert float(la.det(singular)) == 0.0
    sign, logdet = la.slogdet(singular)
    assert float(sign) == 0.0 and float(logdet) == -np.inf
    for f in (la.inv, la.det, la.slogdet, la.cholesky, la.eigh, la.eigvalsh, lambda a: la.solve(a, a[0]),
              lambda a: la.matrix_power(a, 2)):
        with pytest.raises(LinAlgError, match="square"):
            f(np.ones((2, 3)))
        with pytest.raises(LinAlgError, match="at least two-dimensional"):
            f(np.ones(3))
    with pytest.raises(LinAlgError, match="two-dimensional"):
        la.svd(np.ones(3))
    with pytest.raises(LinAlgError, match="Incompatible dimensions"):
        la.lstsq(np.ones((3, 2)), np.ones(4))
    with pytest.raises(ValueError, match="mismatch"):
        la.solve(np.eye(3), np.ones((4, 2)))
    with pytest.raises(TypeError, match="unsupported in linalg"):
        la.inv(np.eye(3, dtype=np.float16))
    with pytest.raises(ValueError, match="Unrecognized mode"):
        la.qr(np.eye(3), mode="economy")
    with pytest.raises(ValueError, match="UPLO"):
        la.eigh(np.eye(3), UPLO="X")
    with pytest.raises(AttributeError, match="numpy.linalg.matrix_transpose_nope|no function|no attribute"):
        la.matrix_transpose_nope  # noqa: B018


def test_symmetrize_input_false_reads_one_triangle_like_numpy():
    a = S4 + np.triu(rand(4, 4, seed=3), 1)  # garbage above the diagonal
    close(la.cholesky(a, symmetrize_input=False), np.linalg.cholesky(a))
    close(la.eigvalsh(a, symmetrize_input=False), np.linalg.eigvalsh(a))
    b = S4 + np.tril(rand(4, 4, seed=3), -1)
    close(la.eigvalsh(b, UPLO="U", symmetrize_input=False), np.linalg.eigvalsh(b, UPLO="U"))
    # upper=True transposes the factor of the lower triangle, as JAX's (jnp.linalg.cholesky reads the lower one)
    close(la.cholesky(a, upper=True, symmetrize_input=False), mT(np.linalg.cholesky(a)))
    close(la.eigvalsh(a), np.linalg.eigvalsh((a + a.T) / 2))  # the default: the symmetric part, as JAX


# --- derivatives against finite differences -------------------------------------------------------

def _eigh_fn(a):
    w, v = la.eigh(a)
    return (v * jnp.sin(w)) @ v.T  # gauge invariant: the sign of each eigenvector cancels


def _svd_u_fn(a):
    u, s, vh = la.svd(a, full_matrices=False)
    return (u * s ** 3) @ u.T, (vh.T * jnp.exp(s)) @ vh, (u * s) @ vh


GRAD_CASES = {
    "det": (la.det, (A4,)),
    "inv": (la.inv, (A4,)),
    "slogdet": (lambda a: la.slogdet(a).logabsdet, (A4,)),
    "solve": (la.solve, (A4, B42)),
    "solve_vec": (la.solve, (A4, B42[:, 0])),
    "cholesky": (la.cholesky, (S4,)),
    "cholesky_upper": (lambda a: la.cholesky(a, upper=True), (S4,)),
    "eigvalsh": (la.eigvalsh, (E4,)),
    "eigh": (_eigh_fn, (E4,)),
    "svd": (_svd_u_fn, (W53,)),
    "svd_wide": (_svd_u_fn, (mT(W53),)),
    "svdvals": (la.svdvals, (W53,)),
    "qr": (la.qr, (W53,)),
    "qr_wide": (la.qr, (mT(W53),)),
    "qr_complete_wide": (lambda a: la.qr(a, mode="complete"), (mT(W53),)),
    "pinv": (la.pinv, (W53,)),
    "lstsq": (lambda a, b: la.lstsq(a, b)[0], (W53, B42[:, 0].tolist() + [0.5])),
    "norm_2": (lambda a: la.norm(a, 2), (W53,)),
    "norm_nuc": (lambda a: la.norm(a, "nuc"), (W53,)),
    "norm_fro": (lambda a: la.norm(a, "fro"), (W53,)),
    "norm_inf": (lambda a: la.norm(a, np.inf), (W53,)),
    "norm_-1": (lambda a: la.norm(a, -1), (W53,)),
    "norm_vec3": (lambda a: la.norm(a, 3, axis=0), (W53,)),
    "vector_norm": (lambda a: la.vector_norm(a, axis=(0, 1)), (W53,)),
    "matrix_power": (lambda a: la.matrix_power(a, -3), (A4,)),
    "cond": (la.cond, (A4,)),
    "cond_1": (lambda a: la.cond(a, 1), (A4,)),
    "multi_dot": (lambda a, b: la.multi_dot([b.T, a, a, b]), (A4, B42)),
    "trace_diag": (lambda a: la.trace(a, offset=1) * la.diagonal(a, offset=-1), (A4,)),
    "cross": (la.cross, (rand(2, 3), rand(3, seed=1))),
    "tensorsolve": (la.tensorsolve, (A4.reshape(2, 2, 4), B42[:, 0].reshape(2, 2))),
    "tensorinv": (lambda a: la.tensorinv(a, 1), (A4.reshape(4, 2, 2),)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_grad_matches_finite_differences(name):
    f, args = GRAD_CASES[name]
    args = [np.asarray(a, dtype=np.float64) for a in args]
    loss = scalarize(f, args)
    for i in range(len(args)):
        def fi(x, i=i):
            a = list(args)
            a[i] = x
            return loss(*a)
        got = fg.grad(fi)(args[i])
        close(got, fd_grad(fi, args[i]), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["det", "inv", "cholesky", "eigh", "svd", "qr", "pinv", "solve"])
def test_jvp_matches_finite_differences(name):
    f, args = GRAD_CASES[name]
    args = [np.asarray(a, dtype=np.float64) for a in args]
    ts = [rand(*a.shape, seed=20 + i) for i, a in enumerate(args)]
    eps = 1e-6
    _, tan = fg.jvp(f, tuple(args), tuple(ts))
    plus = f(*[a + eps * t for a, t in zip(args, ts)])
    minus = f(*[a - eps * t for a, t in zip(args, ts)])
    for t, p, m in zip(_outs(tan), _outs(plus), _outs(minus)):
        close(t, (np.asarray(p) - np.asarray(m)) / (2 * eps), rtol=1e-6, atol=1e-7)


SECOND_ORDER = {
    "det": (la.det, A4),
    "inv": (la.inv, A4),
    "cholesky": (la.cholesky, S4),
    "solve": (lambda a: la.solve(a, B42), A4),
    "solve_b": (lambda b: la.solve(A4, b), B42),
    "eigvalsh": (lambda a: la.eigvalsh(a) ** 3, E4),
    "slogdet": (lambda a: la.slogdet(a).logabsdet, A4),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_grad_of_grad_matches_finite_differences(name):
    f, x = SECOND_ORDER[name]
    loss = scalarize(f, [x])
    v = rand(*x.shape, seed=30)
    inner = lambda y: jnp.sum(fg.grad(loss)(y) * v)  # noqa: E731  (a Hessian-vector product)
    close(fg.grad(inner)(x), fd_grad(inner, x, eps=1e-5), rtol=1e-5, atol=1e-6)


def test_det_derivative_closed_form():
    g = fg.grad(la.det)(A4)
    close(g, np.linalg.det(A4) * np.linalg.inv(A4).T, rtol=1e-10)
    t4 = rand(4, 4, seed=4)
    _, t = fg.jvp(la.det, (A4,), (t4,))
    close(t, np.linalg.det(A4) * np.trace(np.linalg.solve(A4, t4)), rtol=1e-10)
    close(fg.grad(lambda a: la.slogdet(a).logabsdet)(A4), np.linalg.inv(A4).T, rtol=1e-10)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the inf / NaN eigenvector derivatives
def test_degenerate_spectra():
    # eigenvalue (and singular value) gradients stay finite when they repeat ...
    close(fg.grad(lambda a: jnp.sum(la.eigvalsh(a) ** 2))(np.eye(3)), 2 * np.eye(3))
    close(fg.grad(lambda a: la.norm(a, "nuc"))(np.eye(3)), np.eye(3))
    # ... eigenvector gradients do not (as in JAX)
    g = fg.grad(lambda a: jnp.sum(la.eigh(a).eigenvectors[:, 0]))(np.eye(3))
    assert not np.all(np.isfinite(np.asarray(g)))
    with pytest.raises(NotImplementedError, match="full_matrices"):
        fg.grad(lambda a: jnp.sum(la.svd(a).U))(W53)
    with pytest.raises(NotImplementedError, match="complete QR of a tall"):
        fg.grad(lambda a: jnp.sum(la.qr(a, mode="complete").Q))(W53)


# --- vmap and jit of the NumPy API ----------------------------------------------------------------

BATCHABLE = {
    "det": la.det, "inv": la.inv, "slogdet": la.slogdet, "cholesky": lambda a: la.cholesky(a @ a.T),
    "eigvalsh": lambda a: la.eigvalsh(a + a.T), "svdvals": la.svdvals, "qr": la.qr,
    "pinv": la.pinv, "norm2": lambda a: la.norm(a, 2), "matrix_power": lambda a: la.matrix_power(a, -2),
    "lstsq_x": lambda a: la.lstsq(a, a[:, 0])[0], "cond": la.cond, "trace": la.trace,
    "solve": lambda a: la.solve(a, a[0]),
    "grad_det": fg.grad(la.det), "grad_eigvalsh": fg.grad(lambda a: jnp.sum(jnp.sin(la.eigvalsh(a)))),
    "grad_inv": fg.grad(lambda a: jnp.sum(la.inv(a) ** 2)),
}


@pytest.mark.parametrize("name", sorted(BATCHABLE))
def test_vmap_matches_loop_and_jit_matches_eager(name):
    f = BATCHABLE[name]
    xs = nonsingular(4, (3,), seed=40)
    loop = [f(x) for x in xs]
    for axis in (0, 2):
        got = fg.vmap(f, in_axes=axis)(np.moveaxis(xs, 0, axis))
        for g, *each in zip(fg.tree_util.tree_leaves(got), *[fg.tree_util.tree_leaves(o) for o in loop]):
            close(g, np.stack([np.asarray(e) for e in each]), rtol=1e-9)
    for g, e in zip(fg.tree_util.tree_leaves(fg.jit(f)(xs[0])), fg.tree_util.tree_leaves(loop[0])):
        close(g, e, rtol=1e-12)


def test_vmap_of_solve_with_unbatched_operands():
    xs = nonsingular(3, (4,), seed=41)
    b = rand(3, 2)
    close(fg.vmap(la.solve, in_axes=(0, None))(xs, b), np.linalg.solve(xs, b))
    bs = rand(3, 5, 2)
    close(fg.vmap(la.solve, in_axes=(None, 1))(xs[0], bs), np.linalg.solve(xs[0], np.moveaxis(bs, 1, 0)))


# --- singular matrices as JAX: LAPACK's LU, its transpose solve, cholesky's NaN, cond -------------------

_RANK2 = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
_RANK1 = np.array([[2.0, 1.0, -1.0], [-4.0, -2.0, 2.0], [4.0, 2.0, -2.0]])


def test_lu_rounds_as_lapack_on_small_singular_matrices():
    """lax.linalg.lu follows LAPACK's getrf (scipy.linalg.lu_factor) bit for bit on small matrices, so a singular
    one gets LAPACK's exactly zero pivot (the rank-2 matrix: U[2,2] = 0, where right-looking elimination leaves
    1.1e-16), from which JAX's solves give inf / NaN."""
    sl = pytest.importorskip("scipy.linalg")
    rng = np.random.default_rng(3)
    mats = [_RANK2, _RANK1, np.zeros((3, 3))]
    for n in (2, 3):
        for _ in range(30):
            k = int(rng.integers(1, n))
            mats.append((rng.integers(-5, 6, (n, k)) @ rng.integers(-5, 6, (k, n))) / 7.0)
    for a in mats:
        lu, piv, _ = fg.lax.linalg.lu(a)
        want_lu, want_piv = sl.lu_factor(a, check_finite=False)
        np.testing.assert_array_equal(np.asarray(lu), want_lu)
        np.testing.assert_array_equal(np.asarray(piv), want_piv)
    assert float(np.asarray(fg.lax.linalg.lu(_RANK2)[0])[2, 2]) == 0.0
    batch = np.stack(mats[:3])
    np.testing.assert_array_equal(np.asarray(fg.lax.linalg.lu(batch)[0]),
                                  np.stack([sl.lu_factor(a, check_finite=False)[0] for a in batch]))


def test_transposed_solve_uses_the_matrix_own_factorisation():
    from funcgrad._src.prims import linalg_decomp as ld
    a, b = A4, rand(4, 2, seed=3)
    close(ld.solve(a, b, transpose=True), np.linalg.solve(a.T, b))
    close(fg.grad(lambda m: jnp.sum(ld.solve(m, b, transpose=True) ** 2))(a),
          fg.grad(lambda m: jnp.sum(la.solve(m.T, b) ** 2))(a))
    fg.testing.check_grads(lambda m, c: ld.solve(m, c, transpose=True), (a, b), order=2)
    # at the rank-2 matrix A's LU has a zero pivot (A^T's does not): inf / NaN, not A^T's 1e16 noise
    assert not np.isfinite(np.asarray(ld.solve(_RANK2, np.eye(3), transpose=True))).any()


def test_singular_solves_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jjnp
    g = rand(3, 3, seed=9)
    with np.errstate(all="ignore"):
        for a in (_RANK2, _RANK1, np.zeros((3, 3))):
            pairs = [(la.inv(a), jjnp.linalg.inv(a)), (la.solve(a, g), jjnp.linalg.solve(a, g)),
                     (fg.grad(lambda m, c: jnp.sum(g * la.solve(m, c)), argnums=(0, 1))(a, g),
                      jax.grad(lambda m, c: jjnp.sum(g * jjnp.linalg.solve(m, c)), argnums=(0, 1))(a, g)),
                     (fg.grad(lambda m: la.slogdet(m)[1])(a), jax.grad(lambda m: jjnp.linalg.slogdet(m)[1])(a))]
            for got, want in pairs:
                for x, y in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
                    np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-9, equal_nan=True)


def test_cholesky_of_a_matrix_that_is_not_positive_definite_is_nan_in_the_jax_face():
    spd = np.array([[4.0, 2.0], [2.0, 3.0]])
    stack = np.stack([spd, -spd])
    L = np.asarray(fg.vmap(la.cholesky)(stack))
    close(L[0], np.linalg.cholesky(spd))
    assert np.isnan(L[1][np.tril_indices(2)]).all() and L[1][0, 1] == 0
    _, t = fg.jvp(la.cholesky, (-spd,), (np.eye(2),))
    t = np.asarray(t)
    assert np.isnan(t[np.tril_indices(2)]).all() and t[0, 1] == 0  # tangent lower triangular, as JAX's tril
    with pytest.raises(LinAlgError):  # torch.linalg.cholesky raises
        fg.linalg.cholesky(fg.tensor(-spd))
    L, info = fg.linalg.cholesky_ex(fg.tensor(-spd))
    assert int(info) == 1


def test_cond_of_a_zero_matrix():
    # JAX's cond(p=None/2) returns s[0] / s[-1] as it is (0 / 0 = NaN); the other norms keep NumPy's inf
    with np.errstate(all="ignore"):
        assert np.isnan(float(la.cond(np.zeros((3, 3)))))
        assert float(la.cond(np.zeros((3, 3)), 1)) == np.inf
        assert float(la.cond(np.zeros((3, 3)), -2)) == np.inf


# --- singular triangular solves, cholesky_solve's per-face conventions, qr at rank < n, lstsq ----------

_TRI_A = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, -1.0], [3.0, 1.0, 0.0]])  # a zero on the diagonal
_TRI_B = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]])
_TRI_B0 = np.array([[1.0, 0.0, 3.0], [4.0, 5.0, 6.0], [0.0, 1.0, 0.0]])  # zeros: 0 / 0


def _tri_configs():
    for a in (_TRI_A, _TRI_A.T.copy(), np.zeros((3, 3))):
        for b in (_TRI_B, _TRI_B0, _TRI_B[:, :1].copy()):
            for lower in (False, True):
                for trans in (False, True):
                    for unit in (False, True):
                        yield a, b, lower, trans, unit


def test_triangular_solve_at_a_zero_pivot_matches_jax():
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp
    import jax.scipy.linalg as jsl
    import funcgrad.scipy.linalg as fsl
    prev = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", True)
    try:
        for a, b, lower, trans, unit in _tri_configs():
            for left in (True, False):
                bb = b if left else b.T.copy()
                kw = dict(left_side=left, lower=lower, transpose_a=trans, unit_diagonal=unit)
                want = np.asarray(jax.lax.linalg.triangular_solve(jjnp.asarray(a), jjnp.asarray(bb), **kw))
                got = np.asarray(fg.lax.linalg.triangular_solve(jnp.asarray(a), jnp.asarray(bb), **kw))
                np.testing.assert_array_equal(got, want, err_msg=str(kw))
            kw = dict(lower=lower, trans=int(trans), unit_diagonal=unit)
            want = np.asarray(jsl.solve_triangular(jjnp.asarray(a), jjnp.asarray(b), **kw))
            np.testing.assert_array_equal(np.asarray(fsl.solve_triangular(jnp.asarray(a), jnp.asarray(b), **kw)), want)
    finally:
        jax.config.update("jax_enable_x64", prev)


def test_triangular_solve_at_a_zero_pivot_matches_torch():
    torch = pytest.importorskip("torch")
    import warnings
    for a, b, lower, trans, unit in _tri_configs():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.triangular_solve is deprecated
            want = torch.triangular_solve(torch.from_numpy(b), torch.from_numpy(a), upper=not lower, transpose=trans,
                                          unitriangular=unit)[0].numpy()
            got = fg.triangular_solve(fg.from_numpy(b), fg.from_numpy(a), upper=not lower, transpose=trans,
                                      unitriangular=unit)[0].numpy()
        np.testing.assert_array_equal(got, want)
        want = torch.linalg.solve_triangular(torch.from_numpy(a), torch.from_numpy(b), upper=not lower,
                                             unitriangular=unit).numpy()
        got = fg.linalg.solve_triangular(fg.from_numpy(a), fg.from_numpy(b), upper=not lower, unitriangular=unit)
        np.testing.assert_array_equal(got.numpy(), want)
        if not unit and not trans:  # cholesky_solve: two substitutions with the same triangle
            want = torch.cholesky_solve(torch.from_numpy(b), torch.from_numpy(a), upper=not lower).numpy()
            got = fg.cholesky_solve(fg.from_numpy(b), fg.from_numpy(a), upper=not lower).numpy()
            np.testing.assert_array_equal(got, want)


_FAC = np.array([[1.5, 0.4, -0.3], [0.7, 2.0, 0.9], [-0.2, 0.5, 1.2]])  # both triangles non-zero
_FAC_C = _FAC + 1j * np.array([[0.0, 0.3, 0.1], [-0.4, 0.0, 0.2], [0.6, -0.5, 0.0]])  # real diagonal
_CS_B = np.array([[1.0, -1.0], [2.0, 0.5], [0.0, 1.0]])
_CS_V = np.cos(np.arange(9.0) + 1.0).reshape(3, 3)
_CS_VB = np.sin(np.arange(6.0) + 2.0).reshape(3, 2)


def _cho_tangent(s, ds, lower, x):
    """The closed form dX = -A^-1 dA X, dA = dS S^H + S dS^H (upper: dS^H S + S^H dS), A from the triangle."""
    t = np.tril(s) if lower else np.triu(s)
    a = t @ t.conj().T if lower else t.conj().T @ t
    da = ds @ s.conj().T + s @ ds.conj().T if lower else ds.conj().T @ s + s.conj().T @ ds
    return -np.linalg.solve(a, da @ x), a


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("convention", ["jax", "torch"])
@pytest.mark.parametrize("complex_", [False, True])
def test_cholesky_solve_card_conventions_closed_form(lower, convention, complex_):
    fac = _FAC_C if complex_ else _FAC
    b = _CS_B + (1j * _CS_VB if complex_ else 0)
    v = _CS_V + (0.5j * _CS_V[::-1] if complex_ else 0)
    vb = _CS_VB + 0 * b  # b's dtype
    f = lambda c, r: ld.cholesky_solve(c, r, lower=lower, convention=convention)
    x, tx = fg.jvp(f, (jnp.asarray(fac), jnp.asarray(b)), (jnp.asarray(v), jnp.asarray(vb)))
    tri = (lambda m: np.tril(m)) if lower else (lambda m: np.triu(m))
    s, ds = (fac, v) if convention == "torch" else (tri(fac), tri(v))
    dx_a, a = _cho_tangent(s, ds, lower, np.asarray(x))
    close(x, np.linalg.solve(a, b))
    close(tx, dx_a + np.linalg.solve(a, vb), rtol=1e-9)
    # the vjp is the jvp's transpose under Re sum(u * v) (no conjugation)
    u = np.sin(np.arange(6.0) + 0.5).reshape(3, 2) + (0.3j if complex_ else 0)
    _, pull = fg.vjp(f, jnp.asarray(fac), jnp.asarray(b))
    gc, gb = pull(jnp.asarray(u))
    lhs = np.real(np.sum(u * np.asarray(tx)))
    rhs = np.real(np.sum(np.asarray(gc) * v) + np.sum(np.asarray(gb) * vb))
    assert abs(lhs - rhs) < 1e-10 * max(1.0, abs(lhs))
    if convention == "jax":  # the function's own derivative: central differences of its values
        h = 1e-6
        fd = (np.asarray(f(jnp.asarray(fac + h * v), jnp.asarray(b + h * vb)))
              - np.asarray(f(jnp.asarray(fac - h * v), jnp.asarray(b - h * vb)))) / (2 * h)
        close(tx, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("upper", [False, True])
def test_torch_cholesky_solve_and_inverse_derivatives_match_torch(upper):
    """torch's convention (the factor as a whole matrix, both triangles), forward and reverse mode alike."""
    torch = pytest.importorskip("torch")
    w = np.sin(np.arange(9.0)).reshape(3, 3)
    for fac, b in ((_FAC, _CS_B), (_FAC_C, _CS_B + 0.5j * _CS_VB)):
        v, vb = _CS_V + 0 * fac, _CS_VB + 0 * b
        res = {}
        for lib in (torch, fg):
            f = lib.from_numpy(fac.copy()).requires_grad_()
            r = lib.from_numpy(b.copy()).requires_grad_()
            out = lib.cholesky_solve(r, f, upper=upper)
            (out * lib.from_numpy(w[:, :2] + 0 * b)).sum().real.backward()
            inv_f = lib.from_numpy(fac.copy()).requires_grad_()
            (lib.cholesky_inverse(inv_f, upper=upper) * lib.from_numpy(w + 0 * fac)).sum().real.backward()
            jv = lib.func.jvp(lambda f_, r_: lib.cholesky_solve(r_, f_, upper=upper),
                              (lib.from_numpy(fac.copy()), lib.from_numpy(b.copy())),
                              (lib.from_numpy(v), lib.from_numpy(vb)))[1]
            res[lib.__name__] = [out.detach().numpy(), f.grad.numpy(), r.grad.numpy(), inv_f.grad.numpy(),
                                 jv.numpy()]
        for got, want in zip(res["funcgrad"], res["torch"]):
            close(got, want, rtol=1e-10)


@pytest.mark.parametrize("upper", [False, True])
def test_torch_cholesky_inverse_forward_mode_is_the_derivative(upper):
    """cholesky_inverse's jvp is -X (dF F^H + F dF^H) X (upper: dF^H F + F^H dF), the transpose of its (torch's)
    reverse formula; at a true Cholesky factor along a triangular direction it is the derivative, which central
    differences check (torch's own forward formula, -X dF X F^H + h.c., is not)."""
    fac = _FAC.T.copy() if upper else _FAC
    x, dx = fg.func.jvp(lambda f: fg.cholesky_inverse(f, upper=upper), (fg.from_numpy(fac),), (fg.from_numpy(_CS_V),))
    want, _ = _cho_tangent(fac, _CS_V, not upper, np.asarray(x.numpy()))
    close(dx.numpy(), want, rtol=1e-10)
    l_ = np.linalg.cholesky(spd(3, seed=7))
    fac, v = (l_.T.copy(), np.triu(_CS_V)) if upper else (l_, np.tril(_CS_V))
    dx = fg.func.jvp(lambda f: fg.cholesky_inverse(f, upper=upper), (fg.from_numpy(fac),), (fg.from_numpy(v),))[1]
    h = 1e-6
    fd = (np.linalg.inv(spd_of(fac + h * v, upper)) - np.linalg.inv(spd_of(fac - h * v, upper))) / (2 * h)
    close(dx.numpy(), fd, rtol=1e-6, atol=1e-8)


def spd_of(fac, upper):
    return fac.T @ fac if upper else fac @ fac.T


@pytest.mark.parametrize("name", ["rank1", "zero"])
def test_qr_derivatives_at_rank_deficient_matrices_match_torch(name):
    """R is singular there: the triangular solves of qr's rules give inf / NaN where torch's formula does, and
    the same numbers elsewhere (no LinAlgError)."""
    torch = pytest.importorskip("torch")
    a = {"rank1": np.outer([1.0, -2.0, 2.0], [2.0, 1.0, -1.0]), "zero": np.zeros((3, 3))}[name]
    u = np.sin(np.arange(9.0) + 0.5).reshape(3, 3) + 0.25
    res = {}
    for lib in (torch, fg):
        x = lib.from_numpy(a.copy()).requires_grad_()
        q, r = lib.linalg.qr(x)
        ((q + r) * lib.from_numpy(u)).sum().backward()
        jq, jr = lib.func.jvp(lambda m: lib.linalg.qr(m), (lib.from_numpy(a.copy()),), (lib.from_numpy(_CS_V),))[1]
        res[lib.__name__] = [q.detach().numpy(), r.detach().numpy(), x.grad.numpy(), jq.numpy(), jr.numpy()]
    for got, want in zip(res["funcgrad"], res["torch"]):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, equal_nan=True)


def _lstsq_second(f, a, b, va, vb):
    return fg.jvp(lambda p, q: fg.jvp(f, (p, q), (jnp.asarray(va), jnp.asarray(vb)))[1],
                  (jnp.asarray(a), jnp.asarray(b)), (jnp.asarray(va), jnp.asarray(vb)))[1]


def test_lstsq_second_derivative_closed_form():
    """x = A^-1 b at a regular A: x'' = 2 A^-1 V A^-1 (V x - vb) along (V, vb)."""
    a, b = nonsingular(3, seed=11), rand(3, seed=12)
    va, vb = rand(3, 3, seed=13), rand(3, seed=14)
    with fg.enable_x64():
        got = _lstsq_second(lambda p, q: la.lstsq(p, q)[0], a, b, va, vb)
    x = np.linalg.solve(a, b)
    close(got, 2 * np.linalg.solve(a, va @ np.linalg.solve(a, va @ x - vb)), rtol=1e-9)


def test_lstsq_derivatives_at_a_rank_deficient_matrix_are_the_truncated_solutions():
    """At a matrix of rank 2 (one zero singular value), lstsq is the rank-2 truncated SVD solution
    V_2 S_2^-1 U_2^T b, as JAX computes it: its second derivative is that smooth function's (mpmath, 40 digits)."""
    mp = pytest.importorskip("mpmath")
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
    b = np.array([1.0, 2.0, 3.0])
    va, vb = np.cos(np.arange(9.0) + 1.0).reshape(3, 3), np.cos(np.arange(3.0) + 1.7)
    with fg.enable_x64():
        got = np.asarray(_lstsq_second(lambda p, q: la.lstsq(p, q)[0], a, b, va, vb))
    with mp.workdps(40):
        def trunc(t, j):
            u, s, vh = mp.svd_r(mp.matrix(a.tolist()) + t * mp.matrix(va.tolist()))
            rhs = mp.matrix(b.tolist()) + t * mp.matrix(vb.tolist())
            return sum(vh[i, j] * sum(u[k, i] * rhs[k] for k in range(3)) / s[i] for i in range(2))
        want = [float(mp.diff(lambda t: trunc(t, j), 0, 2)) for j in range(3)]
    close(got, want, rtol=1e-8)


def test_lstsq_derivatives_match_jax():
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp
    prev = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", True)
    try:
        va = np.cos(np.arange(9.0) + 1.0).reshape(3, 3)
        rank2 = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
        for a, b in ((rank2, np.array([1.0, 2.0, 3.0])), (np.outer([1.0, -2.0, 2.0], [2.0, 1.0, -1.0]), np.eye(3)),
                     (nonsingular(3, seed=2)[:, :2], rand(3, 2, seed=3))):
            vb = np.sin(np.arange(b.size) + 0.3).reshape(b.shape)
            va_ = va[:, :a.shape[1]]
            with fg.enable_x64():
                got = _lstsq_second(lambda p, q: la.lstsq(p, q)[0], a, b, va_, vb)
                g1 = fg.jvp(lambda p, q: la.lstsq(p, q)[0], (jnp.asarray(a), jnp.asarray(b)),
                            (jnp.asarray(va_), jnp.asarray(vb)))[1]
            jf = lambda p, q: jjnp.linalg.lstsq(p, q)[0]
            w1 = jax.jvp(jf, (a, b), (va_, vb))[1]
            w2 = jax.jvp(lambda p, q: jax.jvp(jf, (p, q), (va_, vb))[1], (a, b), (va_, vb))[1]
            np.testing.assert_allclose(np.asarray(g1), np.asarray(w1), rtol=1e-8, atol=1e-10, equal_nan=True)
            np.testing.assert_allclose(np.asarray(got), np.asarray(w2), rtol=1e-8, atol=1e-10, equal_nan=True)
    finally:
        jax.config.update("jax_enable_x64", prev)


def test_torch_cholesky_inverse_raises_at_a_zero_diagonal_where_cholesky_solve_gives_inf_nan():
    """As torch (LAPACK potri checks the factor's diagonal, potrs does not)."""
    for m, msg in ((np.zeros((3, 3)), "The diagonal element 1 is zero"),
                   (np.stack([np.eye(3), np.diag([1.0, 0.0, 2.0])]),
                    r"\(Batch element 1\): The diagonal element 2 is zero")):
        with pytest.raises(fg.linalg.LinAlgError, match="cholesky_inverse: " + msg):
            fg.cholesky_inverse(fg.from_numpy(m))
        with pytest.raises(RuntimeError):
            fg.cholesky_inverse(fg.from_numpy(m), upper=True)
    got = fg.cholesky_solve(fg.from_numpy(np.array([[1.0], [1.0]])), fg.from_numpy(np.diag([2.0, 0.0]))).numpy()
    np.testing.assert_array_equal(got, [[np.nan], [np.inf]])  # y = (0.5, 1 / 0), x = ((y1 - 0 * inf) / 2, inf / 0)


def test_torch_cholesky_inverse_zero_diagonal_error_matches_torch():
    torch = pytest.importorskip("torch")
    m = np.diag([1.0, 0.0, 2.0])
    with pytest.raises(RuntimeError) as te:
        torch.cholesky_inverse(torch.from_numpy(m))
    with pytest.raises(fg.linalg.LinAlgError) as fe:
        fg.cholesky_inverse(fg.from_numpy(m))
    assert str(fe.value) == str(te.value)
    np.testing.assert_array_equal(fg.cholesky_solve(fg.from_numpy(np.eye(3)), fg.from_numpy(m)).numpy(),
                                  torch.cholesky_solve(torch.from_numpy(np.eye(3)), torch.from_numpy(m)).numpy())


def test_torch_linalg_ex_info_per_matrix_qr_r_and_cholesky_message_as_torch():
    """inv_ex / solve_ex report getrf's info per matrix (the first zero pivot, 1-based) and compute the other
    matrices (with their gradients; a failing matrix's is NaN in torch, 0 here); cholesky_ex potrf's (the order of the first leading minor that is not positive definite);
    qr(mode='r') is (empty Q, R); cholesky's error names the batch element and the minor, as torch's."""
    torch = pytest.importorskip("torch")
    A = np.array([[[1.0, 2, 3], [1, 2, 3], [0, 1, 5]], [[2.0, 0, 0], [0, 1, 0], [0, 0, 1]]])
    S = np.array([[[4.0, 2], [2, -3]], [[1.0, 0], [0, 1]], [[0.0, 0], [0, 1]]])
    got = []
    for m in (fg, torch):
        a = m.tensor(A, requires_grad=True)
        inv, info = m.linalg.inv_ex(a)
        inv[1].sum().backward()
        sol, sinfo = m.linalg.solve_ex(m.tensor(A), m.ones(2, 3, dtype=m.float64))
        cinfo = m.linalg.cholesky_ex(m.tensor(S)).info
        q, r = m.linalg.qr(m.tensor(A[1:] + 1.0), mode="r")
        with pytest.raises(m.linalg.LinAlgError) as e:
            m.linalg.cholesky(m.tensor(S))
        got.append([info.numpy(), inv[1].detach().numpy(), a.grad[1].numpy(), sinfo.numpy(), sol[1].numpy(),
                    cinfo.numpy(), q.shape, r.numpy(), str(e.value)])
    for x, y in zip(*got):
        if isinstance(x, str) or isinstance(x, tuple):
            assert x == y
        else:
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-14)
            assert x.dtype == y.dtype


@pytest.mark.parametrize("shape", [(3, 4), (4, 2), (2, 3, 5)])
def test_torch_svd_full_matrices_gradient_as_torch(shape):
    """torch.linalg.svd's default full_matrices=True is differentiable for a non-square matrix: torch's
    backward narrows U, Vh and their cotangents to the first min(m, n) columns / rows (ours raised
    NotImplementedError); gradients of S and of the reduced product against torch."""
    torch = pytest.importorskip("torch")
    r = np.random.default_rng(1)
    A, W = r.standard_normal(shape), r.standard_normal(shape)
    k = min(shape[-2:])
    grads = []
    for L in (fg, torch):
        a = L.tensor(A, requires_grad=True)
        U, S, Vh = L.linalg.svd(a)
        loss = S.sum() + ((U[..., :, :k] * S[..., None, :]) @ Vh[..., :k, :] * L.tensor(W)).sum()
        loss.backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)


def test_solve_gradient_of_a_float32_matrix_whose_det_overflows_warns_nothing():
    """solve's vjp solves with the transpose, checking det(A) == 0 first: a float32 det beyond float32's range is
    inf (not singular), without NumPy's overflow warning escaping."""
    import warnings
    a = jnp.asarray(np.diag([1e10, 2e10, 3e10, 4e10]).astype(np.float32) + 1.0)
    b = jnp.ones((4,), jnp.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = fg.grad(lambda m: jnp.linalg.solve(m, b).sum())(a)
    a64 = np.asarray(a, np.float64)
    want = -np.outer(np.linalg.solve(a64.T, np.ones(4)), np.linalg.solve(a64, np.ones(4)))
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-4)


def test_qr_raw_mode_is_lapacks_householder_form_as_jax():
    """jnp.linalg.qr(mode='raw'): QRResult(h, taus), h LAPACK's geqrf result transposed (..., N, M), as JAX
    returns it, for tall, wide, square and stacked float / complex matrices, under jit and vmap; no
    derivative (JAX's NotImplementedError); mode 'full' is 'reduced'. Was: NotImplementedError."""
    pytest.importorskip("jax")
    import jax.numpy as jjnp
    rng = np.random.default_rng(0)
    for shape in [(4, 3), (3, 4), (3, 3), (2, 4, 3), (1, 1)]:
        for dt in [np.float32, np.complex64]:
            a = rng.standard_normal(shape).astype(dt)
            ours, theirs = jnp.linalg.qr(a, mode="raw"), jjnp.linalg.qr(a, mode="raw")
            assert type(ours).__name__ == type(theirs).__name__ == "QRResult"
            for o, t in zip(ours, theirs):
                assert o.shape == t.shape and o.dtype == t.dtype
                np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=2e-5, atol=2e-6)
    a = rng.standard_normal((4, 3)).astype(np.float32)
    want = jjnp.linalg.qr(a, mode="raw")
    np.testing.assert_allclose(np.asarray(fg.jit(lambda x: jnp.linalg.qr(x, mode="raw"))(a)[0]), want[0], rtol=2e-5, atol=2e-6)
    taus = fg.vmap(lambda x: jnp.linalg.qr(x, mode="raw")[1])(np.stack([a, 2 * a]))
    np.testing.assert_allclose(np.asarray(taus), np.stack([want[1], want[1]]), rtol=2e-5)
    with pytest.raises(NotImplementedError, match="geqrf"):
        fg.grad(lambda x: jnp.linalg.qr(x, mode="raw")[1].sum())(a)
    np.testing.assert_allclose(np.asarray(jnp.linalg.qr(a, mode="full")[1]), jjnp.linalg.qr(a, mode="full")[1],
                               rtol=2e-5, atol=2e-6)


def test_cholesky_of_one_triangle_value_and_gradient_as_jax():
    """jax.scipy.linalg.cholesky (and cho_factor) read only the triangle they are asked for, and
    jnp.linalg.cholesky(symmetrize_input=False) the lower one whatever `upper` says; their gradients are
    JAX's (the rule takes the tangent as it is, so the other triangle gets a gradient too), as are
    cho_solve's through them. Was: the Hermitian part read (NaN where the other triangle held anything
    else) and the symmetric gradient."""
    pytest.importorskip("jax")
    import jax
    import jax.numpy as jjnp
    import jax.scipy.linalg as jsl
    import funcgrad.scipy.linalg as fsl
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 3))
    s = (a @ a.T + 3 * np.eye(3)).astype(np.float32)
    junk = (np.tril(s) + 7 * np.triu(np.ones((3, 3)), 1)).astype(np.float32)
    b = rng.standard_normal((3, 2)).astype(np.float32)
    cases = [lambda np_, sl, m: sl.cholesky(m, lower=True), lambda np_, sl, m: sl.cholesky(m.T),
             lambda np_, sl, m: np_.linalg.cholesky(m, symmetrize_input=False),
             lambda np_, sl, m: np_.linalg.cholesky(m, upper=True, symmetrize_input=False),
             lambda np_, sl, m: sl.cho_solve(sl.cho_factor(m, lower=True), b),
             lambda np_, sl, m: sl.cho_solve((sl.cholesky(m.T, lower=False), False), b)]
    for f in cases:
        np.testing.assert_allclose(np.asarray(f(jnp, fsl, junk)), np.asarray(f(jjnp, jsl, junk)), rtol=1e-5, atol=1e-6)
        ours = fg.grad(lambda m: jnp.sum(f(jnp, fsl, m)))(s)
        theirs = jax.grad(lambda m: jjnp.sum(f(jjnp, jsl, m)))(s)
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=2e-4, atol=1e-5)
