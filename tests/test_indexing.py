"""Indexing: NumPy reads x[idx] (basic and advanced), JAX's functional updates x.at[idx], and the
gather/scatter primitives under them; checked against NumPy, loop references, finite differences,
Python loops over vmap and eager evaluation under jit."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad._src.prims import indexing as ix
from cases.indexing import CASES
from fd import fd_grad

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4, 5))
X = jnp.asarray(A)
UFUNC = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}




def fd_jvp(f, x, t, eps=1e-6):
    return (np.asarray(f(x + eps * t)) - np.asarray(f(x - eps * t))) / (2 * eps)


# --- loop references for the primitives -----------------------------------------------------------

def ref_gather(x, idx, axes):
    rest = [d for d in range(x.ndim) if d not in axes]
    batch = idx.shape[:-1]
    out = np.zeros(batch + tuple(x.shape[d] for d in rest), x.dtype)
    for b in np.ndindex(batch):
        sel = [slice(None)] * x.ndim
        for j, a in enumerate(axes):
            sel[a] = min(max(int(idx[b + (j,)]), 0), x.shape[a] - 1)
        out[b] = x[tuple(sel)]
    return out


def ref_scatter(x, idx, upd, axes, mode):
    out = x.copy()
    for b in np.ndindex(idx.shape[:-1]):
        sel = [slice(None)] * x.ndim
        row = [int(v) for v in idx[b]]
        if any(not 0 <= r < x.shape[a] for r, a in zip(row, axes)):
            continue
        for r, a in zip(row, axes):
            sel[a] = r
        sel = tuple(sel)
        out[sel] = upd[b] if mode == "set" else UFUNC[mode](out[sel], upd[b])
    return out


# --- the primitives -------------------------------------------------------------------------------

@given(st.data())
def test_gather_matches_loop_reference(data):
    (x, idx), params = CASES["gather"](data.draw)
    got = ix.gather_p.bind(jnp.asarray(x), jnp.asarray(idx), **params)
    np.testing.assert_array_equal(np.asarray(got), ref_gather(x, idx, params["axes"]))


@given(st.data())
def test_scatter_matches_loop_reference(data):
    (x, idx, upd), params = CASES["scatter"](data.draw)
    got = ix.scatter_p.bind(jnp.asarray(x), jnp.asarray(idx), jnp.asarray(upd), **params)
    np.testing.assert_allclose(np.asarray(got), ref_scatter(x, idx, upd, params["axes"], params["mode"]),
                               rtol=1e-14)


@pytest.mark.parametrize("mode", ["add", "set", "mul", "min", "max"])
def test_scatter_duplicates_and_out_of_bounds_rows(mode):
    x = RNG.standard_normal((4, 3))
    idx = np.array([[1], [3], [1], [-1], [4], [1], [0]])
    upd = RNG.standard_normal((7, 3))
    got = ix.scatter(jnp.asarray(x), idx, jnp.asarray(upd), (0,), mode)
    np.testing.assert_allclose(np.asarray(got), ref_scatter(x, idx, upd, (0,), mode), rtol=1e-14)


def test_gather_clamps_out_of_range_indices():
    idx = np.array([[-3, 1], [7, 9]])
    got = ix.gather(X, idx, (0, 2))
    np.testing.assert_array_equal(np.asarray(got), A[[0, 2], :, [1, 4]])


@pytest.mark.parametrize("idt", ["int8", "int32", "int64", "uint8", "uint32", "uint64"])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_gather_over_leading_axes_clamps_each_axis(idt, k):
    # the leading-axes path (one flat index per row) clamps each coordinate into its own axis, as the general
    # path does: a flat index clamped as a whole would read another row; also batch ranks 1 and 2, and a
    # transposed (not C-ordered) operand
    x = RNG.standard_normal((3, 4, 5, 2))
    lo = 0 if idt.startswith("u") else -9
    idx = RNG.integers(lo, 9, (6, k)).astype(idt)
    idx[0] = 200 if idt != "int8" else 100  # beyond every axis
    axes = tuple(range(k))
    empty = np.zeros((3, 4, 5, 0))  # (an empty trailing axis: the rows read are empty)
    for xx, ii in ((x, idx), (x, idx.reshape(2, 3, k)), (np.ascontiguousarray(x.transpose(2, 1, 0, 3)), idx),
                   (x.transpose(2, 1, 0, 3), idx), (empty, idx)):
        got = ix.gather_p.bind(jnp.asarray(xx), jnp.asarray(ii), axes=axes)
        np.testing.assert_array_equal(np.asarray(got), ref_gather(xx, ii, axes))


@given(st.data())
def test_primitive_jvp_matches_finite_differences_and_vjp(data):
    name = data.draw(st.sampled_from(["gather", "scatter"]))
    args, params = CASES[name](data.draw)
    prim = ix.gather_p if name == "gather" else ix.scatter_p
    diff = [i for i, a in enumerate(args) if a.dtype == np.float64]
    tans = [RNG.standard_normal(args[i].shape) for i in diff]

    def f(*xs):
        full = list(args)
        for i, v in zip(diff, xs):
            full[i] = v
        return prim.bind(*[jnp.asarray(a) for a in full], **params)

    primals = [args[i] for i in diff]
    _, t_out = fg.jvp(f, primals, tans)
    eps = 1e-6
    plus = f(*[p + eps * t for p, t in zip(primals, tans)])
    minus = f(*[p - eps * t for p, t in zip(primals, tans)])
    np.testing.assert_allclose(np.asarray(t_out), (np.asarray(plus) - np.asarray(minus)) / (2 * eps),
                               rtol=1e-6, atol=1e-8)
    # <u, J v> == <J^T u, v>
    out, pullback = fg.vjp(f, *primals)
    u = RNG.standard_normal(out.shape)
    cts = pullback(jnp.asarray(u))
    lhs = float(np.sum(u * np.asarray(t_out)))
    rhs = sum(float(np.sum(np.asarray(c) * t)) for c, t in zip(cts, tans))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-10, atol=1e-12)


def _loop_vmap_check(prim, args, params, in_axes, n=3):
    """vmap of prim.bind over stacked variants of args (per in_axes) against a Python loop."""
    batched, per_example = [], [[] for _ in range(n)]
    for a, ax in zip(args, in_axes):
        if ax is None:
            batched.append(jnp.asarray(a))
            for k in range(n):
                per_example[k].append(a)
            continue
        if a.dtype == np.float64:
            variants = [a + k for k in range(n)]
        else:  # indices: roll the rows so each example reads or writes elsewhere
            variants = [np.roll(a, k, axis=0) if a.ndim > 1 else a for k in range(n)]
        stacked = np.stack(variants, ax)
        batched.append(jnp.asarray(stacked))
        for k in range(n):
            per_example[k].append(variants[k])
    got = fg.vmap(lambda *xs: prim.bind(*xs, **params), in_axes=tuple(in_axes))(*batched)
    want = np.stack([np.asarray(prim.bind(*[jnp.asarray(a) for a in ex], **params)) for ex in per_example])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-14)


@given(st.data())
def test_primitive_batch_rules_match_python_loop(data):
    name = data.draw(st.sampled_from(["gather", "scatter"]))
    args, params = CASES[name](data.draw)
    prim = ix.gather_p if name == "gather" else ix.scatter_p
    in_axes = [data.draw(st.sampled_from([None, 0, a.ndim])) for a in args]
    if all(a is None for a in in_axes):
        in_axes[0] = 0
    _loop_vmap_check(prim, args, params, in_axes)


@pytest.mark.parametrize("in_axes", [(0, None, None), (None, 0, None), (None, None, 0), (0, 0, None),
                                     (0, None, 0), (None, 0, 0), (1, 2, 1), (2, 1, 0)])
def test_scatter_batch_rule_every_combination(in_axes):
    x = RNG.standard_normal((4, 3))
    idx = np.array([[2, 0], [0, 1], [3, 2]])
    upd = RNG.standard_normal((3,))
    for mode in ["add", "set", "max"]:
        _loop_vmap_check(ix.scatter_p, [x, idx, upd], {"axes": (0, 1), "mode": mode}, in_axes)


def test_primitive_shape_rules_raise_clear_errors():
    f32 = jnp.zeros((3, 4), dtype="float32")
    with pytest.raises(TypeError, match="indices must be an integer array"):
        ix.gather(f32, np.array([[0.0]]), (0,))
    with pytest.raises(TypeError, match="last dimension of indices"):
        ix.gather(f32, np.array([[0, 1]]), (0,))
    with pytest.raises(ValueError, match="distinct axes"):
        ix.gather(f32, np.array([[0, 1]]), (0, 0))
    with pytest.raises(TypeError, match="updates must have shape"):
        ix.scatter_add(f32, np.array([[0], [1]]), jnp.zeros((8,), dtype="float32"), (0,))
    with pytest.raises(TypeError, match="updates dtype"):
        ix.scatter_add(f32, np.array([[0]]), jnp.zeros((1, 4), dtype="float64"), (0,))
    with pytest.raises(ValueError, match="mode must be one of"):
        ix.scatter(f32, np.array([[0]]), jnp.zeros((1, 4), dtype="float32"), (0,), "sub")
    with pytest.raises(TypeError, match="updates must have shape"):  # the abstract rule, under jit
        fg.jit(lambda x: ix.scatter_add(x, np.array([[0]]), jnp.zeros((3,), dtype="float32"), (1,)))(f32)


# --- reads: x[idx] --------------------------------------------------------------------------------

MASK = A[:, :, 0] > 0
READS = {
    "int_list": lambda: ([2, 0, 2],),
    "negative": lambda: ([-1, -3, 0],),
    "2d_array": lambda: (np.array([[0, 1], [2, 2]]),),
    "empty_list": lambda: ([],),
    "second_axis": lambda: (slice(None), [3, 1]),
    "adjacent_pair": lambda: (slice(None), [0, 3], [4, 1]),
    "separated_by_slice": lambda: ([0, 2], slice(None), [4, 1]),
    "int_and_array_adjacent": lambda: (slice(None), 1, [4, 1]),
    "int_and_array_separated": lambda: (1, slice(None), [4, 1]),
    "separated_by_none": lambda: ([0, 1], None, [1, 2]),
    "broadcast_arrays": lambda: (np.array([[0], [2]]), slice(1, None, 2), np.array([0, 4, 2])),
    "slice_negative_step": lambda: (slice(None, None, -1), [1, 1], slice(4, 0, -2)),
    "new_axes": lambda: (None, [2, 1], None, Ellipsis),
    "ellipsis": lambda: (Ellipsis, [3, 0]),
    "mask_2d": lambda: (MASK,),
    "mask_1d_then_array": lambda: (np.array([True, False, True]), slice(None), [0, 4]),
    "mask_last_axis": lambda: (Ellipsis, A[0, 0] > 0),
    "mask_with_slice": lambda: (slice(1, None), A[0, :, 0] > -0.5),
    "bool_list": lambda: ([True, True, False],),
    "bool_scalar_array": lambda: (np.array(True), 1),
    "funcgrad_array_index": lambda: (jnp.asarray(np.array([2, 0])),),
    "funcgrad_mask": lambda: (jnp.asarray(MASK),),
    "tuple_in_tuple": lambda: ((0, 2), 1),
    "all_advanced": lambda: ([0, 2], [1, 3], [4, 0]),
}


@pytest.mark.parametrize("name", sorted(READS))
def test_read_matches_numpy(name):
    idx = READS[name]()
    np_idx = tuple(np.asarray(i) if isinstance(i, fg.Array) else i for i in idx)
    want = A[np_idx]
    got = X[idx]
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


A4 = np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5)
PLACEMENT = [  # (index, result shape by NumPy's rule)
    ((slice(None), [0, 1], slice(None), [1, 2]), (2, 2, 4)),  # separated by a slice: B goes first
    ((slice(None), [0, 1], [1, 2], slice(None)), (2, 2, 5)),  # adjacent: B stays in place
    ((slice(None), 0, slice(None), [1, 2]), (2, 2, 4)),  # an int counts as an advanced index
    ((slice(None), [[0], [1]], 1, slice(None)), (2, 2, 1, 5)),
    ((slice(None), [0, 2], None, [3, 3]), (2, 2, 1, 5)),  # separated by None: B goes first
    ((None, slice(1, None), [2, 0], [3, 1]), (1, 1, 2, 5)),
    ((Ellipsis, [1, 2], slice(None), [0, 4]), (2, 2, 4)),
    ((slice(None), slice(None), A4[0, 0] > 8), (2, 3, 11)),  # a mask's axes are adjacent
    ((slice(None), A4[0, :, :, 0] > 30, slice(None, None, -1)), (2, 5, 5)),  # 35, 40, ..., 55
]


@pytest.mark.parametrize("k", range(len(PLACEMENT)))
def test_advanced_result_placement_rule(k):
    idx, shape = PLACEMENT[k]
    got = jnp.asarray(A4)[idx]
    assert got.shape == shape
    np.testing.assert_array_equal(np.asarray(got), A4[idx])
    np.testing.assert_array_equal(np.asarray(fg.jit(lambda x: x[idx])(A4)), A4[idx])


@st.composite
def shapes_and_indices(draw):
    """A small shape and a NumPy index into it mixing every kind of index."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    arr_shape = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    items, dim, used_mask = [], 0, False
    while dim < len(shape):
        kind = draw(st.sampled_from(["int", "slice", "array", "array", "none", "mask", "stop"]))
        n = shape[dim]
        if kind == "stop":
            if draw(st.booleans()):
                items.append(Ellipsis)
            break
        if kind == "none":
            items.append(None)
            continue
        if kind == "int":
            items.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            start = draw(st.none() | st.integers(-n - 1, n + 1))
            stop = draw(st.none() | st.integers(-n - 1, n + 1))
            step = draw(st.none() | st.sampled_from([-3, -2, -1, 1, 2, 3]))
            items.append(slice(start, stop, step))
        elif kind == "mask" and not used_mask:
            used_mask = True
            m = draw(st.integers(1, len(shape) - dim))
            items.append(draw(hnp.arrays(np.bool_, shape[dim:dim + m])))
            dim += m
            continue
        else:
            items.append(draw(hnp.arrays(np.int64, arr_shape, elements=st.integers(-n, n - 1))))
        dim += 1
    if used_mask:  # a mask's nonzero count would have to broadcast with the arrays: keep masks alone
        items = [i if not (isinstance(i, np.ndarray) and i.dtype != np.bool_) else 0 for i in items]
    return shape, tuple(items)


