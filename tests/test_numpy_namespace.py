"""funcgrad.numpy against NumPy 2 on random inputs: values, dtypes, shapes and errors.

dtype expectations are jax.numpy's (the module runs with x64 on, tests/conftest.py): NumPy's where its
promotion agrees with JAX's lattice; where NumPy makes a float its own way (float64 from int32 with float32,
float16 from int8, ...) JAX's dtype (jax_result, float_result), with NumPy's values on the inputs cast to it.
"""
import math
import operator

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad
import funcgrad.numpy as jnp
from funcgrad._src.core import dtypes

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

AxisError = np.exceptions.AxisError

INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOATS = [np.float16, np.float32, np.float64]
COMPLEX = [np.complex64, np.complex128]
ALL = [np.bool_] + INTS + FLOATS + COMPLEX
REAL = [np.bool_] + INTS + FLOATS


def default_float():
    return dtypes.defaults.float_


def float_result(dt):
    """The dtype funcgrad computes a float-valued function of dt data in: jax.dtypes.to_inexact_dtype's
    (bool and integers of up to 32 bits: float32; 64-bit integers: the default float)."""
    dt = np.dtype(dt)
    return dt if dt.kind in "fc" else np.dtype(np.float32 if dt.itemsize < 8 else default_float())


def tol(dt):
    dt = np.dtype(dt)
    if dt == np.float16:
        return dict(rtol=2e-3, atol=2e-3)
    if dt in (np.float32, np.complex64):
        return dict(rtol=2e-6, atol=2e-6)
    return dict(rtol=1e-12, atol=1e-12)


def check(actual, expected, dtype=None):
    """Exact dtype (NumPy's, or `dtype`), exact shape, values at dtype-appropriate tolerance."""
    expected = np.asarray(expected)
    dtype = np.dtype(dtype) if dtype is not None else expected.dtype
    assert isinstance(actual, funcgrad.Array), type(actual)
    assert actual.dtype == dtype, (actual.dtype, dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    a = np.asarray(actual)
    if dtype.kind in "fc":
        np.testing.assert_allclose(a, expected.astype(dtype), **tol(dtype))
    else:
        np.testing.assert_array_equal(a, expected)


def elements(dt, lo=-8, hi=8):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return st.booleans()
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return st.integers(max(lo, int(info.min)), min(hi, int(info.max)))
    if dt.kind == "f":
        return st.floats(lo, hi, width=8 * dt.itemsize, allow_nan=False, allow_infinity=False)
    return st.builds(complex, st.floats(lo, hi, allow_nan=False), st.floats(lo, hi, allow_nan=False))


SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


def arrays(draw, dt, shape=None, lo=-8, hi=8):
    shape = draw(SHAPES) if shape is None else shape
    return draw(hnp.arrays(np.dtype(dt), shape, elements=elements(dt, lo, hi)))


# --- elementwise unary ---------------------------------------------------------------------------

FLOAT_UNARY = {"exp": (-4, 4), "log": (1, 8), "log1p": (0, 8), "expm1": (-4, 4), "tanh": (-4, 4),
               "sin": (-8, 8), "cos": (-8, 8), "sqrt": (0, 8)}


@pytest.mark.parametrize("name", sorted(FLOAT_UNARY))
@given(data=st.data())
def test_float_unary(name, data):
    dt = data.draw(st.sampled_from(ALL), label="dtype")
    lo, hi = FLOAT_UNARY[name]
    x = arrays(data.draw, dt, lo=lo, hi=hi)
    out_dt = float_result(dt)
    check(getattr(jnp, name)(x), getattr(np, name)(x.astype(out_dt)), out_dt)
    check(getattr(jnp, name)(jnp.asarray(x)), getattr(np, name)(x.astype(out_dt)), out_dt)


SAME_DTYPE_UNARY = ["negative", "positive", "absolute", "abs", "sign", "square", "reciprocal"]


@pytest.mark.parametrize("name", SAME_DTYPE_UNARY)
@given(data=st.data())
def test_same_dtype_unary(name, data):
    dt = data.draw(st.sampled_from(ALL), label="dtype")
    lo = 1 if name == "reciprocal" else -8
    x = arrays(data.draw, dt, lo=lo)
    if name == "reciprocal" and np.dtype(dt).kind in "biu":
        # as jax.numpy.reciprocal: integers and bools are promoted to float (NumPy truncates)
        x = x.astype(np.float32 if np.dtype(dt).itemsize < 8 else default_float())
    if name in ("positive", "square") and x.dtype == np.bool_:
        # as jax.numpy: positive returns bools unchanged, square computes them in int32 (NumPy: TypeError, int8)
        check(getattr(jnp, name)(x), x if name == "positive" else np.square(x.astype(np.int32)))
        return
    try:
        expected = getattr(np, name)(x)
    except TypeError:  # NumPy has no loop (e.g. negative/positive/sign of bool): funcgrad raises too
        with pytest.raises(TypeError):
            getattr(jnp, name)(x)
        return
    check(getattr(jnp, name)(x), expected)


def test_bool_unary_errors_match_numpy():
    b = np.array([True, False])
    for name in ("negative", "sign"):
        with pytest.raises(TypeError):
            getattr(np, name)(b)
        with pytest.raises(TypeError):
            getattr(jnp, name)(b)
    with pytest.raises(TypeError):
        -jnp.asarray(b)
    check(jnp.abs(b), np.abs(b))
    check(jnp.positive(b), b)                 # as jax.numpy (NumPy raises TypeError)
    check(jnp.square(b), np.square(b.astype(np.int32)))  # int32, as jax.numpy (NumPy: int8)
    check(jnp.conjugate(b), b)                # bool, as jax.numpy (NumPy: int8)
    check(jnp.reciprocal(b[:1]), np.reciprocal(b[:1].astype(np.float32)))  # JAX: bool -> float32


def test_unary_on_python_scalars():
    r = jnp.exp(1.0)
    assert r.dtype == default_float() and r.weak_type and r.shape == ()
    np.testing.assert_allclose(float(r), math.e, rtol=1e-6)
    assert jnp.sqrt(4).dtype == default_float()
    assert jnp.negative(3).dtype == np.int64
    assert jnp.abs(-2.5).dtype == default_float()
    check(jnp.abs(np.array([3 + 4j], np.complex64)), np.array([5.0], np.float32))


# --- elementwise binary with broadcasting --------------------------------------------------------

BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "power", "maximum", "minimum",
          "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]


def jax_result(*args):
    """The dtype jax.numpy promotes operands to: JAX's lattice (int32 with float16 is float16; NumPy: float32),
    checked against JAX in tests/test_x64_modes.py and tests/test_dtypes.py."""
    return np.dtype(jnp.result_type(*args))


def _np_binary(name, a, b):
    """NumPy's answer computed in the dtype jax.numpy gives (JAX's lattice; true division of integers and
    bools in jax.dtypes.to_inexact_dtype's float)."""
    dt = jax_result(a, b)
    if name in ("divide", "true_divide"):
        dt = np.dtype(dtypes.to_inexact(dt))
        return np.true_divide(a.astype(dt), b.astype(dt)), dt
    r = getattr(np, name)(a, b)
    nd = np.asarray(r).dtype
    if nd.kind in "fc" and nd != dt:  # NumPy's float differs from JAX's: NumPy's values computed in JAX's
        return getattr(np, name)(a.astype(dt), b.astype(dt)), dt
    return r, nd


@pytest.mark.parametrize("name", BINARY)
@given(data=st.data())
def test_binary_broadcasting(name, data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
                       label="shapes")
    da = data.draw(st.sampled_from(ALL), label="dtype a")
    db = data.draw(st.sampled_from(ALL), label="dtype b")
    if name == "power":
        a = arrays(data.draw, da, shapes.input_shapes[0], lo=0, hi=3)
        b = arrays(data.draw, db, shapes.input_shapes[1], lo=0, hi=3)
    else:
        a = arrays(data.draw, da, shapes.input_shapes[0])
        b = arrays(data.draw, db, shapes.input_shapes[1], lo=1 if "div" in name else -8)
    try:
        expected, dt = _np_binary(name, a, b)
    except TypeError:  # e.g. bool - bool: NumPy raises TypeError, and so does funcgrad
        with pytest.raises(TypeError):
            getattr(jnp, name)(jnp.asarray(a), jnp.asarray(b))
        return
    if dt == np.int8 and a.dtype == b.dtype == np.bool_:
        dt = np.dtype(np.int32)  # jax.numpy computes bools in int32 where NumPy's loop is int8 (power, ...)
    fa, fb = jnp.asarray(a), jnp.asarray(b)
    r = getattr(jnp, name)(fa, fb)
    assert r.shape == shapes.result_shape
    if name == "power" and dt.kind in "fc":
        np.testing.assert_allclose(np.asarray(r), expected, rtol=5e-3 if dt in (np.float16,) else 1e-5)
        assert r.dtype == dt
    else:
        check(r, expected, dt)
    check(getattr(jnp, name)(a, fb), expected, dt)  # a NumPy array operand works the same


OPERATORS = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
             "true_divide": operator.truediv, "equal": operator.eq, "not_equal": operator.ne,
             "less": operator.lt, "less_equal": operator.le, "greater": operator.gt,
             "greater_equal": operator.ge, "power": operator.pow}


