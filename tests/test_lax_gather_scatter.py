"""lax.gather / lax.scatter* with JAX's dimension numbers (batching dims, windows, modes, fill values),
checked against loop references that implement XLA's documented semantics directly; derivatives against
finite differences; the errors JAX raises for bad dimension numbers; lax.bitcast_convert_type across
widths (against NumPy's view); lax.pow's integer-exponent derivatives; x.at[] with duplicate indices; and
random dimension numbers, bitcast_convert_type and lax.pow's integer exponents against real JAX where installed."""
import itertools

import numpy as np
import pytest
from hypothesis import given, strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.testing import check_grads

GD, SD = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers


# --- loop references (XLA's operation semantics, one window at a time) -----------------------------------

def _starts(shape, idx_row, b, start_map, obd, ibd):
    start = [0] * len(shape)
    for j, d in enumerate(start_map):
        start[d] = int(idx_row[j])
    for od, i in zip(obd, ibd):
        start[od] = b[i]
    return start


def ref_gather(x, idx, dn, sizes, mode="promise_in_bounds", fill=None):
    x = np.asarray(x)
    offset, collapsed, smap, obd, ibd = dn
    batch = idx.shape[:-1]
    kept = [d for d in range(x.ndim) if d not in collapsed and d not in obd]
    rank = len(batch) + len(offset)
    out_shape, bi, ki = [], iter(batch), iter(kept)
    for o in range(rank):
        out_shape.append(sizes[next(ki)] if o in offset else next(bi))
    out = np.zeros(out_shape, x.dtype)
    if fill is None:
        fill = np.nan if x.dtype.kind == "f" else (np.iinfo(x.dtype).min if x.dtype.kind == "i" else
                                                    np.iinfo(x.dtype).max if x.dtype.kind == "u" else True)
    for b in np.ndindex(*batch):
        start = _starts(x.shape, idx[b], b, smap, obd, ibd)
        oob = any(not 0 <= start[d] <= x.shape[d] - sizes[d] for d in smap)
        start = [min(max(s, 0), n - k) for s, n, k in zip(start, x.shape, sizes)]
        win = x[tuple(slice(s, s + k) for s, k in zip(start, sizes))]
        win = win.reshape([sizes[d] for d in kept])
        if mode == "fill" and oob:
            win = np.full(win.shape, fill, x.dtype)
        bi = iter(b)
        out[tuple(slice(None) if o in offset else next(bi) for o in range(rank))] = win
    return out