@given(shapes_and_indices())
def test_read_matches_numpy_hypothesis(shape_idx):
    shape, idx = shape_idx
    a = np.arange(math.prod(shape), dtype=np.float64).reshape(shape)
    want = a[idx]
    got = jnp.asarray(a)[idx]
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


def test_out_of_bounds_reads_clamp_as_in_jax():
    """JAX 0.10.2 clamps an out-of-range read (an int, an integer array, .at[].get()), eager and under jit,
    after one wrap of negative indices; only an index into an empty axis raises IndexError."""
    want = A[:, np.clip([0, 5], 0, A.shape[1] - 1)]
    np.testing.assert_array_equal(np.asarray(X[:, np.array([0, 5])]), want)
    np.testing.assert_array_equal(np.asarray(X[np.array([-4]), 0]), A[[0], 0])      # -4 + 3 = -1: clamped to 0
    np.testing.assert_array_equal(np.asarray(X[0, 0, jnp.asarray(np.array([7]))]), A[0, 0, [A.shape[2] - 1]])
    np.testing.assert_array_equal(np.asarray(X[5]), A[A.shape[0] - 1])
    np.testing.assert_array_equal(np.asarray(X[-9, 1]), A[0, 1])
    np.testing.assert_array_equal(np.asarray(X.at[np.array([0, 9])].get()), A[[0, A.shape[0] - 1]])
    np.testing.assert_array_equal(np.asarray(fg.jit(lambda x: x[5, 9])(X)), A[-1, -1])
    with pytest.raises(IndexError, match="size 0"):
        jnp.zeros((0, 3))[0]
    with pytest.raises(IndexError, match="size 0"):
        jnp.zeros((0, 3))[np.array([0])]
    jax = pytest.importorskip("jax")
    for f in (lambda x: x[:, np.array([0, 5])], lambda x: x[np.array([-4]), 0], lambda x: x[5], lambda x: x[-9, 1],
              lambda x: x.at[np.array([0, 9])].get(), lambda x: x[0, 0, np.array([7, -8])]):
        b = A.astype(np.float32)  # (the same dtype in either x64 mode)
        xf, xj = jnp.asarray(b), jax.numpy.asarray(b)
        np.testing.assert_array_equal(np.asarray(f(xf)), np.asarray(f(xj)))
        np.testing.assert_array_equal(np.asarray(fg.jit(f)(xf)), np.asarray(jax.jit(f)(xj)))


