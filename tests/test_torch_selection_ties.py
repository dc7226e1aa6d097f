"""torch.kthvalue / torch.topk / torch.mode at ties: which of the tied elements is selected (its index, and
the element the derivative flows to), and topk's order with sorted=False, are those of torch's CPU algorithms
(funcgrad/_torch/_torch_select.py). Checked against torch 2.13 on many tie patterns (importorskip), and
without torch on cases traced by hand through the algorithms."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import funcgrad as fg

NAN = float("nan")


def _patterns(seed: int, count: int):
    """(values, dim): small pools of values (so ties are common), NaN and -0.0, 1-3 dims, rows long
    enough for topk's partial_sort path (k * 64 <= n), float64 / float32 / int64."""
    rng = np.random.default_rng(seed)
    for trial in range(count):
        nd = int(rng.integers(1, 4))
        shape = tuple(int(rng.integers(1, 7)) for _ in range(nd))
        if trial % 15 == 0:
            shape = shape[:-1] + (int(rng.integers(64, 160)),)
        v = rng.integers(0, int(rng.integers(1, 5)) + 1, shape).astype(float)
        if trial % 5 == 0:
            v[rng.random(shape) < 0.2] = NAN
        if trial % 9 == 0:
            v = np.where(v == 0, -0.0, v)
        dt = (np.float64, np.float32, np.int64)[trial % 3]
        v = np.nan_to_num(v).astype(dt) if dt is np.int64 else v.astype(dt)
        yield rng, v, int(rng.integers(-nd, nd))


def test_kthvalue_ties_vs_torch():
    torch = pytest.importorskip("torch")
    for rng, v, d in _patterns(0, 250):
        k, keep = int(rng.integers(1, v.shape[d] + 1)), bool(rng.integers(0, 2))
        want, got = torch.kthvalue(torch.tensor(v), k, d, keep), fg.kthvalue(fg.tensor(v), k, d, keep)
        ctx = f"{v.tolist()} k={k} dim={d} keepdim={keep}"
        np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy(), err_msg=ctx)
        np.testing.assert_array_equal(got.values.numpy(), want.values.numpy(), err_msg=ctx)


def test_topk_ties_vs_torch():
    torch = pytest.importorskip("torch")
    for rng, v, d in _patterns(1, 200):
        for largest, srt in itertools.product((True, False), repeat=2):
            k = int(rng.integers(0, v.shape[d] + 1))
            want = torch.topk(torch.tensor(v), k, d, largest, srt)
            got = fg.topk(fg.tensor(v), k, d, largest, srt)
            ctx = f"{v.tolist()} k={k} dim={d} largest={largest} sorted={srt}"
            np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy(), err_msg=ctx)
            np.testing.assert_array_equal(got.values.numpy(), want.values.numpy(), err_msg=ctx)


def test_selection_gradient_at_ties_vs_torch():
    """The derivative flows to the element torch selects (reverse and forward)."""
    torch = pytest.importorskip("torch")
    v = np.array([[2.0, 1.0, 1.0, 2.0, 1.0], [3.0, 3.0, 3.0, 0.0, 3.0]])
    for name, call in (("kthvalue", lambda L, x: L.kthvalue(x, 2, 1).values),
                       ("topk", lambda L, x: L.topk(x, 2, 1).values),
                       ("topk(smallest, unsorted)", lambda L, x: L.topk(x, 3, 1, False, False).values)):
        grads = []
        for L in (torch, fg):
            x = L.tensor(v, dtype=L.float64, requires_grad=True)
            r = call(L, x)
            (r * L.tensor(np.arange(1.0, r.shape[-1] + 1), dtype=L.float64)).sum().backward()
            tangent = L.func.jvp(lambda t: call(L, t), (L.tensor(v, dtype=L.float64),),
                                 (L.tensor(np.arange(10.0).reshape(2, 5), dtype=L.float64),))[1]
            grads.append((x.grad.numpy(), tangent.detach().numpy()))
        np.testing.assert_array_equal(grads[1][0], grads[0][0], err_msg=name)
        np.testing.assert_array_equal(grads[1][1], grads[0][1], err_msg=name)


@pytest.mark.parametrize("call,want", [
    # quickselect on [1, 1, 1]: the median-of-three swaps leave indices (1, 0, 2) around the pivot
    (lambda x: fg.kthvalue(x, 1).indices, 1), (lambda x: fg.kthvalue(x, 2).indices, 0),
    (lambda x: fg.kthvalue(x, 3).indices, 2),
    # nth_element on four equal values: the median (index 2) moves first, the partition swaps 1 and 3
    (lambda x: fg.topk(fg.cat([x, x[:1]]), 2, largest=False).indices, [2, 3]),
    (lambda x: fg.topk(x, 2).indices, [0, 1]),
])
def test_selection_ties_traced_by_hand(call, want):
    assert call(fg.tensor([1.0, 1.0, 1.0])).tolist() == want


