"""Regression tests (no reference library needed) for the mismatches tests/test_fuzz_jax.py found on the JAX
face: jax.numpy's (XLA's) semantics and exception classes, written out as exact expectations (the JAX 0.10
values they encode were read off jax with x64 on and off)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax as flax
from funcgrad import nn as fnn

INF, NAN = math.inf, math.nan


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def x64(request):
    prev = funcgrad.config.read("enable_x64")
    funcgrad.config.update("jax_enable_x64", request.param)
    yield request.param
    funcgrad.config.update("jax_enable_x64", prev)


def bits(x):
    """Values with the sign of every zero (and NaN as None), for exact comparison."""
    return [None if math.isnan(v) else (v, math.copysign(1.0, v)) for v in np.asarray(x, np.float64).ravel()]


def same(got, want, dtype=None):
    assert bits(got) == bits(np.asarray(want, np.float64)), (np.asarray(got), want)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), got.dtype


# --- floor division and remainders: XLA's float divmod ---------------------------------------------------------
@pytest.mark.parametrize("dt", ["float16", "float32", "float64"])
def test_floor_divide_signed_zeros_and_special_values(x64, dt):
    a = fnp.asarray(np.array([-0.0, 0.0, -1.0, 1.0, 1.0, -1.0, INF, -INF, INF, 1.0, 0.0, 3.0, -3.0]), dtype=dt)
    b = fnp.asarray(np.array([1.0, -1.0, -2.5, -INF, INF, INF, 2.0, 2.0, 0.0, 0.0, 0.0, 2.0, 2.0]), dtype=dt)
    # a zero quotient takes b's sign; inf // finite is NaN; finite // inf is -1 where the signs differ
    want = [0.0, -0.0, -0.0, -1.0, 0.0, -1.0, NAN, NAN, INF, INF, NAN, 1.0, -2.0]
    same(fnp.floor_divide(a, b), want, dt)
    same(a // b, want, dt)
    q, r = fnp.divmod(a, b)
    same(q, want, dt)
    same(r, fnp.remainder(a, b))
    # a zero remainder keeps a's sign (fmod's): -0.0 % 1 is -0.0, 2 % -1 is +0.0
    same(fnp.remainder(fnp.asarray([-0.0, 0.0, 2.0, -2.0, 5.0, -5.0], dtype=dt),
                       fnp.asarray([1.0, -1.0, -1.0, 1.0, -3.0, 3.0], dtype=dt)), [-0.0, 0.0, 0.0, -0.0, -1.0, 1.0], dt)
    same(fnp.mod(fnp.asarray([1.0, -1.0, INF], dtype=dt), fnp.asarray([-INF, INF, 2.0], dtype=dt)), [-INF, INF, NAN])
    assert fnp.floor_divide(fnp.asarray([1.0], dtype=dt), 0.5).dtype == np.dtype(dt)


def test_floor_divide_has_zero_derivative_and_remainder_jax_partials():
    funcgrad.config.update("jax_enable_x64", True)
    try:
        x, y = fnp.asarray([7.5, -7.5, 2.0]), fnp.asarray([2.0, 2.0, -1.0])
        gx, gy = funcgrad.grad(lambda a, b: fnp.sum(fnp.floor_divide(a, b)), argnums=(0, 1))(x, y)
        same(gx, [0.0, 0.0, 0.0])
        same(gy, [0.0, 0.0, 0.0])
        gx, gy = funcgrad.grad(lambda a, b: fnp.sum(fnp.remainder(a, b)), argnums=(0, 1))(x, y)
        same(gx, [1.0, 1.0, 1.0])
        same(gy, [-3.0, 4.0, 2.0])  # -trunc(a / b), plus 1 where the remainder moved into b's sign
    finally:
        funcgrad.config.update("jax_enable_x64", False)


@pytest.mark.parametrize("dt", ["int8", "int32", "uint8", "bool"])
def test_integer_division_by_zero_is_xlas(x64, dt):
    a = np.array([5, 0, 1] if dt != "bool" else [True, False, True], dt)
    z = np.zeros(3, dt)
    out = "int32" if dt == "bool" else dt
    q = fnp.floor_divide(fnp.asarray(a), fnp.asarray(z))
    assert q.dtype == np.dtype(out)
    # XLA's x / 0 is -1 (all bits set); jax.numpy's floor correction subtracts one more where x != 0
    want = [255, 255, 255] if dt == "uint8" else ([-2, -1, -2] if dt != "bool" else [-2, -1, -2])
    np.testing.assert_array_equal(np.asarray(q), want)
    np.testing.assert_array_equal(np.asarray(fnp.remainder(fnp.asarray(a), fnp.asarray(z))), [0, 0, 0])
    np.testing.assert_array_equal(np.asarray(fnp.divmod(fnp.asarray(a), fnp.asarray(z))[0]), want)
    # fmod: integers take x % 0 = 0; two bool operands compute rem in int32 as they are: x % 0 = x
    np.testing.assert_array_equal(np.asarray(fnp.fmod(fnp.asarray(a), fnp.asarray(z))),
                                  a.astype(int) if dt == "bool" else [0, 0, 0])
    # lax.div / lax.rem by zero: -1 and x
    if dt != "bool":
        np.testing.assert_array_equal(np.asarray(flax.div(fnp.asarray(a), fnp.asarray(z))),
                                      np.array([-1, -1, -1]).astype(dt))
        np.testing.assert_array_equal(np.asarray(flax.rem(fnp.asarray(a), fnp.asarray(z))), a)
    # (and under jit, whose code generator must not emit fmod for integer rem)
    np.testing.assert_array_equal(np.asarray(funcgrad.jit(fnp.floor_divide)(fnp.asarray(a), fnp.asarray(z))), want)


# --- complex operands of arctan2 / logaddexp / logaddexp2 -----------------------------------------------------
def test_complex_arctan2_logaddexp():
    funcgrad.config.update("jax_enable_x64", True)
    try:
        y = np.array([1 + 2j, -0.5 + 0.25j, 1e-3 + 0j, 0.3 - 2j])
        x = np.array([0.5 - 1j, 2 + 0j, 1j, -1.5 + 0.5j])
        got = fnp.arctan2(fnp.asarray(y), fnp.asarray(x))
        assert got.dtype == np.complex128
        np.testing.assert_allclose(np.asarray(got), -1j * np.log((x + 1j * y) / np.sqrt(x * x + y * y)), rtol=1e-13)
        np.testing.assert_allclose(np.asarray(got)[0], 1.908166797906673 + 0.37908687234202215j, rtol=1e-13)
        for f, ref in ((fnp.logaddexp, lambda a, b: np.log(np.exp(a) + np.exp(b))),
                       (fnp.logaddexp2, lambda a, b: np.log2(np.exp2(a) + np.exp2(b)))):
            np.testing.assert_allclose(np.asarray(f(fnp.asarray(y), fnp.asarray(x))), ref(y, x), rtol=1e-13)
            np.testing.assert_allclose(np.asarray(f(fnp.asarray(y), 2.5)), ref(y, 2.5), rtol=1e-13)
        # the imaginary part is wrapped into [-pi, pi]
        r = fnp.logaddexp(fnp.asarray([3j]), fnp.asarray([3j]))
        np.testing.assert_allclose(np.asarray(r), [math.log(2) + 3j], rtol=1e-13)
        big = fnp.logaddexp(fnp.asarray([1000 + 3j]), fnp.asarray([1000 + 3.1j]))
        np.testing.assert_allclose(np.asarray(big).imag, [3.05], rtol=1e-12)
        # derivatives from the composing cards: d/da logaddexp(a, b) = exp(a - out) (JAX's convention: grad of
        # the real part of a holomorphic function is its derivative, not conjugated)
        g = funcgrad.grad(lambda a: fnp.real(fnp.logaddexp(a, fnp.asarray(0.5 + 0.5j))))(fnp.asarray(1.0 + 0.0j))
        out = np.log(np.exp(1.0) + np.exp(0.5 + 0.5j))
        np.testing.assert_allclose(complex(g), np.exp(1.0 - out), rtol=1e-12)
        # lax.logistic, jax.nn.sigmoid and logsumexp take complex input too
        np.testing.assert_allclose(np.asarray(fnn.sigmoid(fnp.asarray(y))), 1 / (1 + np.exp(-y)), rtol=1e-13)
        np.testing.assert_allclose(complex(fnn.logsumexp(fnp.asarray(y))), np.log(np.exp(y).sum()), rtol=1e-13)
        np.testing.assert_allclose(np.asarray(fnn.softplus(fnp.asarray(y))), np.log1p(np.exp(y)), rtol=1e-13)
    finally:
        funcgrad.config.update("jax_enable_x64", False)


# --- Python int operands: JAX's conversion ---------------------------------------------------------------------
def test_python_int_wraps_into_narrower_integers(x64):
    u8 = fnp.asarray(np.array([0, 1, 2, 200], np.uint8))
    i8 = fnp.asarray(np.array([0, 1, -2, 100], np.int8))
    for got, want in [(u8 + -1, [255, 0, 1, 199]), (u8 - -1, [1, 2, 3, 201]), (u8 * -1, [0, 255, 254, 56]),
                      (-1 - u8, [255, 254, 253, 55]), (u8 + 300, [44, 45, 46, 244]), (u8 & -3, [0, 1, 0, 200]),
                      (u8 // -1, [0, 0, 0, 0]), (u8 % -1, [0, 1, 2, 200]), (fnp.maximum(u8, -1), [255] * 4),
                      (fnp.where(u8 != 0, u8, -1), [255, 1, 2, 200]), (fnp.clip(u8, -1, None), [255] * 4),
                      (fnp.full_like(u8, -1), [255] * 4), (fnp.gcd(u8, -1), [255, 1, 1, 5]),
                      (i8 + 300, [44, 45, 42, -112]), (i8 + -129, [127, -128, 125, -29]), (u8 ** 300, [0, 1, 0, 0]),
                      (i8 ** (2 ** 40), [0, 1, 0, 0])]:
        assert got.dtype in (np.uint8, np.int8), got.dtype
        np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(u8 < -1), [True] * 4)  # -1 is 255 in uint8
    np.testing.assert_array_equal(np.asarray(fnp.equal(u8, 256)), [True, False, False, False])
    assert (u8 / -3).dtype == np.float32  # (true division converts the int to float, no wrap)
    np.testing.assert_allclose(np.asarray(u8 / -3), np.array([0, 1, 2, 200]) / -3, rtol=1e-6)
    with pytest.raises(TypeError):  # a negative power of an integer
        u8 ** -1
    # beyond the default integer type (int32 without x64): OverflowError, whatever the other dtype
    big = 2 ** 40 if not x64 else 2 ** 64
    for f in (lambda: u8 + big, lambda: fnp.ones(2) * big, lambda: fnp.arctan2(i8, big), lambda: u8 < big):
        with pytest.raises(OverflowError):
            f()
    with pytest.raises(OverflowError):  # creation checks the dtype itself
        fnp.asarray(-1, dtype=np.uint8)


# --- reductions, 0-d axes, complex ordering --------------------------------------------------------------------
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "std", "var", "any", "all", "ptp", "median",
                                  "nansum", "nanmean", "argmax", "argmin", "cumsum", "cumprod", "nancumsum",
                                  "nancumprod", "argsort", "sort"])
def test_zero_d_arrays_have_no_axis_0(name):
    x = fnp.asarray(1.5)
    for ax in (0, -1):
        with pytest.raises((ValueError, IndexError)):
            getattr(fnp, name)(x, axis=ax)
    if name not in ("argsort", "sort"):
        assert getattr(fnp, name)(x, axis=None).ndim == (1 if name.startswith(("cum", "nancum")) else 0)


def test_reductions_zero_d_keepdims_and_errors():
    x = fnp.asarray(1.5)
    for f in (fnp.median, fnp.nanmedian, lambda v, **k: fnp.quantile(v, 0.5, **k),
              lambda v, **k: fnp.percentile(v, 50, **k)):
        assert f(x, keepdims=True).shape == (1,)
        assert f(x, axis=(), keepdims=True).shape == (1,)
        assert f(x).shape == ()
    assert fnp.quantile(x, fnp.asarray([0.2, 0.8]), keepdims=True).shape == (2, 1)
    for f in (fnn.logsumexp, funcgrad.scipy.special.logsumexp):
        with pytest.raises(ValueError):
            f(x, axis=0)
        assert float(f(x)) == 1.5
    c = fnp.asarray(np.array([1 + 2j, 1 + 3j], np.complex64))
    for f in (fnp.argmax, fnp.argmin, fnp.nanargmax, fnp.nanargmin):
        with pytest.raises(TypeError):
            f(c)
        with pytest.raises(TypeError):
            f(fnp.ones((2, 2)), axis=(0,))
    for f in (fnp.partition, fnp.argpartition):
        with pytest.raises(NotImplementedError):
            f(c, 1)


def test_tensordot_mismatch_is_jaxs_type_error():
    for a, b, axes in (((2, 3), (4, 5), 1), ((2, 3), (3, 4), 3), ((2, 3), (2, 3), ([0, 1], [1, 0]))):
        with pytest.raises(TypeError):
            fnp.tensordot(fnp.ones(a), fnp.ones(b), axes)
    with pytest.raises(TypeError):
        fnp.linalg.tensordot(fnp.ones((2, 3)), fnp.ones((4, 5)), axes=1)
    assert fnp.tensordot(fnp.ones((2, 3)), fnp.ones((3, 4)), 1).shape == (2, 4)


# --- jax.nn dtypes -----------------------------------------------------------------------------------------------
def test_nn_integer_and_bool_inputs(x64):
    fdef = np.float64 if x64 else np.float32
    idef = np.int64 if x64 else np.int32
    i8 = fnp.asarray(np.array([-2, 0, 3, 9], np.int8))
    b = fnp.asarray(np.array([True, False]))
    r = fnn.relu6(i8)
    assert r.dtype == fdef and r.weak_type
    np.testing.assert_array_equal(np.asarray(r), [0, 0, 3, 6])
    assert fnn.relu6(b).dtype == fdef and fnn.relu6(1).dtype == fdef
    h = fnn.hard_tanh(b)
    assert h.dtype == idef and h.weak_type
    assert fnn.hard_tanh(i8).dtype == np.int8
    np.testing.assert_array_equal(np.asarray(fnn.hard_tanh(i8)), [-1, 0, 1, 1])
    for v in (i8, b, True):
        g = fnn.gelu(v)
        assert g.dtype == np.float32 and not g.weak_type  # (jax.numpy's promotion: float32 up to 32 bits)
    np.testing.assert_allclose(np.asarray(fnn.gelu(i8, approximate=False)),
                               [-2 * 0.5 * math.erfc(2 / math.sqrt(2)), 0, 3 * 0.5 * math.erfc(-3 / math.sqrt(2)), 9],
                               rtol=1e-6)
    s = fnn.squareplus(b)
    assert s.dtype == np.float32 and not s.weak_type
    np.testing.assert_allclose(np.asarray(s), [(1 + math.sqrt(5)) / 2, 1.0], rtol=1e-6)
    p = fnn.sparse_plus(i8)
    assert p.dtype == fdef and p.weak_type
    np.testing.assert_array_equal(np.asarray(p), [0, 0.25, 3, 9])
    # standardize's "fast" variance is clipped at 0 (no NaN from cancellation); "stable" is E[(x - mean)^2]
    z = fnn.standardize(fnp.asarray(np.full(4, 1e4, np.float32)))
    assert np.isfinite(np.asarray(z)).all()
    np.testing.assert_allclose(np.asarray(fnn.standardize(fnp.asarray([1.0, 3.0]), algorithm="stable")),
                               [-1 / math.sqrt(1 + 1e-5), 1 / math.sqrt(1 + 1e-5)], rtol=1e-6)
    with pytest.raises(ValueError):
        fnn.standardize(fnp.asarray([1.0 + 1j]))


# --- spacing ----------------------------------------------------------------------------------------------------
def test_spacing_signs_and_float16():
    x = np.array([1.0, -1.0, -0.0, 0.0, -2.5, 65504.0, -65504.0, np.inf, -np.inf])
    tiny32 = float(np.finfo(np.float32).smallest_subnormal)
    same(fnp.spacing(fnp.asarray(x.astype(np.float32))),
         [2.0 ** -23, -2.0 ** -23, -tiny32, tiny32, -2.0 ** -22, 2.0 ** -8, -2.0 ** -8, NAN, NAN], "float32")
    # float16 steps toward +inf for every x (jax.numpy's): spacing(-1) is +2**-11, spacing(-inf) is inf
    tiny16 = float(np.finfo(np.float16).smallest_subnormal)
    same(fnp.spacing(fnp.asarray(x.astype(np.float16))),
         [2.0 ** -10, 2.0 ** -11, tiny16, tiny16, 2.0 ** -9, INF, 32.0, NAN, INF], "float16")
    assert fnp.spacing(fnp.asarray(np.array([3], np.int8))).dtype == np.float32


def test_digamma_poles_and_lax_dtype_gates():
    x = fnp.asarray(np.array([0.0, -0.0, -1.0, -2.0, 0.5], np.float32))
    for f in (flax.digamma, funcgrad.scipy.special.digamma, funcgrad.scipy.special.psi):
        r = np.asarray(f(x))
        assert np.isnan(r[:4]).all()  # XLA's NaN at 0, -0 and the negative integers (scipy: -inf, +inf at +-0)
        np.testing.assert_allclose(r[4], -1.9635100260214235, rtol=1e-6)
    assert float(funcgrad.grad(flax.digamma)(fnp.asarray(0.5))) == pytest.approx(math.pi ** 2 / 2, rel=1e-6)
    for f, args in ((flax.add, (fnp.ones(2, dtype="bool"),) * 2), (flax.shift_left, (fnp.ones(2),) * 2),
                    (flax.lt, (fnp.ones(2, dtype="complex64"),) * 2), (flax.pow, (fnp.ones(2, dtype="int32"),) * 2),
                    (flax.add, (fnp.ones(2, dtype="uint8"), 1)), (flax.cummax, (fnp.ones(2, dtype="bool"),)),
                    (flax.conj, (fnp.ones(2, dtype="int32"),)), (flax.complex, (fnp.ones(2, dtype="float16"),) * 2)):
        with pytest.raises(TypeError):
            f(*args)
    z = flax.atan2(fnp.asarray([1 + 2j]), fnp.asarray([0.5 - 1j]))
    np.testing.assert_allclose(complex(z[0]), 1.908166797906673 + 0.37908687234202215j, rtol=1e-6)


# --- float -> integer conversions: XLA's saturating cast on CPU ------------------------------------------------
SAT_IN = [NAN, -NAN, INF, -INF, 1e10, -1e10, 300.7, -300.7, 255.9, -1.5, -0.5, 0.7, 3e9, -3e9, 2.0 ** 31, -2.0 ** 31]


def _saturated(v, dt):
    """XLA's value: NaN -> 0, truncation toward zero, clamped into the integer's range."""
    info = np.iinfo(dt)
    return 0 if math.isnan(v) else int(min(max(math.trunc(v) if math.isfinite(v) else v, info.min), info.max))


@pytest.mark.parametrize("src", ["float16", "bfloat16", "float32", "float64", "complex64"])
@pytest.mark.parametrize("dst", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"])
def test_float_to_int_conversion_saturates(x64, src, dst):
    if not x64 and ("64" in dst or src == "float64"):
        return  # (the 64-bit dtypes are x64 mode's)
    x = fnp.asarray(np.array(SAT_IN, np.float64)).astype(src)
    rounded = np.asarray(x.astype("float64") if src != "complex64" else x.real.astype("float64")).tolist()
    want = [_saturated(v, dst) for v in rounded]
    for got in (x.astype(dst), fnp.astype(x, dst), flax.convert_element_type(x, dst), fnp.array(x, dtype=dst),
                fnp.asarray(x, dtype=dst)):
        assert got.dtype == np.dtype(dst)
        assert np.asarray(got).tolist() == want, (src, dst, np.asarray(got).tolist(), want)
    assert np.asarray(x.astype("bool")).tolist() == [v != 0 for v in np.asarray(x).tolist()]  # (NaN: True)
    assert np.asarray(funcgrad.jit(lambda v: v.astype(dst))(x)).tolist() == want


def test_numpy_arrays_convert_on_the_host_as_jax():
    """jnp.array(numpy_array, dtype=...) converts with NumPy on the host, as JAX (no saturation there)."""
    got = fnp.array(np.array([300.7, -1.5]), dtype="uint8")
    assert np.asarray(got).tolist() == np.array([300.7, -1.5]).astype(np.uint8).tolist()


# --- lax.pow with an integer exponent ---------------------------------------------------------------------------
def test_lax_pow_integer_exponent(x64):
    x = fnp.asarray([2.0, 0.0, -3.0, 0.5], dtype="float32")
    for y in ([3, 0, -2, 1], ):
        for ydt in ("int8", "uint8", "int32"):
            yy = np.array(y).astype(ydt)
            got = flax.pow(x, fnp.asarray(yy))
            assert got.dtype == np.float32
            with np.errstate(divide="ignore", over="ignore"):
                same(got, np.power(np.float32([2.0, 0.0, -3.0, 0.5]), yy.astype(np.float32)))
    same(flax.pow(x, 3), [8.0, 0.0, -27.0, 0.125], "float32")
    assert not flax.pow(x, 3).weak_type and flax.pow(2.0, 3).weak_type
    c = flax.pow(fnp.asarray([1 + 1j], "complex64"), 2)  # (1+i)^2 = 2i
    assert c.dtype == np.complex64 and np.allclose(np.asarray(c), [2j], atol=1e-6)
    # d/dx x**0 is 0 everywhere (x = 0 too), d/dx x**3 = 3x**2
    same(funcgrad.grad(lambda v: flax.pow(v, 0))(0.0), [0.0])
    same(funcgrad.grad(lambda v: flax.pow(v, fnp.int32(3)))(2.0), [12.0])
    with pytest.raises(TypeError):
        flax.pow(fnp.ones(2, dtype="int32"), fnp.ones(2, dtype="int32"))  # an integer base
    with pytest.raises(TypeError):
        flax.pow(fnp.ones(2, dtype="float32"), fnp.ones(2, dtype="float16"))  # two inexact dtypes that differ
    with pytest.raises(TypeError):
        flax.pow(fnp.ones(2, dtype="float32"), True)  # a bool exponent


# --- unique along an axis of zero-size slices -------------------------------------------------------------------
@pytest.mark.parametrize("shape,axis,want", [((0, 3), 1, (0, 1)), ((3, 0), 0, (1, 0)), ((3, 0), 1, (3, 0)),
                                             ((2, 0, 3), 1, (2, 0, 3)), ((2, 0, 3), -1, (2, 0, 1)),
                                             ((0, 3), 0, (0, 3))])
def test_unique_axis_zero_size(shape, axis, want):
    """Zero-size slices along `axis` are all equal (one unique slice); no slices give none, shaped as x."""
    x = fnp.zeros(shape)
    vals, idx, inv, counts = fnp.unique(x, axis=axis, return_index=True, return_inverse=True, return_counts=True)
    assert vals.shape == want
    n = shape[axis]
    k = want[axis]
    assert idx.shape == counts.shape == (k,) and inv.shape == (n,)
    assert np.asarray(counts).tolist() == ([n] if k else []) and np.asarray(inv).tolist() == [0] * n


# --- keyword-argument fuzz findings ----------------------------------------------------------------------------
def test_reduction_dtype_arguments_as_jax(x64):
    x = fnp.asarray([NAN, -1.5, 300.0, 2.7], dtype="float32")
    assert np.asarray(fnp.sum(x, dtype="uint8")).item() == (0 + 0 + 255 + 2) % 256  # saturated, then summed (wraps)
    assert np.asarray(fnp.cumsum(x, dtype="int8")).tolist() == [0, -1, 126, -128]  # 0, -1, +127 (wraps), +2
    with pytest.raises(TypeError):
        fnp.mean(x, dtype=bool)
    with pytest.raises(ValueError):
        fnp.std(x, dtype="int32")
    with pytest.raises(ValueError):
        fnp.var(fnp.asarray([1j, 2.0]), dtype="float32")
    v = fnp.var(fnp.asarray([1.0, 3.0]), dtype="complex64")
    assert v.dtype == np.complex64 and np.asarray(v).item() == 1.0


def test_small_jnp_semantics():
    frac, whole = fnp.modf(fnp.asarray([INF, -INF, 2.5]))
    same(frac, [NAN, NAN, 0.5])
    same(whole, [INF, -INF, 2.0])
    assert fnp.isscalar(fnp.asarray(1.0)) and fnp.isscalar(np.array(1.0)) and not fnp.isscalar(fnp.ones(1))
    for got in fnp.nonzero(fnp.zeros((0,)), size=3, fill_value=9) + fnp.where(fnp.zeros((2, 0)), size=2,
                                                                             fill_value=-1):
        assert np.asarray(got).tolist() == [0] * got.shape[0]  # zero-size input: zeros, not the fill value
    assert fnp.take(fnp.zeros((0,)), fnp.asarray([], dtype="int32"), mode="fill").shape == (0,)
    for mode in ("fill", "clip", "wrap"):
        with pytest.raises(IndexError):
            fnp.take(fnp.zeros((2, 0)), fnp.asarray([1]), axis=1, mode=mode)
    assert fnp.fft.fft(fnp.asarray([1, 2], dtype="int32")).dtype == np.complex64


def test_complex_sign_divides_part_by_part():
    z = fnp.asarray([complex(INF, 0), complex(1, INF), complex(3, 4), 0j], dtype="complex128")
    s = np.asarray(fnp.sign(z))
    assert math.isnan(s[0].real) and s[0].imag == 0  # inf / inf, 0 / inf
    assert s[1].real == 0 and math.isnan(s[1].imag)
    assert s[2] == 0.6 + 0.8j and s[3] == 0


def test_integer_power_of_an_array_exponent_is_strong(x64):
    # jax.numpy's integer power of an array exponent is a binary exponentiation from strongly typed constants:
    # strongly typed even for a Python int base or weakly typed operands; a Python int (or bool) exponent is
    # integer_pow, which keeps a weak base weak
    b = fnp.array([True, False])
    w = fnp.add(2, b)  # (weakly typed: the default int)
    i = fnp.int64 if x64 else fnp.int32
    for r, want, dt, weak in ((fnp.power(2, b), [2, 1], i, False), (2 ** b, [2, 1], i, False),
                              (fnp.power(w, w), [27, 4], i, False), (fnp.power(2, w), [8, 4], i, False),
                              (fnp.power(True, w), [1, 1], i, False), (fnp.power(w, 2), [9, 4], i, True),
                              (fnp.power(2, True), 2, i, True), (fnp.power(b, True), [1, 0], fnp.int32, False)):
        assert (r.dtype, r.weak_type, np.asarray(r).tolist()) == (dt, weak, want)


def test_power_of_an_inexact_base_to_an_integer_array_is_strong(x64):
    # jax.numpy raises an inexact base to an integer array's power with lax.pow, unpromoted: a Python scalar base
    # does not make the result weakly typed (a weakly typed exponent keeps it weak)
    fdt = fnp.float64 if x64 else fnp.float32
    for base, dt in ((2.0, fdt), (1j, fnp.complex128 if x64 else fnp.complex64)):
        for e in (fnp.array([1, 2]), fnp.array([1, 2], fnp.int8), fnp.array([1, 2], fnp.uint8)):
            for r in (fnp.power(base, e), base ** e):
                assert r.dtype == dt and not r.weak_type
    r = fnp.power(2.0, fnp.array([1, 2]))
    np.testing.assert_allclose(np.asarray(r), [2.0, 4.0])
    assert fnp.power(2.5, fnp.asarray(3)).weak_type  # (both weak)
    assert fnp.power(2.0, fnp.array([True])).weak_type  # (a bool exponent is promoted: weak)
    assert funcgrad.jit(fnp.power)(2.0, fnp.array([1, 2])).weak_type is False
    # (lax.pow's rule for integer exponents: no derivative in the base where the exponent is 0, to every order)
    g = funcgrad.grad(lambda a: fnp.power(a, fnp.array([0, 1, 2])).sum())(fnp.zeros(3))
    assert np.asarray(g).tolist() == [0.0, 1.0, 0.0]
    h = funcgrad.hessian(lambda a: flax.pow(a, fnp.array([0, 2, 3])).sum())(fnp.zeros(3))
    assert np.asarray(h).tolist() == [[0.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.0]]
    assert np.asarray(flax.pow(fnp.array([NAN, INF]), fnp.array([0, 0]))).tolist() == [1.0, 1.0]


def test_round_of_integers_to_negative_decimals_raises(x64):
    x = fnp.array([15, 25, -35])
    with pytest.raises(NotImplementedError, match="integer np.round not implemented for decimals < 0"):
        fnp.round(x, -1)
    assert fnp.round(x, 1).tolist() == [15, 25, -35] and fnp.round(x).dtype == x.dtype
    np.testing.assert_allclose(np.asarray(fnp.round(fnp.array([15.0, 25.0, -35.0]), -1)), [20.0, 20.0, -40.0])


def test_bool_mask_times_float_selects_as_xla(x64):
    # XLA rewrites mul(convert(mask), x) (jax.numpy's multiply of a bool array and a float/complex one of the
    # result's shape) to a select: False * inf and False * nan are 0; a broadcast mask or a bfloat16 product
    # multiplies (nan)
    b, f = fnp.array([True, False, False]), fnp.array([INF, NAN, 2.0])
    for r in (b * f, f * b, fnp.multiply(b, f), b * INF, funcgrad.jit(lambda x, y: x * y)(b, f),
              b * f.astype(fnp.float16), fnp.stack([b, b]) * f):
        assert bits(np.asarray(r).reshape(-1, 3)[-1]) == [(INF, 1.0), (0.0, 1.0), (0.0, 1.0)]
    r = b * f.astype(fnp.complex64)
    assert np.asarray(r).tolist() == [complex(INF, 0), 0j, 0j]
    assert bits(b * f.astype(fnp.bfloat16))[1] is None
    assert bits(b[:, None] * f[None])[3] is None  # (row False, column inf)
    assert bits(b * fnp.stack([f, f]))[1] is None
    g = funcgrad.grad(lambda y: (fnp.array([True, False]) * y).sum())(fnp.array([1.0, 2.0]))
    assert np.asarray(g).tolist() == [1.0, 0.0]


def test_weak_type_of_functions_with_constants_made_like_an_operand():
    # jax.numpy's jitted bodies of logaddexp2, complex logaddexp, gcd/lcm (constants like the result) and
    # heaviside (constants like x1) keep a weak result only where that operand is 0-d (read off JAX 0.10.2)
    w0 = fnp.asarray(2) * 1.5           # weak float32, 0-d
    w1 = fnp.array([2, 3]) * 1.5        # weak float32, 1-d
    i1 = fnp.array([2, 3], fnp.int32)   # strong
    b1 = fnp.array([True, False])
    assert [fnp.logaddexp2(a, a).weak_type for a in (w0, w1)] == [True, False]
    assert fnp.logaddexp2(i1, 1.5).weak_type is False and fnp.logaddexp2(1.5, 2.5).weak_type is True
    assert [fnp.logaddexp(a, a).weak_type for a in (w0, w1)] == [True, True]  # (real: no such constant)
    assert [fnp.logaddexp(a, 1j).weak_type for a in (w0, w1)] == [True, False]
    assert [fnp.heaviside(a, a).weak_type for a in (w0, w1)] == [True, False]
    assert fnp.heaviside(i1, 0.5).weak_type is False and fnp.heaviside(1.5, i1).weak_type is True
    assert fnp.heaviside(w0, w1).weak_type is True and fnp.heaviside(w1, w0).weak_type is False
    assert [fnp.gcd(a, 2).weak_type for a in (fnp.asarray(True), b1)] == [True, False]
    assert [fnp.lcm(a, 2).weak_type for a in (fnp.asarray(True), b1)] == [True, False]
    # the weak type decides later promotion: a strong result keeps its width beside float16
    assert (fnp.logaddexp2(w1, w1) + fnp.ones(2, fnp.float16)).dtype == w1.dtype != np.float16
    np.testing.assert_allclose(fnp.logaddexp2(i1, 1.5), np.logaddexp2([2.0, 3.0], 1.5), rtol=1e-6)


def test_var_std_with_ddof_at_or_past_the_count_are_nan():
    # jax.numpy: NaN where n - ddof <= 0 (NumPy's max(n - ddof, 0) divides by 0: inf for a nonzero sum)
    f = fnp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 7.0]])
    assert np.isnan(np.asarray(fnp.var(f, axis=0, ddof=2))).all()
    assert np.isnan(np.asarray(fnp.std(fnp.array([[True, False], [False, True]]), axis=0, ddof=3))).all()
    assert np.isnan(float(fnp.var(f, ddof=6))) and np.isnan(float(fnp.var(f, ddof=9)))
    np.testing.assert_allclose(fnp.var(f, ddof=5), 23.333334, rtol=1e-6)
    r = np.asarray(fnp.nanvar(fnp.array([[1.0, NAN, 3.0], [1.0, 2.0, 4.0]]), axis=1, ddof=2))
    assert np.isnan(r[0]) and abs(r[1] - 14 / 3) < 1e-5
    # the division is JAX's, unguarded: NaN derivatives at n == ddof, zeros past it
    assert np.isnan(np.asarray(funcgrad.grad(lambda x: fnp.var(x, ddof=6))(f))).all()
    np.testing.assert_array_equal(np.abs(np.asarray(funcgrad.grad(lambda x: fnp.var(x, ddof=7))(f))), 0.0)


@pytest.mark.parametrize("y", [3, 4, 5, 7, -2, -3, 13])
def test_integer_pow_multiplies_as_jaxs_lowering(x64, y):
    """x ** y for a Python int y is JAX's square-and-multiply, rounding after each product (then 1 / x**-y), not
    pow's single rounding: x ** 3 is (x * x) * x bit for bit, eagerly and under jit."""
    rng = np.random.default_rng(y + 20)
    x = (rng.standard_normal(400) * 3).astype(np.float32)
    acc, b, n = None, x, abs(y)
    while n:  # the expected value, in float32 with NumPy's products
        if n & 1:
            acc = b if acc is None else acc * b
        n >>= 1
        if n:
            b = b * b
    want = np.float32(1) / acc if y < 0 else acc
    tiny = np.abs(want) < np.finfo(np.float32).tiny  # (XLA's CPU flushes subnormal results to zero)
    for got in (fnp.asarray(x) ** y, fnp.power(fnp.asarray(x), y), flax.integer_pow(fnp.asarray(x), y),
                funcgrad.jit(lambda t: t ** y)(fnp.asarray(x))):
        assert got.dtype == np.float32
        np.testing.assert_array_equal(np.asarray(got)[~tiny], want[~tiny])
    jax = pytest.importorskip("jax")
    ref = np.asarray(jax.numpy.asarray(x) ** y)
    np.testing.assert_array_equal(np.asarray(fnp.asarray(x) ** y)[~tiny], ref[~tiny])

