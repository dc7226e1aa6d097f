"""funcgrad.numpy.fft and the fft primitive: values against numpy.fft, derivatives against finite
differences and the transpose identity, vmap against a Python loop, jit against eager.

Complex derivatives follow JAX's convention: for a real loss L(z) of complex z = x + iy, grad gives
dL/dx - i dL/dy, and a vjp is the transpose for the pairing <u, v> = Re(sum(u * v)) (no conjugation).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as jnp
import funcgrad.numpy.fft as jfft
from funcgrad._src.core import dtypes
from funcgrad._src.prims import elementwise as ew
from funcgrad._src.prims.fft import fft as lax_fft

from cases.fft import fft_case

NORMS = [None, "backward", "ortho", "forward"]
RNG = np.random.default_rng(0)
SHAPE = (3, 4, 5)
X_REAL = RNG.standard_normal(SHAPE)
X_CPLX = RNG.standard_normal(SHAPE) + 1j * RNG.standard_normal(SHAPE)


# --- helpers --------------------------------------------------------------------------------------

def re(z):
    """Real part of a complex funcgrad array (convert_element_type takes it); real input unchanged."""
    if not dtypes.is_complex(z.dtype):
        return z
    return ew.convert_element_type(z, dtypes.float64 if z.dtype == dtypes.complex128 else dtypes.float32)


def im(z):
    if not dtypes.is_complex(z.dtype):
        return jnp.zeros_like(z)
    return re(z * -1j)


def abs2(z):
    return re(z) ** 2 + im(z) ** 2


def np_fn(name):
    return getattr(np.fft, name)


def reference(name, x, kw):
    with warnings.catch_warnings():  # NumPy 2 deprecates s= without axes=; funcgrad keeps its meaning
        warnings.simplefilter("ignore", DeprecationWarning)
        return np_fn(name)(x, **kw)


def fd_grad(f, x, eps=1e-6):
    """Central finite differences of real f at float64 or complex128 x; for complex x the result is
    JAX's gradient dL/dx - i dL/dy."""
    x = np.asarray(x)
    g = np.zeros(x.shape, dtype=x.dtype)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (float(f(x + e)) - float(f(x - e))) / (2 * eps)
        if x.dtype.kind == "c":
            e[i] = 1j * eps
            g[i] -= 1j * (float(f(x + e)) - float(f(x - e))) / (2 * eps)
    return g


def rand(shape, complex_: bool, rng=RNG):
    v = rng.standard_normal(shape)
    return v + 1j * rng.standard_normal(shape) if complex_ else v


def pairing(u, v) -> float:
    """JAX's real bilinear pairing Re(sum(u * v)), no conjugation."""
    return float(np.real(np.sum(np.asarray(u) * np.asarray(v))))


# --- values against numpy.fft ---------------------------------------------------------------------

