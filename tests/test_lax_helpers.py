"""lax.reduce / broadcast / index_in_dim / slice_in_dim / collapse / batch_matmul / reduce_precision /
optimization_barrier and the lax special functions, against NumPy and SciPy."""
import operator

import numpy as np
import pytest
import scipy.special as ss
from hypothesis import given
from hypothesis import strategies as st

import funcgrad as jax
import funcgrad.numpy as jnp
from funcgrad import lax
from funcgrad.testing import arrays

X = np.arange(24.0).reshape(2, 3, 4) - 7


@pytest.mark.parametrize("comp,init,ref", [
    (lax.add, 0.0, np.sum), (jnp.add, 1.5, lambda x, axis: np.sum(x, axis) + 1.5),
    (operator.mul, 1.0, np.prod), (lax.max, -np.inf, np.max), (jnp.minimum, np.inf, np.min),
    (lambda a, b: jnp.maximum(a, b), 0.0, lambda x, axis: np.maximum(np.max(x, axis), 0.0)),
])
def test_reduce_monoids(comp, init, ref):
    for dims in [(0,), (1, 2), (0, 1, 2)]:
        np.testing.assert_allclose(lax.reduce(X, init, comp, dims), ref(X, axis=dims))
    np.testing.assert_allclose(jax.jit(lambda x: lax.reduce(x, init, comp, (1,)))(X), ref(X, axis=(1,)))


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
    assert jax.tree.structure(out) == jax.tree.structure(tree)


@given(arrays(np.float32, st.tuples(st.integers(1, 20)), elements=st.floats(-7e4, 7e4, width=32)))
def test_reduce_precision_matches_float16(v):
    got = lax.reduce_precision(jnp.asarray(v), exponent_bits=5, mantissa_bits=10)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(np.asarray(got), v.astype(np.float16).astype(np.float32))


def test_reduce_precision_under_transforms():
    v = jnp.asarray(np.array([1.0000001, 3.14159265, 1e-8], np.float32))
    expect = np.asarray(v).astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(jax.jit(lambda x: lax.reduce_precision(x, 5, 10))(v), expect)
    np.testing.assert_array_equal(jax.vmap(lambda x: lax.reduce_precision(x, 5, 10))(v), expect)
    np.testing.assert_array_equal(jax.grad(lambda x: jnp.sum(lax.reduce_precision(x, 8, 7)))(v), np.ones(3))
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
    np.testing.assert_array_equal(jax.jit(lambda w: lax.select_n(w > 1, w, -w))(jnp.arange(3.0)), [0.0, 1.0, -2.0])
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
    got = jax.grad(lambda x: jnp.sum(lax.igamma(a, x)))(jnp.zeros(3))
    np.testing.assert_array_equal(np.asarray(got), want)
    gotc = jax.grad(lambda x: jnp.sum(lax.igammac(a, x)))(jnp.zeros(3))
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
    fused = jax.jit(lambda u, a, b: lax.select(u < 0.5, a, b))  # (the comparison and the select: one kernel)
    for got in (lax.select(p, a, b), jax.jit(lax.select)(p, a, b), fused(u, a, b)):
        assert np.asarray(got).dtype == want.dtype and np.asarray(got).tobytes() == want.tobytes()
    zero = np.zeros((), dtype)
    assert select_bits(p, zero, b).tobytes() == np.where(p, zero, b).tobytes()
    assert select_bits(p, a, zero).tobytes() == np.where(p, a, zero).tobytes()
    for into in ("a", "b"):
        a2, b2 = a.copy(), b.copy()
        out = a2 if into == "a" else b2
        assert select_bits(p, a2, b2, out=out) is out and out.tobytes() == want.tobytes()