def ref_scatter(x, idx, upd, dn, how, mode=None):
    out = np.array(x, copy=True)
    uwd, inserted, smap, obd, ibd = dn
    sdims = [d for d in range(upd.ndim) if d not in uwd]
    free = [d for d in range(x.ndim) if d not in inserted and d not in obd]
    win = [1] * x.ndim
    for d, u in zip(free, uwd):
        win[d] = upd.shape[u]
    combine = {"set": lambda a, v: v, "add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}[how]
    for b in np.ndindex(*idx.shape[:-1]):
        start = _starts(x.shape, idx[b], b, smap, obd, ibd)
        if mode == "clip":
            start = [min(max(s, 0), n - k) for s, n, k in zip(start, x.shape, win)]
        elif any(not 0 <= start[d] <= x.shape[d] - win[d] for d in smap):
            continue  # the whole window is dropped
        for w in np.ndindex(*win):
            at = [0] * upd.ndim
            for d, i in zip(sdims, b):
                at[d] = i
            for d, u in zip(free, uwd):
                at[u] = w[d]
            pos = tuple(s + o for s, o in zip(start, w))
            out[pos] = combine(out[pos], upd[tuple(at)])
    return out


# --- cases: x.at-style, windows, permuted index maps, batching dims, offset dims in the middle -------------

GATHER_CASES = [  # (operand shape, indices, (offset, collapsed, start_index_map, obd, sibd), slice_sizes)
    ((5,), [[0], [4], [7], [-2]], ((), (0,), (0,), (), ()), (1,)),
    ((4, 3), [[1], [3], [2]], ((1,), (0,), (0,), (), ()), (1, 3)),
    ((10,), [[8], [-1], [3]], ((1,), (), (0,), (), ()), (3,)),
    ((4, 5), [[1, 0], [3, 4], [0, 9]], ((1, 2), (), (1, 0), (), ()), (2, 3)),
    ((3, 4, 5), [[[2], [0]], [[1], [9]]], ((0, 3), (1,), (1,), (), ()), (3, 1, 5)),
    ((3, 4, 2), [[1], [3], [0]], ((1,), (1,), (1,), (0,), (0,)), (1, 1, 2)),
    ((2, 6), [[[4], [1], [2]], [[0], [5], [3]]], ((2,), (), (1,), (0,), (0,)), (1, 2)),
    ((4, 4), np.zeros((3, 0), int).tolist(), ((1, 2), (), (), (), ()), (2, 3)),
]
MODES = [None, "clip", "fill", "promise_in_bounds", lax.GatherScatterMode.FILL_OR_DROP]


@pytest.mark.parametrize("case", range(len(GATHER_CASES)))
@pytest.mark.parametrize("mode", MODES)
def test_gather_dimension_numbers(case, mode):
    shape, idx, dn, sizes = GATHER_CASES[case]
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 1
    idx = np.array(idx, np.int32)
    got = lax.gather(x, idx, GD(*dn), sizes, mode=mode)
    name = mode.name if isinstance(mode, lax.GatherScatterMode) else mode
    ref_mode = "fill" if name in ("fill", "FILL_OR_DROP") else "clip"  # default: PROMISE_IN_BOUNDS clamps
    np.testing.assert_array_equal(np.asarray(got), ref_gather(x, idx, dn, sizes, ref_mode))
    assert got.dtype == np.float32


@pytest.mark.parametrize("dt", ["int32", "uint8", "bool", "float16"])
def test_gather_fill_values_per_dtype(dt):
    x = (np.arange(6) % 2 == 0) if dt == "bool" else np.arange(6).astype(dt)
    idx = np.array([[1], [5], [-1]])
    dn = GD(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(0,))
    got = np.asarray(lax.gather(x, idx, dn, (2,), mode="fill"))
    fill = {"int32": -2 ** 31, "uint8": 255, "bool": True, "float16": np.nan}[dt]
    want = np.array([x[1:3], [fill] * 2, [fill] * 2]).astype(x.dtype)
    np.testing.assert_array_equal(got, want)
    fill7 = False if dt == "bool" else 7
    got7 = lax.gather(x, idx, dn, (2,), mode="fill", fill_value=fill7)
    assert np.asarray(got7)[1].tolist() == [fill7, fill7]


SCATTER_CASES = [  # (operand shape, indices, (uwd, inserted, sdod, obd, sibd), updates shape)
    ((6,), [[1], [1], [4], [9], [-1]], ((), (0,), (0,), (), ()), (5,)),
    ((3, 4), [[2], [0], [2], [7]], ((1,), (0,), (0,), (), ()), (4, 4)),
    ((10,), [[8], [-1], [3], [3]], ((1,), (), (0,), (), ()), (4, 3)),
    ((4, 5), [[1, 0], [3, 4], [0, 3], [1, 0]], ((0, 2), (), (1, 0), (), ()), (2, 4, 3)),
    ((3, 4, 2), [[1], [3], [1]], ((1,), (1,), (1,), (0,), (0,)), (3, 2)),
    ((2, 6), [[[4], [1], [4]], [[0], [5], [3]]], ((2,), (), (1,), (0,), (0,)), (2, 3, 2)),
]


@pytest.mark.parametrize("case", range(len(SCATTER_CASES)))
@pytest.mark.parametrize("how", ["set", "add", "mul", "min", "max", "sub"])
@pytest.mark.parametrize("mode", [None, "clip", "drop", "promise_in_bounds"])
def test_scatter_dimension_numbers(case, how, mode):
    shape, idx, dn, ushape = SCATTER_CASES[case]
    rng = np.random.default_rng(case)
    x = rng.standard_normal(shape).astype(np.float32)
    upd = rng.standard_normal(ushape).astype(np.float32)
    idx = np.array(idx, np.int32)
    fn = {"set": lax.scatter, "add": lax.scatter_add, "mul": lax.scatter_mul, "min": lax.scatter_min,
          "max": lax.scatter_max, "sub": lax.scatter_sub}[how]
    got = fn(x, idx, upd, SD(*dn), mode=mode)
    want = ref_scatter(x, idx, -upd if how == "sub" else upd, dn, "add" if how == "sub" else how,
                       "clip" if mode == "clip" else None)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_scatter_apply_applies_once_per_hit():
    x = np.arange(5.0, dtype=np.float32)
    dn = SD(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    got = lax.scatter_apply(x, np.array([[1], [1], [3], [8]]), lambda v: v * 2 + 1, dn, update_shape=(4,))
    np.testing.assert_array_equal(np.asarray(got), [0, 7, 2, 7, 4])  # 1 -> 3 -> 7 (twice); 8: dropped
    jitted = fg.jit(lambda a, i: lax.scatter_apply(a, i, lambda v: v * 2 + 1, dn, update_shape=(4,)))
    np.testing.assert_array_equal(np.asarray(jitted(x, np.array([[1], [1], [3], [8]]))), [0, 7, 2, 7, 4])


@pytest.mark.parametrize("case", [1, 3, 5, 6])
@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_gather_derivatives(case, mode):
    shape, idx, dn, sizes = GATHER_CASES[case]
    x = np.random.default_rng(case).standard_normal(shape)
    idx = np.array(idx, np.int32)
    check_grads(lambda a: lax.gather(a, idx, GD(*dn), sizes, mode=mode, fill_value=0.0), (x,), order=2)


@pytest.mark.parametrize("case", [1, 2, 3, 4])
@pytest.mark.parametrize("how", ["set", "add", "mul"])
def test_scatter_derivatives(case, how):
    shape, idx, dn, ushape = SCATTER_CASES[case]
    rng = np.random.default_rng(case)
    x, upd = rng.standard_normal(shape), rng.standard_normal(ushape)
    fn = {"set": lax.scatter, "add": lax.scatter_add, "mul": lax.scatter_mul}[how]
    check_grads(lambda a, u: fn(a, np.array(idx), u, SD(*dn)), (x, upd), order=2)


def test_scatter_set_gradient_goes_to_the_last_write_of_a_window():
    """Duplicate windows in scatter (set): only the write that lands (the last) gets the cotangent."""
    x = np.zeros(6)
    dn = SD(update_window_dims=(1,), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,))
    idx = np.array([[1], [2], [9]])  # windows [1, 3) and [2, 4) overlap at 2; [9, 11) is dropped
    w = np.arange(1.0, 7.0)
    gu = fg.grad(lambda u: (lax.scatter(x, idx, u, dn) * w).sum())(np.ones((3, 2)))
    np.testing.assert_array_equal(np.asarray(gu), [[w[1], 0.0], [w[2], w[3]], [0.0, 0.0]])


def test_vmap_and_jit_of_gather_and_scatter_with_dimension_numbers():
    rng = np.random.default_rng(7)
    op = rng.standard_normal((5, 4, 3)).astype(np.float32)
    ii = rng.integers(-1, 5, size=(5, 2, 1)).astype(np.int32)
    dn = GD(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    f = lambda o, i: lax.gather(o, i, dn, (1, 2), mode="fill")  # noqa: E731
    got = fg.vmap(f)(op, ii)
    want = np.stack([ref_gather(op[n], ii[n], tuple(dn), (1, 2), "fill") for n in range(5)])
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(fg.jit(f)(op[0], ii[0])), want[0])
    sd = SD(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    upd = rng.standard_normal((5, 2, 3)).astype(np.float32)
    g = lambda o, i, u: lax.scatter_add(o, i, u, sd)  # noqa: E731
    want = np.stack([ref_scatter(op[n], ii[n], upd[n], tuple(sd), "add") for n in range(5)])
    np.testing.assert_allclose(np.asarray(fg.vmap(g)(op, ii, upd)), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(fg.jit(g)(op[0], ii[0], upd[0])), want[0], rtol=1e-6)


def test_card_form_still_accepted():
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(np.asarray(lax.gather(x, np.array([[2], [0]]), (0,))), x[[2, 0]])
    np.testing.assert_array_equal(np.asarray(lax.scatter_add(x, np.array([[1]]), np.ones((1, 4)), (0,)))[1],
                                  x[1] + 1)


# --- errors as JAX's ------------------------------------------------------------------------------------

GATHER_ERRORS = [
    (((1,), (0,), (0,)), (1, 4), np.array([[0.5]]), ValueError, "indices must have an integer type"),
    (((2,), (0,), (0,)), (1, 4), np.array([[0]]), TypeError, "Offset dimension 0 in gather op is out of bounds"),
    (((1,), (0,), (0, 1)), (1, 4), np.array([[0]]), TypeError, "Gather op has 2 elements in start_index_map"),
    (((1,), (0,), (2,)), (1, 4), np.array([[0]]), TypeError, r"Invalid start_index_map; domain is \[0, 2\)"),
    (((1,), (1, 0), (0,)), (1, 1), np.array([[0]]), TypeError, "collapsed_slice_dims in gather op must be sorted"),
    (((1,), (0,), (0,)), (1,), np.array([[0]]), TypeError, "Gather op must have one slice size for every"),
    (((1,), (0,), (0,)), (2, 4), np.array([[0]]), TypeError, "Gather op can only collapse slice dims with bound 1"),
    (((1,), (0,), (0,)), (1, 5), np.array([[0]]), TypeError, "Slice size at index 1 in gather op is out of range"),
    (((), (0,), (0,)), (1, 4), np.array([[0]]), TypeError, "All components of the offset index"),
]


@pytest.mark.parametrize("dn,sizes,idx,exc,msg", GATHER_ERRORS)
def test_gather_errors(dn, sizes, idx, exc, msg):
    with pytest.raises(exc, match=msg):
        lax.gather(np.ones((3, 4), np.float32), idx, GD(*dn), sizes)


def test_scatter_and_mode_errors():
    x = np.ones((3, 4), np.float32)
    dn = SD((1,), (0,), (0,))
    with pytest.raises(TypeError, match="lax.scatter requires arguments to have the same dtypes, got float32, int32"):
        lax.scatter_add(x, np.array([[0]]), np.ones((1, 4), np.int32), dn)
    with pytest.raises(ValueError, match="indices must have an integer type"):
        lax.scatter(x, np.array([[0.0]]), np.ones((1, 4), np.float32), dn)
    with pytest.raises(TypeError, match="Updates tensor must be of rank 2; got 1"):
        lax.scatter(x, np.array([[0]]), np.ones(4, np.float32), dn)
    with pytest.raises(TypeError, match="Bounds of the window dimensions of updates must not exceed"):
        lax.scatter(x, np.array([[0]]), np.ones((1, 5), np.float32), dn)
    with pytest.raises(TypeError, match="Scatter op has window of size 1; doesn't match operand of rank 2"):
        lax.scatter(x, np.array([[0]]), np.ones((1,), np.float32), SD((), (0,), (0,)))
    with pytest.raises(ValueError, match='Unknown gather mode "foo"'):
        lax.gather(x, np.array([[0]]), GD((1,), (0,), (0,)), (1, 4), mode="foo")


# --- bitcast_convert_type across widths -----------------------------------------------------------------

@given(st.lists(st.floats(-1e6, 1e6, width=32), min_size=1, max_size=6))
def test_bitcast_narrowing_and_widening(vals):
    x = np.array(vals, np.float32)
    for narrow in (np.uint8, np.int8, np.int16, np.float16):
        got = lax.bitcast_convert_type(x, narrow)
        want = x.view(narrow).reshape(x.shape + (4 // np.dtype(narrow).itemsize,))  # little-endian parts
        np.testing.assert_array_equal(np.asarray(got).view(np.uint8), want.view(np.uint8))
        back = lax.bitcast_convert_type(got, np.float32)
        np.testing.assert_array_equal(np.asarray(back).view(np.uint32), x.view(np.uint32))


def test_bitcast_shapes_and_errors():
    assert lax.bitcast_convert_type(np.float32(1.0), np.uint8).shape == (4,)
    assert np.asarray(lax.bitcast_convert_type(np.array([0, 0, 128, 63], np.uint8), np.float32)).item() == 1.0
    assert fg.vmap(lambda v: lax.bitcast_convert_type(v, np.uint8))(fnp.ones(3, dtype="float32")).shape == (3, 4)
    with pytest.raises(ValueError, match=r"Attempting to convert array of shape \(2, 3\) from uint8 of size 8 bits "
                                         r"to float32 of size 32, bits but 3 \* 8 != 32"):
        lax.bitcast_convert_type(np.ones((2, 3), np.uint8), np.float32)
    with pytest.raises(TypeError, match="does not support bool or complex values"):
        lax.bitcast_convert_type(np.ones(2, bool), np.uint8)
    with pytest.raises(TypeError, match="does not support bool or complex values"):
        lax.bitcast_convert_type(np.ones(4, np.complex64), np.uint8)


# --- lax.pow with an integer exponent: JAX's rule (the Jacobian masked where y == 0) -----------------------

def test_pow_integer_exponent_derivatives():
    def f(y):
        return lambda a: lax.pow(a, fnp.int32(y))
    nan = float("nan")
    # d/dx at y == 0 is 0; reverse-over-reverse is 0 * d/dx x**-1 (NaN at 0), forward-over-reverse 0
    for x, rr, fr in [(0.0, nan, 0.0), (2.0, -0.0, 0.0)]:  # (-0.0: 0 * -(2 ** -2), as JAX)
        assert float(fg.grad(f(0))(x)) == 0.0
        np.testing.assert_equal(float(fg.grad(fg.grad(f(0)))(x)), rr)
        np.testing.assert_equal(float(fg.jacfwd(fg.grad(f(0)))(x)), fr)
    assert float(fg.grad(fg.grad(f(2)))(0.0)) == 2.0 and float(fg.grad(fg.grad(f(3)))(-2.0)) == -12.0
    np.testing.assert_equal(float(fg.grad(fg.grad(f(1)))(0.0)), nan)  # 1 * x**0's derivative: 0 * inf
    assert float(fg.grad(fg.grad(f(-2)))(2.0)) == 0.375


# --- x.at[] with duplicate indices ------------------------------------------------------------------------

@pytest.mark.parametrize("idx", [[1, 1, 3, 1], [-1, 4, 4], [7, 1, 1]])
def test_at_set_and_add_with_duplicates(idx):
    rng = np.random.default_rng(len(idx))
    x, v, w = rng.standard_normal(5), rng.standard_normal(len(idx)), rng.standard_normal(5)
    want_set, want_add, last = x.copy(), x.copy(), {}
    for k, i in enumerate(idx):
        if -5 <= i < 5:
            want_set[i] = v[k]
            want_add[i] += v[k]
            last[i % 5] = k
    ii = np.array(idx)
    np.testing.assert_allclose(np.asarray(fnp.asarray(x).at[ii].set(v)), want_set)
    np.testing.assert_allclose(np.asarray(fnp.asarray(x).at[ii].add(v)), want_add)
    gx, gv = fg.grad(lambda a, u: (a.at[ii].set(u) * w).sum(), (0, 1))(x, v)
    want_gv = np.zeros(len(idx))
    for p, k in last.items():
        want_gv[k] = w[p]
    want_gx = w.copy()
    want_gx[list(last)] = 0.0
    np.testing.assert_allclose(np.asarray(gv), want_gv)
    np.testing.assert_allclose(np.asarray(gx), want_gx)
    gv_add = fg.grad(lambda u: (fnp.asarray(x).at[ii].add(u) * w).sum())(v)
    np.testing.assert_allclose(np.asarray(gv_add), [w[i] if -5 <= i < 5 else 0.0 for i in idx])


def test_reference_loops_agree_on_an_x_at_style_case():
    """The loop references themselves, on a case NumPy indexing answers directly."""
    x = np.arange(12.0).reshape(3, 4)
    idx = np.array([[2], [0]])
    np.testing.assert_array_equal(ref_gather(x, idx, ((1,), (0,), (0,), (), ()), (1, 4)), x[[2, 0]])
    want = x.copy()
    want[[2, 0]] += 1
    np.testing.assert_array_equal(ref_scatter(x, idx, np.ones((2, 4)), ((1,), (0,), (0,), (), ()), "add"), want)


# --- against real JAX ----------------------------------------------------------------------------------------

def _random_dimension_numbers(rng, scatter: bool):
    """A random valid gather (or scatter) configuration: operand shape, indices, dimension numbers, and the
    slice sizes (gather) or updates shape (scatter); batching dims, windows and permuted index maps included."""
    r = int(rng.integers(1, 4))
    shape = tuple(int(s) for s in rng.integers(1, 5, size=r))
    obd = tuple(sorted(rng.choice(r, int(rng.integers(0, 2)) if r > 1 else 0, replace=False).tolist()))
    free = [d for d in range(r) if d not in obd]
    smap = tuple(rng.permutation(rng.choice(free, int(rng.integers(1, len(free) + 1)), replace=False)).tolist())
    dropped = tuple(sorted(d for d in free if rng.random() < 0.5))
    win = [1 if d in obd or d in dropped else int(rng.integers(1, shape[d] + 1)) for d in range(r)]
    bshape = [int(s) for s in rng.integers(1, 4, size=int(rng.integers(0, 3)))]
    while len(bshape) < len(obd):
        bshape.append(1)
    ibd = tuple(rng.choice(len(bshape), len(obd), replace=False).tolist()) if obd else ()
    for o, i in zip(obd, ibd):
        bshape[i] = shape[o]
    idx = rng.integers(-2, max(shape) + 2, size=tuple(bshape) + (len(smap),)).astype(np.int32)
    kept = [win[d] for d in range(r) if d not in dropped and d not in obd]
    rank = len(bshape) + len(kept)
    wdims = tuple(sorted(rng.choice(rank, len(kept), replace=False).tolist()))
    if not scatter:
        return shape, idx, (wdims, dropped, smap, obd, ibd), tuple(win)
    bi, ki = iter(bshape), iter(kept)
    ushape = tuple(next(ki) if i in wdims else next(bi) for i in range(rank))
    return shape, idx, (wdims, dropped, smap, obd, ibd), ushape


def test_lax_gather_scatter_dimension_numbers_match_jax():
    jax = pytest.importorskip("jax")
    jl, fl = jax.lax, fg.lax
    rng = np.random.default_rng(11)
    for _ in range(12):
        shape, idx, dn, sizes = _random_dimension_numbers(rng, scatter=False)
        x = rng.standard_normal(shape).astype(np.float32)
        for mode in (None, "clip", "fill"):
            a = jl.gather(x, idx, jl.GatherDimensionNumbers(*dn), sizes, mode=mode)
            b = fl.gather(x, idx, fl.GatherDimensionNumbers(*dn), sizes, mode=mode)
            np.testing.assert_array_equal(np.asarray(b), np.asarray(a))
        w = rng.standard_normal(np.shape(a)).astype(np.float32)
        ga = jax.grad(lambda v: (jl.gather(v, idx, jl.GatherDimensionNumbers(*dn), sizes, mode="clip") * w).sum())(x)
        gb = fg.grad(lambda v: (fl.gather(v, idx, fl.GatherDimensionNumbers(*dn), sizes, mode="clip") * w).sum())(x)
        np.testing.assert_allclose(np.asarray(gb), np.asarray(ga), rtol=1e-5, atol=1e-6)
    names = ("scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max")
    for _ in range(12):
        shape, idx, dn, ushape = _random_dimension_numbers(rng, scatter=True)
        x = rng.standard_normal(shape).astype(np.float32)
        u = rng.standard_normal(ushape).astype(np.float32)
        for name, mode in itertools.product(names, (None, "clip")):
            a = getattr(jl, name)(x, idx, u, jl.ScatterDimensionNumbers(*dn), mode=mode)
            b = getattr(fl, name)(x, idx, u, fl.ScatterDimensionNumbers(*dn), mode=mode)
            np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-6)
        w = rng.standard_normal(shape).astype(np.float32)
        for name in ("scatter", "scatter_add"):  # (set: the cotangent goes to the write that lands, as JAX's)
            ga = jax.grad(lambda v, t: (getattr(jl, name)(v, idx, t, jl.ScatterDimensionNumbers(*dn)) * w).sum(),
                          (0, 1))(x, u)
            gb = fg.grad(lambda v, t: (getattr(fl, name)(v, idx, t, fl.ScatterDimensionNumbers(*dn)) * w).sum(),
                         (0, 1))(x, u)
            for p, q in zip(ga, gb):
                np.testing.assert_allclose(np.asarray(q), np.asarray(p), rtol=1e-5, atol=1e-6)


def test_lax_bitcast_and_integer_pow_match_jax():
    jax = pytest.importorskip("jax")
    x = np.array([1.0, -2.5, 3e-8], np.float32)
    for dt in (np.uint8, np.int16, np.float16):
        a = jax.lax.bitcast_convert_type(x, dt)
        b = fg.lax.bitcast_convert_type(x, dt)
        np.testing.assert_array_equal(np.asarray(b).view(np.uint8), np.asarray(a).view(np.uint8))
        np.testing.assert_array_equal(np.asarray(fg.lax.bitcast_convert_type(b, np.float32)),
                                      np.asarray(jax.lax.bitcast_convert_type(a, np.float32)))
    for y in (0, 1, 2, -1):
        for v in (0.0, 2.0, -1.5):
            fj = lambda t: jax.lax.pow(t, np.int32(y))  # noqa: E731
            ff = lambda t: fg.lax.pow(t, np.int32(y))  # noqa: E731
            for tj, tf in [(jax.grad, fg.grad), (lambda f: jax.grad(jax.grad(f)), lambda f: fg.grad(fg.grad(f))),
                           (lambda f: jax.jacfwd(jax.grad(f)), lambda f: fg.jacfwd(fg.grad(f)))]:
                np.testing.assert_array_equal(np.float32(tf(ff)(np.float32(v))), np.float32(tj(fj)(np.float32(v))))