# (function, input kind: "r" real / "c" complex, keyword arguments); inputs have shape (3, 4, 5).
CONFIGS = [
    ("fft", "c", {}), ("fft", "r", dict(n=7)), ("fft", "c", dict(n=2, axis=0)),
    ("ifft", "c", {}), ("ifft", "c", dict(n=6, axis=1)), ("ifft", "r", dict(axis=-3)),
    ("rfft", "r", {}), ("rfft", "r", dict(n=3, axis=0)), ("rfft", "r", dict(n=9, axis=1)),
    ("irfft", "c", {}), ("irfft", "c", dict(n=7)), ("irfft", "c", dict(n=4, axis=0)),
    ("irfft", "r", dict(axis=1)), ("irfft", "c", dict(n=1)),
    ("hfft", "c", {}), ("hfft", "c", dict(n=5, axis=0)), ("hfft", "r", dict(n=8, axis=1)),
    ("ihfft", "r", {}), ("ihfft", "r", dict(n=5, axis=1)), ("ihfft", "r", dict(n=2, axis=0)),
    ("fft2", "c", {}), ("fft2", "r", dict(s=(3, 6))), ("ifft2", "c", dict(axes=(0, 2))),
    ("ifft2", "c", dict(s=(2, 8), axes=(2, 1))),
    ("rfft2", "r", {}), ("rfft2", "r", dict(s=(2, 7), axes=(2, 0))),
    ("irfft2", "c", {}), ("irfft2", "c", dict(s=(5, 5), axes=(1, 0))),
    ("fftn", "c", {}), ("fftn", "c", dict(axes=(1,))), ("fftn", "c", dict(s=(2, 3, 6), axes=(0, 1, 2))),
    ("fftn", "c", dict(s=(6, 2))), ("fftn", "r", dict(axes=(2, 0), s=(-1, 4))),
    ("ifftn", "c", {}), ("ifftn", "c", dict(axes=(-1, 0))), ("ifftn", "c", dict(s=(4, 1), axes=(0, 2))),
    ("rfftn", "r", {}), ("rfftn", "r", dict(s=(3, 3), axes=(0, 2))), ("rfftn", "r", dict(axes=(2, 1, 0))),
    ("irfftn", "c", {}), ("irfftn", "c", dict(s=(2, 4, 9), axes=(0, 1, 2))),
    ("irfftn", "c", dict(axes=(2, 1))), ("irfftn", "c", dict(s=(3, 3), axes=(0, 1))),
    ("irfftn", "c", dict(s=(-1, -1), axes=(0, 2))),
]
CONFIG_IDS = [f"{name}-{kind}-" + ",".join(f"{k}={v}" for k, v in kw.items()) for name, kind, kw in CONFIGS]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name,kind,kw", CONFIGS, ids=CONFIG_IDS)
def test_values_match_numpy(name, kind, kw, norm):
    x64 = X_CPLX if kind == "c" else X_REAL
    expected = reference(name, x64, dict(kw, norm=norm))
    got = getattr(jfft, name)(x64, **kw, norm=norm)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype  # float64 / complex128 in, NumPy's (double) dtype out
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-10, atol=1e-10)

    # single precision stays single precision (complex64 / float32), to float32 accuracy
    x32 = x64.astype(np.complex64 if kind == "c" else np.float32)
    got32 = getattr(jfft, name)(x32, **kw, norm=norm)
    want_dt = np.float32 if expected.dtype.kind == "f" else np.complex64
    assert got32.dtype == want_dt
    scale = max(1.0, float(np.max(np.abs(expected))))
    np.testing.assert_allclose(np.asarray(got32), expected.astype(want_dt), rtol=1e-4, atol=1e-5 * scale)


@given(st.data())
def test_random_nd_transforms_match_numpy(data):
    name = data.draw(st.sampled_from(["fftn", "ifftn", "rfftn", "irfftn"]))
    ndim = data.draw(st.integers(1, 3))
    shp = tuple(data.draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim)))
    axes = data.draw(st.permutations(range(ndim)))[:data.draw(st.integers(1, ndim))]
    axes = tuple(a - ndim if data.draw(st.booleans()) else a for a in axes)
    s = tuple(data.draw(st.lists(st.integers(1, 6), min_size=len(axes), max_size=len(axes))))
    if data.draw(st.booleans()):
        s = None
    norm = data.draw(st.sampled_from(NORMS))
    if name == "irfftn" and s is None and shp[axes[-1]] == 1:
        s = (1,) * len(axes)  # the default n = 2 * (1 - 1) = 0 is an error in NumPy too
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    x = rand(shp, name != "rfftn", rng)
    expected = np.fft.__dict__[name](x, s=s, axes=axes, norm=norm)
    got = getattr(jfft, name)(x, s=s, axes=axes, norm=norm)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-10, atol=1e-10)