@pytest.mark.parametrize("shape, mask_shape", [((0, 1), (0, 0)), ((0, 1), (0,)), ((2, 3), (2, 0)),
                                              ((2, 3), (0, 3)), ((2, 3, 4), (0,)), ((2, 3, 4), (2, 0))])
def test_empty_mask_axis_matches_any_length(shape, mask_shape):
    """NumPy (and the Array API suite) accept a boolean mask axis of length 0 against an axis of any
    length: nothing is selected, so x[mask] has shape (0,) + the unindexed axes."""
    a = np.arange(math.prod(shape), dtype=np.float64).reshape(shape)
    m = np.zeros(mask_shape, bool)
    want = a[m]
    assert want.shape == (0,) + shape[len(mask_shape):]  # the exact value, NumPy aside
    got = jnp.asarray(a)[m]
    assert got.shape == want.shape and got.dtype == want.dtype
    assert jnp.asarray(a)[jnp.asarray(m)].shape == want.shape
    with pytest.raises(IndexError, match="boolean index did not match"):  # a non-empty axis must match
        jnp.asarray(a)[np.zeros((shape[0] + 1,) + mask_shape[1:], bool)]


def test_bad_indices_raise():
    with pytest.raises(IndexError, match="boolean index did not match"):
        X[np.array([True, False])]
    with pytest.raises(IndexError, match="integer \\(or boolean\\) type"):
        X[np.array([0.0, 1.0])]
    with pytest.raises(IndexError, match="could not be broadcast"):
        X[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match="too many indices"):
        X[[0], 0, 0, 0]


