"""DataLoader with worker processes: same batches as num_workers=0 (and as torch), seeding, errors, shutdown."""
import gc
import multiprocessing
import os
import random
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.utils import data as fd
from funcgrad.utils.data import _worker


def _child_pids():
    """Live child processes of this process, read from /proc (the resource tracker excepted)."""
    me = os.getpid()
    try:
        from multiprocessing import resource_tracker
        tracker = resource_tracker._resource_tracker._pid
    except Exception:
        tracker = None
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me and fields[0] != "Z" and int(d) != tracker:
            out.append(int(d))
    return out


def _assert_no_workers():
    deadline = time.monotonic() + 10
    while (multiprocessing.active_children() or _child_pids()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert multiprocessing.active_children() == []
    assert _child_pids() == []


def _flat(batches):
    out = []
    for b in batches:
        if isinstance(b, (list, tuple)):
            out.append([x.tolist() if hasattr(x, "tolist") else x for x in b])
        elif isinstance(b, dict):
            out.append({k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in b.items()})
        else:
            out.append(b.tolist() if hasattr(b, "tolist") else b)
    return out


class Squares(fd.Dataset):
    def __init__(self, n=23):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": np.full((2,), i * i, np.float32), "i": i, "name": f"s{i}"}


X = fg.arange(50.0).reshape(25, 2)
Y = fg.arange(25)


@pytest.mark.parametrize("kw", [dict(batch_size=4), dict(batch_size=4, drop_last=True, prefetch_factor=1),
                                dict(batch_size=None), dict(batch_size=3, shuffle=True),
                                dict(batch_size=5, in_order=False)])
def test_workers_give_the_same_batches_as_the_main_process(kw):
    kw = dict(kw)
    extra = {k: kw.pop(k) for k in ("prefetch_factor", "in_order") if k in kw}
    for ds in (fd.TensorDataset(X, Y), Squares()):
        ref = _flat(fd.DataLoader(ds, generator=fg.Generator().manual_seed(5), **kw))
        dl = fd.DataLoader(ds, num_workers=2, generator=fg.Generator().manual_seed(5), **kw, **extra)
        got = _flat(dl)
        assert len(dl) == len(got) == len(ref)
        if extra.get("in_order", True):
            assert got == ref
        else:
            assert sorted(map(repr, got)) == sorted(map(repr, ref))
    _assert_no_workers()


def test_workers_match_torch_values():
    torch = pytest.importorskip("torch")
    ds = Squares(10)
    ours = list(fd.DataLoader(ds, batch_size=3, num_workers=2))
    theirs = list(torch.utils.data.DataLoader(ds, batch_size=3))   # the values do not depend on workers
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a["x"].numpy(), b["x"].numpy())
        assert a["i"].tolist() == b["i"].tolist() and a["name"] == b["name"]
        assert str(a["i"].dtype).split(".")[-1] == str(b["i"].dtype).split(".")[-1]