def test_dtypes_follow_jax_precision_rule():
    assert jfft.fft(np.ones(4, np.float32)).dtype == np.complex64
    assert jfft.fft(np.ones(4, np.float64)).dtype == np.complex128
    # integers: the complex of JAX 0.10's to_inexact dtype (float32 up to 32 bits; NumPy: complex128)
    assert jfft.fft(np.ones(4, np.int32)).dtype == np.complex64
    assert jfft.fft(np.ones(4, np.int64)).dtype == (np.complex128 if dtypes.defaults.int_ == np.int64 else np.complex64)
    assert jfft.rfft(np.ones(4, np.float16)).dtype == np.complex64
    assert jfft.irfft(np.ones(3, np.complex64)).dtype == np.float32
    assert jfft.hfft(np.ones(3, np.float32)).dtype == np.float32
    assert jfft.ihfft(np.ones(4, np.float64)).dtype == np.complex128
    assert jfft.fftfreq(4).dtype == dtypes.defaults.float_
    assert jfft.rfftfreq(4, dtype=np.float64).dtype == np.float64


def test_errors():
    with pytest.raises(ValueError, match="norm"):
        jfft.fft(X_CPLX, norm="bogus")
    with pytest.raises(ValueError, match="FFT data points"):
        jfft.fft(X_CPLX, n=0)
    with pytest.raises(ValueError, match="FFT data points"):
        jfft.irfft(np.ones((2, 1), np.complex128))  # default n = 2 * (1 - 1) = 0
    with pytest.raises(TypeError, match="real"):
        jfft.rfft(X_CPLX)
    with pytest.raises(ValueError, match="repeated"):
        jfft.fftn(X_CPLX, axes=(0, 0))
    with pytest.raises(ValueError, match="different lengths"):
        jfft.fftn(X_CPLX, s=(2, 3), axes=(0,))
    with pytest.raises(IndexError):
        jfft.fft(X_CPLX, axis=3)
    with pytest.raises(TypeError, match="RFFT"):
        lax_fft(jnp.asarray(X_REAL), "RFFT", (4, 4))  # trailing shape (4, 5) does not match
    with pytest.raises(TypeError, match="complex"):
        lax_fft(jnp.asarray(X_REAL), "FFT", (5,))
    with pytest.raises(TypeError, match="IRFFT"):
        lax_fft(jnp.asarray(X_CPLX), "IRFFT", (5,))  # needs 5 // 2 + 1 = 3 entries, got 5
    with pytest.raises(TypeError, match="out="):
        jfft.fft(X_CPLX, out=np.empty(SHAPE, np.complex128))


def test_freqs_and_shifts_match_numpy():
    for n in (1, 4, 5):
        for d in (1.0, 0.1):
            np.testing.assert_allclose(jfft.fftfreq(n, d, dtype=np.float64), np.fft.fftfreq(n, d), rtol=1e-15)
            np.testing.assert_allclose(jfft.rfftfreq(n, d, dtype=np.float64), np.fft.rfftfreq(n, d), rtol=1e-15)
    np.testing.assert_allclose(jfft.fftfreq(6, 0.5), np.fft.fftfreq(6, 0.5).astype(np.float32))
    x = np.arange(60).reshape(3, 4, 5)
    for axes in (None, 0, -1, (0, 2), [1]):
        for name in ("fftshift", "ifftshift"):
            got = getattr(jfft, name)(x, axes=axes)
            np.testing.assert_array_equal(got, getattr(np.fft, name)(x, axes=axes))
            assert got.dtype == x.dtype
    # the round trip on odd and even lengths
    np.testing.assert_array_equal(jfft.ifftshift(jfft.fftshift(x)), x)
    with pytest.raises(ValueError):
        jfft.fftfreq(2.5)


def test_fftfreq_is_differentiable_in_d():
    k = np.fft.fftfreq(5)  # k / n at d = 1
    g = fg.grad(lambda d: jnp.sum(jfft.fftfreq(5, d, dtype=np.float64) ** 2))(np.float64(0.5))
    np.testing.assert_allclose(float(g), -2 * np.sum(k ** 2) / 0.5 ** 3, rtol=1e-12)


# --- gradients against finite differences (float64) ----------------------------------------------

