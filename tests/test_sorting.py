"""funcgrad.numpy's sorting, searching, set, scan, difference and selection functions against NumPy 2, and
the lax-level scans / sort / top_k / dynamic slices; gradients against finite differences (float64),
vmap against a Python loop, jit against eager.

dtype expectations are NumPy's, except where jax.numpy's differ (searchsorted and top_k indices are int32,
cumulative sums keep small integer dtypes, Python scalars in diff's prepend/append are weakly typed), and
funcgrad's documented differences: take/take_along_axis default
to mode="fill" (JAX); partition sorts fully (checked as a partition); put_along_axis is functional.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad
import funcgrad.lax as lax
import funcgrad.numpy as jnp
from funcgrad._src.core import dtypes
from funcgrad._src.core.errors import ConcretizationError
from funcgrad.testing import check_grads

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

REAL = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.float32, np.float64]
NUMERIC = [np.int8, np.int32, np.int64, np.uint8, np.float32, np.float64]
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
NONEMPTY = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)


def elements(dt, nan=False):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return st.booleans()
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return st.integers(max(-5, int(info.min)), min(5, int(info.max)))
    vals = st.floats(-5, 5, width=8 * dt.itemsize).map(lambda v: round(v, 1))  # ties are common
    return st.one_of(vals, st.just(np.nan)) if nan else vals


def draw_array(data, dt, shape=None, nan=False, label="x"):
    shape = data.draw(SHAPES, label="shape") if shape is None else shape
    return data.draw(hnp.arrays(np.dtype(dt), shape, elements=elements(dt, nan)), label=label)


def draw_axis(data, ndim, allow_none=True):
    choices = ([None] if allow_none else []) + (list(range(-ndim, ndim)) if ndim else [])
    return data.draw(st.sampled_from(choices), label="axis")


def check(actual, expected, dtype=None, rtol=1e-6):
    expected = np.asarray(expected)
    dtype = np.dtype(dtype) if dtype is not None else expected.dtype
    assert isinstance(actual, funcgrad.Array), type(actual)
    assert actual.dtype == dtype, (actual.dtype, dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    a = np.asarray(actual)
    if dtype.kind in "fc":
        np.testing.assert_allclose(a, expected.astype(dtype), rtol=rtol, atol=rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(a, expected)


def rand(shape, seed=0, distinct=True):
    rng = np.random.default_rng(seed)
    if distinct:
        n = int(np.prod(shape))
        return (rng.permutation(n) + rng.uniform(0.1, 0.4, n)).reshape(shape).astype(np.float64)
    return rng.standard_normal(shape)


# --- sort, argsort, lexsort, partition ------------------------------------------------------------

@given(data=st.data())
def test_sort_and_argsort_match_numpy(data):
    dt = data.draw(st.sampled_from(REAL), label="dtype")
    x = draw_array(data, dt, nan=True)
    axis = draw_axis(data, x.ndim) if x.ndim else None
    check(jnp.sort(x, axis=axis), np.sort(x, axis=axis, kind="stable"))
    check(jnp.argsort(x, axis=axis), np.argsort(x, axis=axis, kind="stable"))
    if axis is not None and x.dtype != np.bool_ and not np.isnan(x.astype(float)).any():
        # descending, stable: by (-x, original index)
        key = -x.astype(np.float64)
        want = np.argsort(key, axis=axis, kind="stable")
        check(jnp.argsort(x, axis=axis, descending=True), want)
        check(jnp.sort(x, axis=axis, descending=True), np.take_along_axis(x, want, axis))


def test_sort_errors_and_zero_d():
    with pytest.raises(np.exceptions.AxisError):
        jnp.sort(np.array(3.0))
    with pytest.raises(np.exceptions.AxisError):  # as jnp.argsort (NumPy: [0])
        jnp.argsort(np.array(3.0))
    check(jnp.argsort(np.array(3.0), axis=None), np.argsort(np.array(3.0), axis=None))
    check(jnp.sort(np.array(3.0), axis=None), np.sort(np.array(3.0), axis=None))
    with pytest.raises(NotImplementedError):
        jnp.sort(np.zeros(3), order="f")


@given(data=st.data())
def test_lexsort_matches_numpy(data):
    shape = data.draw(NONEMPTY, label="shape")
    keys = [draw_array(data, data.draw(st.sampled_from(REAL)), shape, label=f"key{i}")
            for i in range(data.draw(st.integers(1, 3), label="nkeys"))]
    axis = draw_axis(data, len(shape), allow_none=False)
    check(jnp.lexsort(keys, axis=axis), np.lexsort(keys, axis=axis))


@given(data=st.data())
def test_partition_is_a_partition(data):
    x = draw_array(data, np.float64, data.draw(NONEMPTY, label="shape"))
    axis = draw_axis(data, x.ndim, allow_none=False)
    n = x.shape[axis]
    kth = data.draw(st.integers(-n, n - 1), label="kth")
    p = np.asarray(jnp.partition(x, kth, axis=axis))
    k = kth % n
    ref = np.sort(x, axis=axis)
    np.testing.assert_array_equal(np.take(p, k, axis), np.take(ref, k, axis))
    assert np.all(np.take(p, range(k), axis) <= np.expand_dims(np.take(ref, k, axis), axis))
    assert np.all(np.take(p, range(k + 1, n), axis) >= np.expand_dims(np.take(ref, k, axis), axis))
    idx = np.asarray(jnp.argpartition(x, kth, axis=axis))
    np.testing.assert_array_equal(np.take_along_axis(x, idx, axis), p)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.partition(x, n, axis=axis)


# --- searchsorted ---------------------------------------------------------------------------------

@given(data=st.data())
def test_searchsorted_matches_numpy(data):
    dt = data.draw(st.sampled_from(NUMERIC), label="dtype")
    a = np.sort(draw_array(data, dt, data.draw(st.tuples(st.integers(0, 7)), label="n"), nan=True, label="a"))
    v = draw_array(data, dt, nan=True, label="v")
    side = data.draw(st.sampled_from(["left", "right"]), label="side")
    method = data.draw(st.sampled_from(["scan", "compare_all"]), label="method")
    # jnp.searchsorted gives int32 in either x64 mode (NumPy: int64)
    check(jnp.searchsorted(a, v, side=side, method=method), np.searchsorted(a, v, side=side), np.int32)
    perm = np.random.default_rng(0).permutation(a.size)
    shuffled = a[perm]
    sorter = np.argsort(shuffled, kind="stable")
    check(jnp.searchsorted(shuffled, v, side=side, sorter=sorter), np.searchsorted(shuffled, v, side, sorter),
          np.int32)


def test_searchsorted_scalar_and_errors():
    check(jnp.searchsorted(np.array([1.0, 2.0, 3.0]), 2.5), np.searchsorted(np.array([1.0, 2.0, 3.0]), 2.5), np.int32)
    with pytest.raises(ValueError):
        jnp.searchsorted(np.zeros((2, 2)), 1.0)
    with pytest.raises(ValueError):
        jnp.searchsorted(np.zeros(2), 1.0, side="middle")


# --- unique ---------------------------------------------------------------------------------------

@given(data=st.data())
def test_unique_matches_numpy(data):
    dt = data.draw(st.sampled_from(REAL), label="dtype")
    x = draw_array(data, dt, nan=True)
    flags = data.draw(st.tuples(st.booleans(), st.booleans(), st.booleans()), label="flags")
    equal_nan = data.draw(st.booleans(), label="equal_nan")
    got = jnp.unique(x, *flags, equal_nan=equal_nan)
    want = np.unique(x, *flags, equal_nan=equal_nan)
    got, want = (got, want) if any(flags) else ((got,), (want,))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        check(g, w)


@given(data=st.data())
def test_unique_along_axis_matches_numpy(data):
    x = draw_array(data, data.draw(st.sampled_from([np.int32, np.float64])), data.draw(NONEMPTY))
    axis = draw_axis(data, x.ndim, allow_none=False)
    got = jnp.unique(x, True, True, True, axis=axis)
    want = np.unique(x, True, True, True, axis=axis)
    for g, w in zip(got, want):
        check(g, w)


def test_unique_with_size_pads_and_truncates_and_jits():
    x = np.array([3, 1, 3, 2, 1, 3])
    v, i, inv, c = jnp.unique(x, True, True, True, size=5, fill_value=-7)
    check(v, [1, 2, 3, -7, -7])
    check(i, [1, 3, 0, 1, 1])  # padding repeats the smallest value's index
    check(inv, np.unique(x, return_inverse=True)[1])
    check(c, [2, 1, 3, 0, 0])
    check(jnp.unique(x, size=2), [1, 2])
    check(jnp.unique(x, size=4), [1, 2, 3, 1])  # default fill: the smallest value
    f = funcgrad.jit(lambda a: jnp.unique(a, return_counts=True, size=4, fill_value=0))
    got = f(x)
    check(got[0], [1, 2, 3, 0])
    check(got[1], [2, 1, 3, 0])
    with pytest.raises(ConcretizationError, match="size="):
        funcgrad.jit(jnp.unique)(x)


def test_unique_array_api_functions():
    x = np.array([[2.0, np.nan, 1.0], [np.nan, 2.0, 5.0]])
    for name in ("unique_all", "unique_counts", "unique_inverse"):
        got, want = getattr(jnp, name)(x), getattr(np, name)(x)
        assert type(got).__name__ == type(want).__name__ and got._fields == want._fields
        for g, w in zip(got, want):
            check(g, w)
    check(jnp.unique_values(x), np.unique_values(x))
    check(jnp.unique(np.zeros((0,))), np.unique(np.zeros((0,))))


def test_unique_values_are_differentiable():
    x = np.array([3.0, 1.0, 3.0, 2.0])
    g = funcgrad.grad(lambda a: jnp.sum(jnp.unique(a, size=3) * np.array([1.0, 10.0, 100.0])))(x)
    check(g, [100.0, 1.0, 0.0, 10.0])  # each unique value is read from its first occurrence


# --- nonzero family -------------------------------------------------------------------------------

@given(data=st.data())
def test_nonzero_family_matches_numpy(data):
    dt = data.draw(st.sampled_from(REAL), label="dtype")
    x = draw_array(data, dt, data.draw(NONEMPTY))
    for g, w in zip(jnp.nonzero(x), np.nonzero(x)):
        check(g, w.astype(np.int64))
    check(jnp.flatnonzero(x), np.flatnonzero(x).astype(np.int64))
    check(jnp.argwhere(x), np.argwhere(x).astype(np.int64))
    axis = draw_axis(data, x.ndim)
    keepdims = data.draw(st.booleans(), label="keepdims")
    check(jnp.count_nonzero(x, axis=axis, keepdims=keepdims),
          np.asarray(np.count_nonzero(x, axis=axis, keepdims=keepdims)).astype(np.int64))
    size = data.draw(st.integers(0, 6), label="size")
    want = np.nonzero(x)
    got = funcgrad.jit(lambda a: jnp.nonzero(a, size=size, fill_value=-1))(x)
    for g, w in zip(got, want):
        w = np.concatenate([w[:size], np.full(max(0, size - w.size), -1)]).astype(np.int64)
        check(g, w)


def test_nonzero_errors():
    with pytest.raises(ValueError, match="0d"):
        jnp.nonzero(np.array(1.0))
    with pytest.raises(ConcretizationError):
        funcgrad.jit(jnp.nonzero)(np.ones(3))
    check(jnp.argwhere(np.array(5)), np.argwhere(np.array(5)).astype(np.int64))
    check(jnp.argwhere(np.array(0)), np.argwhere(np.array(0)).astype(np.int64))


# --- cumulative -----------------------------------------------------------------------------------

@given(data=st.data())
def test_cumsum_cumprod_match_numpy(data):
    dt = data.draw(st.sampled_from(REAL), label="dtype")
    x = draw_array(data, dt, nan=data.draw(st.booleans(), label="nan"))
    axis = draw_axis(data, x.ndim) if x.ndim else data.draw(st.sampled_from([None, 0, -1]))
    out_dt = data.draw(st.sampled_from([None, np.float64, np.int64]), label="dtype=")
    # jax.numpy's dtype: dtype= if given, else bools in the default int and other dtypes kept (int8 stays
    # int8, wrapping as NumPy's does in int8; NumPy: int64)
    jax_dt = out_dt if out_dt is not None else np.dtype(dtypes.defaults.int_) if x.dtype == np.bool_ else x.dtype
    for name in ("cumsum", "cumprod", "nancumsum", "nancumprod"):
        if x.ndim == 0 and axis is not None:  # as in JAX, a 0-d array has no axis 0 (NumPy: one element)
            with pytest.raises(np.exceptions.AxisError):
                getattr(jnp, name)(x, axis=axis, dtype=out_dt)
            continue
        want = getattr(np, name)(x, axis=axis, dtype=jax_dt)
        check(getattr(jnp, name)(x, axis=axis, dtype=out_dt), want, rtol=1e-5)


def test_cumulative_sum_array_api():
    x = np.arange(6).reshape(2, 3)
    check(jnp.cumulative_sum(x, axis=1, include_initial=True), np.cumulative_sum(x, axis=1, include_initial=True))
    check(jnp.cumulative_prod(x[0] + 1, include_initial=True), np.cumulative_prod(x[0] + 1, include_initial=True))
    with pytest.raises(ValueError):
        jnp.cumulative_sum(x)


@given(data=st.data())
def test_lax_scans_match_numpy(data):
    x = draw_array(data, np.float64, data.draw(NONEMPTY))
    axis = data.draw(st.integers(0, x.ndim - 1), label="axis")
    reverse = data.draw(st.booleans(), label="reverse")

    def ref(fn):
        y = np.flip(x, axis) if reverse else x
        r = fn(y, axis)
        return np.flip(r, axis) if reverse else r
    check(lax.cumsum(x, axis, reverse), ref(lambda y, a: np.cumsum(y, a)), rtol=1e-12)
    check(lax.cumprod(x, axis, reverse), ref(lambda y, a: np.cumprod(y, a)), rtol=1e-12)
    check(lax.cummax(x, axis, reverse), ref(np.maximum.accumulate))
    check(lax.cummin(x, axis, reverse), ref(np.minimum.accumulate))
    check(lax.cumlogsumexp(x, axis, reverse), ref(np.logaddexp.accumulate), rtol=1e-12)


def test_scan_gradients():
    x = np.array([[0.7, 0.0, -1.3, 0.0, 2.0], [1.1, -0.4, 0.9, 1.5, -0.2]])
    for reverse in (False, True):
        check_grads(lambda a: lax.cumsum(a, 1, reverse), (x,), order=2)
        check_grads(lambda a: lax.cumprod(a, 1, reverse), (x,), order=2)  # exact zeros in x
        check_grads(lambda a: lax.cumlogsumexp(a, 1, reverse), (x + 700.0,), order=2)
        check_grads(lambda a: lax.cummax(a, 1, reverse), (rand((2, 5)),), order=2)
        check_grads(lambda a: lax.cummin(a, 0, reverse), (rand((3, 4), 1),), order=2)
    check_grads(lambda a: jnp.cumprod(a), (x,), order=2)
    check_grads(lambda a: jnp.nancumsum(a, axis=0), (x,), order=1)
    # cumprod's gradient at zeros, exactly: d/dx_j prod_{i<=k} x_i
    g = funcgrad.grad(lambda a: jnp.sum(jnp.cumprod(a)))(np.array([2.0, 0.0, 3.0, 0.0]))
    check(g, [1.0, 2.0 + 6.0, 0.0, 0.0])
    # cumlogsumexp stays finite with -inf and huge entries
    g = funcgrad.grad(lambda a: jnp.sum(lax.cumlogsumexp(a)))(np.array([-np.inf, 1000.0, 999.0]))
    assert np.all(np.isfinite(np.asarray(g)))


# --- diff, ediff1d --------------------------------------------------------------------------------

@given(data=st.data())
def test_diff_matches_numpy(data):
    dt = data.draw(st.sampled_from(REAL), label="dtype")
    x = draw_array(data, dt, data.draw(NONEMPTY))
    n = data.draw(st.integers(0, 3), label="n")
    axis = draw_axis(data, x.ndim, allow_none=False)
    kw = {}
    if data.draw(st.booleans(), label="prepend") and dt != np.bool_:
        kw["prepend"] = data.draw(st.sampled_from([0, x.take([0], axis=axis)]), label="prepend value")
    if data.draw(st.booleans(), label="append") and dt != np.bool_:
        kw["append"] = x.take([-1], axis=axis)
    # a Python scalar prepended is weakly typed in jax.numpy (x's dtype); NumPy makes it an int64 array
    np_kw = {k: (np.asarray(v, dt) if isinstance(v, int) else v) for k, v in kw.items()}
    check(jnp.diff(x, n, axis, **kw), np.diff(x, n, axis, **np_kw))
    if dt != np.bool_:
        check(jnp.ediff1d(x), np.ediff1d(x))
        check(jnp.ediff1d(x, to_begin=np.array([1], dt), to_end=np.array([2, 3], dt)),
              np.ediff1d(x, to_begin=np.array([1], dt), to_end=np.array([2, 3], dt)))


def test_diff_errors_and_gradient():
    with pytest.raises(ValueError):
        jnp.diff(np.array(1.0))
    with pytest.raises(ValueError):
        jnp.diff(np.ones(3), -1)
    check_grads(lambda a: jnp.diff(a, 2, axis=0, prepend=1.0), (rand((4, 3)),), order=2)


# --- take, take_along_axis, put_along_axis --------------------------------------------------------

@given(data=st.data())
def test_take_matches_numpy(data):
    dt = data.draw(st.sampled_from(REAL), label="dtype")
    x = draw_array(data, dt, data.draw(NONEMPTY))
    axis = draw_axis(data, x.ndim)
    n = x.size if axis is None else x.shape[axis]
    idx = data.draw(hnp.arrays(np.int64, data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)),
                               elements=st.integers(-n - 2, n + 2)), label="indices")
    for mode in ("clip", "wrap"):
        check(jnp.take(x, idx, axis=axis, mode=mode), np.take(x, idx, axis=axis, mode=mode))
    inb = (idx >= -n) & (idx < n)
    if inb.all():
        check(jnp.take(x, idx, axis=axis, mode="raise"), np.take(x, idx, axis=axis))
    else:
        with pytest.raises(IndexError):
            jnp.take(x, idx, axis=axis, mode="raise")
    got = np.asarray(jnp.take(x, idx, axis=axis, fill_value=1 if dt != np.bool_ else False))
    want = np.take(x, np.clip(np.where(idx < 0, idx + n, idx), 0, n - 1), axis=axis)
    ax = 0 if axis is None else axis % x.ndim
    m = inb.reshape((1,) * ax + idx.shape + (1,) * (want.ndim - ax - idx.ndim))
    np.testing.assert_array_equal(got, np.where(m, want, np.array(1 if dt != np.bool_ else False, dt)))


def test_take_default_fill_values():
    check(jnp.take(np.array([1.0, 2.0]), np.array([0, 5])), [1.0, np.nan])
    check(jnp.take(np.array([1, 2], np.int32), np.array([5])), np.array([np.iinfo(np.int32).min], np.int32))
    check(jnp.take(np.array([1, 2], np.uint8), np.array([5])), np.array([255], np.uint8))
    with pytest.raises(IndexError):
        jnp.take(np.ones(3), np.array([0.5]))


@given(data=st.data())
def test_take_and_put_along_axis_match_numpy(data):
    x = draw_array(data, data.draw(st.sampled_from(REAL)), data.draw(NONEMPTY))
    axis = draw_axis(data, x.ndim, allow_none=False)
    n = x.shape[axis]
    ishape = list(x.shape)
    ishape[axis] = data.draw(st.integers(1, 4), label="k")
    for d in range(x.ndim):  # broadcasting: size-1 index dimensions
        if d != axis and data.draw(st.booleans(), label=f"bcast{d}"):
            ishape[d] = 1
    idx = data.draw(hnp.arrays(np.int64, tuple(ishape), elements=st.integers(-n, n - 1)), label="indices")
    check(jnp.take_along_axis(x, idx, axis), np.take_along_axis(x, idx, axis))
    vals = np.ones(np.broadcast_shapes(idx.shape, tuple(1 if d == axis % x.ndim else s for d, s in enumerate(x.shape))),
                   x.dtype)
    want = x.copy()
    np.put_along_axis(want, idx, vals, axis)
    # duplicate indices write the same value, so NumPy's and funcgrad's order agree
    check(jnp.put_along_axis(x, idx, vals, axis, inplace=False), want)
    flat = x.ravel()
    fi = idx.ravel() % flat.size
    check(jnp.take_along_axis(x, fi, None), np.take_along_axis(x, fi, None))
    with pytest.raises(ValueError, match="inplace"):
        jnp.put_along_axis(x, idx, vals, axis)


def test_take_along_axis_with_argsort_and_gradient():
    x = rand((3, 4))
    i = jnp.argsort(x, axis=1)
    check(jnp.take_along_axis(x, i, 1), np.sort(x, 1))
    check(jnp.take_along_axis(np.array([1.0, 2.0]), np.array([3]), 0), [np.nan])
    check_grads(lambda a: jnp.take_along_axis(a, i, 1) * np.arange(4.0), (x,), order=2)
    check_grads(lambda a: jnp.take(a, np.array([[0, 2], [2, 2]]), axis=1), (x,), order=2)
    check_grads(lambda a: jnp.put_along_axis(a, np.array([[1], [0], [3]]), a[:, :1] * 2, 1, inplace=False),
                (x,), order=2)


# --- select, piecewise, extract, compress ---------------------------------------------------------

@given(data=st.data())
def test_select_piecewise_extract_compress_match_numpy(data):
    dt = data.draw(st.sampled_from(NUMERIC), label="dtype")
    x = draw_array(data, dt, data.draw(NONEMPTY))
    conds = [x > 0, x < -1]
    choices = [x, x * 2]
    check(jnp.select(conds, choices), np.select(conds, choices))
    check(jnp.select(conds, choices, default=3), np.select(conds, choices, default=3))
    funcs = [lambda a: a * 2, 7, lambda a: a - 1][:data.draw(st.integers(2, 3), label="nfuncs")]
    check(jnp.piecewise(x, conds, funcs), np.piecewise(x, conds, funcs))
    cond = data.draw(hnp.arrays(np.bool_, x.shape), label="cond")
    check(jnp.extract(cond, x), np.extract(cond, x))
    axis = draw_axis(data, x.ndim)
    m = x.size if axis is None else x.shape[axis]
    c1 = data.draw(hnp.arrays(np.bool_, (data.draw(st.integers(0, m), label="clen"),)), label="c1")
    check(jnp.compress(c1, x, axis=axis), np.compress(c1, x, axis=axis))


def test_selection_errors_and_sizes():
    x = np.arange(6.0)
    with pytest.raises(ValueError):
        jnp.select([], [])
    with pytest.raises(TypeError):
        jnp.select([x], [x])
    with pytest.raises(IndexError):
        jnp.compress([0, 0, 0, 0, 0, 0, 1], x)
    check(jnp.compress([0, 0, 0, 0, 0, 0, 0], x), np.compress([0] * 7, x))
    f = funcgrad.jit(lambda c, a: jnp.extract(c, a, size=4, fill_value=-1.0))
    check(f(x > 2.5, x), [3.0, 4.0, 5.0, -1.0])
    check_grads(lambda a: jnp.select([a > 2, a < 1], [a * a, -a], 0.5 * a), (x + 0.25,), order=2)
    check_grads(lambda a: jnp.piecewise(a, [a > 2], [lambda v: v ** 2, lambda v: 3 * v]), (x + 0.25,), order=2)


# --- lax: sort, top_k, dynamic slices -------------------------------------------------------------

def test_lax_sort_multi_operand_and_gradient():
    keys = np.array([[2, 1, 2, 1], [0, 0, 1, 1]])
    vals = rand((2, 4))
    k, v = lax.sort((keys, vals), dimension=1, num_keys=1)
    perm = np.argsort(keys, axis=1, kind="stable")
    check(k, np.take_along_axis(keys, perm, 1))
    check(v, np.take_along_axis(vals, perm, 1))
    k2, v2 = lax.sort_key_val(vals, keys, dimension=0)
    check(k2, np.sort(vals, 0))
    check_grads(lambda a: lax.sort((keys, a, a * 2), 1, num_keys=2)[1], (vals,), order=2)
    check_grads(lambda a: jnp.sort(a, axis=0), (vals,), order=2)
    check_grads(lambda a: jnp.sort(a, axis=None, descending=True), (vals,), order=2)


@given(data=st.data())
def test_top_k_matches_numpy(data):
    x = draw_array(data, data.draw(st.sampled_from([np.int32, np.float64])), data.draw(NONEMPTY))
    k = data.draw(st.integers(0, x.shape[-1]), label="k")
    v, i = lax.top_k(x, k)
    order = np.argsort(-x.astype(np.float64), axis=-1, kind="stable")[..., :k]
    check(i, order.astype(np.int32))  # lax.top_k's indices are int32 (as JAX's)
    check(v, np.take_along_axis(x, order, -1))


def test_top_k_gradient():
    x = rand((3, 5))
    check_grads(lambda a: lax.top_k(a, 3)[0], (x,), order=2)
    g = funcgrad.grad(lambda a: jnp.sum(lax.top_k(a, 2)[0]))(np.array([1.0, 5.0, 3.0, 4.0]))
    check(g, [0.0, 1.0, 0.0, 1.0])


def _np_dynamic_slice(x, starts, sizes):
    lo = [min(max(s + n if s < 0 else s, 0), n - k) for s, n, k in zip(starts, x.shape, sizes)]
    return x[tuple(slice(a, a + k) for a, k in zip(lo, sizes))], lo


@given(data=st.data())
def test_dynamic_slices_clamp_like_jax(data):
    x = draw_array(data, np.float64, data.draw(NONEMPTY))
    starts = [data.draw(st.integers(-n - 2, n + 2), label="start") for n in x.shape]
    sizes = [data.draw(st.integers(0, n), label="size") for n in x.shape]
    want, lo = _np_dynamic_slice(x, starts, sizes)
    check(lax.dynamic_slice(x, starts, sizes), want)
    check(lax.dynamic_slice(x, [np.int32(s) for s in starts], sizes), want)
    upd = np.full(sizes, 9.0)
    ref = x.copy()
    ref[tuple(slice(a, a + k) for a, k in zip(lo, sizes))] = upd
    check(lax.dynamic_update_slice(x, upd, starts), ref)
    # traced starts under jit give the same
    f = funcgrad.jit(lambda a, *s: lax.dynamic_slice(a, s, sizes))
    check(f(x, *[np.int64(s) for s in starts]), want)


def test_dynamic_slice_helpers_and_gradients():
    x = rand((4, 5))
    check(lax.dynamic_slice_in_dim(x, 3, 2, axis=1), x[:, 3:5])
    check(lax.dynamic_index_in_dim(x, -1, axis=0, keepdims=False), x[-1])
    check(lax.dynamic_update_slice_in_dim(x, np.zeros((4, 1)), 7, axis=1),
          np.concatenate([x[:, :4], np.zeros((4, 1))], 1))
    check_grads(lambda a: lax.dynamic_slice(a, [1, 9], [2, 3]), (x,), order=2)
    check_grads(lambda a, u: lax.dynamic_update_slice(a, u, [-1, 2]), (x, rand((2, 2), 3)), order=2)
    with pytest.raises(TypeError, match="start indices"):
        lax.dynamic_slice(x, [np.zeros(2, np.int64), 0], [1, 1])
    with pytest.raises(ValueError, match="slice_sizes"):
        lax.dynamic_slice(x, [0, 0], [5, 1])


def test_dynamic_slice_vmap_over_starts():
    x = rand((6, 3))
    starts = np.array([0, 2, 5, -1])
    got = funcgrad.vmap(lambda s: lax.dynamic_slice(x, [s, 0], [2, 3]))(starts)
    want = np.stack([_np_dynamic_slice(x, [s, 0], [2, 3])[0] for s in starts])
    check(got, want)
    xs = rand((4, 6, 3), 2)
    got = funcgrad.vmap(lambda a, s: lax.dynamic_update_slice(a, np.ones((2, 3)), [s, 0]))(xs, starts)
    want = []
    for a, s in zip(xs, starts):
        r = a.copy()
        lo = _np_dynamic_slice(a, [s, 0], [2, 3])[1]
        r[lo[0]:lo[0] + 2] = 1.0
        want.append(r)
    check(got, np.stack(want))


def test_bool_reductions():
    b = np.array([[True, False], [True, True]])
    check(lax.reduce_and(b, (1,)), b.all(1))
    check(lax.reduce_or(b, (0, 1)), b.any())
    with pytest.raises(TypeError, match="bool"):
        lax.reduce_and(np.ones(2), (0,))


# --- transforms: vmap vs loop, jit vs eager -------------------------------------------------------

VMAPPED = {
    "sort": lambda a: jnp.sort(a, axis=0),
    "argsort": lambda a: jnp.argsort(a, axis=-1, descending=True),
    "searchsorted": lambda a: jnp.searchsorted(np.array([0.5, 1.5, 2.5, 7.0]), a),
    "searchsorted_a": lambda a: jnp.searchsorted(jnp.sort(a[0]), np.array([0.3, 2.0])),
    "cumsum": lambda a: jnp.cumsum(a, axis=1),
    "cumprod": lambda a: jnp.cumprod(a),
    "diff": lambda a: jnp.diff(a, axis=0, append=0.0),
    "take_along_axis": lambda a: jnp.take_along_axis(a, jnp.argsort(a, axis=1), axis=1),
    "take": lambda a: jnp.take(a, np.array([2, 0, 9]), axis=1),
    "unique_size": lambda a: jnp.unique(jnp.round(a), size=3, return_counts=True),
    "nonzero_size": lambda a: jnp.nonzero(a > 1.0, size=4, fill_value=-1),
    "lexsort": lambda a: jnp.lexsort([a[0], jnp.round(a[1])]),
    "top_k": lambda a: lax.top_k(a, 2),
    "select": lambda a: jnp.select([a > 1, a < 0.5], [a, -a], 2.0),
}


@pytest.mark.parametrize("name", sorted(VMAPPED))
def test_vmap_matches_loop(name):
    f = VMAPPED[name]
    xs = np.abs(rand((3, 2, 4), 5)) / 3
    got = funcgrad.tree_util.tree_flatten(funcgrad.vmap(f)(xs))[0]
    per = [funcgrad.tree_util.tree_flatten(f(x))[0] for x in xs]
    for k, g in enumerate(got):
        check(g, np.stack([np.asarray(p[k]) for p in per]))


@pytest.mark.parametrize("name", sorted(VMAPPED))
def test_jit_matches_eager(name):
    f = VMAPPED[name]
    x = np.abs(rand((2, 4), 6)) / 3
    got = funcgrad.tree_util.tree_flatten(funcgrad.jit(f)(x))[0]
    want = funcgrad.tree_util.tree_flatten(f(x))[0]
    for g, w in zip(got, want):
        check(g, np.asarray(w))


def test_grad_of_vmap_and_vmap_of_grad_through_sort():
    xs = rand((3, 4), 8)
    w = np.arange(4.0)
    per = funcgrad.vmap(funcgrad.grad(lambda a: jnp.sum(jnp.sort(a) * w)))(xs)
    want = np.stack([w[np.argsort(np.argsort(x))] for x in xs])
    check(per, want)
    g = funcgrad.grad(lambda a: jnp.sum(funcgrad.vmap(lambda r: jnp.cumprod(r))(a)))(xs)
    check(g, np.stack([np.asarray(funcgrad.grad(lambda r: jnp.sum(jnp.cumprod(r)))(x)) for x in xs]))


@pytest.mark.parametrize("transform", ["eager", "jit"])
def test_primitive_errors_name_the_problem(transform):
    wrap = funcgrad.jit if transform == "jit" else (lambda f: f)
    cases = [
        (lambda x: lax.cumsum(x, 3), np.ones(3), ValueError, "axis 3 out of range"),
        (lambda x: lax.cumlogsumexp(x), np.ones(3, np.int64), TypeError, "floating"),
        (lambda x: lax.top_k(x, 5), np.ones(3), ValueError, "k must be between"),
        (lambda x: lax.sort((x, np.ones(4))), np.ones(3), TypeError, "equal shapes"),
        (lambda x: lax.sort(x, num_keys=2), np.ones(3), ValueError, "num_keys"),
        (lambda x: lax.dynamic_update_slice(x, np.ones(4), [0]), np.ones(3), TypeError, "fit inside"),
        (lambda x: lax.reduce_or(x, (1,)), np.ones(3, bool), ValueError, "out of range"),
    ]
    for f, x, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            wrap(f)(x)


def test_cummax_cummin_ties_split_as_jax():
    """At ties lax.cummax / cummin take JAX's derivative: that of an associative scan of max (min), whose
    ties split evenly at each node of the scan's tree, and NaN passes nothing on."""
    with funcgrad.enable_x64():
        J = np.asarray(funcgrad.jacfwd(lax.cummax)(jnp.asarray([1.0, 1.0, 1.0, 1.0])))
        R = np.asarray(funcgrad.jacrev(lax.cummax)(jnp.asarray([1.0, 1.0, 1.0, 1.0])))
        # the tree for n = 4: out1 = max(x0, x1), out3 = max(out1, max(x2, x3)), out2 = max(out1, x2)
        want = [[1, 0, 0, 0], [0.5, 0.5, 0, 0], [0.25, 0.25, 0.5, 0], [0.25, 0.25, 0.25, 0.25]]
        np.testing.assert_array_equal(J, want)
        np.testing.assert_array_equal(R, want)
        g = funcgrad.grad(lambda a: jnp.sum(lax.cummin(a)))(jnp.asarray([0.0, np.nan, 0.0]))
        np.testing.assert_array_equal(np.asarray(g), [1.0, 0.0, 0.0])
        np.testing.assert_array_equal(  # without a tie each output's derivative is the running extremum's
            np.asarray(funcgrad.jacfwd(lambda a: lax.cummax(a, reverse=True))(jnp.asarray([0.0, 3.0, 1.0]))),
            [[0, 1, 0], [0, 1, 0], [0, 0, 1]])