def test_traced_boolean_mask_raises_concretization_error_suggesting_where():
    with pytest.raises(fg.ConcretizationError, match="where"):
        fg.jit(lambda x, m: x[m])(X, jnp.asarray(MASK))
    with pytest.raises(fg.ConcretizationError, match="where"):
        fg.vmap(lambda x, m: x[m])(X, jnp.asarray(A > 0))


def test_concrete_mask_works_under_grad():
    g = fg.grad(lambda x: jnp.sum(x[x > 0] ** 2))(A)
    np.testing.assert_allclose(np.asarray(g), np.where(A > 0, 2 * A, 0.0), rtol=1e-14)


def test_item_assignment_raises_type_error_mentioning_at():
    with pytest.raises(TypeError, match=r"\.at\["):
        X[0] = 1.0
    with pytest.raises(TypeError, match=r"\.at\["):
        fg.grad(lambda x: x.__setitem__(0, 1.0))(A[0, 0])


def test_traced_indices_under_jit_are_clamped_and_wrapped():
    f = fg.jit(lambda x, i: x[i, 1:3])
    i = np.array([2, -1, -3, 0])
    np.testing.assert_array_equal(np.asarray(f(X, i)), A[i, 1:3])
    # out-of-range traced indices cannot raise: they are clamped, as in JAX
    np.testing.assert_array_equal(np.asarray(f(X, np.array([9, -9]))), A[[2, 0], 1:3])