# (function, input kind, kwargs); inputs have shape (3, 4), complex where kind == "c".
GRAD_CONFIGS = [
    ("fft", "r", {}), ("fft", "c", dict(n=6)), ("ifft", "c", dict(axis=0, n=2)),
    ("rfft", "r", {}), ("rfft", "r", dict(n=7, axis=0)), ("rfft", "r", dict(n=3)),
    ("irfft", "c", {}), ("irfft", "c", dict(n=5, axis=0)), ("irfft", "c", dict(n=9)),
    ("hfft", "c", {}), ("ihfft", "r", dict(n=5)),
    ("fft2", "c", dict(norm="ortho")), ("ifftn", "c", dict(s=(2, 5), norm="forward")),
    ("rfft2", "r", dict(axes=(1, 0))), ("rfftn", "r", dict(s=(4, 4), norm="ortho")),
    ("irfft2", "c", {}), ("irfftn", "c", dict(s=(3, 7), axes=(0, 1), norm="forward")),
    ("irfftn", "c", dict(axes=(1, 0))),
]
GRAD_IDS = [f"{name}-{kind}-" + ",".join(f"{k}={v}" for k, v in kw.items()) for name, kind, kw in GRAD_CONFIGS]


def _losses(name, kw, out_shape, out_complex, rng):
    f = getattr(jfft, name)
    w1, w2 = rng.standard_normal(out_shape), rng.standard_normal(out_shape)

    def linear(x):
        y = f(x, **kw)
        return jnp.sum(re(y) * w1 + im(y) * w2) if out_complex else jnp.sum(y * w1)

    def quadratic(x):
        return jnp.sum(abs2(f(x, **kw)) * w1)

    return linear, quadratic


@pytest.mark.parametrize("name,kind,kw", GRAD_CONFIGS, ids=GRAD_IDS)
def test_grad_matches_finite_differences(name, kind, kw):
    rng = np.random.default_rng(1)
    x = rand((3, 4), kind == "c", rng)
    y = reference(name, x, kw)
    for loss in _losses(name, kw, y.shape, y.dtype.kind == "c", rng):
        g = fg.grad(loss)(x)
        assert g.dtype == x.dtype and g.shape == x.shape
        expected = fd_grad(lambda v: loss(jnp.asarray(v)), x)
        np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name,kind,kw", GRAD_CONFIGS, ids=GRAD_IDS)
def test_vjp_is_transpose_of_jvp(name, kind, kw):
    rng = np.random.default_rng(2)
    f = lambda v: getattr(jfft, name)(v, **kw)
    x = rand((3, 4), kind == "c", rng)
    v = rand((3, 4), kind == "c", rng)
    y, jv = fg.jvp(f, (x,), (v,))
    u = rand(y.shape, y.dtype.kind == "c", rng)
    y2, pull = fg.vjp(f, x)
    (jtu,) = pull(u)
    assert jtu.dtype == x.dtype and jv.dtype == y.dtype
    np.testing.assert_allclose(np.asarray(y2), np.asarray(y))
    np.testing.assert_allclose(pairing(u, jv), pairing(jtu, v), rtol=1e-10, atol=1e-10)
    # every transform is linear: the jvp is the function of the tangent
    np.testing.assert_allclose(np.asarray(jv), np.asarray(f(v)), rtol=1e-12, atol=1e-12)


@given(st.data())
def test_primitive_vjp_jvp_identity_all_fft_types(data):
    (x,), params = data.draw(st.composite(lambda draw: fft_case(draw))())
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    f = lambda a: lax_fft(a, **params)
    v = rand(x.shape, x.dtype.kind == "c", rng)
    y, jv = fg.jvp(f, (x,), (v,))
    u = rand(y.shape, y.dtype.kind == "c", rng)
    _, pull = fg.vjp(f, x)
    (jtu,) = pull(u)
    assert jtu.dtype == x.dtype and tuple(jtu.shape) == x.shape
    lhs, rhs = pairing(u, jv), pairing(jtu, v)
    np.testing.assert_allclose(lhs, rhs, rtol=1e-10, atol=1e-10)
    if params["fft_type"] in ("FFT", "IFFT"):  # complex-linear: the identity holds without Re
        np.testing.assert_allclose(np.sum(u * np.asarray(jv)), np.sum(np.asarray(jtu) * v), rtol=1e-10,
                                   atol=1e-10)


