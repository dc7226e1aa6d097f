"""funcgrad.numpy.einsum / einsum_path against numpy.einsum on random subscripts (implicit and explicit
output, ellipses, repeated labels, broadcasting size-1 dimensions, several dtypes), the contraction
order (greedy and optimal against left to right), the lowering (one dot_general per pairwise
contraction), derivatives, vmap and jit.
"""
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as jnp
from funcgrad import jit, vmap
from funcgrad.numpy._einsum import _path_macs
from funcgrad.testing import check_grads

LABELS = "abcdeAB"


def check(actual, expected, rtol=1e-10):
    expected = np.asarray(expected)
    assert isinstance(actual, funcgrad.Array), type(actual)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(np.asarray(actual), expected, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(np.asarray(actual), expected)


@st.composite
def einsum_cases(draw):
    """(subscripts, operands) valid for numpy.einsum."""
    n_ops = draw(st.integers(1, 4), label="operands")
    sizes = {c: draw(st.integers(0 if draw(st.integers(0, 9)) == 0 else 1, 4)) for c in LABELS}
    use_ell = draw(st.booleans(), label="ellipsis")
    ell_shape = draw(st.lists(st.integers(1, 3), max_size=2), label="ellipsis shape") if use_ell else []
    dtype = draw(st.sampled_from([np.float64, np.int32, np.bool_, np.complex128, np.float32]), label="dtype")
    terms, ops = [], []
    for _ in range(n_ops):
        term = draw(st.lists(st.sampled_from(LABELS), max_size=4), label="term")
        shape = [sizes[c] for c in term]
        if draw(st.integers(0, 4)) == 0 and shape:  # a size-1 dimension that broadcasts
            k = draw(st.integers(0, len(shape) - 1))
            if term.count(term[k]) == 1:
                shape[k] = 1
        text = "".join(term)
        if use_ell:
            pos = draw(st.integers(0, len(term)))
            k = draw(st.integers(0, len(ell_shape)))
            e = [draw(st.sampled_from([1, d])) for d in ell_shape[len(ell_shape) - k:]]
            text = text[:pos] + "..." + text[pos:]
            shape = shape[:pos] + e + shape[pos:]
        terms.append(text)
        rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
        if dtype == np.bool_:
            x = rng.random(shape) < 0.5
        elif dtype == np.int32:
            x = rng.integers(-3, 4, shape).astype(np.int32)
        elif dtype == np.complex128:
            x = rng.normal(size=shape) + 1j * rng.normal(size=shape)
        else:
            x = rng.normal(size=shape).astype(dtype)
        ops.append(x)
    sub = ",".join(terms)
    if draw(st.booleans(), label="explicit"):
        used = sorted({c for t in terms for c in t if c != "."})
        out = draw(st.permutations(used))[:draw(st.integers(0, len(used)))]
        out = "".join(out)
        if use_ell:
            pos = draw(st.integers(0, len(out)))
            out = out[:pos] + "..." + out[pos:]
        sub += "->" + out
    return sub, ops


@given(case=einsum_cases(), optimize=st.sampled_from([True, "greedy", "optimal", False]))
def test_einsum_matches_numpy(case, optimize):
    sub, ops = case
    try:
        expected = np.einsum(sub, *ops)
    except ValueError:  # e.g. an ellipsis label size-1 vs size-n mismatch NumPy rejects
        with pytest.raises(ValueError):
            jnp.einsum(sub, *ops, optimize=optimize)
        return
    rtol = 1e-4 if expected.dtype in (np.float32, np.complex64) else 1e-10
    check(jnp.einsum(sub, *ops, optimize=optimize), expected, rtol)
    path, report = jnp.einsum_path(sub, *ops, optimize=optimize)
    assert path[0] == "einsum_path" and "Complete contraction" in report
    check(jnp.einsum(sub, *ops, optimize=path), expected, rtol)


KNOWN = [
    ("ii", [(3, 3)]), ("ii->i", [(3, 3)]), ("iij->j", [(2, 2, 4)]), ("iii->i", [(2, 2, 2)]),
    ("ij->", [(2, 3)]), ("ij->ji", [(2, 3)]), ("i,i", [(3,), (3,)]), ("i,j", [(2,), (3,)]),
    ("i,j->", [(2,), (3,)]), ("ij,ij->ij", [(2, 3), (2, 3)]), ("ijk,ikl->ijl", [(2, 3, 4), (2, 4, 5)]),
    ("bij,bjk", [(2, 3, 4), (2, 4, 5)]), ("...ij,...jk->...ik", [(5, 1, 2, 3), (4, 3, 2)]),
    ("...", [()]), (",i->i", [(), (3,)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ab,bc,cd,de,ef->af", [(2, 3), (3, 4), (4, 5), (5, 2), (2, 3)]), ("ii,ij->j", [(3, 3), (3, 2)]),
    ("ijj,jk->ik", [(2, 3, 3), (3, 4)]), ("i,i,i->i", [(4,), (4,), (4,)]), ("ia,ib,ic->abc", [(3, 2), (3, 2), (3, 2)]),
    ("Ba,aC", [(2, 3), (3, 4)]), ("bA,AC", [(2, 3), (3, 4)]), ("i...,i...", [(3, 1, 4), (3, 5, 1)]),
    ("ij,jk", [(0, 3), (3, 4)]), ("ij,jk->", [(2, 0), (0, 4)]), ("i,i", [(1,), (3,)]),
]


@pytest.mark.parametrize("sub,shapes", KNOWN)
def test_einsum_known(sub, shapes):
    rng = np.random.default_rng(0)
    ops = [rng.normal(size=s) for s in shapes]
    check(jnp.einsum(sub, *ops), np.einsum(sub, *ops))
    for dt in (np.int8, np.bool_):
        iops = [(o * 2).astype(dt) for o in ops]
        check(jnp.einsum(sub, *iops), np.einsum(sub, *iops))


def test_einsum_interleaved_and_kwargs():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    check(jnp.einsum(a, [0, 1], b, [1, 2], [0, 2]), np.einsum(a, [0, 1], b, [1, 2], [0, 2]))
    check(jnp.einsum(a, [0, 1], b, [1, 2]), np.einsum(a, [0, 1], b, [1, 2]))
    check(jnp.einsum(a, [Ellipsis, 1], [Ellipsis]), np.einsum(a, [Ellipsis, 1], [Ellipsis]))
    check(jnp.einsum("ij, jk -> ik", a, b), np.einsum("ij, jk -> ik", a, b))
    ia, ib = a.astype(np.int8), b.astype(np.int16)
    check(jnp.einsum("ij,jk", ia, ib, dtype=np.float32), np.einsum("ij,jk", ia, ib, dtype=np.float32))
    with pytest.raises(TypeError):
        jnp.einsum("ij,jk", a, b, dtype=np.int32)
    with pytest.raises(TypeError):
        np.einsum("ij,jk", a, b, dtype=np.int32)
    check(jnp.einsum("ij,jk", a, b, dtype=np.int32, casting="unsafe"),
          np.einsum("ij,jk", a, b, dtype=np.int32, casting="unsafe"))
    assert jnp.einsum("ij,jk", ia, ia.T.copy(), preferred_element_type=np.float64).dtype == np.float64
    with pytest.raises(TypeError):
        jnp.einsum("ij", a, out=a)


BAD = [
    ("ij,jk->ii", [(2, 3), (3, 4)]), ("ii->i", [(2, 3)]), ("i.j", [(2, 3)]), ("ij->i->j", [(2, 3)]),
    ("ij", [(2, 3, 4)]), ("ijk", [(2, 3)]), ("i,j", [(2,)]), ("i", [(2,), (2,)]), ("i->j", [(2,)]),
    ("i1", [(2,)]), ("i,i", [(2,), (3,)]), ("...i->i", [(2, 3)]), ("i...j...", [(2, 3)]),
]


@pytest.mark.parametrize("sub,shapes", BAD)
def test_einsum_errors_match_numpy(sub, shapes):
    ops = [np.ones(s) for s in shapes]
    with pytest.raises(Exception) as npe:
        np.einsum(sub, *ops)
    with pytest.raises(npe.type):
        jnp.einsum(sub, *ops)
    with pytest.raises(npe.type):
        jnp.einsum_path(sub, *ops)


def _reported(report, what):
    return int(re.search(rf"{what} multiply-adds:\s+(\d+)", report).group(1))


def test_greedy_path_beats_left_to_right():
    # (1000, 2) (2, 1000) (1000, 2): left to right builds a 1000 x 1000 intermediate (2e6 + 2e6
    # multiply-adds); greedy contracts the last two first (4e3 + 4e3).
    ops = [np.ones((1000, 2)), np.ones((2, 1000)), np.ones((1000, 2))]
    path, report = jnp.einsum_path("ij,jk,kl->il", *ops)
    assert path == ["einsum_path", (1, 2), (0, 1)]
    assert path == np.einsum_path("ij,jk,kl->il", *ops, optimize="greedy")[0]
    greedy, ltr = _reported(report, "Path"), _reported(report, "Left-to-right pairwise")
    assert greedy == 8000 and ltr == 4_000_000 and greedy < ltr
    assert _path_macs("ij,jk,kl->il", [o.shape for o in ops], False) == ltr
    # The task's chain (2, 1000) (1000, 2) (2, 1000): contracting left to right is already the best
    # pairwise order, and greedy finds it; both beat the naive single loop over i, j, k, l.
    ops = [np.ones((2, 1000)), np.ones((1000, 2)), np.ones((2, 1000))]
    path, report = jnp.einsum_path("ij,jk,kl->il", *ops)
    assert path == ["einsum_path", (0, 1), (0, 1)]
    greedy, ltr = _reported(report, "Path"), _reported(report, "Left-to-right pairwise")
    naive = _reported(report, "Naive")
    assert greedy == 8000 and greedy <= ltr and naive == 4_000_000 and greedy < naive
    check(jnp.einsum("ij,jk,kl->il", *ops), np.einsum("ij,jk,kl->il", *ops))


@given(data=st.data())
def test_optimal_never_worse_than_greedy(data):
    n = data.draw(st.integers(2, 5), label="operands")
    dims = data.draw(st.lists(st.integers(1, 30), min_size=n + 1, max_size=n + 1), label="chain dims")
    letters = "abcdefg"
    sub = ",".join(letters[i] + letters[i + 1] for i in range(n)) + "->" + letters[0] + letters[n]
    shapes = [(dims[i], dims[i + 1]) for i in range(n)]
    opt = _path_macs(sub, shapes, "optimal")
    assert opt <= _path_macs(sub, shapes, "greedy")
    assert opt <= _path_macs(sub, shapes, False)
    ops = [np.random.default_rng(i).normal(size=s) for i, s in enumerate(shapes)]
    check(jnp.einsum(sub, *ops, optimize="optimal"), np.einsum(sub, *ops))


def test_each_pairwise_contraction_is_one_dot_general():
    ops = [np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5)), np.ones((5, 2))]
    jaxpr = funcgrad.make_jaxpr(lambda *xs: jnp.einsum("ij,jk,kl,lm->im", *xs))(*ops)
    prims = [e.prim.name for e in jaxpr.eqns]
    assert prims.count("dot_general") == 3, prims
    assert all(p in ("dot_general", "transpose") for p in prims), prims
    # batch dimensions: shared and kept labels; a repeated label is a (strided-slice) diagonal
    jaxpr = funcgrad.make_jaxpr(lambda a, b: jnp.einsum("bii,bij->bj", a, b))(np.ones((2, 3, 3)), np.ones((2, 3, 4)))
    dots = [e for e in jaxpr.eqns if e.prim.name == "dot_general"]
    assert len(dots) == 1 and dots[0].params["dimension_numbers"] == (((1,), (1,)), ((0,), (0,)))


def test_explicit_paths():
    ops = [np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5))]
    for path in (["einsum_path", (0, 1), (0, 1)], [(1, 2), (0, 1)], ["einsum_path", (0, 1, 2)]):
        check(jnp.einsum("ij,jk,kl", *ops, optimize=path), np.einsum("ij,jk,kl", *ops))
    assert jnp.einsum_path("ij,jk,kl", *ops, optimize=False)[0] == ["einsum_path", (0, 1, 2)]
    for bad in (["einsum_path", (0, 1)], ["einsum_path", (0, 3), (0, 1)], "fastest"):
        with pytest.raises((ValueError, TypeError)):
            jnp.einsum("ij,jk,kl", *ops, optimize=bad)


