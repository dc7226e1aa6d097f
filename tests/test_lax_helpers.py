"""lax's smaller operations and helpers: reduce / broadcast / index_in_dim / slice_in_dim / collapse /
batch_matmul / reduce_precision / optimization_barrier, the lax special functions, conv_general_dilated_patches,
the shape helpers (broadcast_to_rank, conv_shape_tuple, ...), tile / stack / ragged_dot, scatter_sub / scatter_apply,
lax's types and modes and the *_p primitives under JAX's names; against NumPy and SciPy, and real JAX where
installed."""
import operator

import numpy as np
import pytest
import scipy.special as ss
from hypothesis import given
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad import lax
from funcgrad.testing import arrays, check_grads

RNG = np.random.default_rng(0)
X = np.arange(24.0).reshape(2, 3, 4) - 7


@pytest.mark.parametrize("comp,init,ref", [
    (lax.add, 0.0, np.sum), (jnp.add, 1.5, lambda x, axis: np.sum(x, axis) + 1.5),
    (operator.mul, 1.0, np.prod), (lax.max, -np.inf, np.max), (jnp.minimum, np.inf, np.min),
    (lambda a, b: jnp.maximum(a, b), 0.0, lambda x, axis: np.maximum(np.max(x, axis), 0.0)),
])
def test_reduce_monoids(comp, init, ref):
    for dims in [(0,), (1, 2), (0, 1, 2)]:
        np.testing.assert_allclose(lax.reduce(X, init, comp, dims), ref(X, axis=dims))
    np.testing.assert_allclose(fg.jit(lambda x: lax.reduce(x, init, comp, (1,)))(X), ref(X, axis=(1,)))


def test_reduce_bool_pytree_and_errors():
    b = X > 0
    assert np.array_equal(lax.reduce(b, True, lax.bitwise_and, (2,)), b.all(2))
    assert np.array_equal(lax.reduce(b, False, jnp.logical_or, (0,)), b.any(0))
    s, p = lax.reduce((X, X), (0.0, 1.0), (lambda a, c: a + c), (0,))
    np.testing.assert_allclose(s, X.sum(0))
    np.testing.assert_allclose(p, X.sum(0) + 1)
    with pytest.raises(NotImplementedError, match="monoid"):
        lax.reduce(X, 0.0, lambda a, c: a * c + 1, (0,))
    with pytest.raises(ValueError, match="dimensions"):
        lax.reduce(X, 0.0, lax.add, (3,))


def test_shape_helpers():
    assert lax.broadcast(jnp.ones(2), (3, 4)).shape == (3, 4, 2)
    np.testing.assert_array_equal(lax.index_in_dim(X, 1, 2), X[:, :, 1:2])
    np.testing.assert_array_equal(lax.index_in_dim(X, -1, 1, keepdims=False), X[:, -1])
    np.testing.assert_array_equal(lax.slice_in_dim(X, 1, None, 2, axis=2), X[:, :, 1::2])
    np.testing.assert_array_equal(lax.slice_in_dim(X, -2, -1, axis=1), X[:, -2:-1])
    np.testing.assert_array_equal(lax.collapse(X, 1), X.reshape(2, 12))
    np.testing.assert_array_equal(lax.collapse(X, 0, 2), X.reshape(6, 4))
    a, b = np.random.default_rng(0).normal(size=(2, 3, 4, 5)), np.random.default_rng(1).normal(size=(2, 3, 5, 2))
    np.testing.assert_allclose(lax.batch_matmul(a, b), a @ b, rtol=1e-6)
    with pytest.raises(TypeError):
        lax.batch_matmul(a, a)
    with pytest.raises(IndexError):
        lax.index_in_dim(X, 5, 0)
    tree = {"a": jnp.ones(2), "b": (jnp.zeros(1),)}
    out = lax.optimization_barrier(tree)
    assert fg.tree.structure(out) == fg.tree.structure(tree)


@given(arrays(np.float32, st.tuples(st.integers(1, 20)), elements=st.floats(-7e4, 7e4, width=32)))
def test_reduce_precision_matches_float16(v):
    """float16's rounding, without its subnormals: XLA's ReducePrecision flushes a result below the narrow
    format's smallest normal (2**-14 for float16) to a zero of its sign."""
    got = lax.reduce_precision(jnp.asarray(v), exponent_bits=5, mantissa_bits=10)
    with np.errstate(over="ignore"):
        want = v.astype(np.float16).astype(np.float32)
    want = np.where(np.abs(want) < 2.0 ** -14, np.copysign(0.0, v), want).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.signbit(np.asarray(got)), np.signbit(want))