def test_cummax_cummin_ties_vs_jax():
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp
    rng = np.random.default_rng(0)
    prev = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", True)
    try:
        with funcgrad.enable_x64():
            for trial in range(12):  # (values 0..2: every draw has ties; a quarter has NaNs)
                v = rng.integers(0, 3, (2, int(rng.integers(1, 12)))).astype(float)
                if trial % 4 == 0:
                    v[rng.random(v.shape) < 0.3] = np.nan
                w = rng.standard_normal(v.shape)
                for name in ("cummax", "cummin"):
                    for axis, reverse in ((1, False), (1, True), (0, False)):
                        out = []
                        for L, N in ((jax, jjnp), (funcgrad, jnp)):
                            f = lambda a: getattr(L.lax, name)(a, axis, reverse)  # noqa: E731
                            x = N.asarray(v)
                            out.append([np.asarray(L.jvp(f, (x,), (N.asarray(w),))[1]),
                                        np.asarray(L.grad(lambda a: N.sum(f(a) ** 2 * N.asarray(w)))(x))])
                        for got, want in zip(out[1], out[0]):
                            np.testing.assert_allclose(got, want, rtol=1e-14, atol=0,
                                                       err_msg=f"{name} {v.tolist()} {axis} {reverse}")
    finally:
        jax.config.update("jax_enable_x64", prev)