# --- updates: x.at[idx] ---------------------------------------------------------------------------

UPDATES = {
    "int": lambda: (1,),
    "negative_int": lambda: (-1, 2),
    "slice": lambda: (slice(1, None), slice(None, 3)),
    "negative_step": lambda: (slice(None, None, -2), 0, slice(4, None, -3)),
    "none_and_ellipsis": lambda: (None, Ellipsis, 2),
    "array_with_duplicates": lambda: ([0, 2, 0, 0],),
    "arrays_separated": lambda: ([0, 2, 2], slice(None), [1, 4, 1]),
    "arrays_adjacent": lambda: (slice(None), [3, 3], [0, 4]),
    "mask": lambda: (MASK,),
    "mask_last_axis": lambda: (Ellipsis, A[0, 0] > 0),
    "all": lambda: (Ellipsis,),
}


def np_update(a, idx, v, op):
    """NumPy's in-place equivalent on a copy: np.<ufunc>.at(y, idx, v), or for set y[idx] = v with
    repeated positions resolved as funcgrad defines it (the last write in C order wins)."""
    y = a.copy()
    if op != "set":
        # values broadcast explicitly: NumPy 2.4's ufunc.at mis-broadcasts 1-d values against a 2-d
        # index into a 1-d array (np.add.at(np.zeros(3), [[0, 1], [0, 1]], [1., 2.]) gives [1, 2, 0])
        UFUNC[op].at(y, idx, np.broadcast_to(v, a[idx].shape))
        return y
    pos = np.arange(a.size).reshape(a.shape)[idx]
    flat = y.reshape(-1)
    for p, val in zip(pos.reshape(-1), np.broadcast_to(v, pos.shape).reshape(-1)):
        flat[p] = val
    return y


@pytest.mark.parametrize("op", ["set", "add", "mul", "min", "max"])
@pytest.mark.parametrize("name", sorted(UPDATES))
def test_at_matches_numpy(name, op):
    idx = UPDATES[name]()
    shape = A[idx].shape
    for v in [RNG.standard_normal(shape), RNG.standard_normal(shape[-1:]), 0.5]:
        got = getattr(X.at[idx], op)(v)
        np.testing.assert_allclose(np.asarray(got), np_update(A, idx, v, op), rtol=1e-14)
        if op == "set" and name != "array_with_duplicates":
            want = A.copy()
            want[idx] = v
            np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(X), A)  # x itself is unchanged


@st.composite
def updates(draw):
    shape, idx = draw(shapes_and_indices())
    op = draw(st.sampled_from(["set", "add", "mul", "min", "max", "multiply"]))
    a = np.arange(math.prod(shape), dtype=np.float64).reshape(shape)
    target = a[idx].shape
    trail = draw(st.integers(0, len(target)))
    v = draw(hnp.arrays(np.float64, target[len(target) - trail:],
                        elements=st.floats(-10, 10, allow_nan=False, width=64)))
    return a, idx, op, v


@given(updates())
def test_at_matches_numpy_hypothesis(case):
    a, idx, op, v = case
    got = getattr(jnp.asarray(a).at[idx], op)(v)
    want = np_update(a, idx, v, "mul" if op == "multiply" else op)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-14)


def test_at_set_with_duplicates_keeps_last_write():
    got = jnp.zeros(3, dtype="float64").at[np.array([1, 2, 1, 1, 0, 2])].set(np.arange(6.0))
    np.testing.assert_array_equal(np.asarray(got), [4.0, 3.0, 5.0])


def test_at_get_divide_power():
    idx = (slice(None), [0, 3], 1)
    np.testing.assert_array_equal(np.asarray(X.at[idx].get()), A[idx])
    want = A.copy()
    want[idx] /= 4.0
    np.testing.assert_allclose(np.asarray(X.at[idx].divide(4.0)), want, rtol=1e-14)
    b = np.abs(A)
    want = b.copy()
    want[idx] **= 3
    np.testing.assert_allclose(np.asarray(jnp.asarray(b).at[idx].power(3.0)), want, rtol=1e-14)


def test_at_out_of_bounds_updates_are_dropped():
    a = np.arange(5.0)
    x = jnp.asarray(a)
    np.testing.assert_array_equal(np.asarray(x.at[7].set(-1.0)), a)
    np.testing.assert_array_equal(np.asarray(x.at[-6].add(10.0)), a)
    want = a.copy()
    want[[1, 4]] += 10
    np.testing.assert_array_equal(np.asarray(x.at[np.array([1, 5, -1, -7, 9])].add(10.0)), want)
    np.testing.assert_array_equal(np.asarray(x.at[[5, 6]].set(0.0, mode="drop")), a)
    # traced indices under jit: dropped the same way
    f = fg.jit(lambda x, i: x.at[i].add(10.0))
    np.testing.assert_array_equal(np.asarray(f(x, np.array([1, 5, -1, -7, 9]))), want)


