"""Complex derivatives of slogdet, eigh, svd and qr (JAX's conventions).

A jvp is the directional derivative of the real-linear map; a vjp is its transpose under the pairing
Re sum(a * b), with no conjugation; so grad of a real-valued f of complex z is df/dRe z - i df/dIm z,
exactly what jax.grad returns (PyTorch's .grad is its conjugate). Eigenvectors and singular vectors
are defined only up to a phase each, so only functions invariant under those phases are checked:
eigenvalues, |v|^2, V diag(f(w)) V^H, singular values, |u|^2, U diag(f(s)) V^H, U U^H. Q and R of the
QR decomposition (R with a real diagonal) and slogdet's complex sign are unique, so they are checked
directly.

The expected values come from central finite differences (funcgrad.testing.check_grads and a
hand-written one here), JAX (jax.grad / jax.jvp, float64 mode) and PyTorch, never from funcgrad itself.
"""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.testing import check_grads


# --- well-conditioned inputs ----------------------------------------------------------------------

def crand(shape, seed, dtype=np.complex128):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def unitary(n, seed):
    q, r = np.linalg.qr(crand((n, n), seed))
    return q * (np.diagonal(r) / np.abs(np.diagonal(r)))  # Haar-like, any fixed phase will do


def hermitian(n, seed, batch=()):
    """Hermitian with eigenvalues spaced by at least 0.7 (well separated: finite, accurate derivatives)."""
    out = np.empty(batch + (n, n), np.complex128)
    for k, idx in enumerate(np.ndindex(*batch)):
        q = unitary(n, seed + 101 * k)
        w = np.cumsum(0.7 + np.random.default_rng(seed + k).random(n)) - n / 2
        out[idx] = (q * w) @ q.conj().T
    return (out + np.swapaxes(out, -1, -2).conj()) / 2


def with_singular_values(m, n, seed, batch=()):
    """m x n with well separated singular values in [1, ~4]."""
    k = min(m, n)
    out = np.empty(batch + (m, n), np.complex128)
    for j, idx in enumerate(np.ndindex(*batch)):
        u = unitary(m, seed + 7 * j)[:, :k]
        v = unitary(n, seed + 7 * j + 3)[:, :k]
        s = 1 + np.arange(k)[::-1] * 0.8 + 0.1 * np.random.default_rng(seed + j).random(k)
        out[idx] = (u * s) @ v.conj().T
    return out


def full_rank(m, n, seed, batch=()):
    """m x n of full rank, its leading min(m, n) columns well conditioned (the QR's R is)."""
    return crand(batch + (m, n), seed) + 3 * np.eye(m, n)


