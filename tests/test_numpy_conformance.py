"""funcgrad.numpy as a NumPy namespace, against NumPy itself: what `import funcgrad.numpy as np` users hit.

Signatures (so positional and keyword calls written for NumPy bind the same way), `out=` (rejected
with a TypeError naming the function: arrays are immutable), reductions' `where=`, `keepdims`,
`dtype`, `initial`, `ddof`, and result types. Documented differences, as in JAX: results are
funcgrad Arrays (0-d Arrays where NumPy returns scalars) and Python floats default to float32.
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad.numpy as fnp
from funcgrad.core.array import Array

P = inspect.Parameter

# NumPy parameters funcgrad does not take (memory layout, subclasses, dispatch, output buffers: a
# NumPy call passing them gets a TypeError naming the function). Past one of them, positions differ
# from NumPy's and later parameters are only checked by name (they are passed by keyword in practice).
_UNSUPPORTED = {"like", "subok", "order", "casting", "ndmax", "out"}
# Positional names that differ where the Array API's name wins; NumPy's is accepted as a keyword.
_RENAMED = {("clip", "a_min"): "min", ("clip", "a_max"): "max"}


def _numpy_functions():
    out = []
    for name in sorted(dir(fnp)):
        f = getattr(np, name, None)
        if name.startswith("_") or f is None or isinstance(f, (type, np.ufunc)) or not callable(f):
            continue
        if not callable(getattr(fnp, name, None)):
            continue
        try:
            inspect.signature(f)
        except (TypeError, ValueError):
            continue
        out.append(name)
    return out


NUMPY_FUNCTIONS = _numpy_functions()


def test_namespace_covers_numpy_functions():
    assert len(NUMPY_FUNCTIONS) > 150


@pytest.mark.parametrize("name", NUMPY_FUNCTIONS)
def test_signature_binds_like_numpy(name):
    """Each positional-or-keyword parameter of NumPy's is at the same position under the same name,
    and each keyword-only one exists, unless it is one funcgrad does not support (listed above)."""
    ref = list(inspect.signature(getattr(np, name)).parameters.values())
    ours_sig = inspect.signature(getattr(fnp, name))
    ours = list(ours_sig.parameters.values())
    var_kw = any(p.kind == P.VAR_KEYWORD for p in ours)
    aligned = True
    for i, p in enumerate(ref):
        if p.name in _UNSUPPORTED:
            aligned = aligned and p.kind == P.KEYWORD_ONLY
            continue
        if p.kind in (P.POSITIONAL_OR_KEYWORD, P.POSITIONAL_ONLY) and aligned:
            assert i < len(ours), f"{name}: parameter {p.name!r} missing ({ours_sig})"
            q = ours[i]
            assert q.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD), f"{name}: {q.name} not positional"
            if p.kind == P.POSITIONAL_OR_KEYWORD and q.kind != P.POSITIONAL_ONLY:
                assert q.name == _RENAMED.get((name, p.name), p.name), \
                    f"{name}: position {i} is {q.name!r}, NumPy's is {p.name!r}"
            if (name, p.name) in _RENAMED:
                assert p.name in ours_sig.parameters, f"{name}: keyword {p.name!r} missing"
        elif p.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY):
            assert p.name in ours_sig.parameters or var_kw, f"{name}: keyword {p.name!r} missing ({ours_sig})"
        elif p.kind == P.VAR_POSITIONAL:
            assert any(q.kind == P.VAR_POSITIONAL for q in ours), f"{name}: *{p.name} missing"


_OUT_CALLS = {
    "sum": lambda f, x, o: f.sum(x, out=o), "mean": lambda f, x, o: f.mean(x, out=o),
    "std": lambda f, x, o: f.std(x, out=o), "max": lambda f, x, o: f.max(x, out=o),
    "argmax": lambda f, x, o: f.argmax(x, out=o), "any": lambda f, x, o: f.any(x, out=o),
    "cumsum": lambda f, x, o: f.cumsum(x, out=o), "round": lambda f, x, o: f.round(x, out=o),
    "clip": lambda f, x, o: f.clip(x, 0, 1, out=o), "take": lambda f, x, o: f.take(x, [0], out=o),
    "median": lambda f, x, o: f.median(x, out=o), "nansum": lambda f, x, o: f.nansum(x, out=o),
    "einsum": lambda f, x, o: f.einsum("i->", x, out=o), "add": lambda f, x, o: f.add(x, x, out=o),
    "sin": lambda f, x, o: f.sin(x, out=o), "matmul": lambda f, x, o: f.matmul(x, x, out=o),
    "concatenate": lambda f, x, o: f.concatenate([x, x], out=o), "dot": lambda f, x, o: f.dot(x, x, out=o),
    "fft": lambda f, x, o: f.fft.fft(x, out=o),
}


@pytest.mark.parametrize("name", sorted(_OUT_CALLS))
def test_out_is_rejected_with_a_clear_error(name):
    """NumPy accepts out=; funcgrad arrays are immutable, so it raises a TypeError naming the function."""
    with pytest.raises(TypeError, match=name):
        _OUT_CALLS[name](fnp, fnp.arange(3.0), np.zeros(3))


# --- reductions: axis, keepdims, dtype, where, initial, ddof ---------------------------------------
def _close(got, want, rtol=1e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype or (want.dtype == np.float64 and got.dtype == np.float32), \
        (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want.astype(got.dtype), rtol=rtol, atol=rtol, equal_nan=True)


@st.composite
def _reduction_case(draw, dtypes=("float64", "float32", "int32", "int64", "bool")):
    dt = draw(st.sampled_from(dtypes))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    if dt == "bool":
        el = st.booleans()
    elif dt.startswith("float"):
        el = st.floats(-9, 9, width=32)
    else:
        el = st.integers(-9, 9)
    x = draw(hnp.arrays(np.dtype(dt), shape, elements=el))
    nd = x.ndim
    axis = draw(st.one_of(st.none(), st.integers(-nd, nd - 1),
                          st.lists(st.integers(0, nd - 1), unique=True, min_size=1, max_size=nd).map(tuple)))
    where = draw(st.one_of(st.none(), hnp.arrays(bool, draw(hnp.broadcastable_shapes(shape, max_dims=nd)))))
    return x, axis, draw(st.booleans()), where


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "max", "min", "std", "var", "all", "any",
                                  "nansum", "nanprod", "nanmean", "nanmax", "nanmin", "nanstd", "nanvar"])
@given(case=_reduction_case())
def test_reductions_match_numpy(name, case):
    x, axis, keepdims, where = case
    kw = {"axis": axis, "keepdims": keepdims}
    if where is not None:
        kw["where"] = where
        if name in ("max", "min", "nanmax", "nanmin"):
            kw["initial"] = 100 if "min" in name else -100
    if name in ("std", "var", "nanstd", "nanvar"):
        kw["ddof"] = 1
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            want = getattr(np, name)(x, **kw)
        except (ValueError, TypeError):
            with pytest.raises((ValueError, TypeError)):
                getattr(fnp, name)(fnp.asarray(x), **kw)
            return
        got = getattr(fnp, name)(fnp.asarray(x), **kw)
    assert isinstance(got, Array)
    _close(got, want)


@pytest.mark.parametrize("name", ["sum", "prod", "cumsum", "cumprod", "mean"])
@pytest.mark.parametrize("dtype", [None, "int8", "uint32", "float64", "complex64"])
def test_reduction_dtype_keyword(name, dtype):
    x = np.array([[1, 2, 3], [4, 5, 126]], dtype=np.int16)
    kw = {"axis": 1} if dtype is None or name.startswith("cum") else {"axis": None}
    want = getattr(np, name)(x, dtype=dtype, **kw)
    got = getattr(fnp, name)(fnp.asarray(x), dtype=dtype, **kw)
    _close(got, want)


def test_initial_and_ddof_and_argmax_keepdims():
    x = np.array([[3.0, -1.0, 2.0], [0.5, 7.0, -4.0]])
    for name in ("sum", "prod", "max", "min"):
        _close(getattr(fnp, name)(fnp.asarray(x), axis=0, initial=5.0), getattr(np, name)(x, axis=0, initial=5.0))
    for ddof in (0, 1, 2):
        _close(fnp.var(fnp.asarray(x), ddof=ddof, axis=1), np.var(x, ddof=ddof, axis=1))
        _close(fnp.std(fnp.asarray(x), ddof=ddof), np.std(x, ddof=ddof))
    for name in ("argmax", "argmin"):
        _close(getattr(fnp, name)(fnp.asarray(x), axis=1, keepdims=True), getattr(np, name)(x, axis=1, keepdims=True))
    with pytest.raises(ValueError, match="zero-size"):
        fnp.max(fnp.zeros((0, 2)), axis=0)
    _close(fnp.max(fnp.zeros((0, 2)), axis=0, initial=1.0), np.max(np.zeros((0, 2)), axis=0, initial=1.0))


def test_bad_axis_raises_numpys_axis_error():
    x = fnp.ones((2, 3))
    for f in (lambda: fnp.sum(x, axis=2), lambda: fnp.mean(x, axis=-3), lambda: fnp.argmax(x, axis=5),
              lambda: fnp.cumsum(x, axis=2), lambda: fnp.sort(x, axis=2), lambda: fnp.concatenate([x, x], axis=2)):
        with pytest.raises(np.exceptions.AxisError, match="out of bounds"):
            f()
    with pytest.raises(ValueError, match="duplicate"):
        fnp.sum(x, axis=(0, 0))


# --- result types ---------------------------------------------------------------------------------
def test_result_types_match_numpy():
    x = np.array([3, 1, 3, 2, 1])
    for kw in ({}, {"return_counts": True}, {"return_index": True, "return_inverse": True},
               {"return_index": True, "return_inverse": True, "return_counts": True}):
        got, want = fnp.unique(fnp.asarray(x), **kw), np.unique(x, **kw)
        assert isinstance(got, tuple) == isinstance(want, tuple) and len(got) == len(want)
        for g, w in zip(got if kw else [got], want if kw else [want]):
            np.testing.assert_array_equal(g, w)
    h, edges = fnp.histogram(fnp.asarray(x), bins=3)
    np.testing.assert_array_equal(h, np.histogram(x, bins=3)[0])
    assert isinstance(fnp.nonzero(fnp.asarray(x))[0], Array) and len(fnp.nonzero(fnp.ones((2, 2)))) == 2
    assert isinstance(fnp.where(fnp.asarray(x) > 1), tuple)
    q, r = fnp.divmod(fnp.asarray(x), 2)
    np.testing.assert_array_equal(q, x // 2)
    assert fnp.shape(np.ones((2, 3))) == (2, 3) and fnp.ndim([[1], [2]]) == 2 and fnp.size(np.ones(4)) == 4
    assert isinstance(fnp.ndim(np.ones(2)), int) and isinstance(fnp.size(np.ones(2)), int)
    m = np.array([[2.0, 1.0], [1.0, 3.0]])
    for name in ("slogdet", "eigh", "svd", "qr"):
        got, want = getattr(fnp.linalg, name)(fnp.asarray(m)), getattr(np.linalg, name)(m)
        assert got._fields == want._fields, name
    s = fnp.sum(fnp.asarray(x))
    assert isinstance(s, Array) and s.shape == () and int(s) == 10  # 0-d Array, as JAX
    # allclose/array_equal give 0-d bool Arrays (as JAX, so they trace under jit); `if` works as in NumPy
    assert fnp.allclose(x, x).shape == () and fnp.allclose(x, x).dtype == bool and bool(fnp.array_equal(x, x))
    assert fnp.isscalar(1.0) and not fnp.isscalar(fnp.asarray(1.0))


def test_in_place_operators_follow_numpy_casting():
    """x op= y keeps x's dtype and shape, as NumPy's in-place operators (same_kind casting)."""
    x = fnp.asarray(np.array([1.0, 2.0], dtype=np.float32))
    x += np.array([0.5, 0.5])  # float64 operand: cast back to float32, as NumPy
    n = np.array([1.0, 2.0], dtype=np.float32)
    n += np.array([0.5, 0.5])
    _close(x, n)
    assert x.dtype == n.dtype
    i = fnp.asarray(np.array([1, 2], dtype=np.int32))
    with pytest.raises(TypeError):
        i *= 1.5
    ni = np.array([1, 2], dtype=np.int32)
    with pytest.raises(TypeError):
        ni *= 1.5
    with pytest.raises(ValueError):
        x -= fnp.ones((3, 2))