@pytest.mark.parametrize("name", sorted(OPERATORS))
@given(data=st.data())
def test_operators_and_reflected(name, data):
    op = OPERATORS[name]
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    da = data.draw(st.sampled_from([np.int32, np.int64, np.float32, np.float64]))
    db = data.draw(st.sampled_from([np.int32, np.int64, np.float32, np.float64]))
    a = arrays(data.draw, da, shapes.input_shapes[0], lo=1, hi=3)
    b = arrays(data.draw, db, shapes.input_shapes[1], lo=1, hi=3)
    expected, dt = _np_binary(name, a, b)
    fa, fb = jnp.asarray(a), jnp.asarray(b)
    rtol = dict(rtol=1e-5) if dt.kind == "f" else {}
    for r in (op(fa, fb), op(a, fb), op(fa, b)):
        assert r.dtype == dt and r.shape == expected.shape
        np.testing.assert_allclose(np.asarray(r), expected, **rtol)
    # Python scalars on either side (reflected operators).
    s = data.draw(st.sampled_from([2, 3, 2.0, 0.5]))
    for flip in (False, True):
        r = op(s, fa) if flip else op(fa, s)
        e = np.asarray(op(s, a) if flip else op(a, s))
        jt = jax_result(a, s)  # JAX: int32 with 2 is int32 (true division: float32), with 0.5 the default float
        if name == "true_divide":
            jt = np.dtype(dtypes.to_inexact(jt))
        if e.dtype != jt:
            a2 = a.astype(jt)
            e = np.asarray(op(s, a2) if flip else op(a2, s))
        assert r.dtype == e.dtype, (r.dtype, e.dtype)
        np.testing.assert_allclose(np.asarray(r), e, rtol=1e-5)


def test_matmul_operator_and_reflected():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    b = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    check(jnp.asarray(a) @ jnp.asarray(b), a @ b)
    check(a @ jnp.asarray(b), a @ b)
    check(jnp.asarray(a) @ b, a @ b)
    # (jax.numpy raises TypeError for lists; funcgrad takes them as arrays: default-float data)
    check(jnp.asarray(a) @ [1.0, 2.0, 3.0], a @ np.array([1.0, 2.0, 3.0], default_float()))
    check([1.0, 2.0] @ jnp.asarray(a), np.array([1.0, 2.0], default_float()) @ a)


@pytest.mark.parametrize("fn", [jnp.add, jnp.multiply, jnp.maximum, jnp.less, jnp.power, jnp.true_divide,
                                operator.add, operator.mul, operator.truediv, operator.lt])
def test_broadcast_error_names_op_and_shapes(fn):
    a, b = jnp.ones((2, 3)), jnp.ones((4,))
    with pytest.raises(ValueError) as e:
        fn(a, b)
    msg = str(e.value)
    assert "(2, 3)" in msg and "(4,)" in msg and "broadcast" in msg
    name = getattr(fn, "__name__", "")
    if fn in (jnp.add, jnp.multiply, jnp.maximum, jnp.less, jnp.power, jnp.true_divide):
        assert name in msg


def test_broadcast_errors_other_functions():
    for f, shapes in ((lambda: jnp.where(jnp.ones((2, 1)) > 0, jnp.ones((3,)), jnp.ones((4, 1, 2))),
                       ["(2, 1)", "(3,)", "(4, 1, 2)"]),
                      (lambda: jnp.broadcast_arrays(jnp.ones((2, 3)), jnp.ones((3, 2))), ["(2, 3)", "(3, 2)"]),
                      (lambda: jnp.broadcast_to(jnp.ones(3), (2, 4)), ["(3,)", "(2, 4)"]),
                      (lambda: jnp.matmul(jnp.ones((2, 2, 3)), jnp.ones((3, 3, 1))), ["(2,)", "(3,)"])):
        with pytest.raises(ValueError) as e:
            f()
        for s in shapes:
            assert s in str(e.value), (s, str(e.value))


