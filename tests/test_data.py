"""funcgrad.utils.data: datasets, samplers, collation and DataLoader batching, compared with PyTorch."""
import collections

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.utils import data as fd

XN = np.arange(30, dtype=np.float32).reshape(10, 3)
YN = np.arange(10, dtype=np.int64)


def _to_np(b):
    if isinstance(b, (list, tuple)):
        return [_to_np(x) for x in b]
    if isinstance(b, dict):
        return {k: _to_np(v) for k, v in b.items()}
    if hasattr(b, "detach"):
        return b.detach().numpy()
    return b


def _assert_same(a, b):
    a, b = _to_np(a), _to_np(b)
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y)
    elif isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for k in a:
            _assert_same(a[k], b[k])
    else:
        assert isinstance(a, np.ndarray) == isinstance(b, np.ndarray), (a, b)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b


class MapDS:
    """A dataset whose items are dicts / tuples / numpy / Python numbers (for collation)."""

    def __init__(self, n=7):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": np.full((2,), i, np.float32), "y": i, "z": float(i) / 2, "s": f"s{i}",
                "t": (i, np.float64(i)), "b": i % 2 == 0}


@pytest.mark.parametrize("bs,drop_last", [(1, False), (3, False), (3, True), (4, True), (10, False), (16, False)])
def test_tensor_dataset_loader_matches_torch(bs, drop_last):
    torch = pytest.importorskip("torch")
    ours = fd.DataLoader(fd.TensorDataset(fg.tensor(XN), fg.tensor(YN)), batch_size=bs, drop_last=drop_last)
    theirs = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.tensor(XN), torch.tensor(YN)),
                                         batch_size=bs, drop_last=drop_last)
    assert len(ours) == len(theirs)
    a, b = list(ours), list(theirs)
    assert len(a) == len(b) == len(ours)
    for x, y in zip(a, b):
        _assert_same(x, y)


def test_default_collate_matches_torch():
    torch = pytest.importorskip("torch")
    ds = MapDS()
    for bs in (1, 3):
        for x, y in zip(fd.DataLoader(ds, batch_size=bs), torch.utils.data.DataLoader(ds, batch_size=bs)):
            _assert_same(x, y)
    Point = collections.namedtuple("Point", "a b")
    batch = [Point(1, np.zeros(2)), Point(2, np.ones(2))]
    ours, theirs = fd.default_collate(batch), torch.utils.data.default_collate(batch)
    assert isinstance(ours, Point)
    _assert_same(list(ours), list(theirs))
    batch = [[1.5, 2], [3.5, 4]]
    _assert_same(fd.default_collate(batch), torch.utils.data.default_collate(batch))
    batch = [np.float32(1), np.float32(2)]
    _assert_same(fd.default_collate(batch), torch.utils.data.default_collate(batch))
    _assert_same(fd.default_convert({"a": np.ones(2), "b": [np.int32(3)]}),
                 torch.utils.data.default_convert({"a": np.ones(2), "b": [np.int32(3)]}))
    with pytest.raises(TypeError):
        fd.default_collate([object(), object()])
    with pytest.raises(RuntimeError):
        fd.default_collate([[1, 2], [1]])


def test_batch_size_none_and_custom_collate():
    torch = pytest.importorskip("torch")
    ds = MapDS(4)
    for x, y in zip(fd.DataLoader(ds, batch_size=None), torch.utils.data.DataLoader(ds, batch_size=None)):
        _assert_same(x, y)
    dl = fd.DataLoader(ds, batch_size=2, collate_fn=lambda b: [d["y"] for d in b])
    assert list(dl) == [[0, 1], [2, 3]]


@pytest.mark.parametrize("bs,drop_last", [(3, False), (3, True)])
def test_samplers_match_torch(bs, drop_last):
    torch = pytest.importorskip("torch")
    ds = list(range(10))
    idx = [7, 2, 9, 0, 4]
    ours = list(fd.DataLoader(ds, batch_size=bs, drop_last=drop_last, sampler=idx))
    theirs = list(torch.utils.data.DataLoader(ds, batch_size=bs, drop_last=drop_last, sampler=idx))
    for x, y in zip(ours, theirs):
        _assert_same(x, y)
    assert len(ours) == len(theirs)
    bsamp = [[1, 2], [9], [3, 4, 5]]
    ours = list(fd.DataLoader(ds, batch_sampler=bsamp))
    theirs = list(torch.utils.data.DataLoader(ds, batch_sampler=bsamp))
    for x, y in zip(ours, theirs):
        _assert_same(x, y)
    assert list(fd.BatchSampler(fd.SequentialSampler(ds), bs, drop_last)) == \
        list(torch.utils.data.BatchSampler(torch.utils.data.SequentialSampler(ds), bs, drop_last))
    assert len(fd.BatchSampler(range(10), bs, drop_last)) == len(torch.utils.data.BatchSampler(range(10), bs,
                                                                                                drop_last))


