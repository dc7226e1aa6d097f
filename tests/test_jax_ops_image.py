"""jax.ops segment reductions and jax.image resize / scale_and_translate on funcgrad: values against loops,
np.interp and analytic values, gradients, jit and vmap; against real JAX where installed."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad.testing import check_grads

RNG = np.random.default_rng(0)
SEG_IDS = np.array([0, 2, 2, 5, 1, -1, 9])


def _segment_loop(how, x, ids, n):
    ident = {"sum": 0.0, "prod": 1.0, "max": -np.inf, "min": np.inf}[how]
    op = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}[how]
    out = np.full((n,) + x.shape[1:], ident, x.dtype)
    for i, s in enumerate(ids):
        if 0 <= s < n:
            out[s] = op(out[s], x[i])
    return out


# --- jax.ops ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["sum", "prod", "max", "min"])
def test_segment_ops_values_jit_vmap(how):
    f = getattr(fg.ops, "segment_" + how)
    x = RNG.standard_normal((7, 3)).astype(np.float32)
    want = _segment_loop(how, x, SEG_IDS, 7)
    np.testing.assert_allclose(np.asarray(f(x, SEG_IDS, 7)), want, rtol=1e-6)
    assert f(x, SEG_IDS).shape == (10, 3)  # num_segments = max id + 1
    np.testing.assert_allclose(np.asarray(fg.jit(f, static_argnums=2)(x, SEG_IDS, 7)), want, rtol=1e-6)
    xs = np.stack([x, 2 * x, -x])
    got = fg.vmap(lambda d: f(d, SEG_IDS, 7))(xs)
    np.testing.assert_allclose(np.asarray(got), np.stack([_segment_loop(how, d, SEG_IDS, 7) for d in xs]),
                               rtol=1e-6)
    # clip mode sends -1 to segment 0 and 9 to segment 6
    want_clip = _segment_loop(how, x, np.clip(SEG_IDS, 0, 6), 7)
    np.testing.assert_allclose(np.asarray(f(x, SEG_IDS, 7, mode="clip")), want_clip, rtol=1e-6)


@pytest.mark.parametrize("how", ["sum", "prod", "max", "min"])
def test_segment_ops_grads(how):
    f = getattr(fg.ops, "segment_" + how)
    x = RNG.uniform(0.5, 1.5, (7, 2))  # float64, distinct values (no ties for max/min)
    ids = np.array([0, 2, 2, 1, 1, 0, 3])
    check_grads(lambda d: f(d, ids, 4), (x,), order=2)


def test_segment_ops_integers_and_errors():
    xi = np.arange(7, dtype=np.int32)
    assert fg.ops.segment_max(xi, SEG_IDS, 7).tolist()[3] == np.iinfo(np.int32).min
    assert fg.ops.segment_min(xi, SEG_IDS, 7).tolist()[3] == np.iinfo(np.int32).max
    assert fg.ops.segment_sum(xi, SEG_IDS, 7).tolist() == [0, 4, 3, 0, 0, 3, 0]
    with pytest.raises(ValueError, match="num_segments"):
        fg.jit(lambda d, i: fg.ops.segment_sum(d, i))(xi, SEG_IDS)
    with pytest.raises(TypeError):
        fg.ops.segment_sum(xi, SEG_IDS.astype(np.float32), 7)
    with pytest.raises(ValueError):
        fg.ops.segment_sum(np.ones((2, 3)), np.array([[0, 1, 1], [1, 0, 2]]), 3)  # ids along one axis only
    with pytest.raises(ValueError):
        fg.ops.segment_sum(np.ones((4, 3)), np.array([0, 1]), 3)


def test_segment_ops_match_jax():
    jax = pytest.importorskip("jax")
    x = RNG.standard_normal((7, 3)).astype(np.float32)
    for how in ["sum", "prod", "max", "min"]:
        for mode in [None, "clip"]:
            a = getattr(jax.ops, "segment_" + how)(x, SEG_IDS, 7, mode=mode)
            b = getattr(fg.ops, "segment_" + how)(x, SEG_IDS, 7, mode=mode)
            np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-6)
    ga = jax.grad(lambda d: jax.ops.segment_max(d, SEG_IDS, 7).clip(-9, 9).sum())(x)
    gb = fg.grad(lambda d: jnp.clip(fg.ops.segment_max(d, SEG_IDS, 7), -9, 9).sum())(x)
    np.testing.assert_allclose(np.asarray(gb), np.asarray(ga))


# --- jax.image ----------------------------------------------------------------------------------------
def _linear_resize_1d(v, n):
    """Half-pixel-centre linear interpolation with edge clamping (upsampling, no antialias effect)."""
    m = len(v)
    pos = np.clip((np.arange(n) + 0.5) * m / n - 0.5, 0, m - 1)
    return np.interp(pos, np.arange(m), v)


def test_resize_linear_upsampling_matches_interp():
    v = RNG.standard_normal(5)
    np.testing.assert_allclose(np.asarray(fg.image.resize(v, (13,), "linear")), _linear_resize_1d(v, 13),
                               rtol=1e-12, atol=1e-12)
    img = RNG.standard_normal((4, 6))
    got = np.asarray(fg.image.resize(img, (9, 6), "bilinear"))  # only axis 0 changes
    want = np.stack([_linear_resize_1d(img[:, j], 9) for j in range(6)], axis=1)
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_resize_downsampling_antialias_averages():
    v = np.arange(8.0)
    # halving with the widened triangle filter: weights (1, 3, 3, 1)/8 around each pair
    got = np.asarray(fg.image.resize(v, (4,), "linear", antialias=True))
    want = [np.dot([3, 3, 1], [0, 1, 2]) / 7, None, None, np.dot([1, 3, 3], [5, 6, 7]) / 7]
    np.testing.assert_allclose(got[[0, 3]], [want[0], want[3]])
    np.testing.assert_allclose(got[1], np.dot([1, 3, 3, 1], [1, 2, 3, 4]) / 8)
    no_aa = np.asarray(fg.image.resize(v, (4,), "linear", antialias=False))
    np.testing.assert_allclose(no_aa, [0.5, 2.5, 4.5, 6.5])


@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3", "lanczos5"])
def test_resize_kernels_preserve_constants_and_grads(method):
    img = np.full((5, 7), 2.5)
    for shape in [(9, 4), (3, 11)]:
        np.testing.assert_allclose(np.asarray(fg.image.resize(img, shape, method)), 2.5, rtol=1e-10)
    x = RNG.standard_normal((4, 5))
    f = lambda a: fg.image.resize(a, (6, 3), method)  # noqa: E731
    check_grads(f, (x,), order=1)
    np.testing.assert_allclose(np.asarray(fg.jit(f)(x)), np.asarray(f(x)), atol=1e-12)
    xs = RNG.standard_normal((3, 4, 5))
    np.testing.assert_allclose(np.asarray(fg.vmap(f)(xs)), np.stack([np.asarray(f(a)) for a in xs]), atol=1e-12)


def test_resize_nearest_dtypes_and_errors():
    xi = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = fg.image.resize(xi, (5, 3), "nearest")
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), [[0, 2, 3], [0, 2, 3], [4, 6, 7], [8, 10, 11], [8, 10, 11]])
    lin = fg.image.resize(xi, (5, 3), fg.image.ResizeMethod.LINEAR)
    assert lin.dtype == np.float32
    np.testing.assert_allclose(np.asarray(lin)[0], [0.3, 1.5, 2.7], rtol=1e-5)
    with pytest.raises(ValueError):
        fg.image.resize(xi, (5,), "linear")
    with pytest.raises(ValueError):
        fg.image.resize(xi, (5, 3), "bogus")


def test_scale_and_translate_identity_shift_and_grad():
    v = RNG.standard_normal(6)
    same = fg.image.scale_and_translate(v, (6,), (0,), np.array([1.0]), np.array([0.0]), "linear")
    np.testing.assert_allclose(np.asarray(same), v, atol=1e-12)
    shifted = fg.image.scale_and_translate(v, (6,), (0,), np.array([1.0]), np.array([1.0]), "linear")
    np.testing.assert_allclose(np.asarray(shifted)[1:], v[:-1], atol=1e-12)  # output y reads input y - 1
    assert float(shifted[0]) == 0.0  # reads outside the image
    check_grads(lambda s, t: fg.image.scale_and_translate(v, (8,), (0,), s, t, "cubic"),
                (np.array([1.3]), np.array([0.4])), order=1)
    with pytest.raises(ValueError):
        fg.image.scale_and_translate(v, (8,), (0,), np.array([1.3]), np.array([0.4]), "nearest")


def test_image_matches_jax():
    jax = pytest.importorskip("jax")
    x = RNG.standard_normal((2, 9, 7, 3)).astype(np.float32)
    for method in ["nearest", "linear", "cubic", "lanczos3", "lanczos5"]:
        for shape in [(2, 15, 4, 3), (2, 4, 13, 3), (2, 3, 3, 3)]:
            for aa in [True, False]:
                a = jax.image.resize(x, shape, method, antialias=aa)
                b = fg.image.resize(x, shape, method, antialias=aa)
                np.testing.assert_allclose(np.asarray(b), np.asarray(a), atol=2e-5)
    for m in (3, 7, 10, 20):
        for n in (1, 4, 9, 17, 25):
            v = np.arange(m, dtype=np.float32)
            np.testing.assert_array_equal(np.asarray(fg.image.resize(v, (n,), "nearest")),
                                          np.asarray(jax.image.resize(v, (n,), "nearest")))
    s, t = np.array([1.3, 0.6], np.float32), np.array([0.5, -1.0], np.float32)
    a = jax.image.scale_and_translate(x, (2, 11, 5, 3), (1, 2), s, t, "linear")
    b = fg.image.scale_and_translate(x, (2, 11, 5, 3), (1, 2), s, t, "linear")
    np.testing.assert_allclose(np.asarray(b), np.asarray(a), atol=2e-5)
    ga = jax.grad(lambda im: (jax.image.resize(im, (2, 5, 4, 3), "lanczos3") ** 2).sum())(x)
    gb = fg.grad(lambda im: (fg.image.resize(im, (2, 5, 4, 3), "lanczos3") ** 2).sum())(x)
    np.testing.assert_allclose(np.asarray(gb), np.asarray(ga), atol=1e-4)