GRAD_CASES = [
    ("ii,ij->j", [(3, 3), (3, 2)]),
    ("iij->j", [(2, 2, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 2)]),
    ("bij,bj->bi", [(2, 3, 4), (2, 4)]),
]


@pytest.mark.parametrize("sub,shapes", GRAD_CASES)
def test_einsum_gradients(sub, shapes):
    ops = [np.random.default_rng(i).normal(size=s) for i, s in enumerate(shapes)]
    check_grads(lambda *xs: jnp.einsum(sub, *xs), ops, order=2 if len(ops) < 3 else 1)


def test_einsum_vmap_jit():
    a = np.random.default_rng(0).normal(size=(5, 3, 3))
    b = np.random.default_rng(1).normal(size=(5, 3, 4))
    f = lambda x, y: jnp.einsum("ii,ij->j", x, y)  # noqa: E731
    expected = np.einsum("bii,bij->bj", a, b)
    np.testing.assert_allclose(np.asarray(vmap(f)(a, b)), expected, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jit(vmap(f))(a, b)), expected, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(vmap(f, in_axes=(None, 0))(a[0], b)),
                               np.einsum("ii,bij->bj", a[0], b), rtol=1e-12)
    g = jit(lambda x, y: jnp.einsum("ij,jk,kl->il", x, y, x.T))
    np.testing.assert_allclose(np.asarray(g(a[0], a[1])), a[0] @ a[1] @ a[0].T, rtol=1e-12)
