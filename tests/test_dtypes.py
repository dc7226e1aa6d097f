"""dtype promotion against NumPy 2: array-array pairs match numpy.result_type exactly; array-with-Python-
scalar (weak, NEP 50) results match NumPy except for funcgrad's documented default-float rule.

The one documented difference: funcgrad's default float dtype is float32 (float64 after
`funcgrad.config.update("enable_x64", True)`), so where NumPy turns integer/bool data combined with a
Python float into float64, funcgrad gives the default float dtype (and a Python complex with
integer/bool data gives the default complex dtype, complex64 / complex128 with x64). With x64 enabled
funcgrad matches NumPy's NEP 50 results exactly, except where integer or bool data alone must become
float (true division, exp, mean, ...): there funcgrad follows JAX (jax.dtypes.to_inexact_dtype), and bool
and integers of up to 32 bits compute in float32 while 64-bit integers take the default float.
"""
import contextlib
import itertools
import warnings

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as jnp
from funcgrad.core import dtypes

DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                np.uint32, np.uint64, np.float16, np.float32, np.float64,
                                np.complex64, np.complex128)]
PAIRS = list(itertools.product(DTYPES, DTYPES))


@contextlib.contextmanager
def x64(enabled=True):
    old = funcgrad.config.read("enable_x64")
    funcgrad.config.update("enable_x64", enabled)
    try:
        yield
    finally:
        funcgrad.config.update("enable_x64", old)


def _sample(dt, seed=0):
    """A small array of dtype dt with values every dtype can hold (1..3, no zeros)."""
    return np.array([1, 2, 3], dtype=np.int64).astype(dt) if dt != np.bool_ else np.array([True, False, True])


def _assert_same(actual, expected):
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    a = np.asarray(actual)
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(a, expected, rtol=1e-3 if expected.dtype == np.float16 else 1e-6)
    else:
        np.testing.assert_array_equal(a, expected)


# --- array with array: exactly numpy.result_type ----------------------------------------------------

