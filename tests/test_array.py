"""The Array type against numpy.ndarray: operators (incl. reflected), methods, conversions, repr, interop."""
import operator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad
import funcgrad.numpy as jnp
from funcgrad import Array
from funcgrad._src.core import dtypes

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

BINOPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.eq, operator.ne,
          operator.lt, operator.le, operator.gt, operator.ge]


def _check(actual, expected):
    expected = np.asarray(expected)
    assert isinstance(actual, Array)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, (actual, expected)
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=1e-6)


@pytest.mark.parametrize("op", BINOPS, ids=lambda o: o.__name__)
@given(data=st.data())
def test_binary_operators_match_numpy(op, data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    dt = data.draw(st.sampled_from([np.float32, np.float64]))
    els = st.floats(0.5, 4, width=32)
    a = data.draw(hnp.arrays(dt, shapes.input_shapes[0], elements=els))
    b = data.draw(hnp.arrays(dt, shapes.input_shapes[1], elements=els))
    fa, fb = jnp.asarray(a), jnp.asarray(b)
    expected = op(a, b)
    _check(op(fa, fb), expected)
    _check(op(a, fb), expected)   # NumPy array on the left defers to Array's reflected operator
    _check(op(fa, b), expected)
    s = data.draw(st.sampled_from([2, 0.5, 3.0, True]))
    _check(op(fa, s), op(a, s))   # Python scalars are weak: the array's float dtype is kept
    _check(op(s, fa), op(s, a))


def test_reflected_operators_with_python_scalars():
    a = np.array([1.0, 2.0, 4.0], np.float32)
    x = jnp.asarray(a)
    for op in BINOPS:
        for s in (2, 2.5):
            _check(op(s, x), op(s, a))
            _check(op(x, s), op(a, s))
    i = jnp.asarray(np.array([1, 2, 3], np.int32))
    _check(2 - i, 2 - np.array([1, 2, 3], np.int32))
    _check(i ** 2, np.array([1, 4, 9], np.int32))
    _check(2 ** i, 2 ** np.array([1, 2, 3], np.int32))
    # JAX: int with a weak int divides in to_inexact_dtype (int64: the default float); with 0.5 the default float
    _check(1 / i, 1 / np.array([1, 2, 3], dtypes.to_inexact(i.dtype)))
    _check(i * 0.5, np.array([1, 2, 3], dtypes.defaults.float_) * 0.5)
    _check(np.float64(2) * i, np.float64(2) * np.array([1, 2, 3], np.int32))  # NumPy scalar: strong
    _check(np.int8(2) + i, np.int8(2) + np.array([1, 2, 3], np.int32))


def test_unary_operators():
    a = np.array([-1.5, 0.0, 2.0], np.float32)
    x = jnp.asarray(a)
    _check(-x, -a)
    _check(+x, +a)
    _check(abs(x), abs(a))
    i = np.array([-3, 4], np.int16)
    _check(-jnp.asarray(i), -i)
    _check(abs(jnp.asarray(i)), abs(i))
    u = np.array([1, 2], np.uint8)
    _check(-jnp.asarray(u), -u)  # wraps around, as in NumPy
    with pytest.raises(TypeError):
        -jnp.asarray([True])


def test_matmul_and_T():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    x = jnp.asarray(a)
    _check(x @ x.T, a @ a.T)
    _check(a.T @ x, a.T @ a)
    _check(x.T, a.T)
    _check(x.mT, np.swapaxes(a, -1, -2))
    b = np.arange(24.0).reshape(2, 3, 4)
    _check(jnp.asarray(b).T, b.T)
    with pytest.raises(ValueError):
        x @ 2.0


@given(data=st.data())
def test_reduction_methods(data):
    dt = data.draw(st.sampled_from([np.bool_, np.int8, np.int64, np.uint16, np.float32, np.float64]))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    kind = np.dtype(dt).kind
    els = (st.booleans() if kind == "b" else st.integers(0 if kind == "u" else -5, 5) if kind in "iu"
           else st.floats(-5, 5, width=8 * np.dtype(dt).itemsize))
    a = data.draw(hnp.arrays(dt, shape, elements=els))
    x = jnp.asarray(a)
    nd = a.ndim
    axis = data.draw(st.none() | st.integers(-nd, nd - 1))
    kd = data.draw(st.booleans())
    for name in ("sum", "prod", "max", "min", "argmax", "argmin"):
        _check(getattr(x, name)(axis=axis, keepdims=kd), getattr(a, name)(axis=axis, keepdims=kd))
        if axis is not None:
            _check(getattr(x, name)(axis), getattr(a, name)(axis))  # positional axis
    m = x.mean(axis=axis, keepdims=kd)
    mdt = a.dtype if a.dtype.kind == "f" else np.dtype(dtypes.to_inexact(a.dtype))  # JAX: to_inexact_dtype
    _check(m, a.astype(mdt).mean(axis=axis, keepdims=kd))
    _check(x.sum(axis=axis, dtype=np.float64), a.sum(axis=axis, dtype=np.float64))


def test_shape_methods():
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    x = jnp.asarray(a)
    _check(x.reshape(6, 4), a.reshape(6, 4))
    _check(x.reshape((6, 4)), a.reshape((6, 4)))
    _check(x.reshape([4, -1]), a.reshape([4, -1]))
    _check(x.reshape(-1), a.reshape(-1))
    _check(x.reshape(np.int64(24)), a.reshape(24))
    _check(x.transpose(2, 0, 1), a.transpose(2, 0, 1))
    _check(x.transpose((2, 0, 1)), a.transpose((2, 0, 1)))
    _check(x.transpose(), a.transpose())
    _check(x.swapaxes(0, -1), a.swapaxes(0, -1))
    _check(x.ravel(), a.ravel())
    _check(x.flatten(), a.flatten())
    _check(x[:1].squeeze(), a[:1].squeeze())
    _check(x[:1].squeeze(0), a[:1].squeeze(0))
    _check(x.clip(3, 10), a.clip(3, 10))
    _check(x[0].dot(x[1].T), a[0].dot(a[1].T))
    y = x.copy()  # its own buffer, as in JAX (it outlives x.delete() or a donation of x)
    assert y is not x and not np.shares_memory(np.asarray(y), np.asarray(x))
    np.testing.assert_array_equal(np.asarray(y), a)
    assert x.ndim == 3 and x.size == 24 and x.shape == (2, 3, 4) and x.dtype == np.int32


def test_astype():
    x = jnp.asarray(np.array([1.7, -2.2, 0.0], np.float32))
    for dt in (np.int32, np.int8, np.float64, np.bool_, np.complex64, "float16"):
        _check(x.astype(dt), np.array([1.7, -2.2, 0.0], np.float32).astype(dt))
    _check(x.astype("uint8"), np.array([1, 0, 0], np.uint8))  # -2.2 saturates to 0 as in jnp (XLA); NumPy wraps
    assert x.astype(float).dtype == dtypes.defaults.float_   # Python float means the default float
    assert x.astype(int).dtype == np.int64
    w = jnp.add(1.0, 2.0)
    assert w.weak_type and not w.astype(np.float32).weak_type
    c = jnp.asarray(np.array([1 + 2j], np.complex64))
    with pytest.warns(np.exceptions.ComplexWarning):
        expected = np.array([1 + 2j], np.complex64).astype(np.float32)
    _check(c.astype(np.float32), expected)  # real part, as NumPy
    with pytest.raises(TypeError):
        x.astype("U3")


def test_scalar_conversions():
    x = jnp.asarray(np.array([[2.75]], np.float32))
    assert float(x) == 2.75 and int(x) == 2 and bool(x) is True and complex(x) == 2.75
    assert isinstance(float(x), float) and isinstance(int(x), int)
    assert float(jnp.asarray(3)) == 3.0
    assert int(jnp.asarray(-2.5)) == -2
    assert bool(jnp.asarray(0.0)) is False
    with pytest.raises(ValueError):
        bool(jnp.asarray([1.0, 2.0]))
    with pytest.raises(TypeError):
        float(jnp.asarray([1.0, 2.0]))
    with pytest.raises(TypeError):
        int(jnp.zeros(3))
    # __index__: integer 0-d arrays only, as NumPy (not floats, not bools, not 1-element 1-d arrays).
    items = ["a", "b", "c"]
    assert items[jnp.asarray(2)] == "c"
    assert items[jnp.asarray(np.int8(1))] == "b"
    assert operator.index(jnp.asarray(np.uint16(7))) == 7
    assert list(range(10))[jnp.asarray(1):jnp.asarray(3)] == [1, 2]
    for bad in (jnp.asarray(1.0), jnp.asarray(True), jnp.asarray([1])):
        with pytest.raises(TypeError):
            operator.index(bad)
    with pytest.raises(TypeError):
        operator.index(np.array(True))


def test_item_tolist():
    a = np.array([[1.5, 2.0], [3.0, 4.25]], np.float32)
    x = jnp.asarray(a)
    assert x.item(3) == a.item(3) and x.item((1, 0)) == a.item((1, 0)) and x.item(1, 1) == a.item(1, 1)
    assert jnp.asarray(7).item() == 7 and isinstance(jnp.asarray(7).item(), int)
    assert isinstance(jnp.asarray(True).item(), bool)
    assert x.tolist() == a.tolist()
    assert jnp.asarray(np.array([1, 2], np.int8)).tolist() == [1, 2]
    assert jnp.asarray(2.5).tolist() == 2.5
    with pytest.raises(ValueError):
        x.item()


def test_array_protocol_and_dlpack():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    x = jnp.asarray(a)
    h = np.asarray(x)
    assert h.dtype == np.float32 and np.array_equal(h, a)
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    c = np.array(x)
    c[0, 0] = 100.0  # a copy: the Array is unchanged
    assert float(x[0, 0]) == 0.0
    assert np.array_equal(np.from_dlpack(x), a)
    assert np.from_dlpack(x).dtype == np.float32
    assert np.array_equal(np.from_dlpack(jnp.asarray(np.array([1, 2], np.int8))), np.array([1, 2], np.int8))
    assert x.__dlpack_device__()[0] == 1  # kDLCPU
    assert x.__array_namespace__() is jnp
    np.testing.assert_array_equal(np.sin(x), np.sin(a))  # NumPy functions accept Arrays
    with pytest.raises(TypeError):
        x[0, 0] = 1.0
    with pytest.raises(TypeError):
        hash(x)


def test_repr_and_str():
    df = np.dtype(dtypes.defaults.float_).name  # this module runs with x64 on: float64
    assert repr(jnp.asarray([1.0, 2.0])) == f"Array([1., 2.], dtype={df})"
    assert repr(jnp.asarray(np.array([1, 2], np.int8))) == "Array([1, 2], dtype=int8)"
    assert repr(jnp.asarray([True, False])) == "Array([ True, False], dtype=bool)"
    assert repr(jnp.array(1.5)) == f"Array(1.5, dtype={df}, weak_type=True)"  # JAX 0.10.2: a Python float stays weak
    assert repr(jnp.zeros((0,))) == f"Array([], dtype={df})"
    assert repr(jnp.asarray(np.array([1.0, 2.0]))) == "Array([1., 2.], dtype=float64)"
    assert repr(jnp.eye(2, dtype=np.int32)) == "Array([[1, 0],\n       [0, 1]], dtype=int32)"
    assert repr(jnp.add(1, 2)) == "Array(3, dtype=int64, weak_type=True)"
    assert str(jnp.asarray([1.0, 2.0])) == str(np.array([1.0, 2.0], df))
    assert f"{jnp.asarray(2.5):.2f}" == "2.50"


def test_len_and_iteration():
    a = np.arange(6).reshape(3, 2)
    x = jnp.asarray(a)
    assert len(x) == 3
    rows = list(x)
    assert len(rows) == 3 and all(isinstance(r, Array) for r in rows)
    for r, e in zip(rows, a):
        _check(r, e)
    assert [int(v) for v in jnp.asarray([4, 5, 6])] == [4, 5, 6]
    a, b = jnp.asarray([1, 2])  # unpacking
    assert int(a) == 1 and int(b) == 2
    assert list(jnp.zeros((0, 2))) == []
    with pytest.raises(TypeError):
        len(jnp.asarray(1.0))
    with pytest.raises(TypeError):
        iter(jnp.asarray(1.0))
        list(jnp.asarray(1.0))


def test_methods_and_operators_on_tracers():
    def f(x):
        y = (2 - x) * 3 / (1 + x ** 2) + abs(-x) + (x @ x.T).sum() * 0.01
        z = y.reshape(2, -1).T.reshape((6,)).astype(np.float64)
        return (z.sum(), x.mean(axis=0), x.max(1, keepdims=True), x.argmax(axis=-1), x.clip(0.2, 0.4),
                x.swapaxes(0, 1), x.min(), x.prod(axis=0), (x > 0.5) == (0.5 < x), len(x), x.ndim, x.size)
    a = np.linspace(0.1, 0.9, 6).reshape(2, 3).astype(np.float32)
    eager = f(jnp.asarray(a))
    for transformed in (funcgrad.jit(f)(jnp.asarray(a)),):
        for e, t in zip(eager, transformed):
            if isinstance(e, Array):
                assert e.dtype == t.dtype and e.shape == t.shape
                np.testing.assert_allclose(np.asarray(t), np.asarray(e), rtol=1e-6)
            else:
                assert e == t
    batched = funcgrad.vmap(lambda x: f(x)[0])(jnp.stack([jnp.asarray(a), jnp.asarray(a * 2)]))
    np.testing.assert_allclose(np.asarray(batched), [float(f(jnp.asarray(a))[0]), float(f(jnp.asarray(a * 2))[0])],
                               rtol=1e-6)
    g = funcgrad.grad(lambda x: (x.T @ x).sum() + x.mean() + x.max())(jnp.asarray(a.astype(np.float64)))
    assert g.shape == a.shape and g.dtype == np.float64