@given(data=st.data())
def test_where(data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3))
    dc = data.draw(st.sampled_from([np.bool_, np.int32, np.float32]))
    dx, dy = data.draw(st.sampled_from(ALL)), data.draw(st.sampled_from(ALL))
    c = arrays(data.draw, dc, shapes.input_shapes[0], lo=-1, hi=1)
    x = arrays(data.draw, dx, shapes.input_shapes[1])
    y = arrays(data.draw, dy, shapes.input_shapes[2])
    check(jnp.where(c, jnp.asarray(x), y), np.where(c, x, y))
    # Python scalar branches are weak: the array's dtype wins (NEP 50; float scalars into ints: default float).
    check(jnp.where(c, jnp.asarray(x), 0), np.where(c, x, 0))


def test_where_scalars():
    check(jnp.where(True, 1, 2), np.where(True, 1, 2))
    r = jnp.where(np.array([True, False]), 1, 2.5)
    check(r, np.array([1.0, 2.5], default_float()))  # two weak Python scalars: the default float, weak (JAX)
    assert r.weak_type
    with pytest.raises(ValueError):
        jnp.where(np.array([True]), 1)
    nz = jnp.where(np.array([0, 3, 0, 5]))
    assert isinstance(nz, tuple)
    check(nz[0], np.where(np.array([0, 3, 0, 5]))[0])


@given(data=st.data())
def test_clip(data):
    dt = data.draw(st.sampled_from(REAL[1:]))
    x = arrays(data.draw, dt)
    lo, hi = data.draw(st.integers(-4, 2)), data.draw(st.integers(2, 6))
    if np.dtype(dt).kind == "u":
        lo = max(lo, 0)
    check(jnp.clip(x, lo, hi), np.clip(x, lo, hi))
    check(jnp.clip(x, None, hi), np.clip(x, None, hi))
    check(jnp.clip(jnp.asarray(x), min=lo), np.clip(x, min=lo))
    check(jnp.asarray(x).clip(lo, hi), np.clip(x, lo, hi))
    if x.ndim:
        lo_arr = arrays(data.draw, dt, x.shape[-1:])
        check(jnp.clip(x, lo_arr, None), np.clip(x, lo_arr, None))


# --- reductions ---------------------------------------------------------------------------------

@st.composite
def array_and_axis(draw, dtypes_=ALL, min_side=0):
    dt = draw(st.sampled_from(dtypes_), label="dtype")
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=min_side, max_side=4), label="shape")
    x = arrays(draw, dt, shape, lo=-4, hi=4)
    nd = x.ndim
    choices = [st.none()]
    if nd:
        choices.append(st.integers(-nd, nd - 1))
        choices.append(st.lists(st.integers(0, nd - 1), unique=True, max_size=nd).flatmap(
            lambda axs: st.tuples(*[st.sampled_from([a, a - nd]) for a in axs])))
    axis = draw(st.one_of(*choices), label="axis")
    keepdims = draw(st.booleans(), label="keepdims")
    return x, axis, keepdims


@pytest.mark.parametrize("name", ["sum", "prod"])
@given(xak=array_and_axis())
def test_sum_prod(name, xak):
    x, axis, keepdims = xak
    expected = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    check(getattr(jnp, name)(x, axis=axis, keepdims=keepdims), expected)
    check(getattr(jnp.asarray(x), name)(axis=axis, keepdims=keepdims), expected)


@given(xak=array_and_axis(), dt=st.sampled_from([np.int32, np.int64, np.float32, np.float64, np.complex128]))
def test_sum_dtype_argument(xak, dt):
    x, axis, keepdims = xak
    assume(not (np.dtype(dt).kind in "iu" and x.dtype.kind == "c"))
    check(jnp.sum(x, axis=axis, keepdims=keepdims, dtype=dt), np.sum(x, axis=axis, keepdims=keepdims, dtype=dt))
    check(jnp.prod(x, axis=axis, dtype=dt), np.prod(x, axis=axis, dtype=dt))


@given(xak=array_and_axis(min_side=1))
def test_mean(xak):
    x, axis, keepdims = xak
    out_dt = float_result(x.dtype)  # documented: integers/bools average in the default float
    expected = np.mean(x.astype(out_dt), axis=axis, keepdims=keepdims)
    check(jnp.mean(x, axis=axis, keepdims=keepdims), expected, out_dt)
    check(jnp.asarray(x).mean(axis=axis, keepdims=keepdims), expected, out_dt)
    if x.dtype.kind in "fc":  # then exactly NumPy's own dtype (float16 accumulates in float32)
        check(jnp.mean(x, axis=axis), np.mean(x, axis=axis))


def test_mean_dtype_argument():
    x = np.array([[1, 2, 4], [3, 5, 8]], np.int8)
    check(jnp.mean(x, dtype=np.int32), np.mean(x, dtype=np.int32))
    check(jnp.mean(x, axis=1, dtype=np.int32), np.mean(x, axis=1, dtype=np.int32))
    check(jnp.mean(x, dtype=np.float64), np.mean(x, dtype=np.float64))
    check(jnp.mean(x.astype(np.float32), axis=0, dtype=np.float64), np.mean(x.astype(np.float32), axis=0,
                                                                           dtype=np.float64))
    assert jnp.mean(np.zeros((0,), np.float32)).dtype == np.float32  # nan, like NumPy
    assert np.isnan(float(jnp.mean(np.zeros((0,), np.float32))))


@pytest.mark.parametrize("name", ["max", "min", "amax", "amin"])
@given(xak=array_and_axis(REAL + COMPLEX, min_side=1))
def test_max_min(name, xak):
    x, axis, keepdims = xak
    check(getattr(jnp, name)(x, axis=axis, keepdims=keepdims), getattr(np, name)(x, axis=axis, keepdims=keepdims))
    if name in ("max", "min"):
        check(getattr(jnp.asarray(x), name)(axis=axis, keepdims=keepdims),
              getattr(np, name)(x, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@given(data=st.data())
def test_argmax_argmin(name, data):
    dt = data.draw(st.sampled_from(REAL))
    x = arrays(data.draw, dt, data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4)),
               lo=-3, hi=3)
    axis = data.draw(st.none() | (st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.sampled_from([0, -1])))
    keepdims = data.draw(st.booleans())
    if x.ndim == 0 and axis is not None:  # JAX rejects an axis of a 0-d array here (NumPy accepts 0 and -1)
        with pytest.raises((IndexError, ValueError)):
            getattr(jnp, name)(x, axis=axis, keepdims=keepdims)
        return
    expected = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    check(getattr(jnp, name)(x, axis=axis, keepdims=keepdims), expected)
    check(getattr(jnp.asarray(x), name)(axis=axis, keepdims=keepdims), expected)