@pytest.mark.parametrize("fft_type,shape,lengths", [
    ("FFT", (2, 3), (3,)), ("IFFT", (2, 3), (2, 3)), ("RFFT", (2, 4), (4,)), ("RFFT", (3, 5), (3, 5)),
    ("IRFFT", (2, 3), (4,)), ("IRFFT", (2, 3), (2, 5)), ("IRFFT", (3, 1), (1,))])
def test_primitive_jacobians_fwd_equals_rev(fft_type, shape, lengths):
    x = rand(shape, fft_type != "RFFT")
    f = lambda a: re(lax_fft(a, fft_type, lengths))
    jf, jr = fg.jacfwd(f)(x), fg.jacrev(f)(x)
    if fft_type == "RFFT":
        np.testing.assert_allclose(np.asarray(jf), np.asarray(jr), rtol=1e-12, atol=1e-12)
    else:  # complex input: jacrev is JAX's conj-convention gradient, jacfwd the derivative along re(z)
        np.testing.assert_allclose(np.asarray(jf), np.real(np.asarray(jr)), rtol=1e-12, atol=1e-12)


# --- higher order ---------------------------------------------------------------------------------

def test_grad_of_grad_rfft():
    w = RNG.standard_normal(4)
    loss = lambda x: jnp.sum(abs2(jfft.rfft(x, n=6)) ** 2 * w)  # quartic in x
    x = RNG.standard_normal(5)
    v = RNG.standard_normal(5)
    gv = lambda x: jnp.sum(fg.grad(loss)(x) * v)  # directional derivative of the gradient
    hv = fg.grad(gv)(x)
    expected = fd_grad(lambda a: gv(jnp.asarray(a)), x)
    np.testing.assert_allclose(np.asarray(hv), expected, rtol=1e-5, atol=1e-6)
    H = fg.hessian(loss)(x)
    np.testing.assert_allclose(np.asarray(H) @ v, np.asarray(hv), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(np.asarray(fg.jacfwd(fg.jacrev(loss))(x)), np.asarray(H), rtol=1e-10)


def test_grad_of_grad_irfft_and_hfft_complex_input():
    w = RNG.standard_normal(7)
    for f in (lambda z: jfft.irfft(z, n=7), lambda z: jfft.hfft(z, n=7, norm="ortho")):
        loss = lambda z: jnp.sum(f(z) ** 4 * w)
        z = rand(4, True)
        v = rand(4, True)
        gv = lambda z: jnp.sum(re(fg.grad(loss)(z) * v))
        got = fg.grad(gv)(z)
        expected = fd_grad(lambda a: gv(jnp.asarray(a)), z)
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-5)


# --- vmap and jit ---------------------------------------------------------------------------------

@given(st.data())
def test_primitive_vmap_matches_loop(data):
    (x,), params = data.draw(st.composite(lambda draw: fft_case(draw))())
    size = data.draw(st.integers(1, 3))
    in_axis = data.draw(st.integers(0, x.ndim))
    out_axis = data.draw(st.sampled_from([0, -1]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    xs = np.stack([rand(x.shape, x.dtype.kind == "c", rng) for _ in range(size)], axis=in_axis)
    f = lambda a: lax_fft(a, **params)
    got = fg.vmap(f, in_axes=in_axis, out_axes=out_axis)(xs)
    expected = np.stack([np.asarray(f(np.take(xs, i, axis=in_axis))) for i in range(size)], axis=out_axis)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,kw,in_axes", [
    ("fft", dict(n=6), 0), ("fft", dict(axis=0), 1), ("rfft", dict(n=5, axis=0, norm="ortho"), 2),
    ("irfft", dict(n=6), 1), ("hfft", dict(axis=0), 2), ("ihfft", {}, 0),
    ("fft2", {}, 2), ("rfftn", dict(axes=(1, 0)), 1), ("irfftn", dict(s=(3, 4), axes=(0, 1)), 2),
    ("fftshift", {}, 1), ("ifftshift", dict(axes=0), 0)])