def test_shuffle_is_a_reproducible_permutation():
    ds = fd.TensorDataset(fg.tensor(YN))
    def order(seed):
        g = fg.Generator().manual_seed(seed)
        return [int(v) for (b,) in fd.DataLoader(ds, batch_size=3, shuffle=True, generator=g) for v in b.tolist()]
    a, b, c = order(0), order(0), order(1)
    assert sorted(a) == list(range(10)) and a == b and a != c
    g = fg.Generator().manual_seed(5)
    dl = fd.DataLoader(ds, batch_size=4, shuffle=True, generator=g)
    e1, e2 = [x for (b,) in dl for x in b.tolist()], [x for (b,) in dl for x in b.tolist()]
    assert sorted(e1) == sorted(e2) == list(range(10)) and e1 != e2   # a new order each epoch
    fg.manual_seed(3)
    s1 = list(fd.RandomSampler(range(8)))
    fg.manual_seed(3)
    s2 = list(fd.RandomSampler(range(8)))
    assert s1 == s2 and sorted(s1) == list(range(8))
    r = list(fd.RandomSampler(range(5), replacement=True, num_samples=12, generator=fg.Generator()))
    assert len(r) == 12 and all(0 <= i < 5 for i in r)
    r = list(fd.RandomSampler(range(5), num_samples=12, generator=fg.Generator()))
    assert len(r) == 12 and sorted(r[:5]) == list(range(5)) and sorted(r[5:10]) == list(range(5))
    s = list(fd.SubsetRandomSampler([10, 20, 30], generator=fg.Generator()))
    assert sorted(s) == [10, 20, 30]


def test_random_split_lengths_and_fractions():
    torch = pytest.importorskip("torch")
    ds = list(range(10))
    parts = fd.random_split(ds, [3, 7], generator=fg.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [3, 7]
    assert sorted([parts[0][i] for i in range(3)] + [parts[1][i] for i in range(7)]) == ds
    again = fd.random_split(ds, [3, 7], generator=fg.Generator().manual_seed(0))
    assert parts[0].indices == again[0].indices
    for fr in ([0.3, 0.7], [0.33, 0.33, 0.34], [0.25, 0.25, 0.25, 0.25], [0.5, 0.5]):
        ours = [len(p) for p in fd.random_split(ds, fr, generator=fg.Generator())]
        theirs = [len(p) for p in torch.utils.data.random_split(ds, fr)]
        assert ours == theirs
    with pytest.raises(ValueError):
        fd.random_split(ds, [3, 3])
    with pytest.warns(UserWarning):
        fd.random_split(list(range(2)), [0.1, 0.1, 0.8])


def test_subset_concat_and_tensor_dataset():
    t = fd.TensorDataset(fg.tensor(XN), fg.tensor(YN))
    assert len(t) == 10
    x, y = t[2]
    np.testing.assert_array_equal(x.numpy(), XN[2])
    assert int(y) == 2
    with pytest.raises(AssertionError):
        fd.TensorDataset(fg.zeros(3), fg.zeros(4))
    s = fd.Subset(t, [4, 1])
    assert len(s) == 2 and int(s[0][1]) == 4
    c = fd.ConcatDataset([list(range(3)), list(range(10, 14))])
    assert len(c) == 7 and c[3] == 10 and c[-1] == 13 and [c[i] for i in range(7)] == [0, 1, 2, 10, 11, 12, 13]
    assert len(fd.Dataset.__add__(t, t)) == 20
    dl = fd.DataLoader(s, batch_size=2)
    (xb, yb), = list(dl)
    assert yb.tolist() == [4, 1]


class Stream(fd.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def test_iterable_dataset():
    torch = pytest.importorskip("torch")

    class TStream(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(7))

        def __len__(self):
            return 7

    for bs, dl in [(3, False), (3, True), (None, False)]:
        a = list(fd.DataLoader(Stream(7), batch_size=bs, drop_last=dl))
        b = list(torch.utils.data.DataLoader(TStream(), batch_size=bs, drop_last=dl))
        assert len(a) == len(b) == len(fd.DataLoader(Stream(7), batch_size=bs, drop_last=dl))
        for x, y in zip(a, b):
            _assert_same(x, y)
    with pytest.raises(ValueError):
        fd.DataLoader(Stream(3), shuffle=True)


def test_loader_argument_errors():
    ds = list(range(5))
    with pytest.raises(ValueError, match="num_workers"):
        fd.DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="prefetch_factor"):
        fd.DataLoader(ds, prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers"):
        fd.DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="multiprocessing_context"):
        fd.DataLoader(ds, multiprocessing_context="spawn")
    with pytest.raises(ValueError, match="multiprocessing_context"):
        fd.DataLoader(ds, num_workers=1, multiprocessing_context="nope")
    with pytest.raises(TypeError, match="multiprocessing_context"):
        fd.DataLoader(ds, num_workers=1, multiprocessing_context=3)
    with pytest.raises(ValueError, match="timeout"):
        fd.DataLoader(ds, timeout=-1)
    dl = fd.DataLoader(ds)
    with pytest.raises(ValueError, match="batch_size attribute should not be set"):
        dl.batch_size = 3
    with pytest.raises(ValueError):
        fd.DataLoader(ds, sampler=[0, 1], shuffle=True)
    with pytest.raises(ValueError):
        fd.DataLoader(ds, batch_sampler=[[0]], batch_size=2)
    with pytest.raises(ValueError):
        fd.DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(ValueError):
        fd.BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError):
        fd.RandomSampler([], generator=fg.Generator())