def test_reduction_dtypes_of_small_ints_and_bools():
    for dt in [np.bool_] + INTS:
        x = np.ones((2, 3), dt)
        for name in ("sum", "prod", "max", "min"):
            assert getattr(jnp, name)(x).dtype == getattr(np, name)(x).dtype, (name, dt)
        assert jnp.argmax(x).dtype == np.argmax(x).dtype
    assert jnp.sum(np.array([True, True, False])).dtype == np.int64
    assert int(jnp.sum(np.array([True, True, False]))) == 2
    assert jnp.sum(np.array([1, 2], np.uint8)).dtype == np.uint64


def test_reductions_on_empty_and_0d():
    e = np.zeros((0, 3), np.float32)
    check(jnp.sum(e), np.sum(e))
    check(jnp.sum(e, axis=0), np.sum(e, axis=0))
    check(jnp.prod(e, axis=0), np.prod(e, axis=0))
    check(jnp.max(e, axis=1), np.max(e, axis=1))
    for name in ("max", "min"):
        with pytest.raises(ValueError):
            getattr(np, name)(e)
        with pytest.raises(ValueError):
            getattr(jnp, name)(e)
        with pytest.raises(ValueError):
            getattr(jnp, name)(e, axis=0)
    for name in ("argmax", "argmin"):
        with pytest.raises(ValueError):
            getattr(jnp, name)(e)
    check(jnp.max(e, axis=0, initial=-1.0), np.max(e, axis=0, initial=-1.0))
    z = np.array(2.5, np.float32)
    for name in ("sum", "mean", "prod", "max", "min", "argmax", "argmin"):
        for axis in (None, 0, -1):
            if axis is not None:  # JAX rejects an axis of a 0-d array in every reduction (NumPy: only mean)
                with pytest.raises((IndexError, ValueError)):
                    getattr(jnp, name)(z, axis=axis)
                continue
            check(getattr(jnp, name)(z, axis=axis), getattr(np, name)(z, axis=axis))
    check(jnp.sum(z, axis=()), np.sum(z, axis=()))
    check(jnp.sum(np.ones((2, 3)), axis=()), np.sum(np.ones((2, 3)), axis=()))


def test_reduction_initial_and_where():
    x = np.array([[1, 2, 3], [4, 5, 6]])
    check(jnp.sum(x, initial=1.5), np.sum(x, initial=1.5))  # initial is cast to the result dtype
    check(jnp.sum(x, axis=0, initial=10), np.sum(x, axis=0, initial=10))
    check(jnp.prod(x, axis=1, initial=2), np.prod(x, axis=1, initial=2))
    check(jnp.max(x, initial=9), np.max(x, initial=9))
    check(jnp.min(x, axis=1, initial=0), np.min(x, axis=1, initial=0))
    w = np.array([[True, False, True], [False, True, True]])
    check(jnp.sum(x, where=w), np.sum(x, where=w))
    check(jnp.max(x, axis=1, where=w, initial=-1), np.max(x, axis=1, where=w, initial=-1))
    xf = x.astype(np.float32)
    check(jnp.mean(xf, axis=1, where=w), np.mean(xf, axis=1, where=w))


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "max", "min", "argmax", "argmin"])
def test_reduction_axis_errors(name):
    x = np.ones((2, 3))
    for axis in (2, -3):
        with pytest.raises(AxisError):
            getattr(np, name)(x, axis=axis)
        with pytest.raises(ValueError) as e:  # numpy's AxisError: a ValueError (and IndexError)
            getattr(jnp, name)(x, axis=axis)
        assert isinstance(e.value, AxisError) and str(axis) in str(e.value)
        with pytest.raises(IndexError):
            getattr(jnp, name)(x, axis=axis)
    with pytest.raises(ValueError):
        getattr(jnp, name)(np.array(1.0), axis=1)
    if name not in ("argmax", "argmin"):
        with pytest.raises(ValueError):
            getattr(jnp, name)(x, axis=(0, 0))
        with pytest.raises(ValueError):
            getattr(jnp, name)(x, axis=(1, -1))
    with pytest.raises(TypeError):
        getattr(jnp, name)(x, axis=1.0)


# --- creation -----------------------------------------------------------------------------------

def test_array_and_asarray_dtypes():
    cases = [([1, 2], np.int64), ([1.0, 2.0], default_float()), ([True, False], np.bool_),
             ([1, 2.5], default_float()), ([[1j]], dtypes.defaults.complex_), ([True, 2], np.int64),
             (1.5, default_float()), (3, np.int64), (True, np.bool_), ([], default_float())]
    for value, dt in cases:
        for f in (jnp.array, jnp.asarray):
            r = f(value)
            assert r.dtype == dt, (value, r.dtype)
            # a Python int/float/complex stays weakly typed (as in JAX 0.10.2); a list or bool does not
            assert r.weak_type == (type(value) in (int, float, complex)), (value, r.weak_type)
            np.testing.assert_array_equal(np.asarray(r), np.asarray(value, dtype=dt))
    for dt in ALL:
        a = np.ones((2,), dt)
        assert jnp.asarray(a).dtype == dt and jnp.array(a).dtype == dt
        assert jnp.asarray(a[0]).dtype == dt  # NumPy scalars keep their dtype
    check(jnp.array([1, 2], dtype=np.float64), np.array([1, 2], dtype=np.float64))
    check(jnp.asarray(np.ones(3, np.float64), dtype=np.float32), np.ones(3, np.float32))
    check(jnp.array([[1, 2]], ndmin=3), np.array([[1, 2]], ndmin=3))
    check(jnp.array(jnp.asarray([1.0, 2.0]), dtype=np.int32), np.array([1, 2], np.int32))
    x = jnp.asarray([1.0])
    assert jnp.asarray(x) is x and jnp.asarray(x, dtype=default_float()) is x
    check(jnp.array([jnp.asarray(1.0), 2.0]), np.array([1.0, 2.0], default_float()))
    check(jnp.array([np.ones(2, np.float64), np.zeros(2, np.float64)]), np.array([np.ones(2), np.zeros(2)]))


@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
       dt=st.sampled_from([None] + ALL))
def test_zeros_ones_empty_full(shape, dt):
    out_dt = np.dtype(default_float()) if dt is None else np.dtype(dt)
    check(jnp.zeros(shape, dt), np.zeros(shape, out_dt))
    check(jnp.ones(shape, dtype=dt), np.ones(shape, out_dt))
    assert jnp.empty(shape, dt).shape == shape and jnp.empty(shape, dt).dtype == out_dt
    check(jnp.full(shape, 3, dt), np.full(shape, 3, out_dt if dt is not None else np.int64))
    if len(shape) == 1:
        check(jnp.zeros(shape[0], dt), np.zeros(shape[0], out_dt))