def test_numpy_vmap_matches_loop(name, kw, in_axes):
    f = lambda a: getattr(jfft, name)(a, **kw)
    xs = X_REAL if name in ("rfft", "rfftn", "ihfft") else X_CPLX
    got = fg.vmap(f, in_axes=in_axes)(xs)
    expected = np.stack([np.asarray(f(np.take(xs, i, axis=in_axes))) for i in range(xs.shape[in_axes])])
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12, atol=1e-12)


def test_vmap_of_grad_is_per_example_gradient():
    w = RNG.standard_normal((2, 4))
    loss = lambda x: jnp.sum(abs2(jfft.rfft(x, axis=0)) * w)
    xs = RNG.standard_normal((3, 4, 5))
    got = fg.vmap(fg.grad(loss), in_axes=2, out_axes=2)(xs)
    for i in range(5):
        np.testing.assert_allclose(np.asarray(got[:, :, i]), np.asarray(fg.grad(loss)(xs[:, :, i])), rtol=1e-12)


@pytest.mark.parametrize("name,kw", [
    ("fft", dict(n=6, norm="ortho")), ("ifft2", {}), ("rfft", dict(axis=1)), ("irfft", dict(n=7)),
    ("rfftn", dict(s=(2, 3, 8))), ("irfftn", dict(axes=(0, 2), norm="forward")), ("hfft", {}),
    ("ihfft", dict(axis=0)), ("fftshift", {})])
def test_jit_matches_eager(name, kw):
    f = lambda a: getattr(jfft, name)(a, **kw)
    x = X_REAL if name in ("rfft", "rfftn", "ihfft") else X_CPLX
    for xin in (x, x.astype(np.complex64 if x.dtype.kind == "c" else np.float32)):
        eager, jitted = f(xin), fg.jit(f)(xin)
        assert jitted.dtype == eager.dtype and jitted.shape == eager.shape
        np.testing.assert_allclose(np.asarray(jitted), np.asarray(eager), rtol=1e-6, atol=1e-6)


def test_jit_of_grad_matches_eager():
    w = RNG.standard_normal((3, 3, 5))  # axes (2, 1): axis 1 is the halved one
    loss = lambda x: jnp.sum(re(jfft.rfftn(x, axes=(2, 1), norm="ortho")) ** 2 * w)
    x = RNG.standard_normal((3, 4, 5))
    np.testing.assert_allclose(np.asarray(fg.jit(fg.grad(loss))(x)), np.asarray(fg.grad(loss)(x)), rtol=1e-12)
    w2 = RNG.standard_normal((3, 4, 6))
    loss_c = lambda z: jnp.sum(jfft.irfft2(z, s=(4, 6)) * w2)
    z = rand((3, 4, 4), True)
    np.testing.assert_allclose(np.asarray(fg.jit(fg.grad(loss_c))(z)), np.asarray(fg.grad(loss_c)(z)),
                               rtol=1e-12)


def test_make_jaxpr_shows_fft():
    text = str(fg.make_jaxpr(lambda x: jfft.rfft(x, n=8))(np.ones(5)))
    assert "fft" in text and "RFFT" in text


@pytest.mark.parametrize("name", ["rfft", "ihfft", "rfft2", "rfftn", "ihfft2", "ihfftn"])
def test_torch_fft_real_only_errors_as_torch(name):
    """A complex input to torch.fft's real-input functions: torch's RuntimeError and message (its dtype as
    ComplexFloat, and rfft2/rfftn/ihfft2/ihfftn's own wording)."""
    torch = pytest.importorskip("torch")
    msgs = []
    for L in (fg, torch):
        with pytest.raises(RuntimeError) as info:
            getattr(L.fft, name)(L.ones(4, 6, dtype=L.complex64))
        msgs.append(str(info.value).split("\n")[0])
    assert msgs[0] == msgs[1]