@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("a_dt,b_dt", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_array_array_promotion_matches_numpy(a_dt, b_dt):
    a, b = _sample(a_dt), _sample(b_dt)
    expected = np.result_type(a_dt, b_dt)
    assert dtypes.promote_types(a_dt, b_dt) == expected
    assert dtypes.result_type((a_dt, False), (b_dt, False)) == (expected, False)
    fa, fb = jnp.asarray(a), jnp.asarray(b)
    _assert_same(jnp.add(fa, fb), np.add(a, b))
    _assert_same(fa * fb, np.multiply(a, b))
    _assert_same(jnp.maximum(fa, fb), np.maximum(a, b))
    _assert_same(jnp.where(np.array([True, False, True]), fa, fb), np.where([True, False, True], a, b))
    _assert_same(jnp.concatenate([fa, fb]), np.concatenate([a, b]))
    assert (fa < fb).dtype == np.bool_
    if expected != np.bool_:
        _assert_same(fa - fb, np.subtract(a, b))
    # true division: NumPy's dtype when that is inexact, else the default float dtype.
    div_dt = expected if expected.kind in "fc" else dtypes.defaults.float_
    _assert_same(fa / fb, np.true_divide(a.astype(div_dt), b.astype(div_dt)).astype(div_dt))
    # Promotion is the same under jit.
    assert funcgrad.jit(jnp.add)(fa, fb).dtype == expected


# --- array with Python scalar: NEP 50 (weak scalars) ---------------------------------------------

SCALARS = [True, 1, 1.0, 1j]


def _expected_weak(dt, scalar):
    """NumPy 2's NEP 50 result, with funcgrad's default float/complex for int/bool data (see module doc)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = np.add(_sample(dt), scalar).dtype
    if dt.kind in "biu":
        if isinstance(scalar, float):
            return dtypes.defaults.float_  # documented: NumPy gives float64
        if isinstance(scalar, complex):
            return dtypes.defaults.complex_  # documented: NumPy gives complex128
    return expected


@pytest.mark.parametrize("dt", DTYPES, ids=str)
@pytest.mark.parametrize("scalar", SCALARS, ids=lambda s: type(s).__name__)
def test_array_scalar_weak_promotion(dt, scalar):
    a = _sample(dt)
    fa = jnp.asarray(a)
    expected = _expected_weak(dt, scalar)
    for r in (fa + scalar, scalar + fa, jnp.multiply(fa, scalar), jnp.multiply(scalar, fa),
              jnp.maximum(fa, scalar) if not isinstance(scalar, complex) or dt.kind == "c" else fa + scalar,
              jnp.where(a > 0, fa, scalar)):
        assert r.dtype == expected, (dt, scalar, r.dtype, expected)
        # JAX's lattice: the result stays weak where the scalar's kind decided it (bool data with a
        # Python int, int data with a Python float), except a float array with a Python complex
        rank = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}
        skind = {bool: 0, int: 1, float: 2, complex: 3}[type(scalar)]
        assert r.weak_type == (skind > rank[dt.kind] and not (skind == 3 and dt.kind == "f")), (dt, scalar)
    np.testing.assert_allclose(np.asarray(fa + scalar), np.add(a.astype(expected), scalar).astype(expected),
                               rtol=1e-3)
    assert dtypes.result_type((dt, False), (dtypes.python_scalar_dtype(scalar), True)) == (expected, r.weak_type)


@pytest.mark.parametrize("dt", DTYPES, ids=str)
@pytest.mark.parametrize("scalar", SCALARS, ids=lambda s: type(s).__name__)
def test_array_scalar_weak_promotion_x64_matches_numpy_exactly(dt, scalar):
    with x64():
        fa = jnp.asarray(_sample(dt))
        expected = np.add(_sample(dt), scalar).dtype
        assert (fa + scalar).dtype == expected
        assert (scalar * fa).dtype == expected
        assert funcgrad.jit(lambda x: x + scalar)(fa).dtype == expected


def test_default_float_rule_documented_cases():
    i = jnp.asarray(np.array([1, 2], np.int32))
    assert (i + 1.5).dtype == np.float32          # NumPy: float64
    assert (jnp.asarray([True]) * 2.0).dtype == np.float32
    assert (i / 2).dtype == np.float32             # NumPy: float64
    assert jnp.exp(i).dtype == np.float32          # NumPy: float64
    assert jnp.mean(i).dtype == np.float32         # NumPy: float64
    assert (i + 1j).dtype == np.complex64          # NumPy: complex128
    with x64():
        assert (i + 1.5).dtype == np.float64
        assert (i / 2).dtype == np.float32            # JAX: int32 data alone computes in float32
        assert jnp.mean(i).dtype == np.float32
        assert jnp.exp(jnp.asarray(np.array([1, 2]))).dtype == np.float64  # int64 data: the default float
        assert (i + 1j).dtype == np.complex128
        assert jnp.asarray([1.0]).dtype == np.float64
        assert jnp.zeros(2).dtype == np.float64
        assert jnp.arange(0.0, 1.0, 0.5).dtype == np.float64
        assert jnp.linspace(0, 1, 3).dtype == np.float64
        assert jnp.eye(2).dtype == np.float64
    # Floats keep their precision with a Python float (NEP 50), as in NumPy.
    assert (jnp.asarray(np.ones(2, np.float16)) + 1.5).dtype == np.float16
    assert (jnp.asarray(np.ones(2, np.float64)) + 1.5).dtype == np.float64


def test_python_scalars_alone_are_weak():
    assert jnp.add(1, 2).weak_type and jnp.add(1, 2).dtype == np.int64
    assert jnp.add(1, 2.0).dtype == np.float32 and jnp.add(1, 2.0).weak_type
    w = jnp.multiply(2, 3.0)  # weak float32 does not widen a float16 array
    assert (jnp.asarray(np.ones(2, np.float16)) + w).dtype == np.float16
    assert jnp.array(1.5).weak_type is False  # array() makes a standalone array strong
    assert jnp.asarray(np.float64(1.5)).dtype == np.float64  # NumPy scalars are strongly typed


def test_numpy_scalars_are_strong():
    f32 = jnp.asarray(np.ones(2, np.float32))
    assert (f32 + np.float64(1)).dtype == np.result_type(np.float32, np.float64)
    assert (np.float64(1) + f32).dtype == np.float64
    i8 = jnp.asarray(np.ones(2, np.int8))
    assert (i8 + np.int64(1)).dtype == np.int64
    assert (i8 + np.array(1, np.int16)).dtype == np.int16


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_out_of_range_python_int():
    u8 = jnp.asarray(np.array([1, 2], np.uint8))
    i8 = jnp.asarray(np.array([1, 2], np.int8))
    for f in (lambda: u8 + 300, lambda: u8 + (-1), lambda: 300 + u8, lambda: jnp.maximum(i8, 300),
              lambda: i8 ** 300, lambda: jnp.full(2, 300, dtype=np.uint8)):
        with pytest.raises(OverflowError):
            f()
    # NumPy raises the same:
    with pytest.raises(OverflowError):
        np.array([1, 2], np.uint8) + 300
    # An in-range Python int keeps the array's dtype, even where it is the dtype's extreme.
    assert (u8 + 255).dtype == np.uint8
    np.testing.assert_array_equal(np.asarray(u8 - 1), np.array([0, 1], np.uint8))
    big = jnp.asarray(np.array([1], np.uint64)) + 2 ** 63
    assert big.dtype == np.uint64 and int(big[0]) == 2 ** 63 + 1
    # Comparisons with an out-of-range Python int are exact in NumPy 2, and here.
    a = np.array([-128, 0, 127], np.int8)
    for op in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
        for v in (1000, -1000):
            np.testing.assert_array_equal(np.asarray(getattr(jnp, op)(jnp.asarray(a), v)), getattr(np, op)(a, v))
            np.testing.assert_array_equal(np.asarray(getattr(jnp, op)(v, jnp.asarray(a))), getattr(np, op)(v, a))
    # clip ignores a harmless out-of-range bound, as NumPy 2 does.
    np.testing.assert_array_equal(np.asarray(jnp.clip(jnp.asarray(a), 0, 300)), np.clip(a, 0, 300))
    np.testing.assert_array_equal(np.asarray(jnp.clip(jnp.asarray(a), -300, 5)), np.clip(a, -300, 5))
    assert jnp.clip(jnp.asarray(a), 0, 300).dtype == np.int8


def test_canonicalize_and_defaults():
    assert dtypes.canonicalize(float) == np.float32
    assert dtypes.canonicalize(int) == np.int64
    assert dtypes.canonicalize(complex) == np.complex64
    assert dtypes.canonicalize(bool) == np.bool_
    assert dtypes.canonicalize("float16") == np.float16
    for bad in ("U3", "datetime64[s]", object):
        with pytest.raises(TypeError):
            dtypes.canonicalize(bad)
    with x64():
        assert dtypes.canonicalize(float) == np.float64
        assert dtypes.canonicalize(complex) == np.complex128
    assert dtypes.canonicalize(float) == np.float32
    with pytest.raises(TypeError):
        jnp.asarray(np.array(["a"]))


def test_weak_result_type_kinds():
    # Multiple weak operands: the highest kind wins; the strong operand decides precision. As in JAX's
    # lattice, a result whose kind came from a weak operand stays weak (int data with a Python float).
    assert dtypes.result_type((np.dtype(np.int16), False), (np.dtype(np.int64), True),
                              (np.dtype(np.float32), True)) == (np.float32, True)
    assert dtypes.result_type((np.dtype(np.float16), False), (np.dtype(np.complex64), True)) == \
        (np.complex64, False)
    assert dtypes.result_type((np.dtype(np.float64), False), (np.dtype(np.complex64), True)) == \
        (np.complex128, False)
    assert dtypes.result_type((np.dtype(np.bool_), False), (np.dtype(np.int64), True)) == (np.int64, True)
    assert dtypes.result_type((np.dtype(np.int8), False), (np.dtype(np.int64), True)) == (np.int8, False)
    assert dtypes.result_type((np.dtype(np.int64), True), (np.dtype(np.float32), True)) == (np.float32, True)


# --- a sweep: every dtype x ufunc x awkward Python scalar, both operand orders -------------------

SWEEP_OPS = ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "equal", "less",
             "greater_equal"]
SWEEP_SCALARS = [True, False, 0, 1, 2, -1, 127, 255, 256, -129, 2 ** 31, 2 ** 63, 0.5, -2.0, 1e5, 1j, 2 + 0j]


def _outcome(f):
    try:
        return True, f()
    except (TypeError, ValueError, OverflowError) as e:
        return False, type(e)


def _sweep(dt, expected_dtype):
    a = _sample(dt)
    fa = jnp.asarray(a)
    for op in SWEEP_OPS:
        for s in SWEEP_SCALARS:
            if op == "power" and s == -129:
                continue  # integer_pow's 1/x**129 underflows where NumPy gives a denormal (primitive issue)
            for flip in (False, True):
                args_np, args_fg = ((s, a), (s, fa)) if flip else ((a, s), (fa, s))
                ok_np, r_np = _outcome(lambda: getattr(np, op)(*args_np))
                ok_fg, r_fg = _outcome(lambda: getattr(jnp, op)(*args_fg))
                where = (str(dt), op, s, flip)
                assert ok_np == ok_fg, (where, r_np, r_fg)  # NumPy raises exactly when funcgrad does
                if not ok_np:
                    continue
                r_np = np.asarray(r_np)
                want = expected_dtype(dt, r_np.dtype, s)
                if op == "power" and dt == np.bool_ and (isinstance(s, bool) or (isinstance(s, int) and not flip
                                                                                   and abs(s) < 2 ** 31)):
                    want = np.dtype(np.int32)  # jax.numpy computes bool powers in int32 (NumPy: int8/int64)
                assert r_fg.dtype == want, (where, r_np.dtype, r_fg.dtype)
                np.testing.assert_allclose(np.asarray(r_fg).astype(np.complex128), r_np.astype(np.complex128),
                                           rtol=1e-3, err_msg=str(where))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_scalar_sweep_matches_numpy(dt):
    def expected(dt, np_dtype, s):  # the documented default-float/complex rule for integer/bool data
        if dt.kind in "biu" and np_dtype == np.float64:
            return np.dtype(dtypes.defaults.float_)
        if dt.kind in "biu" and np_dtype == np.complex128:
            return np.dtype(dtypes.defaults.complex_)
        return np_dtype
    _sweep(dt, expected)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_scalar_sweep_matches_numpy_exactly_with_x64(dt):
    def expected(dt, np_dtype, s):
        # JAX's rule where integer/bool data with a Python int (or bool) must become float: float32
        # for bool and integers of up to 32 bits (NumPy: float64)
        # (bool data with a Python int promotes to the weak int first, which takes the default float)
        small = dt.kind in "iu" or (dt.kind == "b" and isinstance(s, bool))
        if small and dt.itemsize < 8 and isinstance(s, int) and np_dtype == np.float64:
            return np.dtype(np.float32)
        return np_dtype
    with x64():
        _sweep(dt, expected)


def test_division_by_out_of_range_python_int():
    # NumPy divides integers in a float loop, so the Python int need not fit the integer dtype.
    u8 = np.array([1, 2], np.uint8)
    np.testing.assert_allclose(np.asarray(jnp.asarray(u8) / 256), (u8 / 256).astype(np.float32))
    np.testing.assert_allclose(np.asarray(-1 / jnp.asarray(u8)), (-1 / u8).astype(np.float32))
    assert (jnp.asarray(u8) / 2 ** 63).dtype == np.float32