def test_reduce_precision_special_values_as_xla():
    """Infinities and NaN stay what they are (an infinity gave NaN), values below the smallest normal of
    the narrow format flush to a signed zero, overflow gives a signed infinity; the derivative is 1."""
    v = np.array([np.inf, -np.inf, np.nan, -1e-7, 3e-5, 6.2e-5, 65520.0, -1e6, 1.5, -0.0], np.float32)
    want = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 6.198883e-05, np.inf, -np.inf, 1.5, -0.0], np.float32)
    for f in (lambda x: lax.reduce_precision(x, 5, 10), fg.jit(lambda x: lax.reduce_precision(x, 5, 10))):
        got = np.asarray(f(jnp.asarray(v)))
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(fg.grad(lambda x: jnp.sum(lax.reduce_precision(x, 5, 10)))(jnp.asarray(v)),
                                  np.ones(v.size, np.float32))
    # bfloat16's (8, 7) on float64: exponents past float32's range are infinities, below it zeros
    w = np.array([1e39, -1e-39, 1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -8, np.inf])
    np.testing.assert_array_equal(np.asarray(lax.reduce_precision(jnp.asarray(w), 8, 7)),
                                  [np.inf, -0.0, 1.0, 1.0 + 2.0 ** -6, np.inf])
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(7)
    for dt in (np.float16, np.float32):  # (the same dtypes in either x64 mode)
        x = (rng.normal(size=64) * 10.0 ** rng.integers(-40, 40, size=64)).astype(dt)
        x[:4] = [np.inf, -np.inf, np.nan, -0.0]
        for eb, mb in ((5, 10), (8, 7), (4, 3), (11, 52), (8, 23), (2, 1)):
            got = np.asarray(lax.reduce_precision(jnp.asarray(x), eb, mb))
            ref = np.asarray(jax.lax.reduce_precision(x, eb, mb))
            np.testing.assert_array_equal(got, ref)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(ref))


def test_reduce_precision_under_transforms():
    v = jnp.asarray(np.array([1.0000001, 3.14159265, 1e-8], np.float32))
    expect = np.asarray(v).astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(fg.jit(lambda x: lax.reduce_precision(x, 5, 10))(v), expect)
    np.testing.assert_array_equal(fg.vmap(lambda x: lax.reduce_precision(x, 5, 10))(v), expect)
    np.testing.assert_array_equal(fg.grad(lambda x: jnp.sum(lax.reduce_precision(x, 8, 7)))(v), np.ones(3))
    with pytest.raises(TypeError):
        lax.reduce_precision(jnp.arange(3), 5, 10)


def test_lax_special_functions():
    a = np.array([0.5, 2.0, 7.5])
    x = np.array([0.3, 2.5, 4.0])
    np.testing.assert_allclose(lax.igamma(a, x), ss.gammainc(a, x), rtol=1e-12)
    np.testing.assert_allclose(lax.igammac(a, x), ss.gammaincc(a, x), rtol=1e-12)
    np.testing.assert_allclose(lax.betainc(a, a[::-1], x / 5), ss.betainc(a, a[::-1], x / 5), rtol=1e-12)
    np.testing.assert_allclose(lax.bessel_i0e(x), ss.i0e(x), rtol=1e-13)
    np.testing.assert_allclose(lax.bessel_i1e(-x), ss.i1e(-x), rtol=1e-13)
    h = 1e-6
    np.testing.assert_allclose(lax.igamma_grad_a(a, x), (ss.gammainc(a + h, x) - ss.gammainc(a - h, x)) / (2 * h),
                               rtol=1e-6)
    with pytest.raises(TypeError, match="equal shapes"):
        lax.igamma(a, x[:2])


