"""funcgrad.multiprocessing: tensors shared (not copied) between processes, spawn(), Hogwild, no leaks."""
import gc
import os
import time

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.multiprocessing as mp
import funcgrad.nn as nn


def _memfd_maps():
    with open("/proc/self/maps") as f:
        return sum("memfd:funcgrad" in line for line in f)


def _shm_entries():
    return sorted(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else []


def _memfd_fds():
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            n += "memfd:funcgrad" in os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass
    return n


# --- child bodies (module level so that 'spawn' children can import them) -------------------------------

def _child_roundtrip(shared_arg, q_in, q_out, go):
    """Write into a tensor passed as an argument and into one received from a queue; send one back; then
    report what the parent wrote into the one it sent back."""
    shared_arg.add_(1)
    x = q_in.get()
    x[1:] *= 10
    y = fg.arange(4, dtype=fg.int64)
    q_out.put(("done", x.is_shared(), shared_arg.is_shared()))
    q_out.put(y)
    go.wait()
    q_out.put(y.tolist())


def _check_roundtrip(ctx):
    q_in, q_out, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    arg = fg.zeros(2, 3)
    arg.share_memory_()
    x = fg.arange(5.0)
    assert not x.is_shared() and arg.is_shared()
    p = ctx.Process(target=_child_roundtrip, args=(arg, q_in, q_out, go))
    p.start()
    try:
        q_in.put(x)
        assert q_out.get(timeout=60) == ("done", True, True)
        np.testing.assert_array_equal(arg.numpy(), np.ones((2, 3), np.float32))   # child -> parent (argument)
        np.testing.assert_array_equal(x.numpy(), [0, 10, 20, 30, 40])           # child -> parent (queue)
        assert x.is_shared()
        y = q_out.get(timeout=60)
        assert y.dtype == fg.int64 and y.is_shared()
        y[0] = 7                                                                 # parent -> child
        go.set()
        assert q_out.get(timeout=60) == [7, 1, 2, 3]
    finally:
        p.join(60)
    assert p.exitcode == 0


def test_fork_shared_writes_both_ways_and_queue():
    _check_roundtrip(mp.get_context("fork"))


def test_spawn_shared_writes_both_ways_and_queue():
    _check_roundtrip(mp.get_context("spawn"))


def _child_views(q, out):
    a, b, c, p, flag = q.get()
    out.put((a.shape, a.stride(), a.tolist(), b.tolist(), c.tolist(), type(p).__name__, p.requires_grad,
             flag.dtype == fg.bool))
    a.fill_(-1)   # writes through a strided view land in the parent's base tensor


def test_queue_views_dtypes_and_parameters():
    ctx = mp.get_context("fork")
    base = fg.tensor(np.arange(12.0).reshape(3, 4))
    a = base[:, 1]                       # a strided view: sending it moves its base into shared memory too
    b = fg.tensor([[1, 2], [3, 4]], dtype=fg.int32).t()
    c = fg.zeros(0)
    p = nn.Parameter(fg.ones(2))
    flag = fg.tensor([True, False])
    q, out = ctx.Queue(), ctx.Queue()
    proc = ctx.Process(target=_child_views, args=(q, out))
    proc.start()
    q.put((a, b, c, p, flag))
    shape, stride, av, bv, cv, pname, prg, isbool = out.get(timeout=60)
    proc.join(60)
    assert shape == (3,) and stride == (4,) and av == [1.0, 5.0, 9.0]
    assert bv == [[1, 3], [2, 4]] and cv == [] and pname == "Parameter" and prg and isbool
    assert a.tolist() == [-1.0, -1.0, -1.0]
    assert base[:, 1].tolist() == [-1.0, -1.0, -1.0] and base[:, 0].tolist() == [0.0, 4.0, 8.0]


def test_non_leaf_refused_by_reducer():
    from multiprocessing.reduction import ForkingPickler
    with pytest.raises(RuntimeError, match="non-leaf"):
        ForkingPickler.dumps(fg.ones(2, requires_grad=True) * 2)


def test_share_memory_in_place_semantics():
    t = fg.arange(12.0).reshape(3, 4).t()          # non-contiguous
    ref = t.numpy().copy()
    out = t.share_memory_()
    assert out is t and t.is_shared() and t.stride() == (1, 4)
    np.testing.assert_array_equal(t.numpy(), ref)
    t.share_memory_()                               # idempotent
    t.add_(1)
    np.testing.assert_array_equal(t.numpy(), ref + 1)
    z = fg.zeros(0, 3).share_memory_()
    assert z.is_shared() and z.shape == (0, 3)
    w = fg.randn(3, requires_grad=True)
    (w * 2).sum().backward()
    w.share_memory_()
    assert w.requires_grad and w.is_leaf and w.is_shared()


def test_module_share_memory():
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    before = {k: v.clone() for k, v in m.state_dict().items()}
    assert m.share_memory() is m
    for k, v in m.state_dict().items():
        assert v.is_shared(), k
        np.testing.assert_array_equal(v.numpy(), before[k].numpy())
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in m.parameters())


