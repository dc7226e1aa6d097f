"""dtype promotion: JAX's type-promotion lattice in JAX's default mode (x64 off), checked against tables
taken from JAX 0.10.2 (tests/test_x64_modes.py also compares with JAX itself), and NumPy's values.

With x64 off a NumPy operand is canonicalised to 32 bits on entry (an int64 sample becomes int32), Python
scalars are weakly typed (they take the array's dtype unless their kind is higher), and two arrays promote
to their least upper bound in JAX's lattice (float32 + int32 is float32, int32 + uint32 is int32 with x64
off and int64 with it on). With x64 enabled funcgrad matches NumPy's NEP 50 results for arrays with Python
scalars exactly, except where integer or bool data alone must become float (true division, exp, mean, ...):
there funcgrad follows JAX (jax.dtypes.to_inexact_dtype).
"""
import contextlib
import itertools
import warnings

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as jnp
from funcgrad._src.core import dtypes

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


# --- array with array: JAX's lattice ---------------------------------------------------------------

_SHORT = {"b1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
          "u16": "uint16", "u32": "uint32", "u64": "uint64", "f16": "float16", "f32": "float32",
          "f64": "float64", "c64": "complex64", "c128": "complex128"}
_ORDER = ["b1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64", "c64", "c128"]
# JAX 0.10.2 with x64 off, row x column: "jnp.promote_types / jnp.result_type" of the two dtypes
_JAX_PROMOTE = {
    'b1': 'b1/b1 i8/i8 i16/i16 i32/i32 i64/i32 u8/u8 u16/u16 u32/u32 u64/u32 f16/f16 f32/f32 f64/f32 c64/c64 c128/c64',
    'i8': 'i8/i8 i8/i8 i16/i16 i32/i32 i64/i32 i16/i16 i32/i32 i32/i32 f64/i32 f16/f16 f32/f32 f64/f32 c64/c64 c128/c64',
    'i16': 'i16/i16 i16/i16 i16/i16 i32/i32 i64/i32 i16/i16 i32/i32 i32/i32 f64/i32 f16/f16 f32/f32 f64/f32 c64/c64 c128/c64',
    'i32': 'i32/i32 i32/i32 i32/i32 i32/i32 i64/i32 i32/i32 i32/i32 i32/i32 f64/i32 f16/f16 f32/f32 f64/f32 c64/c64 c128/c64',
    'i64': 'i64/i32 i64/i32 i64/i32 i64/i32 i64/i32 i64/i32 i64/i32 i64/i32 f64/i32 f16/f16 f32/f32 f64/f32 c64/c64 c128/c64',
    'u8': 'u8/u8 i16/i16 i16/i16 i32/i32 i64/i32 u8/u8 u16/u16 u32/u32 u64/u32 f16/f16 f32/f32 f64/f32 c64/c64 c128/c64',
    'u16': 'u16/u16 i32/i32 i32/i32 i32/i32 i64/i32 u16/u16 u16/u16 u32/u32 u64/u32 f16/f16 f32/f32 f64/f32 c64/c64 c128/c64',
    'u32': 'u32/u32 i32/i32 i32/i32 i32/i32 i64/i32 u32/u32 u32/u32 u32/u32 u64/u32 f16/f16 f32/f32 f64/f32 c64/c64 c128/c64',
    'u64': 'u64/u32 f64/i32 f64/i32 f64/i32 f64/i32 u64/u32 u64/u32 u64/u32 u64/u32 f16/f16 f32/f32 f64/f32 c64/c64 c128/c64',
    'f16': 'f16/f16 f16/f16 f16/f16 f16/f16 f16/f16 f16/f16 f16/f16 f16/f16 f16/f16 f16/f16 f32/f32 f64/f32 c64/c64 c128/c64',
    'f32': 'f32/f32 f32/f32 f32/f32 f32/f32 f32/f32 f32/f32 f32/f32 f32/f32 f32/f32 f32/f32 f32/f32 f64/f32 c64/c64 c128/c64',
    'f64': 'f64/f32 f64/f32 f64/f32 f64/f32 f64/f32 f64/f32 f64/f32 f64/f32 f64/f32 f64/f32 f64/f32 f64/f32 c128/c64 c128/c64',
    'c64': 'c64/c64 c64/c64 c64/c64 c64/c64 c64/c64 c64/c64 c64/c64 c64/c64 c64/c64 c64/c64 c64/c64 c128/c64 c64/c64 c128/c64',
    'c128': 'c128/c64 c128/c64 c128/c64 c128/c64 c128/c64 c128/c64 c128/c64 c128/c64 c128/c64 c128/c64 c128/c64 c128/c64 c128/c64 c128/c64',
}
# JAX 0.10.2 with x64 off: the dtype of jnp.ones(2, dt) + True / 1 / 1.0 / 1j (* weakly typed)
_JAX_ADD_SCALAR = {
    'b1': 'b1 i32* f32* c64*',
    'i8': 'i8 i8 f32* c64*',
    'i16': 'i16 i16 f32* c64*',
    'i32': 'i32 i32 f32* c64*',
    'i64': 'i32 i32 f32* c64*',
    'u8': 'u8 u8 f32* c64*',
    'u16': 'u16 u16 f32* c64*',
    'u32': 'u32 u32 f32* c64*',
    'u64': 'u32 u32 f32* c64*',
    'f16': 'f16 f16 f16 c64',
    'f32': 'f32 f32 f32 c64',
    'f64': 'f32 f32 f32 c64',
    'c64': 'c64 c64 c64 c64',
    'c128': 'c64 c64 c64 c64',
}