@pytest.mark.parametrize("n,reps,drop_last", [(10, 3, False), (10, 3, True), (2, 5, False), (12, 4, False),
                                              (7, 2, True)])
def test_distributed_sampler_partition_matches_torch(n, reps, drop_last):
    torch = pytest.importorskip("torch")
    from funcgrad.utils.data.distributed import DistributedSampler
    ds = list(range(n))
    ours_all = []
    for r in range(reps):
        ours = DistributedSampler(ds, num_replicas=reps, rank=r, shuffle=False, drop_last=drop_last)
        theirs = torch.utils.data.distributed.DistributedSampler(ds, num_replicas=reps, rank=r, shuffle=False,
                                                                 drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
        assert ours.total_size == theirs.total_size
        # shuffled: the same partition/padding rules applied to funcgrad's permutation for seed + epoch
        sh = DistributedSampler(ds, num_replicas=reps, rank=r, seed=3, drop_last=drop_last)
        sh.set_epoch(2)
        perm = fg.randperm(n, generator=fg.Generator().manual_seed(5)).tolist()
        padded = (perm * (reps + 1))[:sh.total_size] if not drop_last else perm[:sh.total_size]
        assert list(sh) == padded[r::reps] and len(sh) == len(theirs)
        ours_all += list(sh)
    assert set(ours_all) == (set(ds) if not drop_last else set(ours_all))
    s = DistributedSampler(ds, num_replicas=reps, rank=0, seed=1)
    e0 = list(s)
    assert list(s) == e0
    s.set_epoch(1)
    assert list(s) != e0 or n <= 3
    with pytest.raises(ValueError, match="Invalid rank"):
        DistributedSampler(ds, num_replicas=reps, rank=reps)


def test_weighted_random_sampler():
    torch = pytest.importorskip("torch")
    w = [0.0, 1.0, 3.0, 0.0]
    draws = list(fd.WeightedRandomSampler(w, 4000, generator=fg.Generator().manual_seed(0)))
    counts = np.bincount(draws, minlength=4)
    assert counts[0] == counts[3] == 0 and 2.5 < counts[2] / counts[1] < 3.5
    s = list(fd.WeightedRandomSampler([1, 1, 1, 5, 1], 5, replacement=False, generator=fg.Generator()))
    assert sorted(s) == [0, 1, 2, 3, 4] and len(fd.WeightedRandomSampler(w, 7)) == 7
    for bad, err in [(dict(weights=w, num_samples=0), ValueError), (dict(weights=w, num_samples=2, replacement=1),
                                                                    ValueError),
                     (dict(weights=[[1.0, 2.0]], num_samples=2), ValueError)]:
        with pytest.raises(err):
            torch.utils.data.WeightedRandomSampler(**bad)
        with pytest.raises(err):
            fd.WeightedRandomSampler(**bad)


def test_stack_and_chain_datasets_match_torch():
    torch = pytest.importorskip("torch")
    a, b = list(range(5)), [x * 10 for x in range(5)]
    for args, kwargs in [((a, b), {}), ((), {"a": a, "b": b})]:
        ours, theirs = fd.StackDataset(*args, **kwargs), torch.utils.data.StackDataset(*args, **kwargs)
        assert len(ours) == len(theirs) and ours[3] == theirs[3]
        assert ours.__getitems__([0, 4]) == theirs.__getitems__([0, 4])
        _assert_same(list(fd.DataLoader(ours, batch_size=2)), list(torch.utils.data.DataLoader(theirs, batch_size=2)))
    for bad in [((a, [1]), {}), ((), {}), ((a,), {"b": b})]:
        with pytest.raises(ValueError):
            torch.utils.data.StackDataset(*bad[0], **bad[1])
        with pytest.raises(ValueError):
            fd.StackDataset(*bad[0], **bad[1])
    chain = fd.ChainDataset([Stream(3), Stream(2)])
    assert list(chain) == [0, 1, 2, 0, 1] and len(chain) == 5
    assert isinstance(Stream(2) + Stream(1), fd.ChainDataset)
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(fd.ChainDataset([[1, 2]]))