def test_full_fill_values():
    check(jnp.full((2, 2), 2.5), np.full((2, 2), 2.5, default_float()))  # Python float: default float
    check(jnp.full(2, True), np.full(2, True))
    check(jnp.full(2, 1j), np.full(2, 1j, dtypes.defaults.complex_))
    check(jnp.full(3, np.float64(1.5)), np.full(3, np.float64(1.5)))      # NumPy scalars keep their dtype
    check(jnp.full(3, np.int8(4)), np.full(3, np.int8(4)))
    check(jnp.full((2, 3), [1, 2, 3]), np.full((2, 3), [1, 2, 3]))        # array fill values broadcast
    check(jnp.full((2, 3), np.arange(3.0)), np.full((2, 3), np.arange(3.0)))
    check(jnp.full((2, 3), jnp.asarray([1, 2, 3]), dtype=np.float32), np.full((2, 3), [1, 2, 3], np.float32))
    check(jnp.full(2, 2.7, dtype=np.int32), np.full(2, 2.7, dtype=np.int32))
    with pytest.raises(ValueError):
        jnp.zeros((-1, 2))
    with pytest.raises(ValueError):
        jnp.full((2,), np.ones(3))


@given(data=st.data())
def test_like_functions(data):
    dt = data.draw(st.sampled_from(ALL))
    x = arrays(data.draw, dt)
    new_dt = data.draw(st.sampled_from([None, np.int32, np.float64, np.bool_]))
    for src in (x, jnp.asarray(x)):
        check(jnp.zeros_like(src, dtype=new_dt), np.zeros_like(x, dtype=new_dt))
        check(jnp.ones_like(src, dtype=new_dt), np.ones_like(x, dtype=new_dt))
        check(jnp.full_like(src, 2, dtype=new_dt), np.full_like(x, 2, dtype=new_dt))
        r = jnp.empty_like(src, dtype=new_dt)
        assert r.shape == x.shape and r.dtype == np.empty_like(x, dtype=new_dt).dtype
    check(jnp.zeros_like(x, shape=(2, 1)), np.zeros_like(x, shape=(2, 1)))
    if x.dtype.kind in "iu":
        check(jnp.full_like(x, 2.7), np.full_like(x, 2.7))  # the fill value is cast to a's dtype
    # Lists behave as asarray(list): Python floats give the default float.
    check(jnp.ones_like([1.0, 2.0]), np.ones(2, default_float()))
    check(jnp.full_like([1, 2], 7), np.full_like([1, 2], 7))


@given(start=st.integers(-20, 20), stop=st.integers(-20, 20), step=st.integers(-5, 5).filter(bool))
def test_arange_ints(start, stop, step):
    check(jnp.arange(start, stop, step), np.arange(start, stop, step))
    check(jnp.arange(stop), np.arange(stop))
    check(jnp.arange(start, stop), np.arange(start, stop))
    check(jnp.arange(start, stop, step, dtype=np.float32), np.arange(start, stop, step, dtype=np.float32))
    check(jnp.arange(start, stop, step, np.int16), np.arange(start, stop, step, np.int16))


@given(start=st.integers(-40, 40), stop=st.integers(-40, 40), step=st.integers(-9, 9).filter(bool),
       scale=st.sampled_from([0.5, 0.1, 0.25, 1.0]))
def test_arange_floats(start, stop, step, scale):
    s, e, d = start * scale, stop * scale, step * scale
    # Python floats give the default float (NumPy: float64); values are NumPy's for that dtype.
    check(jnp.arange(s, e, d), np.arange(s, e, d, dtype=default_float()))
    check(jnp.arange(s, e, d, dtype=np.float64), np.arange(s, e, d, dtype=np.float64))
    check(jnp.arange(e), np.arange(e, dtype=default_float()))
    check(jnp.arange(np.float64(s), e, d), np.arange(np.float64(s), e, d, dtype=default_float()))


def test_arange_misc():
    check(jnp.arange(np.int32(5)), np.arange(np.int32(5)))  # NumPy: int64 for any integer bounds
    check(jnp.arange(jnp.asarray(4)), np.arange(4))
    check(jnp.arange(0, 1, 0.1), np.arange(0, 1, 0.1, dtype=default_float()))
    check(jnp.arange(2.5), np.arange(2.5, dtype=default_float()))
    with pytest.raises(ZeroDivisionError):
        np.arange(0, 5, 0)
    with pytest.raises(ZeroDivisionError):
        jnp.arange(0, 5, 0)


@given(start=st.floats(-10, 10, allow_nan=False), stop=st.floats(-10, 10, allow_nan=False),
       num=st.integers(0, 12), endpoint=st.booleans(),
       dt=st.sampled_from([None, np.float32, np.float64, np.int32, np.int64, np.float16]))
def test_linspace(start, stop, num, endpoint, dt):
    out_dt = np.dtype(default_float()) if dt is None else np.dtype(dt)
    r, step = jnp.linspace(start, stop, num, endpoint=endpoint, retstep=True, dtype=dt)
    e, estep = np.linspace(start, stop, num, endpoint=endpoint, retstep=True, dtype=out_dt)
    assert r.dtype == out_dt and r.shape == e.shape
    if out_dt.kind == "i":
        np.testing.assert_array_equal(np.asarray(r), e)  # floor, computed in float64 as NumPy does
    else:
        scale = max(abs(start), abs(stop), 1.0)
        t = tol(out_dt)
        np.testing.assert_allclose(np.asarray(r), e, rtol=t["rtol"] * 4, atol=t["atol"] * 4 * scale)
    if num > 1 or not endpoint and num > 0:
        np.testing.assert_allclose(float(step), estep, rtol=1e-5, atol=1e-6)


def test_linspace_arrays_and_axis():
    s, e = np.array([0.0, 1.0]), np.array([[2.0], [3.0]])
    for axis in (0, 1, -1, 2):
        check(jnp.linspace(s, e, 5, axis=axis), np.linspace(s, e, 5, axis=axis))
    check(jnp.linspace(np.float32(1), np.float32(2), 4), np.linspace(np.float32(1), np.float32(2), 4))
    check(jnp.linspace(0, 10, 5, endpoint=False), np.linspace(0, 10, 5, endpoint=False, dtype=default_float()))
    check(jnp.linspace(-5, 5, 4, dtype=int), np.linspace(-5, 5, 4, dtype=int))
    check(jnp.linspace(0, 3, 10, dtype=np.int32), np.linspace(0, 3, 10, dtype=np.int32))
    check(jnp.linspace(2, 2, 3), np.linspace(2, 2, 3, dtype=default_float()))
    check(jnp.linspace(0, 1, 1), np.linspace(0, 1, 1, dtype=default_float()))
    check(jnp.linspace(0, 1, 0), np.linspace(0, 1, 0, dtype=default_float()))
    with pytest.raises(ValueError):
        jnp.linspace(0, 1, -1)
    with pytest.raises(TypeError):
        jnp.linspace(0, 1, 2.5)


