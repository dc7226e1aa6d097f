"""funcgrad.numpy's statistics against NumPy 2 (and logsumexp against SciPy): values, dtypes and shapes
on random inputs (NaN for the nan-functions), gradients against finite differences in float64, the
stability of logsumexp, vmap against a Python loop and jit against eager.

dtype expectations are jax.numpy's (the module runs with x64 on): statistics of integer/bool data are
computed in jax.dtypes.to_inexact_dtype's float (float32 up to 32 bits, float64 for 64-bit integers) where
NumPy uses float64; for those the expected values are NumPy's at that dtype's tolerance.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad
import funcgrad.numpy as jnp
from funcgrad._src.core import dtypes
from funcgrad._src.core.errors import ConcretizationError
from funcgrad.numpy._statistics import logsumexp
from funcgrad.testing import check_grads

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

REAL = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.float32, np.float64]
FLOATS = [np.float32, np.float64]
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
NONEMPTY = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)


def elements(dt, nan=False):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return st.booleans()
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return st.integers(max(-5, int(info.min)), min(5, int(info.max)))
    vals = st.floats(-5, 5, width=8 * dt.itemsize)
    return st.one_of(vals, st.just(np.nan)) if nan else vals


def draw_array(data, dt, shape=None, nan=False, label="x"):
    shape = data.draw(SHAPES, label="shape") if shape is None else shape
    return data.draw(hnp.arrays(np.dtype(dt), shape, elements=elements(dt, nan)), label=label)


def draw_axes(data, ndim):
    """None, an int, or a tuple of distinct axes (negative allowed)."""
    if ndim == 0:
        return data.draw(st.sampled_from([None, ()]), label="axis")
    kind = data.draw(st.sampled_from(["none", "int", "tuple"]), label="axis kind")
    if kind == "none":
        return None
    if kind == "int":
        return data.draw(st.integers(-ndim, ndim - 1), label="axis")
    axes = data.draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim), label="axes")
    return tuple(a - ndim if i % 2 else a for i, a in enumerate(axes))


def float_of(dt):
    """jax.dtypes.to_inexact_dtype: bool and integers of up to 32 bits give float32, 64-bit integers the
    default float."""
    dt = np.dtype(dt)
    return dt if dt.kind in "fc" else np.dtype(np.float32 if dt.itemsize < 8 else dtypes.defaults.float_)


def tol(dt):
    dt = np.dtype(dt)
    return 1e-12 if dt in (np.float64, np.complex128) else 2e-5 if dt in (np.float32, np.complex64) else 2e-3


def check(actual, expected, dtype=None, rtol=None):
    expected = np.asarray(expected)
    dtype = np.dtype(dtype) if dtype is not None else expected.dtype
    assert isinstance(actual, funcgrad.Array), type(actual)
    assert actual.dtype == dtype, (actual.dtype, dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    a = np.asarray(actual)
    if dtype.kind in "fc":
        t = tol(dtype) if rtol is None else rtol
        np.testing.assert_allclose(a, expected.astype(dtype), rtol=t, atol=t, equal_nan=True)
    else:
        np.testing.assert_array_equal(a, expected)


def rand(shape, seed=0):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return (rng.permutation(n) + rng.uniform(0.1, 0.4, n)).reshape(shape).astype(np.float64) / n


# --- var, std, ptp, average -----------------------------------------------------------------------

@given(data=st.data())
def test_var_std_match_numpy(data):
    dt = data.draw(st.sampled_from(REAL + [np.complex128]), label="dtype")
    x = draw_array(data, dt) if dt != np.complex128 else (
        draw_array(data, np.float64) + 1j * np.float64(data.draw(st.floats(-2, 2), label="imag")))
    axis = draw_axes(data, x.ndim)
    ddof = data.draw(st.integers(0, 2), label="ddof")
    keepdims = data.draw(st.booleans(), label="keepdims")
    res_dt = {np.dtype(np.complex128): np.float64}.get(x.dtype, float_of(x.dtype))
    for name in ("var", "std"):
        want = getattr(np, name)(x, axis=axis, ddof=ddof, keepdims=keepdims)
        check(getattr(jnp, name)(x, axis=axis, ddof=ddof, keepdims=keepdims), want, res_dt, rtol=1e-4)
    if x.ndim and x.dtype.kind == "f":
        where = data.draw(hnp.arrays(np.bool_, x.shape), label="where")
        check(jnp.var(x, axis=axis, where=where, correction=1), np.var(x, axis=axis, where=where, ddof=1),
              rtol=1e-4)
        m = np.mean(x, axis=axis, keepdims=True)
        check(jnp.std(x, axis=axis, mean=m), np.std(x, axis=axis, mean=m), rtol=1e-4)


def test_var_errors_and_dtype():
    with pytest.raises(ValueError, match="correction"):
        jnp.var(np.ones(3), ddof=1, correction=1)
    check(jnp.var(np.ones(3, np.float16)), np.var(np.ones(3, np.float16)))
    check(jnp.var(np.arange(4.0), dtype=np.float32), np.var(np.arange(4.0), dtype=np.float32))


def test_var_with_an_integer_dtype_computes_in_it_as_jax():
    """jax.numpy.var(x, dtype=int) works in that integer dtype (the mean and the division truncate), and its
    NaN guard makes the result a weakly typed default float; dtype=bool fails in the division."""
    x = np.array([[1, 2, 3], [4, 5, -3]], np.int32)
    fdt = dtypes.defaults.float_
    cases = [({"dtype": np.int32}, 6.0), ({"dtype": np.int8, "axis": 1, "keepdims": True}, [[0.0], [12.0]]),
             ({"dtype": np.int32, "axis": 0, "ddof": 2}, [np.nan] * 3), ({"dtype": np.int16, "axis": 0, "ddof": 1},
                                                                         [5.0, 5.0, 18.0]),
             ({"dtype": np.int32, "where": x > 1}, 1.0), ({"dtype": np.uint8, "axis": 1}, [0.0, 12.0])]
    for kw, want in cases:
        r = jnp.var(x, **kw)
        assert r.dtype == fdt and r.weak_type, kw
        np.testing.assert_array_equal(np.asarray(r), np.asarray(want, fdt))
    with pytest.raises(TypeError, match="div does not accept dtype bool"):
        jnp.var(x, dtype=np.bool_)
    with pytest.raises(ValueError, match="must be inexact"):
        jnp.std(x, dtype=np.int32)
    jax = pytest.importorskip("jax")
    with jax.enable_x64(bool(dtypes.defaults.float_ == np.float64)):
        for kw, _ in cases:
            want = jax.numpy.var(x, **kw)
            r = jnp.var(x, **kw)
            assert r.dtype == want.dtype and r.weak_type == want.weak_type
            np.testing.assert_array_equal(np.asarray(r), np.asarray(want))


@given(data=st.data())
def test_ptp_and_average_match_numpy(data):
    dt = data.draw(st.sampled_from([d for d in REAL if d != np.bool_]), label="dtype")
    x = draw_array(data, dt, data.draw(NONEMPTY))
    axis = draw_axes(data, x.ndim)
    keepdims = data.draw(st.booleans(), label="keepdims")
    check(jnp.ptp(x, axis=axis, keepdims=keepdims), np.ptp(x, axis=axis, keepdims=keepdims))
    check(jnp.average(x, axis=axis, keepdims=keepdims), np.average(x, axis=axis, keepdims=keepdims),
          float_of(dt), rtol=1e-4)
    w = data.draw(hnp.arrays(np.float64, x.shape, elements=st.floats(0.5, 2)), label="weights")
    got = jnp.average(x, axis=axis, weights=w, returned=True, keepdims=keepdims)
    want = np.average(x, axis=axis, weights=w, returned=True, keepdims=keepdims)
    check(got[0], want[0], rtol=1e-6)
    check(got[1], want[1], rtol=1e-6)
    if isinstance(axis, int):
        w1 = np.linspace(1, 2, x.shape[axis])
        check(jnp.average(x, axis=axis, weights=w1), np.average(x, axis=axis, weights=w1), rtol=1e-6)


def test_average_errors():
    with pytest.raises(ZeroDivisionError):
        jnp.average(np.ones(3), weights=np.zeros(3))
    with pytest.raises(TypeError):
        jnp.average(np.ones((2, 3)), weights=np.ones(3))
    with pytest.raises(TypeError):
        jnp.ptp(np.array([True, False]))


# --- quantiles ------------------------------------------------------------------------------------

METHODS = ["linear", "lower", "higher", "midpoint", "nearest", "hazen", "weibull", "median_unbiased",
           "normal_unbiased", "interpolated_inverted_cdf"]


@given(data=st.data())
def test_quantile_percentile_median_match_numpy(data):
    dt = data.draw(st.sampled_from([np.int32, np.uint8, np.float32, np.float64]), label="dtype")
    x = draw_array(data, dt, data.draw(NONEMPTY), nan=data.draw(st.booleans(), label="nan"))
    axis = draw_axes(data, x.ndim)
    if axis == () or (isinstance(axis, tuple) and not axis):
        axis = None
    method = data.draw(st.sampled_from(METHODS), label="method")
    keepdims = data.draw(st.booleans(), label="keepdims")
    q = data.draw(st.sampled_from([0.0, 0.25, 0.5, 1.0, [0.1, 0.9], [[0.3], [0.75]]]), label="q")
    want = np.quantile(x, q, axis=axis, method=method, keepdims=keepdims)
    res_dt = want.dtype if want.dtype.kind in "iu" else float_of(dt)
    check(jnp.quantile(x, q, axis=axis, method=method, keepdims=keepdims), want, res_dt, rtol=1e-4)
    want = np.percentile(x, np.multiply(q, 100), axis=axis, method=method)
    check(jnp.percentile(x, np.multiply(q, 100), axis=axis, method=method), want, res_dt, rtol=1e-4)
    check(jnp.median(x, axis=axis, keepdims=keepdims), np.median(x, axis=axis, keepdims=keepdims),
          float_of(dt), rtol=1e-4)


def test_quantile_errors_and_edge_cases():
    with pytest.raises(ValueError, match="range"):
        jnp.quantile(np.ones(3), 1.5)
    with pytest.raises(ValueError, match="range"):
        jnp.percentile(np.ones(3), -1)
    with pytest.raises(ValueError, match="valid method"):
        jnp.quantile(np.ones(3), 0.5, method="bogus")
    with pytest.raises(TypeError):
        jnp.quantile(np.ones(3, np.complex64), 0.5)
    # an empty reduced axis: jax.numpy's errors (NumPy gives NaN), a TypeError from its gather of the sorted
    # values, an IndexError for a nan-function's 0-d result
    for f, args in ((jnp.median, ()), (jnp.quantile, (0.5,)), (jnp.percentile, (50,)), (jnp.nanmedian, ()),
                    (jnp.nanquantile, (0.3,)), (jnp.nanpercentile, (30,))):
        for shape, axis in (((0, 3), 0), ((2, 0), 1), ((3, 0, 2), (0, 1))):
            with pytest.raises(TypeError, match="out of range"):
                f(np.zeros(shape), *args, axis=axis)
        with pytest.raises(TypeError if f in (jnp.median, jnp.quantile, jnp.percentile) else IndexError):
            f(np.zeros((0, 3)), *args)
        with pytest.raises(TypeError, match="out of range"):
            f(np.zeros((0,)), *args, keepdims=True)
    check(jnp.median(np.zeros((2, 0)), axis=0), np.median(np.zeros((2, 0)), axis=0))
    check(jnp.quantile(np.arange(5.0), jnp.asarray(np.array([0.2, 0.6]))), np.quantile(np.arange(5.0), [0.2, 0.6]),
          dtype=np.float64)
    check(jnp.median(np.array(3.0)), np.median(np.array(3.0)))


# --- nan-functions --------------------------------------------------------------------------------

NAN_FUNCS = ["nanmin", "nanmax", "nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmedian"]


@given(data=st.data())
def test_nan_functions_match_numpy(data):
    dt = data.draw(st.sampled_from([np.int32, np.float32, np.float64]), label="dtype")
    x = draw_array(data, dt, data.draw(NONEMPTY), nan=True)
    axis = draw_axes(data, x.ndim)
    if isinstance(axis, tuple) and not axis:
        axis = None
    keepdims = data.draw(st.booleans(), label="keepdims")
    for name in NAN_FUNCS:
        want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
        res_dt = want.dtype if name in ("nanmin", "nanmax", "nansum", "nanprod") else float_of(dt)
        check(getattr(jnp, name)(x, axis=axis, keepdims=keepdims), want, res_dt, rtol=1e-4)
    q = data.draw(st.sampled_from([0.3, [0.0, 0.5, 1.0]]), label="q")
    check(jnp.nanquantile(x, q, axis=axis), np.nanquantile(x, q, axis=axis), float_of(dt), rtol=1e-4)
    check(jnp.nanpercentile(x, 40, axis=axis, method="nearest"),
          np.nanpercentile(x, 40, axis=axis, method="nearest"))
    ax1 = data.draw(st.sampled_from([None] + list(range(-x.ndim, x.ndim))), label="argaxis")
    all_nan = np.all(np.isnan(x.astype(float)), axis=ax1)
    for name in ("nanargmin", "nanargmax"):
        if np.any(all_nan):
            with pytest.raises(ValueError, match="All-NaN"):
                getattr(jnp, name)(x, axis=ax1)
        else:
            check(getattr(jnp, name)(x, axis=ax1), getattr(np, name)(x, axis=ax1))


def test_nanargmax_traced_all_nan_gives_minus_one():
    x = np.array([[np.nan, np.nan], [1.0, np.nan]])
    check(funcgrad.jit(lambda a: jnp.nanargmax(a, axis=1))(x), [-1, 0])


# --- any, all -------------------------------------------------------------------------------------

@given(data=st.data())
def test_any_all_match_numpy(data):
    x = draw_array(data, data.draw(st.sampled_from(REAL)), nan=True)
    axis = draw_axes(data, x.ndim)
    keepdims = data.draw(st.booleans(), label="keepdims")
    where = data.draw(hnp.arrays(np.bool_, x.shape), label="where")
    for name in ("any", "all"):
        check(getattr(jnp, name)(x, axis=axis, keepdims=keepdims), getattr(np, name)(x, axis=axis, keepdims=keepdims))
        check(getattr(jnp, name)(x, axis=axis, where=where), getattr(np, name)(x, axis=axis, where=where))


# --- logsumexp ------------------------------------------------------------------------------------

@given(data=st.data())
def test_logsumexp_matches_scipy(data):
    from scipy.special import logsumexp as ref
    x = draw_array(data, np.float64, data.draw(NONEMPTY))
    x = x + data.draw(st.sampled_from([0.0, 700.0, -700.0]), label="offset")
    if data.draw(st.booleans(), label="-inf"):
        x.flat[0] = -np.inf
    axis = draw_axes(data, x.ndim)
    if isinstance(axis, tuple) and not axis:
        axis = None
    keepdims = data.draw(st.booleans(), label="keepdims")
    check(logsumexp(x, axis=axis, keepdims=keepdims), ref(x, axis=axis, keepdims=keepdims))
    b = data.draw(hnp.arrays(np.float64, x.shape, elements=st.sampled_from([-1.0, 0.0, 0.5, 2.0])), label="b")
    got = logsumexp(x, axis=axis, b=b, return_sign=True)
    want = ref(x, axis=axis, b=b, return_sign=True)
    check(got[1], want[1])
    nz = np.asarray(want[1]) != 0
    np.testing.assert_allclose(np.asarray(got[0])[nz], np.asarray(want[0])[nz], rtol=1e-10, atol=1e-10)


def test_logsumexp_is_stable_with_finite_gradients():
    x = np.array([1000.0, 1000.0, -np.inf, 990.0])
    check(logsumexp(x), np.log(2 + np.exp(-10.0)) + 1000.0)
    g = np.asarray(funcgrad.grad(logsumexp)(x))
    assert np.all(np.isfinite(g))
    softmax = np.exp(x - np.asarray(logsumexp(x)))
    np.testing.assert_allclose(g, softmax, rtol=1e-12)
    check(logsumexp(np.array([-np.inf, -np.inf])), -np.inf)
    g = np.asarray(funcgrad.grad(logsumexp)(np.array([-np.inf, -np.inf])))
    assert np.isnan(g).all()  # JAX's gradient of an all -inf slice: log's 1/0 times exp's 0
    x32 = np.array([88.0, 89.0, 100.0], np.float32)  # exp overflows float32 here
    check(logsumexp(x32), np.float32(np.logaddexp.reduce(x32.astype(np.float64))), rtol=1e-6)
    # int64 data: logsumexp in its inexact dtype, the default float (float64 in this module's x64 mode)
    check(logsumexp(np.arange(3)), np.log(np.exp(np.arange(3.0)).sum()), float_of(np.int64), rtol=1e-6)
    check_grads(lambda a: logsumexp(a, axis=1), (rand((3, 4)) * 50 + 800,), order=2)
    check_grads(lambda a, b: logsumexp(a, b=b), (rand((5,)), rand((5,), 1) + 0.5), order=2)


# --- counting, histograms -------------------------------------------------------------------------

@given(data=st.data())
def test_bincount_digitize_match_numpy(data):
    x = data.draw(hnp.arrays(np.int64, data.draw(st.tuples(st.integers(0, 8))), elements=st.integers(0, 6)))
    minlength = data.draw(st.integers(0, 9), label="minlength")
    check(jnp.bincount(x, minlength=minlength), np.bincount(x, minlength=minlength))
    w = data.draw(hnp.arrays(np.float64, x.shape, elements=st.floats(-2, 2)), label="w")
    check(jnp.bincount(x, w, minlength), np.bincount(x, w, minlength), np.float64)
    length = data.draw(st.integers(0, 9), label="length")
    f = funcgrad.jit(lambda a: jnp.bincount(a, length=length))
    check(f(x), np.bincount(x, minlength=length)[:length])
    v = data.draw(hnp.arrays(np.float64, data.draw(SHAPES), elements=st.floats(-3, 9)), label="v")
    bins = np.sort(data.draw(hnp.arrays(np.float64, (data.draw(st.integers(1, 5)),), elements=st.floats(-2, 8))))
    for right in (False, True):
        # int32, as jax.numpy's
        check(jnp.digitize(v, bins, right), np.digitize(v, bins, right).astype(np.int32))
        check(jnp.digitize(v, bins[::-1], right), np.digitize(v, bins[::-1], right).astype(np.int32))
        check(funcgrad.jit(lambda a, b: jnp.digitize(a, b, right))(v, bins[::-1]),
              np.digitize(v, bins[::-1], right).astype(np.int32))


@given(data=st.data())
def test_histogram_matches_numpy(data):
    dt = data.draw(st.sampled_from([np.int32, np.float32, np.float64]), label="dtype")
    x = draw_array(data, dt, data.draw(SHAPES))
    bins = data.draw(st.sampled_from([1, 3, 10, np.array([-4.0, -1.0, 0.5, 4.0])]), label="bins")
    rng = data.draw(st.sampled_from([None, (-2.0, 3.0)]), label="range")
    edges = np.asarray(jnp.histogram_bin_edges(x, bins, rng))
    want_edges = np.histogram_bin_edges(x, bins, rng)
    # edges computed in float32 as JAX's linspace does (its FMAs): an edge at 0 may be a rounding residue
    # of the range's scale (jnp.histogram(np.int32(0), 10)'s middle edge is 3.7e-9 in JAX too)
    scale = np.finfo(float_of(dt)).eps * np.abs(want_edges).max(initial=0.0)
    np.testing.assert_allclose(edges, want_edges, rtol=1e-6, atol=2 * scale)
    assert edges.dtype == float_of(dt)  # JAX: edges (also given ones) in the data's inexact dtype
    hist, e = jnp.histogram(x, bins, rng)
    # counted against funcgrad's own edges; JAX's counts are inexact: the data's (and weights') float
    check(hist, np.histogram(x.astype(edges.dtype), edges)[0], float_of(dt))
    w = np.linspace(0.5, 1.5, x.size).reshape(x.shape)
    hw, _ = jnp.histogram(x, bins, rng, weights=w)
    check(hw, np.histogram(x.astype(np.float64), edges, weights=w)[0], np.float64, rtol=1e-12)
    if x.size and np.asarray(hist).sum():
        hd, _ = jnp.histogram(x, bins, rng, density=True)
        check(hd, np.histogram(x.astype(edges.dtype), edges, density=True)[0], float_of(edges.dtype), rtol=1e-5)


def test_histogram_misc():
    x = np.array([1.0, 2.0, 2.0, 3.5])
    h, e = jnp.histogram(x, "auto")
    wh, we = np.histogram(x, "auto")
    check(h, wh, x.dtype)  # JAX: counts in the data's float (NumPy: int64)
    check(e, we)
    f = funcgrad.jit(lambda a: jnp.histogram(a, 4, (0.0, 4.0)))
    check(f(x)[0], np.histogram(x, 4, (0.0, 4.0))[0], x.dtype)
    with pytest.raises(ConcretizationError):
        funcgrad.jit(jnp.bincount)(np.array([1, 2]))
    # (as jax.numpy, which clips x to 0: a negative value counts in bin 0, where NumPy raises)
    assert np.asarray(jnp.bincount(np.array([-1, 2, -3]))).tolist() == [2, 0, 1]
    assert np.asarray(jnp.bincount(np.array([-1, -2]), length=2)).tolist() == [2, 0]
    with pytest.raises(ValueError):
        jnp.digitize(np.ones(2), np.array([1.0, 3.0, 2.0]))
    g = funcgrad.grad(lambda w: jnp.sum(jnp.histogram(x, 3, weights=w)[0] * np.array([1.0, 2.0, 3.0])))(np.ones(4))
    check(g, [1.0, 2.0, 2.0, 3.0])


# --- cov, corrcoef --------------------------------------------------------------------------------

@given(data=st.data())
def test_cov_corrcoef_match_numpy(data):
    m = draw_array(data, np.float64, (data.draw(st.integers(1, 3)), data.draw(st.integers(2, 5))))
    rowvar = data.draw(st.booleans(), label="rowvar")
    bias = data.draw(st.booleans(), label="bias")
    check(jnp.cov(m, rowvar=rowvar, bias=bias), np.cov(m, rowvar=rowvar, bias=bias), rtol=1e-9)
    fw = np.arange(1, m.shape[1] + 1)
    aw = np.linspace(0.5, 1.0, m.shape[1])
    check(jnp.cov(m, fweights=fw, aweights=aw), np.cov(m, fweights=fw, aweights=aw), rtol=1e-9)
    check(jnp.cov(m[0], m[-1]), np.cov(m[0], m[-1]), rtol=1e-9)
    if np.all(np.std(m, axis=1) > 1e-3):
        check(jnp.corrcoef(m), np.corrcoef(m), rtol=1e-9)


# --- gradients ------------------------------------------------------------------------------------

GRADS = {
    "var": lambda a: jnp.var(a, axis=1, ddof=1),
    "std": lambda a: jnp.std(a, axis=0),
    "nanvar": lambda a: jnp.nanvar(a),
    "nanmean": lambda a: jnp.nanmean(a, axis=1),
    "median": lambda a: jnp.median(a, axis=1),
    "median_all": lambda a: jnp.median(a),
    "quantile_linear": lambda a: jnp.quantile(a, [0.2, 0.7], axis=0),
    "quantile_midpoint": lambda a: jnp.quantile(a, 0.4, axis=(0, 1), method="midpoint"),
    "percentile_hazen": lambda a: jnp.percentile(a, 35.0, axis=1, method="hazen"),
    "nanquantile": lambda a: jnp.nanquantile(a, 0.3, axis=1),
    "average": lambda a: jnp.average(a, axis=1, weights=np.array([1.0, 2.0, 3.0, 4.0])),
    "ptp": lambda a: jnp.ptp(a, axis=1),
    "nanmax": lambda a: jnp.nanmax(a, axis=0),
    "logsumexp": lambda a: logsumexp(a, axis=0),
    "cov": lambda a: jnp.cov(a),
    "corrcoef": lambda a: jnp.corrcoef(a),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_match_finite_differences(name):
    check_grads(GRADS[name], (rand((3, 4), 7),), order=2)


def test_quantile_gradient_in_q():
    x = rand((6,), 3)
    check_grads(lambda q: jnp.quantile(x, q), (jnp.asarray(np.array([0.13, 0.61])),), order=1)


# --- transforms: vmap vs loop, jit vs eager -------------------------------------------------------

TRANSFORMED = {
    "var": lambda a: jnp.var(a, axis=0),
    "std_where": lambda a: jnp.std(a, where=a > 0.2),
    "median": lambda a: jnp.median(a, axis=1),
    "quantile": lambda a: jnp.quantile(a, [0.1, 0.5], method="nearest"),
    "nanmean": lambda a: jnp.nanmean(jnp.where(a > 0.8, np.nan, a), axis=1),
    "nanmedian": lambda a: jnp.nanmedian(jnp.where(a > 0.8, np.nan, a)),
    "logsumexp": lambda a: logsumexp(a * 100, axis=1),
    "any": lambda a: jnp.any(a > 0.5, axis=0),
    "average": lambda a: jnp.average(a, axis=1, weights=np.arange(1.0, 5.0), returned=True),
    "histogram": lambda a: jnp.histogram(a, 3, (0.0, 1.0))[0],
    "digitize": lambda a: jnp.digitize(a, np.array([0.25, 0.5, 0.75])),
    "nanargmin": lambda a: jnp.nanargmin(a, axis=1),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMED))
def test_vmap_matches_loop(name):
    f = TRANSFORMED[name]
    xs = rand((3, 2, 4), 11)
    got = funcgrad.tree_util.tree_flatten(funcgrad.vmap(f)(xs))[0]
    per = [funcgrad.tree_util.tree_flatten(f(x))[0] for x in xs]
    for k, g in enumerate(got):
        check(g, np.stack([np.asarray(p[k]) for p in per]))


@pytest.mark.parametrize("name", sorted(TRANSFORMED))
def test_jit_matches_eager(name):
    f = TRANSFORMED[name]
    x = rand((2, 4), 12)
    got = funcgrad.tree_util.tree_flatten(funcgrad.jit(f)(x))[0]
    want = funcgrad.tree_util.tree_flatten(f(x))[0]
    for g, w in zip(got, want):
        check(g, np.asarray(w))
