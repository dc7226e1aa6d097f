"""Which element torch's CPU kernels select among tied values: kthvalue, topk, mode and sort.

Their indices at ties (and topk's order with sorted=False) are whatever the algorithm leaves, and the
derivative flows to the element selected, so the torch face reproduces the algorithms exactly:
- kthvalue: ATen's quick_select_template (Sorting.cpp, Sedgewick's quickselect: median of three, NaN
  largest);
- topk (SortingUtils.h topk_impl_loop): std::partial_sort of (value, index) pairs where k * 64 <= n,
  else std::nth_element at k - 1 then, if sorted, std::sort of the first k - 1; on Linux these are
  libstdc++'s (introselect, heap select, introsort with insertion sort below 16 elements), written out
  here. Only the values are compared (NaN largest), so the indices of equal values follow the algorithm;
- mode (TensorCompareKernel.cpp mode_kernel_impl): std::sort of (value, index) pairs with a plain `<`
  (NaN unordered, so NaN rows come out as the algorithm leaves them), then the first longest run of equal
  values, its last pair's index;
- sort (SortingKernel.cpp) with stable=False: std::sort of (value, index) pairs, NaN largest.
Rows with no tie that matters keep NumPy's (vectorised) answer; only the others run these loops.
"""
from __future__ import annotations

import numpy as np


def _greater(x, y) -> bool:
    """torch's comparator for the largest first: x > y, NaN above everything."""
    return (x != x and y == y) or x > y


def _less(x, y) -> bool:
    return (x == x and y != y) or x < y