def test_at_modes_clip_and_fill():
    a = np.arange(5.0)
    x = jnp.asarray(a)
    np.testing.assert_array_equal(np.asarray(x.at[[7, -9]].set(-1.0, mode="clip")), [-1, 1, 2, 3, -1])
    got = x.at[np.array([1, 7, -2])].get(mode="fill")
    np.testing.assert_array_equal(np.asarray(got), [1.0, np.nan, 3.0])
    got = x.at[np.array([1, 7])].get(mode="fill", fill_value=-5.0)
    np.testing.assert_array_equal(np.asarray(got), [1.0, -5.0])
    np.testing.assert_array_equal(np.asarray(x.at[np.array([1, 7, -9])].get(mode="clip")), [1.0, 4.0, 0.0])
    xi = jnp.asarray(np.arange(3, dtype=np.int32))
    assert int(xi.at[5].get(mode="fill")) == np.iinfo(np.int32).min
    with pytest.raises(ValueError, match="mode must be one of"):
        x.at[0].set(1.0, mode="wrap")


def test_at_accepts_jax_keywords():
    got = X.at[[0, 2]].add(1.0, indices_are_sorted=True, unique_indices=True)
    np.testing.assert_allclose(np.asarray(got), np_update(A, ([0, 2],), 1.0, "add"))


def test_at_casts_values_and_checks_broadcasting():
    xi = jnp.asarray(np.arange(4, dtype=np.int32))
    got = xi.at[1].set(2.7)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got), [0, 2, 2, 3])
    xf = jnp.asarray(np.zeros(3, dtype=np.float32))
    assert xf.at[0].add(np.float64(1.5)).dtype == np.float32
    got = X.at[0].set(np.ones((1, 4, 5)))  # extra leading length-1 axes are dropped, as NumPy does
    np.testing.assert_array_equal(np.asarray(got)[0], np.ones((4, 5)))
    with pytest.raises(ValueError, match="broadcast"):
        X.at[0].set(np.ones((3, 5)))
    with pytest.raises(ValueError, match="broadcast"):
        X.at[0].set(np.ones((2, 4, 5)))


def test_at_on_tracers_and_zero_dim():
    s = jnp.asarray(np.float64(2.0))
    assert float(s.at[()].set(5.0)) == 5.0
    assert float(s.at[...].add(1.0)) == 3.0
    f = fg.jit(lambda x: x.at[1, ::2].mul(x[0, ::2]))
    want = A.copy()
    want[1, ::2] *= A[0, ::2]
    np.testing.assert_allclose(np.asarray(f(X)), want, rtol=1e-14)


# --- derivatives ----------------------------------------------------------------------------------

W = RNG.standard_normal(A.shape)


@pytest.mark.parametrize("name", ["int_list", "2d_array", "adjacent_pair", "separated_by_slice", "mask_2d",
                                  "broadcast_arrays", "slice_negative_step", "int_and_array_separated"])
def test_grad_of_reads_matches_finite_differences(name):
    idx = READS[name]()
    f = lambda x: jnp.sum(jnp.sin(jnp.asarray(x)[idx]) * jnp.asarray(x)[idx])
    g = fg.grad(f)(A)
    np.testing.assert_allclose(np.asarray(g), fd_grad(f, A), rtol=1e-6, atol=1e-8)


def test_jvp_of_read_matches_finite_differences():
    idx = (np.array([[0, 2], [2, 2]]), slice(None), [4, 0])
    f = lambda x: jnp.asarray(x)[idx] ** 2
    t = RNG.standard_normal(A.shape)
    _, tan = fg.jvp(f, (A,), (t,))
    np.testing.assert_allclose(np.asarray(tan), fd_jvp(f, A, t), rtol=1e-6, atol=1e-8)


AT_GRADS = {
    "set": ([0, 2], slice(1, 3)),
    "set_duplicates": ([0, 2, 0], 1),
    "add": (slice(None), [3, 3, 0]),
    "mul": ([1, 2], slice(None), 4),
    "min": (MASK,),
    "max": (Ellipsis, [0, 2]),
}


@pytest.mark.parametrize("case", sorted(AT_GRADS))
def test_grad_of_at_updates_matches_finite_differences(case):
    op = case.split("_")[0]
    idx = AT_GRADS[case]
    v0 = RNG.standard_normal(A[idx].shape)
    if op in ("min", "max"):  # keep clear of ties between x and v
        v0 = np.where(np.abs(v0 - A[idx]) < 0.1, A[idx] + 0.5, v0)
    if case == "set_duplicates":
        v0 = RNG.standard_normal((3, 5))

    def f(x, v):
        y = getattr(jnp.asarray(x).at[idx], op)(jnp.asarray(v))
        return jnp.sum(jnp.asarray(W) * y * y)

    gx, gv = fg.grad(f, argnums=(0, 1))(A, v0)
    np.testing.assert_allclose(np.asarray(gx), fd_grad(lambda x: f(x, v0), A), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(gv), fd_grad(lambda v: f(A, v), v0), rtol=1e-6, atol=1e-8)
    t_x, t_v = RNG.standard_normal(A.shape), RNG.standard_normal(v0.shape)
    g = lambda x, v: getattr(jnp.asarray(x).at[idx], op)(jnp.asarray(v))
    _, tan = fg.jvp(g, (A, v0), (t_x, t_v))
    eps = 1e-6
    want = (np.asarray(g(A + eps * t_x, v0 + eps * t_v)) - np.asarray(g(A - eps * t_x, v0 - eps * t_v))) / (2 * eps)
    np.testing.assert_allclose(np.asarray(tan), want, rtol=1e-6, atol=1e-8)


