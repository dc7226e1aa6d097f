"""In-place ops through chains of views of a non-leaf base, under eager autograd: the written values, every live
view's values and the leaves' gradients, against PyTorch (Hypothesis draws the view chains and the writes), and
the exact gradients of the reported cases (which run without torch).

An in-place op on a view re-points the base's grad_fn at a CopySlices node (graph.CopySlices): the view region of
the base's cotangent goes through the op, the rest to the base's previous graph. The cases below are the ones
where the op keeps part of the view (index_put_ with integer, mixed or boolean indices, index_add_, scatter_,
masked_fill_, clamp_): the kept elements' cotangent must reach the base's previous graph too."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import funcgrad as fg

F64 = fg.float64
WEIGHTS = np.arange(12.0).reshape(4, 3)


# --- exact expectations (no torch needed) -------------------------------------------------------------------

def _reported(index, value_shape=(2,)):
    """w (4x3 ones) -> z = 2w; z[1:][index] = c * w[0, 0]; d/dw sum(z * WEIGHTS)."""
    w = fg.ones(4, 3, dtype=F64, requires_grad=True)
    z = w * 2
    v = z[1:]
    v[index] = fg.tensor(np.arange(5.0, 5.0 + np.prod(value_shape)).reshape(value_shape), dtype=F64) * w[0, 0]
    (z * fg.tensor(WEIGHTS)).sum().backward()
    return z.detach().numpy(), w.grad.numpy()


def _expected(index, value_shape):
    """The reported program's z and gradient, by hand: the written elements of z (found by NumPy's indexing of
    their flat positions) hold the values; elsewhere z = 2w. So d/dw is 2 * WEIGHTS off the written elements,
    0 on them, plus sum(values * WEIGHTS at the written elements) at w[0, 0]."""
    pos = np.arange(12).reshape(4, 3)[1:][index]
    vals = np.broadcast_to(np.arange(5.0, 5.0 + np.prod(value_shape)).reshape(value_shape), pos.shape)
    z = np.full(12, 2.0)
    z[pos.ravel()] = vals.ravel()
    g = 2 * WEIGHTS.ravel().copy()
    g[pos.ravel()] = 0.0
    g[0] += float((vals * WEIGHTS.ravel()[pos]).sum())
    return z.reshape(4, 3), g.reshape(4, 3)


@pytest.mark.parametrize("index, vshape", [
    (([0, 2], 1), (2,)),                                                     # the report: integer array + int
    (([0, 2], slice(1, None)), (2, 2)),                                       # integer array + slice
    ((slice(None), [2, 0]), (3, 2)),                                          # slice + integer array
    ((slice(None), [2, 0]), (1, 2)),                                          # ... a broadcast value
    (np.array([[True, False, False], [False, False, True], [False, True, False]]), (3,)),  # a boolean mask
    ((np.array([False, True, True]), 0), (2,)),                               # a boolean mask + int
    ((np.array([False, True, True]), slice(0, 2)), (2, 2)),                   # a boolean mask + slice
])
def test_advanced_assignment_through_a_view_keeps_the_base_gradient(index, vshape):
    z, g = _reported(index, vshape)
    ez, eg = _expected(index, vshape)
    np.testing.assert_array_equal(z, ez)
    np.testing.assert_array_equal(g, eg)


def test_reported_gradient_exact():
    _, g = _reported(([0, 2], 1))
    assert g.tolist() == [[80.0, 2.0, 4.0], [6.0, 0.0, 10.0], [12.0, 14.0, 16.0], [18.0, 0.0, 22.0]]


# --- what the random programs found (exact expectations) ------------------------------------------------------

def test_advanced_assignment_into_an_expanded_view_writes_its_region_under_autograd():
    """As torch: the basic indices select a view first (here e[1], whose elements do not share locations), then
    the index_put_ writes into it, through the expanded tensor's root, and the gradients follow."""
    x = fg.tensor([1.0, 2.0, 3.0], dtype=F64, requires_grad=True)
    p = fg.tensor(0.5, dtype=F64, requires_grad=True)
    y = x * 1.5
    e = y.unsqueeze(0).expand(2, 3)
    e[1, [0, 2]] = p * fg.tensor([2.0, 4.0], dtype=F64)
    (y * fg.tensor([1.0, 10.0, 100.0], dtype=F64)).sum().backward()
    assert y.tolist() == [1.0, 3.0, 2.0]
    assert x.grad.tolist() == [0.0, 15.0, 0.0]
    assert p.grad.item() == 2.0 * 1.0 + 4.0 * 100.0
    # an empty region writes nothing; a region whose elements share locations is refused (torch refuses it in
    # its backward)
    e = y.unsqueeze(0).expand(2, 3)
    e[fg.tensor([True, False]), 3:] = p
    assert y.tolist() == [1.0, 3.0, 2.0]
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        e[:, [0, 2]] = p