def kthvalue_index(row: list, k: int) -> int:
    """The index torch's kthvalue picks for the k-th smallest (k 0-based) of `row`."""
    a, idx = list(row), list(range(len(row)))
    gt = _greater

    def sw(i, j):
        a[i], a[j] = a[j], a[i]
        idx[i], idx[j] = idx[j], idx[i]
    lo, hi = 0, len(a) - 1
    while hi > lo:
        if hi == lo + 1:
            if gt(a[lo], a[hi]):
                sw(lo, hi)
            break
        sw((lo + hi) >> 1, lo + 1)
        if gt(a[lo + 1], a[hi]):
            sw(lo + 1, hi)
        if gt(a[lo], a[hi]):
            sw(lo, hi)
        if gt(a[lo + 1], a[lo]):
            sw(lo + 1, lo)
        i, j, piv = lo + 1, hi, a[lo]
        while True:
            i += 1
            while gt(piv, a[i]):
                i += 1
            j -= 1
            while gt(a[j], piv):
                j -= 1
            if j < i:
                break
            sw(i, j)
        sw(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return idx[k]


# --- libstdc++'s algorithms over a list q of (value, index) pairs, comparing values with `less` ---------

def _median_to_first(q, result, a, b, c, less):
    qa, qb, qc = q[a][0], q[b][0], q[c][0]
    if less(qa, qb):
        m = b if less(qb, qc) else c if less(qa, qc) else a
    else:
        m = a if less(qa, qc) else c if less(qb, qc) else b
    q[result], q[m] = q[m], q[result]


def _partition_pivot(q, first, last, less):
    _median_to_first(q, first, first + 1, first + (last - first) // 2, last - 1, less)
    pivot = q[first][0]
    lo, hi = first + 1, last
    while True:
        while less(q[lo][0], pivot):
            lo += 1
        hi -= 1
        while less(pivot, q[hi][0]):
            hi -= 1
        if not lo < hi:
            return lo
        q[lo], q[hi] = q[hi], q[lo]
        lo += 1


def _linear_insert(q, last, less):
    val = q[last]
    nxt = last - 1
    while nxt >= 0 and less(val[0], q[nxt][0]):  # (unguarded in C++: only NaN under `<` reaches the start)
        q[last] = q[nxt]
        last, nxt = nxt, nxt - 1
    q[last] = val


def _insertion_sort(q, first, last, less):
    for i in range(first + 1, last):
        if less(q[i][0], q[first][0]):
            val = q[i]
            q[first + 1:i + 1] = q[first:i]
            q[first] = val
        else:
            _linear_insert(q, i, less)


def _adjust_heap(q, first, hole, n, value, less):
    top = child = hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if less(q[first + child][0], q[first + child - 1][0]):
            child -= 1
        q[first + hole] = q[first + child]
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        q[first + hole] = q[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and less(q[first + parent][0], value[0]):
        q[first + hole] = q[first + parent]
        hole, parent = parent, (parent - 1) // 2
    q[first + hole] = value


def _heap_select(q, first, middle, last, less):
    n = middle - first
    if n >= 2:
        for parent in range((n - 2) // 2, -1, -1):
            _adjust_heap(q, first, parent, n, q[first + parent], less)
    for i in range(middle, last):
        if less(q[i][0], q[first][0]):
            value, q[i] = q[i], q[first]
            _adjust_heap(q, first, 0, n, value, less)


def _partial_sort(q, first, middle, last, less):
    _heap_select(q, first, middle, last, less)
    while middle - first > 1:
        middle -= 1
        value, q[middle] = q[middle], q[first]
        _adjust_heap(q, first, 0, middle - first, value, less)


def _nth_element(q, first, nth, last, less):
    if first == last or nth == last:
        return
    depth = 2 * ((last - first).bit_length() - 1)
    while last - first > 3:
        if depth == 0:
            _heap_select(q, first, nth + 1, last, less)
            q[first], q[nth] = q[nth], q[first]
            return
        depth -= 1
        cut = _partition_pivot(q, first, last, less)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(q, first, last, less)


def _introsort_loop(q, first, last, depth, less):
    while last - first > 16:
        if depth == 0:
            _partial_sort(q, first, last, last, less)
            return
        depth -= 1
        cut = _partition_pivot(q, first, last, less)
        _introsort_loop(q, cut, last, depth, less)
        last = cut


def _sort(q, first, last, less):
    if last - first < 2:
        return
    _introsort_loop(q, first, last, 2 * ((last - first).bit_length() - 1), less)
    if last - first > 16:
        _insertion_sort(q, first, first + 16, less)
        for i in range(first + 16, last):
            _linear_insert(q, i, less)
    else:
        _insertion_sort(q, first, last, less)


def topk_indices(row: list, k: int, largest: bool, sorted: bool) -> list:  # noqa: A002 - torch's name
    """The indices torch's topk returns for `row` (in its order)."""
    n = len(row)
    if k == 0:
        return []
    q = [(v, j) for j, v in enumerate(row)]
    less = _greater if largest else _less
    if k * 64 <= n:
        _partial_sort(q, 0, k, n, less)
    else:
        _nth_element(q, 0, k - 1, n, less)
        if sorted:
            _sort(q, 0, k - 1, less)
    return [j for _, j in q[:k]]


def mode_index(row: list) -> int:
    """The index torch's mode returns for `row`: the last pair of the first longest run after std::sort."""
    q = [(v, j) for j, v in enumerate(row)]
    _sort(q, 0, len(q), _plain_less)
    best = run = 0
    pick = q[0][1]
    for i, (v, j) in enumerate(q):
        run += 1
        if i == len(q) - 1 or v != q[i + 1][0]:  # (NaN != NaN: each NaN is a run of its own)
            if run > best:
                best, pick = run, j
            run = 0
    return pick


def _plain_less(x, y) -> bool:
    return x < y


def _equal_neighbours(s: np.ndarray) -> np.ndarray:
    """Per row of the sorted last axis: whether two neighbours are equal (NaN equal to NaN)."""
    a, b = s[..., 1:], s[..., :-1]
    eq = a == b
    if s.dtype.kind in "fc":
        eq |= (a != a) & (b != b)
    return eq.any(axis=-1)


def sort_indices_along(v: np.ndarray, d: int, descending: bool, fast: np.ndarray) -> np.ndarray:
    """torch's sort(stable=False) indices along axis d of v, given `fast` (a stable NumPy order, NaN last or,
    descending, first): rows past 16 elements with equal neighbours are redone with std::sort (torch's
    SortingKernel.cpp, NaN largest); shorter rows are its insertion sort, which is stable."""
    n = v.shape[d]
    if n <= 16:
        return fast
    m = np.moveaxis(v, d, -1)
    f = np.moveaxis(fast, d, -1)
    rows = np.argwhere(_equal_neighbours(np.take_along_axis(m, f, axis=-1)))
    if not len(rows):
        return fast
    out = f.copy()
    less = _greater if descending else _less
    for r in map(tuple, rows):
        q = [(x, j) for j, x in enumerate(m[r].tolist())]
        _sort(q, 0, n, less)
        out[r] = [j for _, j in q]
    return np.moveaxis(out, -1, d)


def kthvalue_indices(v: np.ndarray, k: int, d: int, fast: np.ndarray) -> np.ndarray:
    """torch's kthvalue indices (k 1-based) along axis d of v, given `fast` (NumPy's, keepdims): rows whose
    k-th value is tied are redone with torch's quickselect."""
    m = np.moveaxis(v, d, -1)
    s = np.sort(m, axis=-1)
    kth = s[..., k - 1:k]
    tied = (m == kth) | ((kth != kth) & (m != m)) if m.dtype.kind in "fc" else (m == kth)
    rows = np.argwhere(tied.sum(axis=-1) > 1)
    if not len(rows):
        return fast
    out = np.moveaxis(fast.copy(), d, -1)
    for r in map(tuple, rows):
        out[r + (0,)] = kthvalue_index(m[r].tolist(), k - 1)
    return np.moveaxis(out, -1, d)


def topk_indices_along(v: np.ndarray, k: int, d: int, largest: bool, sorted: bool,  # noqa: A002
                       fast: np.ndarray) -> np.ndarray:
    """torch's topk indices along axis d of v, given `fast` (a stable NumPy order, narrowed to k): rows
    where a tie among the k + 1 first values (or, unsorted, the algorithm's order) matters are redone."""
    n = v.shape[d]
    if k == 0 or n == 0:
        return fast
    m = np.moveaxis(v, d, -1)
    if not sorted and k > 1 and k * 64 > n:
        redo = np.ones(m.shape[:-1], bool)  # nth_element leaves its own order
    else:
        top = np.take_along_axis(m, np.moveaxis(fast, d, -1), axis=-1)
        if k < n:  # the next value: a tie with it decides which of them is selected
            nxt = np.sort(m, axis=-1)
            nxt = nxt[..., n - k - 1:n - k] if largest else nxt[..., k:k + 1]
            if largest and m.dtype.kind in "fc":  # (NumPy sorts NaN last; torch's largest puts it first)
                nan_count = np.isnan(m).sum(axis=-1, keepdims=True)
                srt = np.sort(np.where(np.isnan(m), -np.inf, m), axis=-1)
                pos = n - 1 - (k - nan_count)
                nxt = np.where(nan_count > k, np.nan, np.take_along_axis(srt, np.clip(pos, 0, n - 1), axis=-1))
            top = np.concatenate([top, nxt], axis=-1)
        redo = _equal_neighbours(top) if top.shape[-1] > 1 else np.zeros(m.shape[:-1], bool)
    rows = np.argwhere(redo)
    if not len(rows):
        return fast
    out = np.moveaxis(fast.copy(), d, -1)
    for r in map(tuple, rows):
        out[r] = topk_indices(m[r].tolist(), k, largest, sorted)
    return np.moveaxis(out, -1, d)
