"""More of JAX's API on funcgrad: jax.ops segment reductions, jax.image, lax extras and *_p primitives,
top-level helpers (custom_gradient, float0, make_mesh, shard_map, config context managers, ...),
tree_util and nn extras. Checked against NumPy / analytic values; against real JAX where installed."""
import itertools

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


# --- lax extras ---------------------------------------------------------------------------------------
def test_conv_general_dilated_patches_values_and_grad():
    x = RNG.standard_normal((2, 3, 5, 4))
    p = fg.lax.conv_general_dilated_patches(x, (2, 3), (1, 1), "VALID")
    assert p.shape == (2, 3 * 6, 4, 2)
    p = np.asarray(p)
    for c in range(3):
        for i in range(2):
            for j in range(3):  # feature c*6 + (i*3 + j) is channel c at kernel offset (i, j)
                np.testing.assert_array_equal(p[:, c * 6 + i * 3 + j], x[:, c, i:i + 4, j:j + 2])
    xh = x.transpose(0, 2, 3, 1)
    ph = fg.lax.conv_general_dilated_patches(xh, (2, 3), (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    np.testing.assert_array_equal(np.asarray(ph), p.transpose(0, 2, 3, 1))
    check_grads(lambda a: fg.lax.conv_general_dilated_patches(a, (2, 2), (2, 1), "SAME"), (x,), order=1)


def test_lax_shape_helpers():
    lax = fg.lax
    assert lax.broadcast_to_rank(jnp.arange(3), 3).shape == (1, 1, 3)
    with pytest.raises(ValueError):
        lax.broadcast_to_rank(jnp.ones((2, 3)), 1)
    assert lax.broadcast_shapes((2, 1), (1, 3)) == (2, 3) and lax.broadcast_shapes((2, 1), (3,)) == (2, 3)
    with pytest.raises(ValueError):
        lax.broadcast_shapes((2, 2), (3,))
    assert lax.reduce_window_shape_tuple((5, 6), (2, 2), (1, 2), [(0, 0), (1, 1)]) == (4, 4)
    assert lax.reduce_window_shape_tuple((5, 6), (2, 2), (1, 2), [(0, 0), (1, 1)], (2, 1), (1, 2)) == (8, 3)
    assert lax.conv_shape_tuple((1, 3, 8, 8), (4, 3, 3, 3), (1, 1), "SAME") == (1, 4, 8, 8)
    assert lax.conv_shape_tuple((1, 3, 8, 8), (4, 3, 3, 3), (2, 2), [(1, 1), (0, 0)]) == (1, 4, 4, 3)
    assert lax.conv_shape_tuple((4, 3, 8, 8), (4, 3, 3, 3), (1, 1), "SAME", batch_group_count=2) == (2, 4, 8, 8)
    dn = ("NHWC", "HWIO", "NHWC")
    assert lax.conv_general_shape_tuple((1, 8, 8, 3), (3, 3, 3, 4), (1, 1), "VALID", dn) == (1, 6, 6, 4)
    assert lax.conv_transpose_shape_tuple((1, 8, 8, 3), (3, 3, 3, 4), (2, 2), "SAME", dn) == (1, 16, 16, 4)
    assert lax.conv_transpose_shape_tuple((1, 8, 8, 3), (3, 3, 3, 4), (2, 2), "VALID", dn) == (1, 17, 17, 4)


def test_lax_small_functions():
    lax = fg.lax
    assert np.asarray(lax.clz(np.array([0, 1, 2, 255, -1], np.int32))).tolist() == [32, 31, 30, 24, 0]
    assert np.asarray(lax.clz(np.array([0, 1, 128], np.uint8))).tolist() == [8, 7, 0]
    assert np.asarray(lax.clz(np.array([1, 2 ** 40], np.int64))).tolist() == [63, 23]
    with pytest.raises(TypeError):
        lax.clz(np.ones(2, np.float32))
    e = lax.empty((2, 3), np.float32)
    assert e.shape == (2, 3) and e.dtype == np.float32
    assert np.asarray(lax.tile(jnp.arange(3), (2,))).tolist() == [0, 1, 2, 0, 1, 2]
    assert np.asarray(lax.stack([jnp.arange(2), jnp.arange(2)], 1)).tolist() == [[0, 0], [1, 1]]
    parts = lax.unstack(jnp.arange(6).reshape(2, 3), 1)
    assert isinstance(parts, tuple) and [np.asarray(p).tolist() for p in parts] == [[0, 3], [1, 4], [2, 5]]
    src = np.arange(60).reshape(3, 4, 5)
    got = lax.index_take(src, (np.array([0, 2]), np.array([1, 3])), (0, 2))
    np.testing.assert_array_equal(np.asarray(got), src[[0, 2], :, [1, 3]])
    x = jnp.zeros(4)
    idx = np.array([[1], [3], [1]])
    np.testing.assert_array_equal(np.asarray(lax.scatter_sub(x, idx, jnp.ones(3), (0,))), [0, -2, 0, -1])
    np.testing.assert_allclose(np.asarray(lax.scatter_apply(jnp.arange(4.0), np.array([[2]]), jnp.exp, (0,))),
                               [0, 1, np.exp(2.0), 3], rtol=1e-6)
    check_grads(lambda a: lax.scatter_sub(a, idx, a[:3] ** 2, (0,)), (RNG.standard_normal(4),), order=2)



def test_lax_tile_stack_ragged_dot_follow_lax_rules():
    """lax (not jnp) semantics: tile takes one rep per axis, stack needs one dtype, as JAX's lax."""
    lax = fg.lax
    x = jnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(np.asarray(lax.tile(x, (2, 1))), np.tile(np.arange(6.0).reshape(2, 3), (2, 1)))
    with pytest.raises(TypeError, match="reps length"):
        lax.tile(x, (2,))
    with pytest.raises(TypeError, match="same dtypes"):
        lax.stack([jnp.ones(2, np.float32), jnp.ones(2, np.int32)])
    s = lax.stack([x, x + 1], axis=-1)
    assert s.shape == (2, 3, 2) and np.asarray(s)[1, 2].tolist() == [5.0, 6.0]
    lhs = RNG.standard_normal((5, 3)).astype(np.float32)
    rhs = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    got = np.asarray(lax.ragged_dot(lhs, rhs, np.array([2, 2], np.int32)))  # the last row is in no group
    want = np.concatenate([lhs[:2] @ rhs[0], lhs[2:4] @ rhs[1], np.zeros((1, 4), np.float32)])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    mh = lax.mulhi(np.array([2 ** 31 - 1, -5], np.int32), np.array([4, 3], np.int32))
    assert np.asarray(mh).tolist() == [1, -1]  # (2^31 - 1) * 4 >> 32 = 1; -15 >> 32 = -1


def test_lax_tile_stack_errors_match_jax():
    jlax = pytest.importorskip("jax").lax
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with pytest.raises(TypeError):
        jlax.tile(np.asarray(x), (2,))
    with pytest.raises(TypeError):
        jlax.stack([np.ones(2, np.float32), np.ones(2, np.int32)])


def test_scatter_sub_apply_with_dimension_numbers():
    lax = fg.lax
    x = np.arange(12.0).reshape(3, 4)
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    idx = np.array([[2], [0], [2], [7]])
    want = x.copy()
    for i in (2, 0, 2):
        want[i] -= 1
    np.testing.assert_array_equal(np.asarray(lax.scatter_sub(x, idx, np.ones((4, 4)), dn)), want)  # 7: dropped
    want[2] -= 1  # clip sends 7 to row 2
    np.testing.assert_array_equal(np.asarray(lax.scatter_sub(x, idx, np.ones((4, 4)), dn, mode="clip")), want)
    dn1 = lax.ScatterDimensionNumbers(update_window_dims=(0,), inserted_window_dims=(1,),
                                      scatter_dims_to_operand_dims=(1,))
    want1 = x.copy()
    want1[:, [1, 3]] -= 5
    np.testing.assert_array_equal(np.asarray(lax.scatter_sub(x, np.array([[1], [3]]), 5 * np.ones((3, 2)), dn1)),
                                  want1)
    want2 = x.copy()
    want2[[1, 2]] = np.exp(x[[1, 2]])
    np.testing.assert_allclose(np.asarray(lax.scatter_apply(x, np.array([[1], [2]]), jnp.exp, dn,
                                                            update_shape=(2, 4))), want2)
    with pytest.raises(TypeError, match="Updates tensor must be of rank 2; got 0"):  # as JAX: update_shape needed
        lax.scatter_apply(x, np.array([[1], [2]]), jnp.exp, dn)
    want3 = x.copy()
    for i in (2, 0, 2):  # a window narrower than the operand's rows: its first two columns
        want3[i, :2] -= 1
    np.testing.assert_array_equal(np.asarray(lax.scatter_sub(x, idx, np.ones((4, 2)), dn)), want3)

def test_lax_types_and_modes():
    lax = fg.lax
    g = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    assert g.operand_batching_dims == () and g._fields[-1] == "start_indices_batching_dims"
    s = lax.ScatterDimensionNumbers((1,), (0,), (0,))
    assert s.scatter_indices_batching_dims == ()
    x = jnp.arange(5)
    out = x.at[np.array([0, 9])].get(mode=lax.GatherScatterMode.FILL_OR_DROP, fill_value=-1)
    assert np.asarray(out).tolist() == [0, -1]
    assert np.asarray(x.at[np.array([0, 9])].get(mode=lax.GatherScatterMode.CLIP)).tolist() == [0, 4]
    assert lax.GatherScatterMode.from_any("clip") is lax.GatherScatterMode.CLIP
    assert lax.DotDimensionNumbers is not None and lax.ConvGeneralDilatedDimensionNumbers is not None


def test_lax_primitives_under_jax_names():
    lax = fg.lax
    a, b = jnp.array([1.0, 2.0]), jnp.array([3.0, 5.0])
    assert np.asarray(lax.add_p.bind(a, b)).tolist() == [4.0, 7.0]
    assert np.asarray(lax.mul_p.bind(a, b)).tolist() == [3.0, 10.0]
    np.testing.assert_allclose(np.asarray(lax.exp_p.bind(a)), np.exp([1.0, 2.0]))
    assert lax.sin_p.name == "sin" and lax.reduce_sum_p.name == "reduce_sum"
    assert lax.and_p.name == "and" and lax.not_p.name == "not"
    assert fg.grad(lambda t: lax.mul_p.bind(t, t))(3.0) == 6.0
    jaxpr = str(fg.make_jaxpr(lambda t: lax.add_p.bind(t, t))(1.0))
    assert "add" in jaxpr


def test_lax_extras_match_jax():
    jax = pytest.importorskip("jax")
    x = RNG.standard_normal((2, 3, 7, 6)).astype(np.float32)
    for args in [((2, 3), (1, 1), "VALID"), ((3, 2), (2, 1), "SAME"), ((2, 2), (1, 2), [(1, 0), (2, 1)])]:
        np.testing.assert_allclose(np.asarray(fg.lax.conv_general_dilated_patches(x, *args)),
                                   np.asarray(jax.lax.conv_general_dilated_patches(x, *args)))
    for dt in [np.int32, np.uint8, np.int16, np.uint32]:
        v = np.array([0, 1, 2, 3, 100, np.iinfo(dt).max, np.iinfo(dt).min], dt)
        np.testing.assert_array_equal(np.asarray(fg.lax.clz(v)), np.asarray(jax.lax.clz(v)))
    src = np.arange(60).reshape(3, 4, 5)
    for idx, axes in [((np.array([0, 2]), np.array([1, 3])), (0, 1)), ((np.array([0, 2, 1]),), (1,))]:
        np.testing.assert_array_equal(np.asarray(fg.lax.index_take(src, idx, axes)),
                                      np.asarray(jax.lax.index_take(src, idx, axes)))
    assert fg.lax.conv_transpose_shape_tuple((1, 8, 8, 3), (3, 3, 3, 4), (2, 2), "VALID", ("NHWC", "HWIO", "NHWC")) \
        == tuple(int(d) for d in jax.lax.conv_transpose_shape_tuple((1, 8, 8, 3), (3, 3, 3, 4), (2, 2), "VALID",
                                                                    ("NHWC", "HWIO", "NHWC")))
    assert set(fg.lax.GatherDimensionNumbers._fields) == set(jax.lax.GatherDimensionNumbers._fields)
    assert set(fg.lax.ScatterDimensionNumbers._fields) == set(jax.lax.ScatterDimensionNumbers._fields)
    assert {m.name for m in fg.lax.GatherScatterMode} == {m.name for m in jax.lax.GatherScatterMode}
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    for dn, idx, upd in [(((1,), (0,), (0,)), np.array([[2], [0], [2], [7]]), np.ones((4, 4), np.float32)),
                         (((0,), (1,), (1,)), np.array([[1], [3]]), 5 * np.ones((3, 2), np.float32)),
                         (((), (0, 1), (1, 0)), np.array([[3, 0], [1, 2]]), np.array([1.0, 2.0], np.float32))]:
        for mode in (None, "clip"):
            a = jax.lax.scatter_sub(x, idx, upd, jax.lax.ScatterDimensionNumbers(*dn), mode=mode)
            b = fg.lax.scatter_sub(x, idx, upd, jax.lax.ScatterDimensionNumbers(*dn), mode=mode)
            np.testing.assert_array_equal(np.asarray(b), np.asarray(a))


# --- top level ----------------------------------------------------------------------------------------
def test_custom_gradient():
    @fg.custom_gradient
    def f(x):
        return jnp.sin(x), lambda g: (g * 100.0,)

    assert float(f(1.0)) == pytest.approx(np.sin(1.0))
    assert float(fg.grad(f)(1.0)) == 100.0
    assert float(fg.jit(fg.grad(f))(1.0)) == 100.0
    np.testing.assert_array_equal(np.asarray(fg.vmap(fg.grad(f))(jnp.ones(3))), [100.0] * 3)

    @fg.custom_gradient
    def h(x, y):
        return x * y, lambda g: (g * y, g * x * 2)

    gx, gy = fg.grad(h, argnums=(0, 1))(2.0, 3.0)
    assert (float(gx), float(gy)) == (3.0, 4.0)

    @fg.custom_gradient
    def bad(x, y):
        return x * y, lambda g: g

    with pytest.raises(TypeError, match="cotangents"):
        fg.grad(bad)(2.0, 3.0)
    assert fg.custom_derivatives.custom_gradient is fg.custom_gradient
    assert fg.custom_derivatives.custom_jvp is fg.custom_jvp and fg.custom_derivatives.custom_vjp is fg.custom_vjp


def test_float0_for_integer_gradients():
    assert fg.float0.itemsize == 0 and fg.float0.names == ("float0",)
    gx, gi = fg.grad(lambda x, i: x * i, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert float(gx) == 3.0
    assert isinstance(gi, np.ndarray) and gi.dtype == fg.float0 and gi.shape == ()
    gi = fg.grad(lambda x, i: (x * i).sum(), argnums=1, allow_int=True)(jnp.ones(3), jnp.arange(3))
    assert gi.dtype == fg.float0 and gi.shape == (3,)
    gj = fg.jit(fg.grad(lambda x, i: x * i, argnums=(0, 1), allow_int=True))(2.0, 3)
    assert float(gj[0]) == 3.0 and not np.any(np.asarray(gj[1]))  # under jit: integer zeros
    with pytest.raises(TypeError):
        fg.grad(lambda i: i * 2.0)(3)


def test_float0_tangents_and_cotangents_are_zeros():
    # JAX takes a float0 (co)tangent for an integer or boolean primal/output and treats it as zero
    # (HIPS autograd's grad of a comparison relies on it); on an inexact one it is an error.
    f0 = np.zeros((), fg.float0)
    y, pull = fg.vjp(lambda x, z: (x == z, x * z), 0.7, 1.5)
    gx, gz = pull((f0, 1.0))
    assert (float(gx), float(gz)) == (1.5, 0.7)
    assert [float(g) for g in fg.vjp(lambda x: x > 0, 0.7)[1](f0)] == [0.0]
    out, t = fg.jvp(lambda x, i: x * i, (2.0, 3), (1.0, f0))
    assert (float(out), float(t)) == (6.0, 3.0)
    with pytest.raises(TypeError):
        fg.jvp(lambda x: x * 2.0, (1.5,), (f0,))
    with pytest.raises(ValueError):
        fg.vjp(lambda x: x * 2.0, 1.5)[1](f0)
    with pytest.raises(ValueError):
        fg.vjp(lambda x: x > 0, jnp.ones(2))[1](f0)  # shape () for an output of shape (2,)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    try:
        jf0 = np.zeros((), jax.dtypes.float0)
        want = jax.vjp(lambda x, z: (x == z, x * z), 0.7, 1.5)[1]((jf0, 1.0))
        assert [float(w) for w in want] == [float(gx), float(gz)]
        assert float(jax.jvp(lambda x, i: x * i, (2.0, 3), (1.0, jf0))[1]) == float(t)
    finally:
        jax.config.update("jax_enable_x64", False)


def test_make_mesh_and_shard_map_one_device():
    mesh = fg.make_mesh((1,), ("data",))
    assert mesh.shape == {"data": 1} and mesh.axis_names == ("data",)
    with pytest.raises(ValueError):
        fg.make_mesh((len(fg.devices()) + 1,), ("data",))
    assert fg.NamedSharding is fg.sharding.NamedSharding and fg.P is fg.sharding.PartitionSpec

    def body(a, b):
        return fg.lax.psum(a * b, "data"), a

    sm = fg.shard_map(body, mesh=mesh, in_specs=(fg.P("data"), fg.P()), out_specs=(fg.P(), fg.P("data")))
    x = jnp.arange(4.0)
    for fn in (sm, fg.jit(sm)):
        s, a = fn(x, 2 * jnp.ones(4))
        np.testing.assert_array_equal(np.asarray(s), [0, 2, 4, 6])
        np.testing.assert_array_equal(np.asarray(a), [0, 1, 2, 3])
    g = fg.grad(lambda v: sm(v, v)[0].sum())(x)
    np.testing.assert_array_equal(np.asarray(g), 2 * np.arange(4.0))
    with pytest.raises(ValueError, match="model"):
        fg.shard_map(body, mesh=mesh, in_specs=(fg.P("model"), fg.P()), out_specs=fg.P())(x, x)
    with pytest.raises(ValueError, match="rank"):
        fg.shard_map(body, mesh=mesh, in_specs=(fg.P("data", None), fg.P()), out_specs=fg.P())(x, x)
    deco = fg.shard_map(mesh=mesh, in_specs=fg.P(), out_specs=fg.P())(lambda v: v + 1)
    np.testing.assert_array_equal(np.asarray(deco(x)), np.arange(4.0) + 1)


def test_process_names_and_modules():
    assert (fg.host_count(), fg.host_id(), fg.host_ids(), fg.process_indices()) == (1, 0, [0], [0])
    assert fg.stages.Wrapped is type(fg.jit(lambda v: v))
    low = fg.jit(lambda v: v + 1).lower(1.0)
    assert isinstance(low, fg.stages.Lowered) and isinstance(low.compile(), fg.stages.Compiled)
    assert fg.typing.ArrayLike is not None and fg.typing.DTypeLike is not None
    np.testing.assert_array_equal(np.asarray(fg.dlpack.from_dlpack(np.arange(3.0))), [0.0, 1.0, 2.0])
    a = fg.dlpack.from_dlpack(jnp.arange(3))
    assert isinstance(a, fg.Array) and np.asarray(a).tolist() == [0, 1, 2]
    assert fg.dlpack.is_supported_dtype(np.float32) and not fg.dlpack.is_supported_dtype(object)
    with pytest.raises(TypeError):
        fg.dlpack.from_dlpack([1, 2])


def test_config_context_managers():
    assert fg.debug_nans.value is False
    with fg.debug_nans(True):
        assert fg.debug_nans.value is True
        with pytest.raises(FloatingPointError):
            jnp.log(jnp.array(-1.0))
    assert fg.debug_nans.value is False
    with fg.debug_infs(True):
        with pytest.raises(FloatingPointError):
            jnp.log(jnp.array(0.0))
    with fg.enable_x64(False):
        assert jnp.array(1.0).dtype == np.float32
        with fg.enable_x64(True):
            assert jnp.array(1.0).dtype == np.float64
        assert jnp.array(1.0).dtype == np.float32
    with fg.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError):
            jnp.ones(3) + jnp.ones((2, 3))
    assert fg.numpy_rank_promotion.value == "allow"
    with fg.default_matmul_precision("highest"):
        assert fg.default_matmul_precision.value == "highest"
    assert fg.default_matmul_precision.value is None
    with fg.log_compiles(True):
        assert fg.config.read("log_compiles")
    assert not fg.config.read("log_compiles")
    with fg.checking_leaks(), fg.transfer_guard("allow"), fg.enable_checks(True):
        pass
    with pytest.raises(ValueError):
        with fg.numpy_rank_promotion("sometimes"):
            pass


def test_top_level_matches_jax():
    jax = pytest.importorskip("jax")
    assert fg.float0 == jax.float0
    f_j = jax.custom_gradient(lambda x: (jax.numpy.sin(x) * x, lambda g: (g * jax.numpy.cos(x),)))
    f_f = fg.custom_gradient(lambda x: (jnp.sin(x) * x, lambda g: (g * jnp.cos(x),)))
    assert float(fg.grad(f_f)(0.7)) == pytest.approx(float(jax.grad(f_j)(0.7)), rel=1e-6)
    names = ["custom_gradient", "float0", "make_mesh", "shard_map", "host_count", "host_id", "host_ids",
             "process_indices", "numpy_rank_promotion", "debug_nans", "debug_infs", "enable_x64",
             "default_matmul_precision", "log_compiles", "NamedSharding", "P", "typing", "stages", "dlpack",
             "custom_derivatives", "custom_batching", "checking_leaks", "transfer_guard"]
    assert [n for n in names if not hasattr(jax, n)] == []
    for mod in ("typing", "stages"):
        assert set(getattr(fg, mod).__all__) <= set(dir(getattr(jax, mod)))


# --- tree_util and nn ---------------------------------------------------------------------------------
def test_tree_util_extras():
    import collections
    tu = fg.tree_util
    assert tu.flatten_one_level({"b": [2, 3], "a": 1}) == ((1, [2, 3]), ("a", "b"))
    assert tu.flatten_one_level((1, 2)) == ((1, 2), None)
    assert tu.flatten_one_level([1, (2,)]) == ([1, (2,)], None)
    assert tu.flatten_one_level(None) == ((), None)
    Pt = collections.namedtuple("Pt", "x y")
    assert tu.flatten_one_level(Pt(1, 2)) == ([1, 2], Pt)
    with pytest.raises(ValueError):
        tu.flatten_one_level(1)
    assert tu.tree_broadcast((1, {"a": 2}), ([3, 4], {"a": (5, 6)})) == ([1, 1], {"a": (2, 2)})
    assert tu.tree_broadcast(7, {"x": 1, "y": [2, 3]}) == {"x": 7, "y": [7, 7]}
    with pytest.raises(ValueError):
        tu.tree_broadcast((1, 2, 3), (1, 2))
    td = tu.treedef_tuple([tu.tree_structure([1, 2]), tu.tree_structure(3)])
    assert td == tu.tree_structure(([1, 2], 3)) and td.num_leaves == 3
    assert tu.tree_unflatten(td, [1, 2, 3]) == ([1, 2], 3)
    assert tu.KeyPath is not None and tu.KeyEntry is not None


def test_nn_log1mexp_logmeanexp():
    x = np.array([1e-8, 0.1, 0.5, 1.0, 10.0, 50.0])
    got = np.asarray(fg.nn.log1mexp(x))
    want = [np.log(-np.expm1(-v)) if v < 0.69 else np.log1p(-np.exp(-v)) for v in x]  # the accurate branch
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got[-1] == pytest.approx(-np.exp(-50.0), rel=1e-12)
    assert np.asarray(fg.nn.log1mexp(0.0)) == -np.inf and np.isnan(np.asarray(fg.nn.log1mexp(-1.0)))
    check_grads(fg.nn.log1mexp, (np.array([0.3, 0.9, 3.0]),), order=2)
    a = RNG.standard_normal((2, 3))
    np.testing.assert_allclose(np.asarray(fg.nn.logmeanexp(a, axis=1)), np.log(np.exp(a).mean(1)), rtol=1e-12)
    np.testing.assert_allclose(float(fg.nn.logmeanexp(a)), np.log(np.exp(a).mean()), rtol=1e-12)
    w = np.array([[1, 1, 0], [1, 0, 0]], bool)
    want = [np.log(np.exp(a[0, :2]).mean()), a[1, 0]]
    np.testing.assert_allclose(np.asarray(fg.nn.logmeanexp(a, axis=1, where=w)), want, rtol=1e-12)
    assert fg.nn.logmeanexp(a, axis=0, keepdims=True).shape == (1, 3)
    check_grads(lambda v: fg.nn.logmeanexp(v, axis=0), (a,), order=2)


def test_tree_nn_match_jax():
    jax = pytest.importorskip("jax")
    x = np.array([0.1, 1.0, 10.0, 0.0, 1e-8, 50.0, -1.0], np.float32)
    np.testing.assert_allclose(np.asarray(fg.nn.log1mexp(x)), np.asarray(jax.nn.log1mexp(x)), rtol=1e-6)
    a = RNG.standard_normal((2, 3)).astype(np.float32)
    w = np.array([[1, 1, 0], [1, 0, 0]], bool)
    np.testing.assert_allclose(np.asarray(fg.nn.logmeanexp(a, axis=1, where=w)),
                               np.asarray(jax.nn.logmeanexp(a, axis=1, where=w)), rtol=1e-6)
    tree = {"a": 1, "b": [2, (3, 4)]}
    assert fg.tree_util.flatten_one_level(tree) == jax.tree_util.flatten_one_level(tree)
    assert fg.tree_util.tree_broadcast((1, {"a": 2}), ([3, 4], {"a": (5, 6)})) == \
        jax.tree_util.tree_broadcast((1, {"a": 2}), ([3, 4], {"a": (5, 6)}))


# --- custom_batching ----------------------------------------------------------------------------------
def test_custom_vmap_uses_the_rule():
    from funcgrad.custom_batching import custom_vmap
    seen = []

    @custom_vmap
    def f(x, y):
        return jnp.sin(x) * y

    @f.def_vmap
    def rule(axis_size, in_batched, x, y):
        seen.append((axis_size, list(in_batched)))
        return jnp.sin(x) * y + 100.0, any(in_batched)

    x = jnp.arange(3.0)
    assert float(f(1.0, 2.0)) == pytest.approx(2 * np.sin(1.0))
    np.testing.assert_allclose(np.asarray(fg.vmap(f)(x, x)), np.sin(x) * x + 100, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(fg.vmap(f, in_axes=(0, None))(x, 2.0)), 2 * np.sin(x) + 100, rtol=1e-6)
    assert seen == [(3, [True, True]), (3, [True, False])]
    np.testing.assert_allclose(np.asarray(fg.jit(fg.vmap(f))(x, x)), np.sin(x) * x + 100, rtol=1e-6)
    assert float(fg.grad(f)(1.0, 2.0)) == pytest.approx(2 * np.cos(1.0), rel=1e-6)
    g = fg.grad(lambda a: fg.vmap(f)(a, a).sum())(x)  # through the rule's computation
    np.testing.assert_allclose(np.asarray(g), np.cos(x) * x + np.sin(x), rtol=1e-6)
    with pytest.raises(AttributeError):
        fg.vmap(custom_vmap(lambda v: v))(x)


def test_sequential_vmap_loops():
    from funcgrad.custom_batching import sequential_vmap
    calls = []

    def g(v):
        calls.append(v.shape)
        return v * 2, v.sum()

    sg = sequential_vmap(g)
    a, s = fg.vmap(sg)(jnp.ones((4, 2)))
    np.testing.assert_array_equal(np.asarray(a), 2 * np.ones((4, 2)))
    np.testing.assert_array_equal(np.asarray(s), [2.0] * 4)
    assert calls.count((2,)) >= 5  # traced once, then once per batch member


def test_custom_vmap_matches_jax():
    jax = pytest.importorskip("jax")
    def make(lib, np_):
        f = lib.custom_batching.custom_vmap(lambda x, y: np_.sin(x) * y)
        f.def_vmap(lambda n, b, x, y: (np_.sin(x) * y + n, b[0] or b[1]))
        return f
    fj, ff = make(jax, jax.numpy), make(fg, jnp)
    x = np.arange(3.0, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(fg.vmap(ff, in_axes=(0, None))(x, 2.0)),
                               np.asarray(jax.vmap(fj, in_axes=(0, None))(x, 2.0)), rtol=1e-6)


def test_programs_through_the_shim():
    import sys
    import os
    sys.path.insert(0, os.path.dirname(__file__))
    from jax_shim import jax_is_funcgrad
    program = """
import numpy as np
import jax, jax.numpy as jnp
from jax import lax
from jax.experimental.shard_map import shard_map
from jax.experimental import mesh_utils
from jax.sharding import Mesh, PartitionSpec as P
import jax.image, jax.ops

mesh = Mesh(mesh_utils.create_device_mesh((1,)), ("batch",))
step = shard_map(lambda x: lax.pmean(x.sum(), "batch"), mesh, in_specs=P("batch"), out_specs=P())
total = jax.jit(step)(jnp.arange(6.0))
seg = jax.ops.segment_sum(jnp.arange(6.0), jnp.array([0, 0, 1, 1, 2, 2]), num_segments=3)
img = jax.image.resize(jnp.ones((4, 4, 3)), (8, 8, 3), "bilinear")
with jax.debug_nans(False), jax.numpy_rank_promotion("allow"):
    g = jax.grad(jax.custom_gradient(lambda x: (x * x, lambda ct: (3.0 * ct,))))(2.0)
result = (float(total), np.asarray(seg).tolist(), img.shape, float(g))
"""
    ns = {}
    with jax_is_funcgrad():
        exec(program, ns)
    assert ns["result"] == (15.0, [1.0, 5.0, 9.0], (8, 8, 3), 3.0)


def _random_dimension_numbers(rng, scatter: bool):
    """A random valid gather (or scatter) configuration: operand shape, indices, dimension numbers, and the
    slice sizes (gather) or updates shape (scatter); batching dims, windows and permuted index maps included."""
    r = int(rng.integers(1, 4))
    shape = tuple(int(s) for s in rng.integers(1, 5, size=r))
    obd = tuple(sorted(rng.choice(r, int(rng.integers(0, 2)) if r > 1 else 0, replace=False).tolist()))
    free = [d for d in range(r) if d not in obd]
    smap = tuple(rng.permutation(rng.choice(free, int(rng.integers(1, len(free) + 1)), replace=False)).tolist())
    dropped = tuple(sorted(d for d in free if rng.random() < 0.5))
    win = [1 if d in obd or d in dropped else int(rng.integers(1, shape[d] + 1)) for d in range(r)]
    bshape = [int(s) for s in rng.integers(1, 4, size=int(rng.integers(0, 3)))]
    while len(bshape) < len(obd):
        bshape.append(1)
    ibd = tuple(rng.choice(len(bshape), len(obd), replace=False).tolist()) if obd else ()
    for o, i in zip(obd, ibd):
        bshape[i] = shape[o]
    idx = rng.integers(-2, max(shape) + 2, size=tuple(bshape) + (len(smap),)).astype(np.int32)
    kept = [win[d] for d in range(r) if d not in dropped and d not in obd]
    rank = len(bshape) + len(kept)
    wdims = tuple(sorted(rng.choice(rank, len(kept), replace=False).tolist()))
    if not scatter:
        return shape, idx, (wdims, dropped, smap, obd, ibd), tuple(win)
    bi, ki = iter(bshape), iter(kept)
    ushape = tuple(next(ki) if i in wdims else next(bi) for i in range(rank))
    return shape, idx, (wdims, dropped, smap, obd, ibd), ushape


def test_lax_gather_scatter_dimension_numbers_match_jax():
    jax = pytest.importorskip("jax")
    jl, fl = jax.lax, fg.lax
    rng = np.random.default_rng(11)
    for _ in range(12):
        shape, idx, dn, sizes = _random_dimension_numbers(rng, scatter=False)
        x = rng.standard_normal(shape).astype(np.float32)
        for mode in (None, "clip", "fill"):
            a = jl.gather(x, idx, jl.GatherDimensionNumbers(*dn), sizes, mode=mode)
            b = fl.gather(x, idx, fl.GatherDimensionNumbers(*dn), sizes, mode=mode)
            np.testing.assert_array_equal(np.asarray(b), np.asarray(a))
        w = rng.standard_normal(np.shape(a)).astype(np.float32)
        ga = jax.grad(lambda v: (jl.gather(v, idx, jl.GatherDimensionNumbers(*dn), sizes, mode="clip") * w).sum())(x)
        gb = fg.grad(lambda v: (fl.gather(v, idx, fl.GatherDimensionNumbers(*dn), sizes, mode="clip") * w).sum())(x)
        np.testing.assert_allclose(np.asarray(gb), np.asarray(ga), rtol=1e-5, atol=1e-6)
    names = ("scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max")
    for _ in range(12):
        shape, idx, dn, ushape = _random_dimension_numbers(rng, scatter=True)
        x = rng.standard_normal(shape).astype(np.float32)
        u = rng.standard_normal(ushape).astype(np.float32)
        for name, mode in itertools.product(names, (None, "clip")):
            a = getattr(jl, name)(x, idx, u, jl.ScatterDimensionNumbers(*dn), mode=mode)
            b = getattr(fl, name)(x, idx, u, fl.ScatterDimensionNumbers(*dn), mode=mode)
            np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-6)
        w = rng.standard_normal(shape).astype(np.float32)
        for name in ("scatter", "scatter_add"):  # (set: the cotangent goes to the write that lands, as JAX's)
            ga = jax.grad(lambda v, t: (getattr(jl, name)(v, idx, t, jl.ScatterDimensionNumbers(*dn)) * w).sum(),
                          (0, 1))(x, u)
            gb = fg.grad(lambda v, t: (getattr(fl, name)(v, idx, t, fl.ScatterDimensionNumbers(*dn)) * w).sum(),
                         (0, 1))(x, u)
            for p, q in zip(ga, gb):
                np.testing.assert_allclose(np.asarray(q), np.asarray(p), rtol=1e-5, atol=1e-6)


def test_lax_bitcast_and_integer_pow_match_jax():
    jax = pytest.importorskip("jax")
    x = np.array([1.0, -2.5, 3e-8], np.float32)
    for dt in (np.uint8, np.int16, np.float16):
        a = jax.lax.bitcast_convert_type(x, dt)
        b = fg.lax.bitcast_convert_type(x, dt)
        np.testing.assert_array_equal(np.asarray(b).view(np.uint8), np.asarray(a).view(np.uint8))
        np.testing.assert_array_equal(np.asarray(fg.lax.bitcast_convert_type(b, np.float32)),
                                      np.asarray(jax.lax.bitcast_convert_type(a, np.float32)))
    for y in (0, 1, 2, -1):
        for v in (0.0, 2.0, -1.5):
            fj = lambda t: jax.lax.pow(t, np.int32(y))  # noqa: E731
            ff = lambda t: fg.lax.pow(t, np.int32(y))  # noqa: E731
            for tj, tf in [(jax.grad, fg.grad), (lambda f: jax.grad(jax.grad(f)), lambda f: fg.grad(fg.grad(f))),
                           (lambda f: jax.jacfwd(jax.grad(f)), lambda f: fg.jacfwd(fg.grad(f)))]:
                np.testing.assert_array_equal(np.float32(tf(ff)(np.float32(v))), np.float32(tj(fj)(np.float32(v))))