@given(n=st.integers(0, 5), m=st.none() | st.integers(0, 5), k=st.integers(-6, 6),
       dt=st.sampled_from([None, np.int32, np.bool_, np.float64, np.complex64]))
def test_eye_identity(n, m, k, dt):
    out_dt = np.dtype(default_float()) if dt is None else dt
    check(jnp.eye(n, m, k, dtype=dt), np.eye(n, m, k, dtype=out_dt))
    check(jnp.eye(n, M=m, k=k), np.eye(n, M=m, k=k, dtype=default_float()))
    check(jnp.identity(n, dtype=dt), np.identity(n, dtype=out_dt))


# --- products -----------------------------------------------------------------------------------

@given(data=st.data())
def test_matmul(data):
    m, k, n = (data.draw(st.integers(1, 4)) for _ in range(3))
    batch = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3))
    a_vec, b_vec = data.draw(st.booleans()), data.draw(st.booleans())
    da = data.draw(st.sampled_from([np.bool_, np.int32, np.int64, np.float32, np.float64, np.complex64]))
    db = data.draw(st.sampled_from([np.int32, np.float32, np.float64, np.complex128]))
    a_shape = (k,) if a_vec else batch.input_shapes[0] + (m, k)
    b_shape = (k,) if b_vec else batch.input_shapes[1] + (k, n)
    a = arrays(data.draw, da, a_shape, lo=-3, hi=3)
    b = arrays(data.draw, db, b_shape, lo=-3, hi=3)
    dt = jax_result(a, b)  # JAX's lattice: int32 with float32 is float32 (NumPy: float64)
    want = np.matmul(a.astype(dt), b.astype(dt))
    check(jnp.matmul(a, b), want, dt)
    check(jnp.asarray(a) @ jnp.asarray(b), want, dt)


@given(data=st.data())
def test_dot_vdot_outer(data):
    dt = data.draw(st.sampled_from([np.int32, np.float32, np.float64, np.complex64, np.complex128]))
    k = data.draw(st.integers(1, 4))
    a_nd, b_nd = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))
    a_shape = tuple(data.draw(st.integers(1, 3)) for _ in range(a_nd - 1)) + ((k,) if a_nd else ())
    b_shape = (tuple(data.draw(st.integers(1, 3)) for _ in range(b_nd - 2)) + (k,) +
               ((data.draw(st.integers(1, 3)),) if b_nd >= 2 else ())) if b_nd else ()
    a = arrays(data.draw, dt, a_shape, lo=-3, hi=3)
    b = arrays(data.draw, dt, b_shape, lo=-3, hi=3)
    check(jnp.dot(a, b), np.dot(a, b))
    check(jnp.asarray(a).dot(b), np.dot(a, b))
    if a.size == b.size:
        check(jnp.vdot(a, b), np.vdot(a, b))  # conjugates the first argument
    check(jnp.outer(a, b), np.outer(a, b))


def test_product_errors():
    with pytest.raises(ValueError):
        jnp.matmul(jnp.ones(3), 2.0)
    with pytest.raises(ValueError) as e:
        jnp.matmul(jnp.ones((2, 3)), jnp.ones((2, 3)))
    assert "(2, 3)" in str(e.value)
    with pytest.raises(ValueError):
        jnp.matmul([[1.0, 2.0]], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        jnp.dot(jnp.ones(3), jnp.ones(2))
    with pytest.raises(ValueError):
        jnp.vdot(jnp.ones(3), jnp.ones(2))
    check(jnp.dot(2.0, np.ones(3, np.float32)), np.ones(3, np.float32) * 2)
    check(jnp.vdot(np.array([1j, 2]), np.array([1j, 1])), np.vdot(np.array([1j, 2]), np.array([1j, 1])))


# --- shape manipulation --------------------------------------------------------------------------

@given(data=st.data())
def test_reshape_ravel(data):
    x = arrays(data.draw, np.float32)
    factors = [d for d in range(1, x.size + 1) if x.size % d == 0] or [1]
    d = data.draw(st.sampled_from(factors))
    shape = (d, -1) if x.size else (0, 3)
    check(jnp.reshape(x, shape), np.reshape(x, shape))
    fx = jnp.asarray(x)
    check(fx.reshape(shape), x.reshape(shape))
    check(fx.reshape(*shape), x.reshape(*shape))
    check(fx.reshape(np.int64(x.size)), x.reshape(x.size))
    check(fx.reshape(x.size), x.reshape(x.size))
    check(jnp.ravel(x), np.ravel(x))
    check(fx.ravel(), x.ravel())
    check(fx.flatten(), x.flatten())
    with pytest.raises(ValueError):
        jnp.reshape(x, (x.size + 1,))


@given(data=st.data())
def test_transpose_moveaxis_swapaxes(data):
    x = arrays(data.draw, np.int32, data.draw(hnp.array_shapes(min_dims=1, max_dims=4, max_side=3)))
    nd = x.ndim
    perm = data.draw(st.permutations(range(nd)))
    perm_neg = [p - nd if data.draw(st.booleans()) else p for p in perm]
    check(jnp.transpose(x), np.transpose(x))
    check(jnp.transpose(x, perm_neg), np.transpose(x, perm_neg))
    fx = jnp.asarray(x)
    check(fx.T, x.T)
    check(fx.transpose(perm_neg), x.transpose(perm_neg))
    check(fx.transpose(*perm_neg), x.transpose(*perm_neg))
    check(fx.transpose(), x.transpose())
    src = data.draw(st.lists(st.integers(-nd, nd - 1), unique_by=lambda a: a % nd, max_size=nd))
    dst = data.draw(st.lists(st.integers(-nd, nd - 1), unique_by=lambda a: a % nd, min_size=len(src),
                             max_size=len(src)))
    check(jnp.moveaxis(x, src, dst), np.moveaxis(x, src, dst))
    i, j = data.draw(st.integers(-nd, nd - 1)), data.draw(st.integers(-nd, nd - 1))
    check(jnp.moveaxis(x, i, j), np.moveaxis(x, i, j))
    check(jnp.swapaxes(x, i, j), np.swapaxes(x, i, j))
    check(fx.swapaxes(i, j), x.swapaxes(i, j))


@given(data=st.data())
def test_squeeze_expand_dims(data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=3))
    x = arrays(data.draw, np.float64, shape)
    check(jnp.squeeze(x), np.squeeze(x))
    check(jnp.asarray(x).squeeze(), x.squeeze())
    ones = [i for i, s in enumerate(shape) if s == 1]
    if ones:
        ax = data.draw(st.sampled_from(ones))
        for a in (ax, ax - x.ndim, (ax,)):
            check(jnp.squeeze(x, a), np.squeeze(x, a))
    n_new = data.draw(st.integers(1, 2))
    axes = data.draw(st.lists(st.integers(-(x.ndim + n_new), x.ndim + n_new - 1), min_size=n_new,
                              max_size=n_new, unique_by=lambda a: a % (x.ndim + n_new)))
    check(jnp.expand_dims(x, tuple(axes)), np.expand_dims(x, tuple(axes)))
    if -x.ndim - 1 <= axes[0] <= x.ndim:
        check(jnp.expand_dims(x, axes[0]), np.expand_dims(x, axes[0]))