class ShardedRange(fd.IterableDataset):
    """Yields range(start, end), split between workers with get_worker_info() (torch's recipe)."""

    def __init__(self, start, end, torch_mod=None):
        self.start, self.end, self.torch_mod = start, end, torch_mod

    def __iter__(self):
        info = (self.torch_mod.utils.data if self.torch_mod else fd).get_worker_info()
        if info is None:
            lo, hi = self.start, self.end
        else:
            per = -(-(self.end - self.start) // info.num_workers)
            lo = self.start + info.id * per
            hi = min(lo + per, self.end)
        return iter(range(lo, hi))

    def __len__(self):
        return self.end - self.start


@pytest.mark.parametrize("bs,drop_last", [(2, False), (3, True), (None, False)])
def test_iterable_dataset_sharding_matches_torch(bs, drop_last):
    torch = pytest.importorskip("torch")

    class TorchSharded(torch.utils.data.IterableDataset):
        def __init__(self):
            self.inner = ShardedRange(3, 20, torch)

        def __iter__(self):
            return iter(self.inner)

    ours = _flat(fd.DataLoader(ShardedRange(3, 20), batch_size=bs, drop_last=drop_last, num_workers=2))
    theirs = _flat(torch.utils.data.DataLoader(TorchSharded(), batch_size=bs, drop_last=drop_last, num_workers=2))
    assert ours == theirs
    assert fd.get_worker_info() is None
    _assert_no_workers()


class SeedProbe(fd.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = fd.get_worker_info()
        return {"id": info.id, "seed": info.seed, "py": random.random(), "fg": float(fg.rand(())),
                "np": float(np.random.rand()), "n": info.num_workers, "pid": os.getpid()}


def _record_init(worker_id):
    info = fd.get_worker_info()
    assert info.id == worker_id and isinstance(info.dataset, SeedProbe)
    with pytest.raises(RuntimeError):
        info.id = 3


def test_worker_seeding_and_worker_info():
    def run(seed):
        dl = fd.DataLoader(SeedProbe(), batch_size=None, num_workers=2, worker_init_fn=_record_init,
                           generator=fg.Generator().manual_seed(seed))
        return [{k: (v.item() if hasattr(v, "item") else v) for k, v in s.items()} for s in dl]

    a, b, c = run(1), run(1), run(2)
    base = fg.empty((), dtype=fg.int64).random_(generator=fg.Generator().manual_seed(1)).item()
    assert [s["id"] for s in a] == [0, 1] * 4 and all(s["n"] == 2 for s in a)
    assert all(s["seed"] == base + s["id"] for s in a)
    strip = lambda rs: [{k: v for k, v in r.items() if k != "pid"} for r in rs]   # noqa: E731
    assert strip(a) == strip(b)                                   # reproducible from the loader's generator
    assert [s["py"] for s in a] != [s["py"] for s in c]
    for key in ("py", "fg", "np"):                               # the two workers draw different streams
        assert a[0][key] != a[1][key]
    rnd = random.Random(base + 1)
    assert a[1]["py"] == rnd.random()                             # random is seeded with base_seed + id
    _assert_no_workers()


class Faulty(fd.Dataset):
    def __len__(self):
        return 12

    def __getitem__(self, i):
        if i == 7:
            raise ValueError(f"bad sample {i}")
        if i == 9:
            raise KeyError("missing")
        return i


def test_worker_exception_is_reraised_with_its_traceback():
    it = iter(fd.DataLoader(Faulty(), batch_size=2, num_workers=2))
    assert next(it).tolist() == [0, 1]
    with pytest.raises(ValueError) as ei:
        for _ in it:
            pass
    msg = str(ei.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 1.\nOriginal Traceback")
    assert "in __getitem__" in msg and "ValueError: bad sample 7" in msg
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 0"):
        next(it)   # the iterator keeps going after an error, as torch's does
    assert next(it).tolist() == [10, 11]
    with pytest.raises(StopIteration):
        next(it)
    del it, ei
    gc.collect()
    _assert_no_workers()


class Slow(fd.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(1)
        return i


def test_timeout_raises_and_shuts_down():
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0\.3 seconds"):
        list(fd.DataLoader(Slow(), num_workers=1, timeout=0.3))
    _assert_no_workers()


class Dies(fd.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        os._exit(3)


def test_dead_worker_is_reported(monkeypatch):
    monkeypatch.setattr(_worker, "MP_STATUS_CHECK_INTERVAL", 0.2)
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(fd.DataLoader(Dies(), num_workers=1))
    _assert_no_workers()


class Steady(fd.Dataset):
    def __len__(self):
        return 1000

    def __getitem__(self, i):
        time.sleep(0.05)
        return i


@pytest.mark.parametrize("timeout", [0, 10])
def test_killed_worker_is_reported_at_once(timeout):
    """The main process waits on the workers' sentinels beside the result queue, so a SIGKILLed worker is
    reported as soon as the results it sent are used up (torch: at once, from SIGCHLD), with or without
    a timeout; before, it took the 5 s status period (or the whole timeout)."""
    it = iter(fd.DataLoader(Steady(), num_workers=2, timeout=timeout))
    assert next(it).tolist() == [0]
    victim = it._workers[0].pid
    os.kill(victim, signal.SIGKILL)
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=rf"^DataLoader worker \(pid\(s\) {victim}\) exited unexpectedly$") as ei:
        for _ in range(1000):
            next(it)
    elapsed = time.monotonic() - t0
    assert elapsed < 1.0, f"a killed worker took {elapsed:.2f} s to be reported"
    assert str(ei.value.__cause__) == f"DataLoader worker (pid {victim}) is killed by signal: Killed. "
    del it, ei
    gc.collect()
    _assert_no_workers()


def test_worker_exit_code_is_the_cause_as_in_torch():
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) [\d, ]+\) exited unexpectedly") as ei:
        list(fd.DataLoader(Dies(), num_workers=1, timeout=10))
    assert time.monotonic() - t0 < 5
    assert re.fullmatch(r"DataLoader worker \(pid \d+\) exited unexpectedly with exit code 3\. Details are lost "
                        r"due to multiprocessing\. Rerunning with num_workers=0 may give better error trace\.",
                        str(ei.value.__cause__))
    _assert_no_workers()


def test_killed_worker_matches_torch():
    torch = pytest.importorskip("torch")
    it = iter(torch.utils.data.DataLoader(Steady(), num_workers=2))
    next(it)
    victim = it._workers[0].pid
    os.kill(victim, signal.SIGKILL)
    with pytest.raises(RuntimeError) as theirs:
        for _ in range(1000):
            next(it)
    del it
    it = iter(fd.DataLoader(Steady(), num_workers=2))
    next(it)
    victim2 = it._workers[0].pid
    os.kill(victim2, signal.SIGKILL)
    with pytest.raises(RuntimeError) as ours:
        for _ in range(1000):
            next(it)
    # (torch's SIGCHLD handler raises its signal message itself when the signal lands outside the wait for
    # a batch, and wrapped as the cause of "exited unexpectedly" when inside)
    t = theirs.value if theirs.value.__cause__ is None else theirs.value.__cause__
    assert type(ours.value.__cause__) is type(t)
    assert str(ours.value.__cause__).replace(str(victim2), "N") == str(t).replace(str(victim), "N")
    if theirs.value.__cause__ is not None:
        assert str(ours.value).replace(str(victim2), "N") == str(theirs.value).replace(str(victim), "N")
    del it
    gc.collect()


_UNPICKLABLE_SCRIPT = """
import sys, time
from funcgrad.utils import data as fd

class Bad(fd.Dataset):
    def __len__(self):
        return 6
    def __getitem__(self, i):
        if i == 3:
            return {BAD}
        return i

class LocalError(fd.Dataset):
    def __len__(self):
        return 4
    def __getitem__(self, i):
        class Local(Exception):
            pass
        raise Local("unsendable " + str(i))

ds = LocalError() if "{KIND}" == "raise" else Bad()
it = iter(fd.DataLoader(ds, batch_size=None, num_workers=2))
got = []
t0 = time.monotonic()
try:
    for x in it:
        got.append(int(x))
except Exception as e:
    print("RAISED", type(e).__name__, round(time.monotonic() - t0, 3), got)
    print(e)
    sys.exit(0)
print("NO ERROR", got)
"""


@pytest.mark.parametrize("kind, exc", [("lambda: i", "AttributeError"), ("(j for j in range(i))", "TypeError"),
                                       ("raise", "RuntimeError")])
def test_unpicklable_sample_raises_instead_of_hanging(kind, exc):
    """A batch (or a worker exception) that cannot be pickled used to be dropped by the queue's feeder
    thread, and the main process waited for it forever (torch's does, without a timeout). Run in a
    subprocess so that a regression fails in bounded time instead of hanging the suite."""
    script = _UNPICKLABLE_SCRIPT.replace("{KIND}", kind).replace("{BAD}", "None" if kind == "raise" else kind)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail("an unpicklable sample hung the DataLoader")
    out = r.stdout
    assert r.returncode == 0, r.stderr
    first = out.splitlines()[0].split(" ", 3)
    assert first[0] == "RAISED" and first[1] == exc, out
    assert float(first[2]) < 10
    if kind == "raise":
        assert "while sending its exception to the main process: it cannot be pickled" in out
        assert "unsendable 0" in out                                     # the worker's own traceback
    else:
        assert first[3] == "[0, 1, 2]"                                    # the batches before it arrive
        assert "in DataLoader worker process 1 while sending the batch to the main process: it cannot be " \
               "pickled" in out
        assert ("cannot pickle 'generator' object" if exc == "TypeError" else "Can't pickle local object") in out


def test_no_worker_outlives_its_iterator():
    ds = fd.TensorDataset(X, Y)
    for b in fd.DataLoader(ds, batch_size=2, num_workers=2):
        break
    gc.collect()
    _assert_no_workers()
    it = iter(fd.DataLoader(ds, batch_size=2, num_workers=2))
    next(it)
    assert len(multiprocessing.active_children()) == 2
    del it
    _assert_no_workers()


class Pids(fd.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return os.getpid()


def test_persistent_workers_are_reused_across_epochs():
    dl = fd.DataLoader(Pids(), batch_size=2, num_workers=2, persistent_workers=True)
    e1 = [b.tolist() for b in dl]
    e2 = [b.tolist() for b in dl]
    assert e1 == e2 and len({p for b in e1 for p in b}) == 2
    assert len(multiprocessing.active_children()) == 2
    it = iter(dl)
    next(it)                                        # a partial epoch, then a fresh one
    assert [b.tolist() for b in dl] == e1
    sh = fd.DataLoader(ShardedRange(0, 7), batch_size=2, num_workers=2, persistent_workers=True)
    assert _flat(sh) == _flat(sh) == [[0, 1], [4, 5], [2, 3], [6]]
    del dl, it, sh
    gc.collect()
    _assert_no_workers()


def test_spawn_context_and_shared_memory_batches():
    big = fd.TensorDataset(fg.arange(4 * 128 * 256, dtype=fg.float32).reshape(4, 128, 256))
    dl = fd.DataLoader(big, batch_size=2, num_workers=1, multiprocessing_context="spawn")
    out = list(dl)
    assert len(out) == 2 and out[0][0].is_shared()           # 256 KiB batches come through shared memory
    np.testing.assert_array_equal(out[1][0].numpy(), big.tensors[0][2:].numpy())
    small = list(fd.DataLoader(fd.TensorDataset(X), batch_size=5, num_workers=1))
    assert not small[0][0].is_shared()                        # tiny batches are copied through the pipe
    _assert_no_workers()


def test_pin_memory_warns_without_accelerator():
    with pytest.warns(UserWarning, match="pin_memory"):
        list(fd.DataLoader(fd.TensorDataset(X), batch_size=10, pin_memory=True))


def test_backward_compatibility_worker_init_fn_warns_as_torch():
    """torch.utils.data.backward_compatibility.worker_init_fn (old sharding pipelines pass it) only warns."""
    pytest.importorskip("torch")
    import torch.utils.data.backward_compatibility as tb
    import funcgrad.utils.data as fd
    messages = []
    for mod in (tb, fd.backward_compatibility):
        with pytest.warns(FutureWarning) as rec:
            assert mod.worker_init_fn(0) is None
        messages.append([str(r.message) for r in rec])
    assert messages[0] == messages[1]
