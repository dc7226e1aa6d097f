"""funcgrad.numpy.ufunc / frompyfunc (as jax.numpy's), place, fromstring / fromfile: compared with NumPy."""
import operator

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as jnp


def logaddexp_scalar(a, b):
    m = jnp.maximum(a, b)
    return m + jnp.log(jnp.exp(a - m) + jnp.exp(b - m))


@pytest.fixture
def x():
    return np.random.default_rng(0).standard_normal((3, 4))


def test_call_and_methods_match_numpy_ufuncs(x):
    add = jnp.frompyfunc(operator.add, nin=2, nout=1, identity=0)
    assert (add.nin, add.nout, add.nargs, add.identity) == (2, 1, 2, 0)
    a = jnp.asarray(x)
    np.testing.assert_allclose(np.asarray(add(a, 10.0)), np.add(x, 10.0))
    np.testing.assert_allclose(np.asarray(add.outer(a[0], a[1])), np.add.outer(x[0], x[1]))
    for axis in (0, 1, -1, None, (0, 1)):
        np.testing.assert_allclose(np.asarray(add.reduce(a, axis=axis)), np.add.reduce(x, axis=axis))
    np.testing.assert_allclose(np.asarray(add.reduce(a, axis=1, keepdims=True, initial=2.0)),
                               np.add.reduce(x, axis=1, keepdims=True, initial=2.0))
    np.testing.assert_allclose(np.asarray(add.accumulate(a, axis=1)), np.add.accumulate(x, axis=1))
    np.testing.assert_allclose(np.asarray(add.reduceat(jnp.arange(8.0), [0, 4, 1, 5])),
                               np.add.reduceat(np.arange(8.0), [0, 4, 1, 5]))
    want = np.arange(5.0)
    np.add.at(want, [1, 1, 3], 10.0)
    np.testing.assert_allclose(np.asarray(add.at(jnp.arange(5.0), [1, 1, 3], 10.0, inplace=False)), want)


def test_a_non_associative_function_folds_in_order_and_is_differentiable(x):
    sub = jnp.frompyfunc(lambda a, b: a - 2 * b, 2, 1)
    a = jnp.asarray(x)
    want = x[:, 0]
    for j in range(1, 4):
        want = want - 2 * x[:, j]
    np.testing.assert_allclose(np.asarray(sub.reduce(a, axis=1)), want)
    acc = np.asarray(sub.accumulate(a, axis=1))
    np.testing.assert_allclose(acc[:, -1], want)
    with pytest.raises(ValueError, match="not reorderable"):
        sub.reduce(a, axis=(0, 1))
    lae = jnp.frompyfunc(logaddexp_scalar, 2, 1)
    np.testing.assert_allclose(np.asarray(lae.reduce(a, axis=0)), np.logaddexp.reduce(x, axis=0), rtol=1e-12)
    g = fg.grad(lambda a: jnp.sum(lae(a, 0.5)))(a)
    np.testing.assert_allclose(np.asarray(g), 1 / (1 + np.exp(0.5 - x)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(fg.jit(lambda a: lae.reduce(a, axis=1))(a)),
                               np.logaddexp.reduce(x, axis=1), rtol=1e-12)


def test_errors():
    neg = jnp.frompyfunc(lambda a: -a, 1, 1)
    np.testing.assert_array_equal(np.asarray(neg(jnp.arange(3))), [0, -1, -2])
    with pytest.raises(ValueError, match="binary"):
        neg.reduce(jnp.arange(3))
    with pytest.raises(ValueError, match="inplace=False"):
        neg.at(jnp.arange(3), 0)
    np.testing.assert_array_equal(np.asarray(neg.at(jnp.arange(3), [0, 0], inplace=False)), [0, 1, 2])
    with pytest.raises(TypeError, match="out="):
        neg(jnp.arange(3), out=np.zeros(3))
    with pytest.raises(ValueError, match="no identity"):
        jnp.frompyfunc(operator.add, 2, 1).reduce(jnp.zeros((0,)))


def test_place_matches_numpy():
    a = np.arange(12.0).reshape(3, 4)
    mask = (a % 3) == 1
    want = a.copy()
    np.place(want, mask, [-1.0, -2.0])
    got = jnp.place(jnp.asarray(a), jnp.asarray(mask), jnp.asarray([-1.0, -2.0]), inplace=False)
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(jnp.place(jnp.asarray(a), np.zeros((3, 4), bool), [], inplace=False)), a)
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.place(jnp.asarray(a), mask, [1.0])
    with pytest.raises(ValueError, match="empty"):
        jnp.place(jnp.asarray(a), mask, [], inplace=False)


def test_fromstring_and_fromfile():
    got = jnp.fromstring("1, 2.5, -3", dtype=np.float32, sep=",")
    np.testing.assert_array_equal(np.asarray(got), np.fromstring("1, 2.5, -3", dtype=np.float32, sep=","))
    assert got.dtype == np.float32
    with pytest.raises(ValueError, match="binary"):
        jnp.fromstring("abc", sep="")
    with pytest.raises(NotImplementedError, match="numpy.fromfile"):
        jnp.fromfile("x.bin")
    assert jnp.object_ is np.object_ and issubclass(jnp.character, jnp.flexible)