@given(data=st.data())
def test_concatenate_stack(data):
    base = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3))
    nd = len(base)
    axis = data.draw(st.integers(-nd, nd - 1))
    n = data.draw(st.integers(1, 3))
    dts = [data.draw(st.sampled_from(ALL)) for _ in range(n)]
    xs = []
    for dt in dts:
        shape = list(base)
        shape[axis] = data.draw(st.integers(0, 3))
        xs.append(arrays(data.draw, dt, tuple(shape)))
    check(jnp.concatenate(xs, axis=axis), np.concatenate(xs, axis=axis))
    check(jnp.concatenate([jnp.asarray(v) for v in xs], axis=None), np.concatenate(xs, axis=None))
    same = [arrays(data.draw, dt, base) for dt in dts]
    sax = data.draw(st.integers(-nd - 1, nd))
    check(jnp.stack(same, axis=sax), np.stack(same, axis=sax))
    for f, g in ((jnp.stack, np.stack), (jnp.concatenate, np.concatenate)):
        for dt in (np.float64, np.float32, np.int32):
            try:
                expected = g(same, dtype=dt)
            except TypeError:  # NumPy's casting="same_kind" refuses e.g. complex -> float
                with pytest.raises(TypeError):
                    f(same, dtype=dt)
                continue
            check(f(same, dtype=dt), expected)


@given(data=st.data())
def test_broadcast_to_and_arrays(data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3))
    xs = [arrays(data.draw, dt, s) for dt, s in zip((np.float32, np.int8, np.bool_), shapes.input_shapes)]
    got = jnp.broadcast_arrays(*xs)
    want = np.broadcast_arrays(*xs)
    assert isinstance(got, list) and len(got) == 3  # as jnp.broadcast_arrays and the Array API (NumPy 2: tuple)
    for g, w in zip(got, want):
        check(g, w)
    for x in xs:
        check(jnp.broadcast_to(x, shapes.result_shape), np.broadcast_to(x, shapes.result_shape))
    check(jnp.broadcast_to(2.5, (2, 2)), np.broadcast_to(np.asarray(2.5, default_float()), (2, 2)))
    assert jnp.broadcast_shapes(*shapes.input_shapes) == np.broadcast_shapes(*shapes.input_shapes)


@pytest.mark.parametrize("call", [
    lambda m: m.transpose(m.ones((2, 3)), (0, 2)),
    lambda m: m.moveaxis(m.ones((2, 3)), 5, 0),
    lambda m: m.moveaxis(m.ones((2, 3)), 0, -3),
    lambda m: m.swapaxes(m.ones((2, 3)), 0, 2),
    lambda m: m.expand_dims(m.ones(3), 3),
    lambda m: m.squeeze(m.ones((1, 3)), 2),
    lambda m: m.stack([m.ones(2)], axis=2),
    lambda m: m.concatenate([m.ones(2)], axis=1),
])
def test_out_of_range_axis_errors(call):
    with pytest.raises(AxisError):
        call(np)
    with pytest.raises(ValueError):
        call(jnp)
    with pytest.raises(AxisError):
        call(jnp)


@pytest.mark.parametrize("call", [
    lambda m: m.transpose(m.ones((2, 3)), (0, 0)),
    lambda m: m.transpose(m.ones((2, 3)), (0,)),
    lambda m: m.expand_dims(m.ones(3), (0, 0)),
    lambda m: m.squeeze(m.ones((1, 3)), 1),
    lambda m: m.moveaxis(m.ones((2, 3)), (0, 0), (0, 1)),
    lambda m: m.concatenate([m.ones(2), m.ones((2, 1))]),
    lambda m: m.concatenate([m.ones((2, 3)), m.ones((3, 2))]),
    lambda m: m.concatenate([m.ones(())]),
    lambda m: m.stack([m.ones(2), m.ones(3)]),
    lambda m: m.reshape(m.ones(6), (4, -1)),
    lambda m: m.reshape(m.ones(6), (-1, -1)),
    lambda m: m.broadcast_to(m.ones(3), (-1, 3)),
    lambda m: m.broadcast_to(m.ones((2, 3)), (3,)),
])
def test_shape_errors_match_numpy(call):
    with pytest.raises(ValueError):
        call(np)
    with pytest.raises(ValueError):
        call(jnp)


# --- names NumPy has and funcgrad lacks -------------------------------------------------------------

def test_missing_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="fft_something_missing"):
        jnp.fft_something_missing
    with pytest.raises(AttributeError, match="busday_count"):  # a real NumPy name funcgrad does not have
        jnp.busday_count
    with pytest.raises(AttributeError, match="datetime_as_string"):
        getattr(jnp, "datetime_as_string")
    assert not hasattr(jnp, "fft_something_missing")
    for name in ["array", "asarray", "zeros", "ones", "full", "empty", "arange", "linspace", "eye", "identity",
                 "zeros_like", "ones_like", "full_like", "empty_like", "add", "subtract", "multiply", "divide",
                 "true_divide", "power", "negative", "positive", "absolute", "abs", "sign", "maximum", "minimum",
                 "exp", "log", "log1p", "expm1", "tanh", "sin", "cos", "sqrt", "square", "reciprocal", "equal",
                 "not_equal", "less", "less_equal", "greater", "greater_equal", "sum", "mean", "max", "min",
                 "prod", "argmax", "argmin", "dot", "matmul", "vdot", "outer", "reshape", "ravel", "transpose",
                 "moveaxis", "swapaxes", "concatenate", "stack", "squeeze", "expand_dims", "where", "clip",
                 "broadcast_to", "broadcast_arrays"]:
        assert callable(getattr(jnp, name)), name