def weights(shape, seed, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# --- the gauge-invariant outputs, written once for any jnp-like namespace -------------------------

def _H(np_, x):
    return np_.conj(np_.swapaxes(x, -1, -2))


def slogdet_outs(np_, x):
    sign, logabsdet = np_.linalg.slogdet(x)
    return [sign, logabsdet]


def eigh_outs(np_, x):
    if np_ is np:  # numpy.linalg.eigh reads one triangle; funcgrad and JAX use the Hermitian part
        x = (x + _H(np, x)) / 2
    w, v = np_.linalg.eigh(x)
    return [w, np_.abs(v) ** 2, np_.matmul(v * np_.sin(w)[..., None, :], _H(np_, v))]


def svd_outs(np_, x):
    u, s, vh = np_.linalg.svd(x, full_matrices=False)
    return [s, np_.abs(u) ** 2, np_.abs(vh) ** 2, np_.matmul(u * np_.cos(s)[..., None, :], vh),
            np_.matmul(u, _H(np_, u)), np_.matmul(_H(np_, vh), vh)]


def svdvals_outs(np_, x):
    return [np_.linalg.svd(x, compute_uv=False)]


def qr_outs(np_, x):
    q, r = np_.linalg.qr(x)
    return [q, r]


def qr_r_outs(np_, x):
    return [np_.linalg.qr(x)[1]]  # the R cotangent alone (Q gets none)


# name -> (outputs, input maker (m, n, seed, batch) -> complex128 array, shapes)
CASES = {
    "slogdet": (slogdet_outs, lambda m, n, s, b=(): full_rank(m, n, s, b), [(3, 3), (4, 4)]),
    "eigh": (eigh_outs, lambda m, n, s, b=(): hermitian(m, s, b), [(3, 3), (4, 4)]),
    "svd": (svd_outs, with_singular_values, [(3, 3), (4, 3), (3, 4)]),
    "svdvals": (svdvals_outs, with_singular_values, [(3, 3), (4, 2), (2, 4)]),
    "qr": (qr_outs, full_rank, [(3, 3), (4, 3), (3, 4)]),
    "qr_r": (qr_r_outs, full_rank, [(4, 3), (3, 4)]),
}
PARAMS = [pytest.param(name, shape, id=f"{name}-{shape[0]}x{shape[1]}")
          for name, (_, _, shapes) in CASES.items() for shape in shapes]


def make(name, shape, seed=0, batch=(), dtype=np.complex128):
    return CASES[name][1](shape[0], shape[1], seed, batch).astype(dtype)


def outs_fn(name, np_):
    fn = CASES[name][0]
    return lambda x: fn(np_, x)


def scalar_fn(name, np_, x_example):
    """A real-valued function of x: a fixed random weighting of every output's real and imaginary parts."""
    real = np.empty(0, x_example.dtype).real.dtype
    shapes = [tuple(np.shape(o)) for o in CASES[name][0](np, x_example)]
    w_re = [weights(s, 10 + i, real) for i, s in enumerate(shapes)]
    w_im = [weights(s, 50 + i, real) for i, s in enumerate(shapes)]

    def f(x):
        total = 0
        for o, a, b in zip(CASES[name][0](np_, x), w_re, w_im):
            total = total + np_.sum(np_.real(o) * a) + np_.sum(np_.imag(o) * b)
        return total
    return f


# --- finite-difference checks (no JAX needed) -----------------------------------------------------

@pytest.mark.parametrize("name,shape", PARAMS)
def test_check_grads_complex128_orders_1_and_2(name, shape):
    x = make(name, shape, seed=1)
    check_grads(outs_fn(name, fnp), (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name,shape", PARAMS)
def test_check_grads_complex64(name, shape):
    x = make(name, shape, seed=2, dtype=np.complex64)
    check_grads(outs_fn(name, fnp), (x,), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", list(CASES))
def test_check_grads_batched(name):
    shape = CASES[name][2][-1]
    x = make(name, shape, seed=3, batch=(2,))
    check_grads(outs_fn(name, fnp), (x,), order=1, modes=("fwd", "rev"))


def _fd_grad(f, x, eps=1e-6):
    """JAX's gradient convention by central differences: df/dRe x - i df/dIm x."""
    g = np.zeros(x.shape, np.complex128)
    for idx in np.ndindex(*x.shape):
        for step, coef in ((1.0, 1.0), (1j, -1j)):
            xp, xm = x.copy(), x.copy()
            xp[idx] += eps * step
            xm[idx] -= eps * step
            g[idx] += coef * (f(xp) - f(xm)) / (2 * eps)
    return g


@pytest.mark.parametrize("name,shape", PARAMS)
def test_grad_of_real_function_matches_finite_differences(name, shape):
    x = make(name, shape, seed=4)
    f_np = scalar_fn(name, np, x)  # numpy.linalg gives the reference function values
    got = np.asarray(fg.grad(scalar_fn(name, fnp, x))(x))
    np.testing.assert_allclose(got, _fd_grad(f_np, x), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name,shape", PARAMS)
def test_vjp_is_the_unconjugated_transpose_of_the_jvp(name, shape):
    # Re sum(u * J v) == Re sum(J^T u * v): the vjp transposes the jvp with no conjugation (as JAX's);
    # J v itself is checked against finite differences above.
    x = make(name, shape, seed=5)
    v = crand(x.shape, 6)
    f = outs_fn(name, fnp)
    outs, jv = fg.jvp(f, (x,), (v,))
    u = [crand(np.shape(o), 20 + i).astype(np.asarray(o).dtype) if np.iscomplexobj(np.asarray(o))
         else weights(np.shape(o), 20 + i) for i, o in enumerate(outs)]
    _, pullback = fg.vjp(f, x)
    jtu, = pullback([fnp.asarray(c) for c in u])
    lhs = sum(np.sum(np.real(c * np.asarray(t))) for c, t in zip(u, jv))
    rhs = np.sum(np.real(np.asarray(jtu) * v))
    assert np.asarray(jtu).dtype == x.dtype
    np.testing.assert_allclose(lhs, rhs, rtol=1e-10, atol=1e-10)


def test_slogdet_sign_tangent_is_the_phase_change():
    x = make("slogdet", (3, 3), seed=7)
    t = crand((3, 3), 8)
    (sign, _), (dsign, dlog) = fg.jvp(lambda a: fnp.linalg.slogdet(a), (x,), (t,))
    d = np.trace(np.linalg.solve(x, t))
    np.testing.assert_allclose(np.asarray(dsign), np.asarray(sign) * 1j * d.imag, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(dlog), d.real, rtol=1e-12)
    assert np.asarray(dlog).dtype == np.float64
    # real input: the sign stays constant
    xr = x.real + 3 * np.eye(3)
    _, (dsign, dlog) = fg.jvp(lambda a: fnp.linalg.slogdet(a), (xr,), (t.real,))
    assert float(dsign) == 0.0
    np.testing.assert_allclose(float(dlog), np.trace(np.linalg.solve(xr, t.real)), rtol=1e-12)


def test_refusals_kept_for_complex_input():
    # as for real input (and JAX's svd): U of a full_matrices SVD of a non-square matrix is not unique
    x = make("svd", (4, 3), seed=9)
    with pytest.raises(NotImplementedError, match="full_matrices"):
        fg.grad(lambda a: fnp.sum(fnp.abs(fnp.linalg.svd(a).U) ** 2 * weights((4, 4), 1)))(x)
    with pytest.raises(NotImplementedError, match="complete QR of a tall"):
        fg.grad(lambda a: fnp.sum(fnp.real(fnp.linalg.qr(a, mode="complete").Q)))(x)


# --- against JAX ----------------------------------------------------------------------------------

@pytest.fixture
def jax_x64():
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp
    with jax.enable_x64(True):
        yield jax, jjnp


def _close(got, want, tol):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


@pytest.mark.parametrize("name,shape", PARAMS)
def test_grad_matches_jax(name, shape, jax_x64):
    jax, jjnp = jax_x64
    x = make(name, shape, seed=11)
    want = jax.grad(scalar_fn(name, jjnp, x))(x)
    _close(fg.grad(scalar_fn(name, fnp, x))(x), want, 1e-10)


@pytest.mark.parametrize("name,shape", PARAMS)
def test_grad_matches_jax_complex64(name, shape, jax_x64):
    jax, jjnp = jax_x64
    x = make(name, shape, seed=12, dtype=np.complex64)
    want = jax.grad(scalar_fn(name, jjnp, x))(x)
    got = fg.grad(scalar_fn(name, fnp, x))(x)
    assert np.asarray(got).dtype == np.complex64
    scale = max(1.0, float(np.max(np.abs(np.asarray(want)))))
    _close(got, want, 2e-4 * scale)


@pytest.mark.parametrize("name,shape", PARAMS)
def test_jvp_matches_jax(name, shape, jax_x64):
    jax, jjnp = jax_x64
    x = make(name, shape, seed=13)
    t = crand(x.shape, 14)
    outs, tans = fg.jvp(outs_fn(name, fnp), (x,), (t,))
    j_outs, j_tans = jax.jvp(outs_fn(name, jjnp), (x,), (t,))
    for a, b in zip(outs, j_outs):
        _close(a, b, 1e-10)
    for a, b in zip(tans, j_tans):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        _close(a, b, 1e-10)


@pytest.mark.parametrize("name,shape", PARAMS)
def test_second_order_matches_jax(name, shape, jax_x64):
    # forward-over-reverse: the jvp of the gradient (a Hessian-vector product)
    jax, jjnp = jax_x64
    x = make(name, shape, seed=15)
    t = crand(x.shape, 16)
    _, got = fg.jvp(fg.grad(scalar_fn(name, fnp, x)), (x,), (t,))
    _, want = jax.jvp(jax.grad(scalar_fn(name, jjnp, x)), (x,), (t,))
    _close(got, want, 1e-8)


@pytest.mark.parametrize("name", list(CASES))
def test_vmap_and_jit_of_grad_match_jax_loop(name, jax_x64):
    jax, jjnp = jax_x64
    shape = CASES[name][2][-1]
    xs = make(name, shape, seed=17, batch=(3,))
    want = np.stack([np.asarray(jax.grad(scalar_fn(name, jjnp, xs[0]))(x)) for x in xs])
    g = fg.grad(scalar_fn(name, fnp, xs[0]))
    _close(fg.vmap(g)(xs), want, 1e-10)
    _close(fg.jit(fg.vmap(g))(xs), want, 1e-10)
    _close(fg.jit(g)(xs[1]), want[1], 1e-10)


# --- against PyTorch (whose .grad is the conjugate of JAX's gradient) -----------------------------

def _torch_outs(name, torch, x):
    la = torch.linalg
    if name == "slogdet":
        sign, logabsdet = la.slogdet(x)
        return [sign, logabsdet]
    if name == "eigh":
        w, v = la.eigh((x + x.mH) / 2)  # torch reads one triangle; funcgrad and JAX the Hermitian part
        return [w, v.abs() ** 2, (v * torch.sin(w)[..., None, :]) @ v.mH]
    if name in ("svd", "svdvals"):
        if name == "svdvals":
            return [la.svdvals(x)]
        u, s, vh = la.svd(x, full_matrices=False)
        return [s, u.abs() ** 2, vh.abs() ** 2, (u * torch.cos(s)[..., None, :]) @ vh, u @ u.mH, vh.mH @ vh]
    q, r = la.qr(x)
    return [q, r] if name == "qr" else [r]


@pytest.mark.parametrize("name,shape", PARAMS)
def test_grad_matches_torch_conjugated(name, shape):
    torch = pytest.importorskip("torch")
    x = make(name, shape, seed=18)
    shapes = [tuple(np.shape(o)) for o in CASES[name][0](np, x)]
    w_re = [torch.from_numpy(weights(s, 10 + i)) for i, s in enumerate(shapes)]
    w_im = [torch.from_numpy(weights(s, 50 + i)) for i, s in enumerate(shapes)]
    xt = torch.from_numpy(x.copy()).requires_grad_(True)
    total = 0
    for o, a, b in zip(_torch_outs(name, torch, xt), w_re, w_im):
        im = o.imag if o.is_complex() else torch.zeros_like(o)
        total = total + (o.real * a).sum() + (im * b).sum()
    total.backward()
    got = np.asarray(fg.grad(scalar_fn(name, fnp, x))(x))
    _close(got, np.conj(xt.grad.numpy()), 1e-10)


def test_torch_face_backward_matches_torch():
    # The PyTorch-style face runs the same vjp rules through Tensor.backward(): .grad as PyTorch's.
    torch = pytest.importorskip("torch")
    a = make("svd", (3, 3), seed=19)
    wt = weights((3, 3), 21)
    grads = []
    for lib in (fg, torch):
        x = lib.tensor(a.copy(), requires_grad=True)
        u, s, vh = lib.linalg.svd(x, full_matrices=False)
        sign, logabsdet = lib.linalg.slogdet(x)
        q, r = lib.linalg.qr(x)
        w, v = lib.linalg.eigh((x + x.mH) / 2)
        loss = ((s ** 2).sum() + (u.abs() ** 2 * lib.tensor(wt)).sum() + logabsdet + sign.imag
                + (q.real * lib.tensor(wt)).sum() + r.imag.sum() + (w ** 3).sum()
                + ((v * w[None, :]) @ v.mH).imag.sum())
        loss.backward()
        grads.append(np.asarray(x.grad.detach().numpy() if lib is torch else x.grad.numpy()))
    _close(grads[0], grads[1], 1e-10)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_repeated_eigenvalues_and_singular_values_keep_finite_value_gradients():
    # as for real input: the reverse-mode rules drop the vector terms when the vectors get no cotangent
    eye = np.eye(3, dtype=np.complex128)
    _close(fg.grad(lambda a: fnp.sum(fnp.linalg.eigvalsh(a) ** 2))(eye), 2 * eye, 1e-12)
    _close(fg.grad(lambda a: fnp.sum(fnp.linalg.svd(a, compute_uv=False)))(1j * eye), -1j * eye, 1e-12)