_KEYS = {"mask": lambda: fg.tensor([True, False, True]), "mask_tuple": lambda: (fg.tensor([True, False, True]),),
         "mask_int": lambda: (fg.tensor([True, False]), 1), "mask0d": lambda: fg.tensor(True),
         "true_tuple": lambda: (True,), "true": lambda: True, "int_mask": lambda: (0, fg.tensor([True, False, True]))}


@pytest.mark.parametrize("shape, key, value, expected", [
    ((3,), "mask", 1.0, [1.0, 0.0, 1.0]),          # one boolean mask, one value element: torch runs masked_fill_
    ((3,), "mask_tuple", 1.0, [1.0, 0.0, 1.0]),
    ((3,), "mask", [1.0], [1.0, 0.0, 1.0]),
    ((2, 3), "mask_int", 1.0, [[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]),  # the int selects first: still one mask
    ((3,), "true", 1.0, [1.0, 1.0, 1.0]),          # a lone Python True: a copy into x.unsqueeze(0)
    ((3,), "mask", [1.0, 2.0], None),              # two value elements: index_put_
    ((3,), "mask0d", 1.0, None),                   # a 0-d boolean is an integer index to torch
    ((), "mask0d", 1.0, None),
    ((3,), "true_tuple", 1.0, None),               # so is a Python bool inside a tuple
    ((2, 3), "int_mask", [1.0, 2.0], None),
])
def test_setitem_value_dtype_rule(shape, key, value, expected):
    """x[key] = a float32 value into float64 x: torch casts where it runs masked_fill_ (or a copy), and requires
    the destination's dtype where it runs index_put_ (None)."""
    x = fg.zeros(shape, dtype=F64)
    if expected is None:
        with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
            x[_KEYS[key]()] = fg.tensor(value)
    else:
        x[_KEYS[key]()] = fg.tensor(value)
        assert x.tolist() == expected


def test_setitem_false_writes_nothing():
    x = fg.zeros(3, dtype=F64)
    x[False] = fg.tensor([1.0, 2.0])  # torch checks nothing either
    assert x.tolist() == [0.0, 0.0, 0.0]


# --- random programs against torch ---------------------------------------------------------------------------

def _view(t, code, r1, r2):
    """One view of t chosen by (code, r1, r2); None when it does not apply to t's shape."""
    nd = t.ndim
    if nd == 0 and code not in (3, 5, 12):
        return None
    d = r1 % max(nd, 1)
    n = t.shape[d] if nd else 1
    if n == 0:
        return None
    if code == 0:  # a slice, perhaps strided
        a = r2 % n
        return t[(slice(None),) * d + (slice(a, None, 1 + r1 % 2),)]
    if code == 1:
        return t.select(d, r2 % n)
    if code == 2:
        return t.transpose(d, r2 % nd)
    if code == 3:
        return t.unsqueeze(r2 % (nd + 1))
    if code == 4:
        return t.squeeze()
    if code == 5:
        return t.view(-1)  # (torch refuses a non-contiguous view: so must funcgrad)
    if code == 6:
        return t.narrow(d, r2 % n, 1 + r1 % (n - r2 % n))
    if code == 7:
        return t.diagonal(r2 % 3 - 1, d, (d + 1) % nd) if nd >= 2 else None
    if code == 8:
        k = 1 + r2 % n  # windows that do not overlap (torch leaves a write into overlapping ones undefined)
        return t.unfold(d, k, k + r1 % 2)
    if code == 9:
        return t.unsqueeze(0).expand(2, *t.shape)
    if code == 10:
        return t.permute(*reversed(range(nd)))
    if code == 11:
        return t.reshape(t.shape[:d] + (1,) + t.shape[d:])
    if code == 12:
        return t.view(t.shape)
    return None


def _ix(L, a):
    return L.tensor(np.asarray(a, dtype=np.int64))


def _write(L, t, code, p, rng):
    """One in-place op on t chosen by code; its values come from rng and the leaf p (0-d) so that gradients
    flow into the written values too. Returns False when the op does not apply to t's shape."""
    nd, sh = t.ndim, tuple(t.shape)
    d = int(rng.integers(0, max(nd, 1)))
    n = sh[d] if nd else 1
    k = int(rng.integers(1, n + 1)) if n else 0
    vals = rng.uniform(-1, 1, sh)
    if code == 0:
        t.add_(L.tensor(vals) * p)
    elif code == 1:
        t.mul_(p + 1.25)
    elif code == 2:
        t.clamp_(min=-0.4, max=0.9)
    elif code == 3:
        t.copy_(L.tensor(vals[..., :1] if nd else vals) * p)
    elif code == 4 and nd:
        src = L.tensor(rng.uniform(-1, 1, sh[:d] + (k,) + sh[d + 1:])) * p
        t.index_add_(d, _ix(L, rng.integers(0, n, k)), src)
    elif code == 5:
        t.masked_fill_(t > 0.3, p * 0.5)
    elif code == 6 and nd:
        # distinct indices along d (torch's scatter_ with repeated indices keeps an unspecified one)
        idx = np.broadcast_to(rng.permutation(n)[:k].reshape((1,) * d + (k,) + (1,) * (nd - d - 1)),
                              sh[:d] + (k,) + sh[d + 1:])
        t.scatter_(d, _ix(L, idx), L.tensor(rng.uniform(-1, 1, idx.shape)) * p)
    elif code == 7 and nd:  # basic indices: a slice and an int
        a = int(rng.integers(0, n))
        key = (slice(None),) * d + (slice(a, None),)
        t[key] = L.tensor(vals[key]) * p
    elif code == 8 and nd:  # distinct integer indices along dim 0
        rows = rng.permutation(sh[0])[:int(rng.integers(1, sh[0] + 1))]
        t[_ix(L, rows)] = L.tensor(vals[rows]) * p
    elif code == 9:  # a boolean mask
        t[t < 0.1] = p * 2
    elif code == 10 and nd >= 2:  # a slice, then distinct integer indices
        cols = rng.permutation(sh[1])[:int(rng.integers(1, sh[1] + 1))]
        t[:, _ix(L, cols)] = L.tensor(vals[:, cols]) * p
    elif code == 11 and nd >= 2:  # an int, then distinct integer indices
        cols = rng.permutation(sh[1])[:int(rng.integers(1, sh[1] + 1))]
        t[int(rng.integers(0, sh[0])), _ix(L, cols)] = p * 3
    elif code == 12 and nd >= 2:  # a boolean mask over the leading dim, then a slice
        mask = rng.integers(0, 2, sh[0]).astype(bool)
        t[L.tensor(mask), 1:] = p - 0.5
    elif code == 13:
        t.mul_(L.tensor(vals))
    elif code == 14:
        t.zero_()
    elif code == 15 and nd:
        t.index_fill_(d, _ix(L, rng.permutation(n)[:k]), p)
    else:
        return False
    return True


def _program(L, x0, p0, steps):
    """Runs the program with library L: the live tensors' values, the leaves' gradients and a log of which
    steps applied, raised, or where the backward raised."""
    x = L.tensor(x0, requires_grad=True)
    p = L.tensor(p0, dtype=L.float64, requires_grad=True)
    y = x * 1.5
    live = [y]
    log = []
    for kind, target, code, r1, r2, seed in steps:
        t = live[target % len(live)]
        try:
            if kind == "view":
                v = _view(t, code, r1, r2)
                if v is not None:
                    live.append(v)
                    log.append(("view", tuple(v.shape)))
            elif _write(L, t, code, p, np.random.default_rng(seed)):
                log.append(("write", code))
        except RuntimeError as e:
            log.append(("error", kind, code, str(e)[:60]))
    try:
        loss = sum(((u * (1.0 + 0.25 * i)) ** 2).sum() for i, u in enumerate(live)) + (y * x).sum() + p
        loss.backward()
    except RuntimeError as e:
        return log + [("backward error", str(e)[:60])], None
    values = [u.detach().numpy().copy() for u in live]
    grads = [None if g is None else g.numpy().copy() for g in (x.grad, p.grad)]
    return log, (values, grads)


_step = st.tuples(st.sampled_from(["view", "view", "write"]), st.integers(0, 7), st.integers(0, 15),
                  st.integers(0, 5), st.integers(0, 5), st.integers(0, 2 ** 16))


@given(shape=st.lists(st.integers(1, 4), min_size=0, max_size=3), steps=st.lists(_step, min_size=1, max_size=8),
       seed=st.integers(0, 2 ** 16))
def test_random_view_chains_with_inplace_ops_match_torch(shape, steps, seed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    x0 = rng.uniform(-1, 1, tuple(shape))
    p0 = float(rng.uniform(0.2, 0.8))
    tlog, expected = _program(torch, x0, p0, steps)
    glog, got = _program(fg, x0, p0, steps)
    g, t = ([e[:3] if e[0] == "error" else e[:1] for e in log] for log in (glog, tlog))
    if g != t:
        # funcgrad may refuse a write that torch makes but whose backward torch then refuses (a write into an
        # expanded view whose values need gradients): from the first difference on, both refuse the program
        first = next(i for i, (a, b) in enumerate(zip(g + [None], t + [None])) if a != b)
        assert first < len(g) and g[first][0] == "error" and t[-1][0] == "backward error", (glog, tlog)
        return
    if expected is None:
        return
    for g, e in zip(got[0], expected[0]):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)
    for g, e in zip(got[1], expected[1]):
        assert (g is None) == (e is None)
        if e is not None:
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-10)