# --- under transforms -------------------------------------------------------------------------------

TRANSFORM_FNS = {
    "ufuncs": lambda x: jnp.exp(x) * jnp.sin(x) - jnp.sqrt(jnp.abs(x)) / (1 + jnp.square(x)) + jnp.maximum(x, 0.1),
    "int_mix": lambda x: jnp.tanh(x) + (x > 0) + jnp.sign(x) ** 2,
    "sum_axes": lambda x: jnp.sum(x, axis=(0, -1), keepdims=True) + jnp.mean(x, axis=-1).sum(),
    "max_min": lambda x: jnp.max(x, axis=0) - jnp.min(x, axis=-1, keepdims=True).T.ravel()[0],
    "arg": lambda x: jnp.argmax(x, axis=-1) + jnp.argmin(x),
    "prod": lambda x: jnp.prod(x, axis=1),
    "where_clip": lambda x: jnp.where(x > 0, jnp.clip(x, 0.2, 0.8), -x),
    "matmul": lambda x: x @ x.T + jnp.dot(x, jnp.ones(x.shape[-1])).reshape(-1, 1),
    "shapes": lambda x: jnp.concatenate([jnp.moveaxis(x[None], 0, -1), jnp.stack([x, x], axis=-1)], axis=-1),
    "creation": lambda x: x + jnp.ones_like(x) + jnp.eye(x.shape[0], x.shape[1], k=1) + jnp.arange(x.shape[1]),
    "linspace": lambda x: jnp.linspace(x[0], x[1], 4),
    "outer": lambda x: jnp.outer(x[0], x[1]) + jnp.vdot(x, x),
    "bool_ops": lambda x: ((x > 0) + (x < 0.5)) * (x != 0),
    "broadcast": lambda x: jnp.broadcast_arrays(x, x[:1])[1] + jnp.broadcast_to(x[0], x.shape),
    "squeeze": lambda x: jnp.squeeze(jnp.expand_dims(x, (0, -1)), axis=0).swapaxes(0, -1),
}


@pytest.mark.parametrize("name", sorted(TRANSFORM_FNS))
@given(seed=st.integers(0, 2 ** 31 - 1))
def test_jit_and_vmap_match_eager(name, seed):
    f = TRANSFORM_FNS[name]
    rng = np.random.default_rng(seed)
    xs = rng.normal(size=(3, 3, 4)).astype(np.float32)
    eager = [f(jnp.asarray(x)) for x in xs]
    jitted = funcgrad.jit(f)(jnp.asarray(xs[0]))
    assert jitted.dtype == eager[0].dtype and jitted.shape == eager[0].shape
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(eager[0]), rtol=1e-5, atol=1e-6)
    batched = funcgrad.vmap(f)(jnp.asarray(xs))
    assert batched.dtype == eager[0].dtype and batched.shape == (3,) + eager[0].shape
    np.testing.assert_allclose(np.asarray(batched), np.stack([np.asarray(e) for e in eager]), rtol=1e-5, atol=1e-6)
    jv = funcgrad.jit(funcgrad.vmap(f))(jnp.asarray(xs))
    np.testing.assert_allclose(np.asarray(jv), np.asarray(batched), rtol=1e-5, atol=1e-6)


def _numeric_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (float(f(jnp.asarray(xp))) - float(f(jnp.asarray(xm)))) / (2 * eps)
    return g


GRAD_FNS = {
    "sum": lambda x: jnp.sum(jnp.sin(x) * x, axis=(0, -1)).sum(),
    "sum_keepdims": lambda x: (jnp.sum(x, axis=1, keepdims=True) * x).sum(),
    "mean": lambda x: jnp.mean(x ** 2, axis=-1).mean() + jnp.mean(x),
    "max": lambda x: jnp.max(x, axis=0).sum() + jnp.max(x) * 2 + jnp.min(x, axis=1).sum(),
    "prod": lambda x: jnp.prod(x, axis=1).sum() + jnp.prod(x[0]),
    "matmul": lambda x: jnp.sum(jnp.tanh(x @ x.T) * jnp.matmul(x, jnp.ones((x.shape[1], 2), np.float64))[:, :1]),
    "where": lambda x: jnp.sum(jnp.where(x > 0, x ** 2, 3.0 * x) + jnp.where(x < 0.5, 1.0, x)),
    "clip": lambda x: jnp.sum(jnp.clip(x, -0.5, 0.7) * x),
    "dot_outer": lambda x: jnp.sum(jnp.outer(x[0], x[1]) ** 2) + jnp.vdot(x, jnp.exp(x)) + jnp.dot(x[0], x[1]),
    "shape_ops": lambda x: jnp.sum(jnp.concatenate([x, x.T.reshape(x.shape)], axis=0) ** 3
                                   * jnp.arange(2 * x.shape[0])[:, None]),
}


@pytest.mark.parametrize("name", sorted(GRAD_FNS))
@given(seed=st.integers(0, 2 ** 31 - 1))
def test_grad_matches_finite_differences(name, seed):
    f = GRAD_FNS[name]
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3, 3))
    if name == "clip":  # keep away from the kinks, where finite differences are meaningless
        x = np.where(np.abs(x + 0.5) < 0.05, x + 0.2, x)
        x = np.where(np.abs(x - 0.7) < 0.05, x + 0.2, x)
    if name == "where":
        x = np.where(np.abs(x) < 0.05, 0.3, x)
        x = np.where(np.abs(x - 0.5) < 0.05, 0.8, x)
    g = funcgrad.grad(f)(jnp.asarray(x))
    assert g.dtype == np.float64 and g.shape == x.shape
    np.testing.assert_allclose(np.asarray(g), _numeric_grad(f, x), rtol=1e-5, atol=1e-6)
    gj = funcgrad.jit(funcgrad.grad(f))(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(gj), np.asarray(g), rtol=1e-10, atol=1e-12)


def test_linalg_vecdot_keeps_the_operands_dtype():
    """The Array API (and jnp.linalg.vecdot): the result dtype is the operands' promoted dtype; a plain sum
    would widen uint8 to the default unsigned integer."""
    a = jnp.asarray(np.array([[1, 2, 3], [4, 5, 6]], np.uint8))
    b = jnp.asarray(np.array([1, 1, 2], np.uint8))
    for f in (jnp.linalg.vecdot, jnp.vecdot):
        out = f(a, b)
        assert out.dtype == jnp.uint8
        np.testing.assert_array_equal(np.asarray(out), [9, 21])