def test_set_duplicates_give_gradient_only_to_last_write():
    gv = fg.grad(lambda v: jnp.sum(jnp.zeros(3, dtype="float64").at[np.array([1, 1, 2, 1])].set(v)))(
        np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(np.asarray(gv), [0.0, 0.0, 1.0, 1.0])


def test_max_ties_split_gradient_evenly():
    gx, gv = fg.grad(lambda x, v: jnp.sum(x.at[0].max(v)), argnums=(0, 1))(np.array([1.0, 2.0]), np.float64(1.0))
    np.testing.assert_allclose(np.asarray(gx), [0.5, 1.0])
    assert float(gv) == 0.5


def test_grad_of_dropped_update_is_zero():
    gv = fg.grad(lambda v: jnp.sum(jnp.ones(3, dtype="float64").at[np.array([0, 5])].add(v) ** 2))(
        np.array([2.0, 7.0]))
    np.testing.assert_array_equal(np.asarray(gv), [6.0, 0.0])


def test_gather_gradient_follows_clamped_reads():
    w = W[0, :3]
    g = fg.grad(lambda x: jnp.sum(ix.gather(x, np.array([[7], [-2], [1]]), (0,)) * jnp.asarray(w)))(A[0])
    want = np.zeros_like(A[0])
    want[3] += w[0]  # index 7 reads row 3 (the last)
    want[0] += w[1]  # index -2 reads row 0
    want[1] += w[2]
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-14)
    f = fg.jit(fg.grad(lambda x, i: jnp.sum(x[i] ** 2)))  # traced indices are clamped under jit
    np.testing.assert_allclose(np.asarray(f(A[0], np.array([9]))), np.where(np.arange(4)[:, None] == 3, 2 * A[0], 0))


def test_grad_of_grad_through_gather():
    idx = ([0, 2, 0], slice(None), [1, 1, 1])
    f = lambda x: jnp.sum(jnp.asarray(x)[idx] ** 3)
    x = A
    h = fg.hessian(f)(x)
    counts = np.zeros(A.shape)
    np.add.at(counts, idx, 1.0)
    want = np.diag((6 * x * counts).reshape(-1)).reshape(A.shape + A.shape)
    np.testing.assert_allclose(np.asarray(h), want, rtol=1e-12, atol=1e-12)
    u = RNG.standard_normal(A.shape)
    hvp = fg.grad(lambda x: jnp.sum(fg.grad(f)(x) * jnp.asarray(u)))(x)
    np.testing.assert_allclose(np.asarray(hvp), fd_jvp(lambda x: fg.grad(f)(x), x, u), rtol=1e-6, atol=1e-8)


def test_grad_of_grad_through_scatter():
    idx = ([1, 2], 3)
    v = RNG.standard_normal((2, 5))
    f = lambda x: jnp.sum(jnp.asarray(W) * jnp.asarray(x).at[idx].mul(jnp.asarray(v)) ** 3)
    u = RNG.standard_normal(A.shape)
    hvp = fg.grad(lambda x: jnp.sum(fg.grad(f)(x) * jnp.asarray(u)))(A)
    np.testing.assert_allclose(np.asarray(hvp), fd_jvp(lambda x: fg.grad(f)(x), A, u), rtol=1e-6, atol=1e-7)


# --- vmap and jit ---------------------------------------------------------------------------------

I = np.array([[0, 2], [1, 1], [2, 0], [-1, 1]])
XS = RNG.standard_normal((4, 3, 4, 5))


def test_vmap_of_read_with_batched_index():
    got = fg.vmap(lambda i: X[i, 1:, i])(I)
    want = np.stack([A[i, 1:, i] for i in I])
    np.testing.assert_array_equal(np.asarray(got), want)


def test_vmap_of_read_with_batched_operand():
    got = fg.vmap(lambda x: x[:, [3, 0], MASK[:, 0].nonzero()[0][:1]])(XS)
    want = np.stack([x[:, [3, 0], MASK[:, 0].nonzero()[0][:1]] for x in XS])
    np.testing.assert_array_equal(np.asarray(got), want)
    got = fg.vmap(lambda x: x[MASK])(XS)
    np.testing.assert_array_equal(np.asarray(got), np.stack([x[MASK] for x in XS]))


