"""lax.ragged_dot, lax.mulhi, lax.platform_dependent and lax.composite (JAX's newer lax helpers)."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.lax as lax
import funcgrad.numpy as jnp
from funcgrad.testing import check_grads


@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64])
def test_mulhi_is_the_upper_half_of_the_exact_product(dt):
    info = np.iinfo(dt)
    bits = np.dtype(dt).itemsize * 8
    rng = np.random.default_rng(0)
    x = rng.integers(info.min, info.max, 64, dtype=dt, endpoint=True)
    y = rng.integers(info.min, info.max, 64, dtype=dt, endpoint=True)
    x[:4], y[:4] = [info.min, info.max, 0, 1], [info.min, info.max, info.max, info.min]
    want = [(int(a) * int(b)) >> bits for a, b in zip(x, y)]  # Python's exact product, floor-shifted
    got = lax.mulhi(jnp.asarray(x), jnp.asarray(y))
    assert got.dtype == dt
    np.testing.assert_array_equal(np.asarray(got).astype(object), np.array(want, dtype=object))
    with pytest.raises(TypeError, match="mulhi"):
        lax.mulhi(jnp.ones(2), jnp.ones(2))


def test_ragged_dot_against_a_loop_and_its_gradients():
    rng = np.random.default_rng(1)
    lhs, rhs = rng.standard_normal((7, 3)), rng.standard_normal((3, 3, 4))
    sizes = np.array([2, 0, 3])  # two rows of group 0, none of group 1, three of group 2, two left over
    want = np.zeros((7, 4))
    start = 0
    for g, n in enumerate(sizes):
        want[start:start + n] = lhs[start:start + n] @ rhs[g]
        start += n
    got = lax.ragged_dot(jnp.asarray(lhs), jnp.asarray(rhs), jnp.asarray(sizes))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    check_grads(lambda a, b: lax.ragged_dot(a, b, sizes), (jnp.asarray(lhs), jnp.asarray(rhs)), order=2)
    assert lax.ragged_dot(lhs.astype(np.float32), rhs.astype(np.float32), sizes,
                          preferred_element_type=np.float64).dtype == np.float64
    with pytest.raises(TypeError, match="ragged_dot"):
        lax.ragged_dot(lhs, rhs[:, :2], sizes)


def test_platform_dependent_and_composite():
    x = jnp.arange(3.0)
    np.testing.assert_array_equal(np.asarray(lax.platform_dependent(x, cpu=lambda v: v * 2, default=lambda v: v)),
                                  [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(np.asarray(lax.platform_dependent(x, cuda=lambda v: v * 3, default=lambda v: -v)),
                                  [-0.0, -1.0, -2.0])
    with pytest.raises(NotImplementedError, match="cpu"):
        lax.platform_dependent(x, cuda=lambda v: v)
    f = lax.composite(lambda v, scale=2.0: jnp.sin(v) * scale, name="my.scaled_sin")
    np.testing.assert_allclose(np.asarray(fg.jit(fg.grad(lambda v: jnp.sum(f(v, scale=3.0))))(x)), 3 * np.cos([0, 1, 2]))


def test_against_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(2)
    lhs, rhs, sizes = rng.standard_normal((6, 2)).astype(np.float32), rng.standard_normal((2, 2, 5)).astype(np.float32), \
        np.array([4, 1], np.int32)
    np.testing.assert_allclose(np.asarray(lax.ragged_dot(lhs, rhs, sizes)),
                               np.asarray(jax.lax.ragged_dot(lhs, rhs, sizes)), rtol=1e-5)
    x = rng.integers(-2 ** 31, 2 ** 31 - 1, 50, dtype=np.int32)
    y = rng.integers(-2 ** 31, 2 ** 31 - 1, 50, dtype=np.int32)
    np.testing.assert_array_equal(np.asarray(lax.mulhi(x, y)), np.asarray(jax.lax.mulhi(x, y)))