# --- spawn() ----------------------------------------------------------------------------------------------

def _rank_body(rank, sleep_s, out):
    if rank == 1:
        raise ValueError(f"rank {rank} failed on purpose")
    out[rank] = 1.0
    time.sleep(sleep_s)


def test_spawn_child_exception_surfaces_and_others_terminated():
    out = fg.zeros(2).share_memory_()
    t0 = time.monotonic()
    with pytest.raises(mp.ProcessRaisedException) as ei:
        mp.spawn(_rank_body, args=(30.0, out), nprocs=2)
    assert time.monotonic() - t0 < 25
    e = ei.value
    assert e.error_index == 1 and isinstance(e.error_pid, int)
    assert "-- Process 1 terminated with the following error:" in str(e)
    assert "Traceback" in str(e) and "ValueError: rank 1 failed on purpose" in str(e)
    assert "_rank_body" in str(e)
    assert not mp.active_children()


def _ok_body(rank, out):
    out[rank] = rank + 1


def _exit_body(rank):
    os._exit(3)


def test_start_processes_join_false_and_exit_codes():
    out = fg.zeros(3).share_memory_()
    ctx = mp.start_processes(_ok_body, args=(out,), nprocs=3, join=False, start_method="fork")
    assert len(ctx.pids()) == 3
    deadline = time.monotonic() + 60
    while not ctx.join(timeout=1):
        assert time.monotonic() < deadline
    assert out.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with exit code 3") as ei:
        mp.start_processes(_exit_body, nprocs=1, start_method="fork")
    assert ei.value.exit_code == 3
    with pytest.warns(FutureWarning, match="start_method=spawn"):
        ctx = mp.spawn(_ok_body, args=(out,), nprocs=1, join=False, start_method="fork")
    assert ctx.join(60)


# --- Hogwild ----------------------------------------------------------------------------------------------

def _hogwild_worker(rank, model, x, y, steps):
    fg.manual_seed(rank)
    opt = fg.optim.SGD(model.parameters(), lr=0.1)
    for i in range(steps):
        idx = fg.randint(0, x.shape[0], (16,))
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x[idx]), y[idx])
        loss.backward()
        opt.step()


def test_hogwild_two_processes_train_one_shared_model():
    fg.manual_seed(0)
    x = fg.randn(128, 4)
    w_true = fg.tensor([[1.0], [-2.0], [0.5], [3.0]])
    y = x @ w_true + 0.25
    model = nn.Linear(4, 1)
    model.share_memory()
    w0 = model.weight.detach().clone()
    loss0 = float(nn.functional.mse_loss(model(x), y))
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_hogwild_worker, args=(r, model, x, y, 60)) for r in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    loss1 = float(nn.functional.mse_loss(model(x), y))
    assert not np.allclose(model.weight.detach().numpy(), w0.numpy())   # the parent sees the children's steps
    assert loss1 < 0.05 * loss0


# --- lifetime of shared memory ----------------------------------------------------------------------------

def _receive_then_crash(q):
    t = q.get()
    t.add_(1)
    os._exit(7)


def test_no_leaked_segments_even_after_a_crash():
    gc.collect()
    shm0, maps0, fds0 = _shm_entries(), _memfd_maps(), _memfd_fds()
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    t = fg.ones(1000)
    p = ctx.Process(target=_receive_then_crash, args=(q,))
    p.start()
    q.put(t)
    p.join(60)
    assert p.exitcode == 7
    assert t.is_shared() and float(t.sum()) == 2000.0
    assert _memfd_maps() > maps0
    assert _shm_entries() == shm0          # unnamed memory: nothing ever appears in /dev/shm
    q.close()
    q.join_thread()
    del t, q
    gc.collect()
    assert _memfd_maps() == maps0          # the last holder is gone: the memory is released
    assert _shm_entries() == shm0
    assert _memfd_fds() == fds0


def test_sharing_strategy_api():
    assert mp.get_sharing_strategy() == "file_descriptor"
    assert mp.get_all_sharing_strategies() == {"file_descriptor"}
    mp.set_sharing_strategy("file_descriptor")
    with pytest.raises(ValueError):
        mp.set_sharing_strategy("file_system")
    for name in ("Process", "Queue", "SimpleQueue", "Pool", "Event", "Lock", "get_context", "set_start_method",
                 "get_start_method", "cpu_count", "Pipe"):
        assert hasattr(mp, name), name