def test_select_n_split_update_index_approx_k_reduce_xor():
    x = np.arange(12.0).reshape(3, 4)
    got = lax.select_n(jnp.array([0, 2, 1, 0]), jnp.zeros(4), jnp.ones(4), 2 * jnp.ones(4))
    np.testing.assert_array_equal(got, [0.0, 2.0, 1.0, 0.0])
    np.testing.assert_array_equal(lax.select_n(x > 5, x, -x), np.where(x > 5, -x, x))
    np.testing.assert_array_equal(fg.jit(lambda w: lax.select_n(w > 1, w, -w))(jnp.arange(3.0)), [0.0, 1.0, -2.0])
    with pytest.raises(TypeError):
        lax.select_n(x > 5, x, jnp.ones(2))
    upd = lax.dynamic_update_index_in_dim(x, -np.ones(4), 1, 0)
    expect = x.copy()
    expect[1] = -1
    np.testing.assert_array_equal(upd, expect)
    parts = lax.split(x, (1, 3), axis=1)
    np.testing.assert_array_equal(parts[0], x[:, :1])
    np.testing.assert_array_equal(parts[1], x[:, 1:])
    with pytest.raises(ValueError, match="sum"):
        lax.split(x, (1, 2), axis=1)
    v, i = lax.approx_max_k(x, 2)
    np.testing.assert_array_equal(v, -np.sort(-x, axis=1)[:, :2])
    np.testing.assert_array_equal(i, np.argsort(-x, axis=1)[:, :2])
    v, i = lax.approx_min_k(x, 2, reduction_dimension=0)
    np.testing.assert_array_equal(v, np.sort(x, axis=0)[:2])
    b = np.array([[True, True, False], [True, False, False]])
    np.testing.assert_array_equal(lax.reduce_xor(b, (1,)), np.logical_xor.reduce(b, axis=1))
    assert str(lax.Precision.HIGHEST) == "HIGHEST"


def test_igamma_x_derivative_at_zero_is_the_density_limit():
    """dP/dx(a, 0) = lim x^(a-1) e^-x / Gamma(a): inf for a < 1, 1 for a = 1, 0 for a > 1 (scipy's
    gamma.pdf gives the same limits); igammac's is its negative."""
    import scipy.stats
    a = jnp.asarray([0.5, 1.0, 2.5])
    want = scipy.stats.gamma.pdf(0.0, np.asarray(a))
    got = fg.grad(lambda x: jnp.sum(lax.igamma(a, x)))(jnp.zeros(3))
    np.testing.assert_array_equal(np.asarray(got), want)
    gotc = fg.grad(lambda x: jnp.sum(lax.igammac(a, x)))(jnp.zeros(3))
    np.testing.assert_array_equal(np.asarray(gotc), -want)


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_scaled_bessel_at_infinity(dt):
    """i0e(+-inf) = 0 and i1e(+-inf) = +-0, as SciPy (and JAX); the asymptotic series gave NaN there."""
    x = np.array([np.inf, -np.inf, 1e4, -30.0], dt)
    for f, ref in [(lax.bessel_i0e, ss.i0e), (lax.bessel_i1e, ss.i1e)]:
        got = np.asarray(f(jnp.asarray(x)))
        np.testing.assert_allclose(got, ref(x.astype(np.float64)).astype(dt), rtol=1e-3 if dt == np.float16 else 1e-6)
        assert not np.isnan(got).any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.int64, np.uint16, np.bool_])
def test_select_on_big_operands_gives_np_where_bits(dtype):
    """lax.select of big operands runs branch-free on their bits (elementwise.select_bits): eager, jit
    (plain and in a fused block kernel) and into a buffer that is one of its operands, the result is
    np.where's bit for bit: NaN payloads, -0.0 and infinities of the chosen side, either side a scalar."""
    from funcgrad._src.prims.elementwise import select_bits
    rng = np.random.default_rng(0)
    n = 300_000

    def make():
        if dtype is np.bool_:
            return rng.random(n) < 0.5
        x = (rng.standard_normal(n) * 50).astype(dtype)
        if np.dtype(dtype).kind == "f":
            x[:5] = [np.nan, -0.0, np.inf, -np.inf, 0.0]
            x.view(np.uint8)[-np.dtype(dtype).itemsize:] = 0xFF  # a NaN with a payload
        return x
    u = rng.random(n)
    p, a, b = u < 0.5, make(), make()
    want = np.where(p, a, b)
    fused = fg.jit(lambda u, a, b: lax.select(u < 0.5, a, b))  # (the comparison and the select: one kernel)
    for got in (lax.select(p, a, b), fg.jit(lax.select)(p, a, b), fused(u, a, b)):
        assert np.asarray(got).dtype == want.dtype and np.asarray(got).tobytes() == want.tobytes()
    zero = np.zeros((), dtype)
    assert select_bits(p, zero, b).tobytes() == np.where(p, zero, b).tobytes()
    assert select_bits(p, a, zero).tobytes() == np.where(p, a, zero).tobytes()
    for into in ("a", "b"):
        a2, b2 = a.copy(), b.copy()
        out = a2 if into == "a" else b2
        assert select_bits(p, a2, b2, out=out) is out and out.tobytes() == want.tobytes()