def test_topk_unsorted_order_traced_by_hand():
    """sorted=False returns nth_element's arrangement, not the sorted order (here without any tie)."""
    x = fg.tensor([1.0, 5.0, 3.0, 4.0, 2.0, 9.0, 7.0, 8.0, 6.0])
    assert fg.topk(x, 4, sorted=False).indices.tolist() == [7, 5, 6, 8]
    assert fg.topk(x, 4).indices.tolist() == [5, 7, 6, 8]
    # whatever the index, it selects an element equal to the value, and the gradient is one-hot there
    v = fg.tensor([[0.0, 2.0, 2.0, -0.0], [NAN, 1.0, NAN, 1.0]], requires_grad=True)
    r = fg.kthvalue(v, 4, 1)
    r.values.sum().backward()
    picked = np.zeros((2, 4))
    picked[np.arange(2), r.indices.numpy()] = 1.0
    np.testing.assert_array_equal(v.grad.numpy(), picked)
    np.testing.assert_array_equal(np.take_along_axis(v.detach().numpy(), r.indices.numpy()[:, None], 1)[:, 0],
                                  r.values.detach().numpy())


def test_mode_ties_and_nan_vs_torch():
    """mode's index among ties past 16 elements, and its value/index with NaN, are torch's std::sort's."""
    torch = pytest.importorskip("torch")
    for rng, v, d in _patterns(2, 150):
        if v.shape[d] > 1 and rng.random() < 0.3:  # rows past the insertion-sort threshold
            v = np.concatenate([v] * 9, axis=d)
        want, got = torch.mode(torch.tensor(v), d), fg.mode(fg.tensor(v), d)
        ctx = f"{v.tolist()} dim={d}"
        np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy(), err_msg=ctx)
        np.testing.assert_array_equal(got.values.numpy(), want.values.numpy(), err_msg=ctx)


@pytest.mark.parametrize("row,want", [
    # a NaN is a run of its own; the insertion sort leaves [1, NaN, NaN, 2]: mode 1 at 0
    ([1.0, NAN, NAN, 2.0], (1.0, 0)),
    # insertion sort: a leading NaN stops every later element ([NaN, 0.5, 2.0]): NaN is the first run
    ([NAN, 2.0, 0.5], (NAN, 0)),
])
def test_mode_nan_traced_by_hand(row, want):
    r = fg.mode(fg.tensor(row))
    np.testing.assert_array_equal(r.values.item(), want[0])
    assert r.indices.item() == want[1]


def test_unstable_sort_ties_vs_torch():
    """sort/argsort with stable=False (the default): rows past 16 elements order equal values as torch's
    std::sort leaves them (NaN largest); stable=True keeps their order."""
    torch = pytest.importorskip("torch")
    for rng, v, d in _patterns(3, 150):
        if rng.random() < 0.6:  # rows past the insertion-sort threshold
            v = np.concatenate([v] * 6, axis=d)
        for desc, stable in itertools.product((False, True), repeat=2):
            want = torch.sort(torch.tensor(v), dim=d, descending=desc, stable=stable)
            got = fg.sort(fg.tensor(v), dim=d, descending=desc, stable=stable)
            ctx = f"{v.tolist()} dim={d} descending={desc} stable={stable}"
            np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy(), err_msg=ctx)
            np.testing.assert_array_equal(got.values.numpy(), want.values.numpy(), err_msg=ctx)
        np.testing.assert_array_equal(fg.argsort(fg.tensor(v), d).numpy(), torch.argsort(torch.tensor(v), d).numpy())


def test_unstable_sort_traced_by_hand():
    # 17 zeros: introsort's one partition step (median of three, then the unguarded partition) and the
    # final insertion sort leave this order (torch.sort(torch.zeros(17)).indices)
    want = [8, 16, 15, 14, 13, 12, 11, 10, 9, 0, 7, 6, 5, 4, 3, 2, 1]
    assert fg.sort(fg.zeros(17)).indices.tolist() == want
    assert fg.sort(fg.zeros(17), stable=True).indices.tolist() == list(range(17))
    assert fg.sort(fg.zeros(16)).indices.tolist() == list(range(16))  # (insertion sort alone: stable)