def _jax_promote(a_dt, b_dt):
    ka, kb = (k for d in (a_dt, b_dt) for k in _SHORT if np.dtype(_SHORT[k]) == d)
    pt, rt = _JAX_PROMOTE[ka].split()[_ORDER.index(kb)].split("/")
    return np.dtype(_SHORT[pt]), np.dtype(_SHORT[rt])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("a_dt,b_dt", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_array_array_promotion_is_jax_lattice(a_dt, b_dt):
    a, b = _sample(a_dt), _sample(b_dt)
    pt, expected = _jax_promote(a_dt, b_dt)  # (NumPy data enters canonicalised: int64 -> int32, ...)
    assert dtypes.promote_types(a_dt, b_dt) == pt
    fa, fb = jnp.asarray(a), jnp.asarray(b)
    assert dtypes.result_type((fa.dtype, False), (fb.dtype, False))[0] == expected
    a, b = a.astype(fa.dtype), b.astype(fb.dtype)  # NumPy's values, computed in JAX's dtype
    for f in (np.add, np.multiply, np.maximum, np.subtract):
        if f is np.subtract and expected == np.bool_:
            continue
        r = getattr(jnp, f.__name__)(fa, fb)
        _assert_same(r, f(a.astype(expected), b.astype(expected)))
    _assert_same(fa * fb, np.multiply(a.astype(expected), b.astype(expected)))
    _assert_same(jnp.where(np.array([True, False, True]), fa, fb),
                 np.where([True, False, True], a.astype(expected), b.astype(expected)))
    _assert_same(jnp.concatenate([fa, fb]), np.concatenate([a.astype(expected), b.astype(expected)]))
    assert (fa < fb).dtype == np.bool_
    # true division: the promoted dtype when that is inexact, else float32 (JAX's to_inexact)
    div_dt = expected if expected.kind in "fc" else dtypes.defaults.float_
    _assert_same(fa / fb, np.true_divide(a.astype(div_dt), b.astype(div_dt)).astype(div_dt))
    # Promotion is the same under jit.
    assert funcgrad.jit(jnp.add)(fa, fb).dtype == expected


# --- array with Python scalar: NEP 50 (weak scalars) ---------------------------------------------

SCALARS = [True, 1, 1.0, 1j]


def _expected_weak(dt, scalar):
    """JAX's result dtype for jnp.asarray(sample of dt) + scalar (from _JAX_ADD_SCALAR)."""
    k = next(k for k in _SHORT if np.dtype(_SHORT[k]) == dt)
    got = _JAX_ADD_SCALAR[k].split()[{bool: 0, int: 1, float: 2, complex: 3}[type(scalar)]]
    return np.dtype(_SHORT[got.rstrip("*")])


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
    assert dtypes.result_type((fa.dtype, False), (dtypes.python_scalar_dtype(scalar), True)) == (expected,
                                                                                                r.weak_type)


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
    # Floats keep their precision with a Python float (NEP 50), as in NumPy; NumPy float64 data enters
    # as float32 with x64 off (as in JAX) and stays float64 with it on.
    assert (jnp.asarray(np.ones(2, np.float16)) + 1.5).dtype == np.float16
    assert (jnp.asarray(np.ones(2, np.float64)) + 1.5).dtype == np.float32
    with x64():
        assert (jnp.asarray(np.ones(2, np.float64)) + 1.5).dtype == np.float64


def test_python_scalars_alone_are_weak():
    assert jnp.add(1, 2).weak_type and jnp.add(1, 2).dtype == np.int32  # JAX's default int with x64 off
    assert jnp.add(1, 2.0).dtype == np.float32 and jnp.add(1, 2.0).weak_type
    w = jnp.multiply(2, 3.0)  # weak float32 does not widen a float16 array
    assert (jnp.asarray(np.ones(2, np.float16)) + w).dtype == np.float16
    assert jnp.array(1.5).weak_type is True  # as in JAX, array() of a Python scalar stays weak
    assert jnp.array(1.5, dtype=np.float32).weak_type is False  # a requested dtype is strong
    v = jnp.asarray(np.float64(1.5))  # NumPy scalars are strongly typed (and canonicalised)
    assert v.dtype == np.float32 and not v.weak_type


def test_numpy_scalars_are_strong():
    # strong, and canonicalised on entry with x64 off (as JAX): np.float64 -> float32, np.int64 -> int32
    f32 = jnp.asarray(np.ones(2, np.float32))
    assert (f32 + np.float64(1)).dtype == np.float32
    assert (np.float64(1) + f32).dtype == np.float32
    assert (jnp.asarray(np.ones(2, np.float16)) + np.float32(1)).dtype == np.float32  # (a weak 1.0: float16)
    i8 = jnp.asarray(np.ones(2, np.int8))
    assert (i8 + np.int64(1)).dtype == np.int32
    assert (i8 + np.array(1, np.int16)).dtype == np.int16
    with x64():
        assert (f32 + np.float64(1)).dtype == np.float64 and (i8 + np.int64(1)).dtype == np.int64


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_out_of_range_python_int():
    """As jax.numpy: a Python int operand must fit the default integer type (int32 with x64 off, int64 with
    it on; OverflowError otherwise, whatever the other operand), then wraps into a narrower integer dtype
    (NumPy 2 raises OverflowError there instead)."""
    u8 = jnp.asarray(np.array([1, 2], np.uint8))
    i8 = jnp.asarray(np.array([1, 2], np.int8))
    for got, want in [(u8 + 300, [45, 46]), (u8 + (-1), [0, 1]), (300 + u8, [45, 46]), (u8 - 1, [0, 1]),
                      (jnp.maximum(i8, 300), [44, 44]), (i8 ** 300, [1, 0]), (u8 * -1, [255, 254]),
                      (jnp.full(2, 300, dtype=np.uint8), [44, 44]), (jnp.full(2, -1, dtype=np.uint8), [255, 255]),
                      (u8 < -1, [True, True]), (jnp.equal(i8, 257), [True, False]), (jnp.clip(u8, -1), [255, 255]),
                      (jnp.gcd(u8, -1), [1, 1]), (jnp.where(u8 > 1, u8, -1), [255, 2])]:
        np.testing.assert_array_equal(np.asarray(got), want)
        assert got.dtype == u8.dtype or got.dtype == i8.dtype or got.dtype == np.bool_
    assert (u8 + 255).dtype == np.uint8
    for f in (lambda: u8 + 2 ** 31, lambda: jnp.asarray(np.ones(2, np.float32)) * 2 ** 40, lambda: 2 ** 31 - u8,
              lambda: jnp.less(i8, -2 ** 40), lambda: jnp.arctan2(i8, 2 ** 40)):
        with pytest.raises(OverflowError):
            f()
    with x64():  # the default int is int64: 2 ** 40 fits, and wraps; uint64 data takes no int beyond int64
        np.testing.assert_array_equal(np.asarray(u8 + (2 ** 40 + 3)), [4, 5])
        with pytest.raises(OverflowError):
            jnp.asarray(np.array([1], np.uint64)) + 2 ** 63
    with pytest.raises(OverflowError):  # (creation from a Python int still checks the dtype, as JAX)
        jnp.asarray(-1, dtype=np.uint8)


def test_canonicalize_and_defaults():
    assert dtypes.canonicalize(float) == np.float32
    assert dtypes.canonicalize(int) == np.int32  # JAX's default int with x64 off
    assert dtypes.canonicalize(complex) == np.complex64
    assert dtypes.canonicalize(bool) == np.bool_
    assert dtypes.canonicalize("float16") == np.float16
    for bad in ("U3", "datetime64[s]", object):
        with pytest.raises(TypeError):
            dtypes.canonicalize(bad)
    with x64():
        assert dtypes.canonicalize(float) == np.float64
        assert dtypes.canonicalize(complex) == np.complex128
        assert dtypes.canonicalize(int) == np.int64
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
    assert dtypes.result_type((np.dtype(np.bool_), False), (np.dtype(np.int64), True)) == (np.int32, True)
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


def _sweep(dt, expected_dtype, skip=()):
    a = _sample(dt)
    fa = jnp.asarray(a)
    for op in SWEEP_OPS:
        for s in SWEEP_SCALARS:
            if s in skip and type(s) is int:
                continue
            if op == "power" and s == -129:
                continue  # integer_pow's 1/x**129 underflows where NumPy gives a denormal (primitive issue)
            for flip in (False, True):
                args_np, args_fg = ((s, a), (s, fa)) if flip else ((a, s), (fa, s))
                ok_np, r_np = _outcome(lambda: getattr(np, op)(*args_np))
                where = (str(dt), op, s, flip)
                if type(s) is int and not (op == "power" and not flip):
                    if not np.can_cast(np.min_scalar_type(s), dtypes.defaults.int_):
                        with pytest.raises(OverflowError):  # JAX: beyond the default int, whatever the dtype
                            getattr(jnp, op)(*args_fg)
                        continue
                    if dt.kind in "iu" and op != "divide" and not np.can_cast(np.min_scalar_type(s), dt):
                        # jax.numpy wraps it into the integer dtype (NumPy 2 raises, or compares exactly)
                        w = np.array(s).astype(dt)[()]
                        ok_np, r_np = _outcome(lambda: getattr(np, op)(*((w, a) if flip else (a, w))))
                if op == "power" and not flip and type(s) is int and s >= 0 and r_np is OverflowError:
                    # jax.numpy: integer_pow by any exponent, wrapping around (modular exponentiation)
                    idt = np.dtype(np.int32) if dt == np.bool_ else dt
                    m = 1 << (8 * idt.itemsize)
                    r_np = np.array([pow(int(v), s, m) for v in a.ravel()], np.uint64).astype(idt).reshape(a.shape)
                    ok_np = True
                ok_fg, r_fg = _outcome(lambda: getattr(jnp, op)(*args_fg))
                assert ok_np == ok_fg, (where, r_np, r_fg)  # NumPy raises exactly when funcgrad does
                if not ok_np:
                    continue
                r_np = np.asarray(r_np)
                want = expected_dtype(dt, r_np.dtype, s)
                if op == "power" and dt == np.bool_ and (isinstance(s, bool) or (isinstance(s, int) and not flip)):
                    want = np.dtype(np.int32)  # jax.numpy computes bool powers in int32 (NumPy: int8/int64)
                assert r_fg.dtype == want, (where, r_np.dtype, r_fg.dtype)
                got, ref = np.asarray(r_fg).astype(np.complex128), r_np.astype(np.complex128)
                if op == "power" and r_np.dtype.kind == "c" and isinstance(s, int) and not flip:
                    # (jax.numpy's integer power of complex data multiplies: where a product overflows, its
                    # naive complex product gives a NaN part where NumPy's power has inf+0j)
                    keep = np.isfinite(ref)
                    got, ref = got[keep], ref[keep]
                np.testing.assert_allclose(got, ref, rtol=1e-3, err_msg=str(where))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("dt", [d for d in DTYPES if d.itemsize < 8 or d == np.complex64], ids=str)
def test_scalar_sweep_matches_numpy(dt):
    """x64 off: NumPy's results with JAX's 32-bit defaults for what NumPy makes 64-bit (64-bit data enters
    as 32-bit, so the 64-bit dtypes are swept with x64 on below)."""
    def expected(dt, np_dtype, s):  # JAX's default float/complex/int for integer/bool data
        if dt.kind in "biu" and np_dtype == np.float64:
            return np.dtype(dtypes.defaults.float_)
        if dt.kind in "biu" and np_dtype == np.complex128:
            return np.dtype(dtypes.defaults.complex_)
        if dt.kind == "b" and np_dtype == np.int64:  # bool data with a Python int: the weak default int
            return np.dtype(dtypes.defaults.int_)
        return np_dtype
    # (bool data with a Python int beyond int32: JAX's weak int32 overflows, where NumPy takes int64)
    _sweep(dt, expected, skip=(2 ** 31, 2 ** 63) if dt == np.bool_ else ())


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
    assert (jnp.asarray(u8) / (2 ** 31 - 1)).dtype == np.float32
    with pytest.raises(OverflowError):  # (beyond the default int: JAX's OverflowError)
        jnp.asarray(u8) / 2 ** 63