# --- conv patches, shape helpers, tile / stack, scatter_sub / apply, types, *_p -----------------------------
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


_PRODUCTS = [("dot", 1), ("matmul", 1), ("vdot", 0), ("inner", 0), ("tensordot", 1), ("vecdot", 0),
             ("linalg.vecdot", 0), ("linalg.tensordot", 1), ("linalg.matmul", 1)]


def _product(mod, name):
    for part in name.split("."):
        mod = getattr(mod, part)
    return mod


@pytest.mark.parametrize("name,transposed", _PRODUCTS)
def test_products_take_jax_precision_and_preferred_element_type(name, transposed):
    # JAX's examples/kernel_lsq.py: jnp.dot(x, y, precision=lax.Precision.HIGH) inside a vmapped kernel
    jax = pytest.importorskip("jax")
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    i8 = (np.arange(6, dtype=np.int8).reshape(2, 3) * 20).astype(np.int8)
    kw = {"axes": 1} if name.endswith("tensordot") else {}
    ours, theirs = _product(jnp, name), _product(jax.numpy, name)
    for a in (x, i8):
        args = (a, a.T) if transposed else (a, a)
        for p in ("HIGH", "HIGHEST", "high", ("bfloat16", "highest")):
            named = isinstance(p, str) and p.isupper()
            mine = ours(*args, precision=getattr(lax.Precision, p) if named else p, **kw)
            ref = theirs(*args, precision=getattr(jax.lax.Precision, p) if named else p, **kw)
            assert np.asarray(mine).dtype == np.asarray(ref).dtype
            np.testing.assert_array_equal(mine, ref)
        for pet in (np.float16, np.int32 if a.dtype == np.int8 else np.float32):
            mine = ours(*args, preferred_element_type=pet, **kw)
            ref = theirs(*args, preferred_element_type=pet, **kw)
            assert np.asarray(mine).dtype == np.asarray(ref).dtype == pet  # (int8 products do not wrap)
            np.testing.assert_array_equal(mine, ref)
        mine = fg.vmap(lambda r: ours(r, r if not transposed else r[:, None], precision=lax.Precision.HIGH,
                                      **kw))(a.astype(np.float32))
        ref = jax.vmap(lambda r: theirs(r, r if not transposed else r[:, None], precision=jax.lax.Precision.HIGH,
                                        **kw))(a.astype(np.float32))
        np.testing.assert_array_equal(mine, ref)
    with pytest.raises(ValueError, match="Precision argument must be one of") as ours_err:
        ours(x, x.T if transposed else x, precision="bogus", **kw)
    with pytest.raises(ValueError) as ref_err:
        theirs(x, x.T if transposed else x, precision="bogus", **kw)
    assert str(ours_err.value) == str(ref_err.value)


def test_lax_dot_general_takes_precision_as_jax():
    jax = pytest.importorskip("jax")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    dn = (((1,), (1,)), ((), ()))
    for ours, theirs in ((lax.Precision.HIGHEST, jax.lax.Precision.HIGHEST), ("high", "high")):
        np.testing.assert_array_equal(lax.dot_general(x, x, dn, ours), jax.lax.dot_general(x, x, dn, theirs))
        np.testing.assert_array_equal(lax.dot_general(x, x, dn, precision=ours, preferred_element_type=np.float16),
                                      jax.lax.dot_general(x, x, dn, precision=theirs,
                                                          preferred_element_type=np.float16))
    with pytest.raises(ValueError, match="Precision argument must be one of"):
        lax.dot_general(x, x, dn, "bogus")