def test_vmap_of_read_with_both_batched():
    got = fg.vmap(lambda x, i: x[i, :, 2])(XS, I)
    np.testing.assert_array_equal(np.asarray(got), np.stack([x[i, :, 2] for x, i in zip(XS, I)]))
    got = fg.vmap(lambda x, i: x[1, i], in_axes=(1, 0))(np.moveaxis(XS, 0, 1), I[:, 0])
    np.testing.assert_array_equal(np.asarray(got), np.stack([x[1, i] for x, i in zip(XS, I[:, 0])]))


@pytest.mark.parametrize("in_axes", [(0, None, None), (None, 0, None), (None, None, 0), (0, 0, 0), (0, 0, None)])
@pytest.mark.parametrize("op", ["set", "add", "max"])
def test_vmap_of_at_matches_python_loop(in_axes, op):
    vs = RNG.standard_normal((4, 2, 5))
    args = [XS, I, vs]
    args = [a if ax == 0 else a[0] for a, ax in zip(args, in_axes)]
    f = lambda x, i, v: getattr(jnp.asarray(x).at[i, 2], op)(v)
    got = fg.vmap(f, in_axes=in_axes)(*args)
    examples = [[a[k] if ax == 0 else a for a, ax in zip(args, in_axes)] for k in range(4)]
    want = np.stack([np_update(x, (i, 2), v, op) for x, i, v in examples])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-14)


def test_vmap_of_grad_of_read_per_example():
    f = lambda x, i: jnp.sum(x[i] ** 2)
    got = fg.vmap(fg.grad(f), in_axes=(None, 0))(A, I)
    want = []
    for i in I:
        g = np.zeros_like(A)
        np.add.at(g, i, 2 * A[i])
        want.append(g)
    np.testing.assert_allclose(np.asarray(got), np.stack(want), rtol=1e-14)


JIT_FUNS = {
    "read_concrete_index": (lambda x, i: x[[2, 0], :, 1:4], (A, I)),
    "read_traced_index": (lambda x, i: x[i, ::-1], (A, I)),
    "read_traced_scalar": (lambda x, i: x[1, i[0, 0]], (A, I)),
    "at_set_traced": (lambda x, i: x.at[i].set(0.0), (A, I)),
    "at_add_mask": (lambda x, i: x.at[MASK].add(1.0), (A, I)),
    "at_min_slices": (lambda x, i: x.at[::2, 1].min(x[1, 1]), (A, I)),
    "grad_of_at": (lambda x, i: fg.grad(lambda y: jnp.sum(y.at[i, 1].mul(y[0, 0]) ** 2))(x), (A, I)),
}


@pytest.mark.parametrize("name", sorted(JIT_FUNS))
def test_jit_matches_eager(name):
    f, args = JIT_FUNS[name]
    eager = f(*[jnp.asarray(a) for a in args])
    np.testing.assert_allclose(np.asarray(fg.jit(f)(*args)), np.asarray(eager), rtol=1e-14)


# --- empty index arrays ---------------------------------------------------------------------------

@st.composite
def empty_index_cases(draw):
    """(x, idx, upd, axes, mode) whose index array is empty: no coordinates per row (idx of shape
    B + (0,), every row addresses the whole operand) or no rows (a zero-length batch axis). Operands
    are large enough (up to 5**3 values) for scatter's grouped-update path."""
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    if draw(st.booleans()):
        axes = ()
        batch = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
    else:
        axes = tuple(draw(st.permutations(range(len(shape))))[:draw(st.integers(1, len(shape)))])
        batch = draw(st.sampled_from([(0,), (2, 0), (0, 3)]))
    idx = np.zeros(batch + (len(axes),), np.int64)
    rest = tuple(shape[d] for d in range(len(shape)) if d not in axes)
    x = draw(hnp.arrays(np.float64, shape, elements=st.floats(0.5, 2.0)))
    upd = draw(hnp.arrays(np.float64, batch + rest, elements=st.floats(0.5, 2.0)))
    return x, idx, upd, axes, draw(st.sampled_from(["add", "set", "mul"]))


@given(empty_index_cases())
def test_empty_index_arrays_values_and_second_derivatives(case):
    """gather/scatter with an empty index array match the loop references, and their derivatives (to
    second order, both modes) match finite differences."""
    from funcgrad.testing import check_grads
    x, idx, upd, axes, mode = case
    jidx = jnp.asarray(idx)
    np.testing.assert_array_equal(np.asarray(ix.gather_p.bind(jnp.asarray(x), jidx, axes=axes)),
                                  ref_gather(x, idx, axes))
    np.testing.assert_allclose(
        np.asarray(ix.scatter_p.bind(jnp.asarray(x), jidx, jnp.asarray(upd), axes=axes, mode=mode)),
        ref_scatter(x, idx, upd, axes, mode), rtol=1e-14)
    check_grads(lambda a: ix.gather_p.bind(a, jidx, axes=axes), [jnp.asarray(x)], order=2,
                modes=("fwd", "rev"))
    check_grads(lambda a, u: ix.scatter_p.bind(a, jidx, u, axes=axes, mode=mode),
                [jnp.asarray(x), jnp.asarray(upd)], order=2, modes=("fwd", "rev"))
