"""Run on N ranks (mpiexec or the launcher): every collective and dtype of funcgrad.distributed against NumPy.
Exits non-zero (an assertion, aborting the job) on the first mismatch; rank 0 prints 'collectives ok N'."""
import numpy as np

import funcgrad as torch
import funcgrad.distributed as dist

dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()
DTYPES = [torch.float32, torch.float64, torch.float16, torch.int32, torch.int64, torch.int8, torch.uint8,
          torch.bool, torch.complex64] + ([torch.bfloat16] if torch.bfloat16 is not None else [])


def rank_value(rank, dtype, shape=(3, 4)):
    """The tensor rank `rank` contributes (same formula on every rank, so each can compute the expected)."""
    base = np.arange(np.prod(shape)).reshape(shape) % 5 + rank + 1
    if dtype == torch.bool:
        return torch.tensor((base + rank) % 2 == 0)
    if dtype.is_complex:
        return torch.tensor(base + 1j * rank, dtype=dtype)
    return torch.tensor(base, dtype=dtype)


def expect(t, want):
    got = t.to(torch.float64).numpy() if t.dtype not in (torch.complex64, torch.bool) else t.numpy()
    np.testing.assert_allclose(got, want, rtol=1e-3 if t.dtype in (torch.float16, torch.bfloat16) else 1e-6)


everyone = lambda dtype: [rank_value(k, dtype).numpy().astype(  # noqa: E731
    np.complex128 if dtype.is_complex else (bool if dtype == torch.bool else np.float64)) for k in range(n)]

for dtype in DTYPES:
    vals = everyone(dtype)
    ops = [dist.ReduceOp.SUM, dist.ReduceOp.MAX, dist.ReduceOp.MIN, dist.ReduceOp.PRODUCT]
    if dtype in (torch.int32, torch.int64, torch.uint8, torch.int8, torch.bool):
        ops += [dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR]
    if dtype.is_complex:
        ops = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT]
    for op in ops:
        t = rank_value(r, dtype)
        dist.all_reduce(t, op=op)
        if dtype == torch.bool:
            f = {dist.ReduceOp.SUM: np.logical_or, dist.ReduceOp.MAX: np.logical_or, dist.ReduceOp.BOR: np.logical_or,
                 dist.ReduceOp.MIN: np.logical_and, dist.ReduceOp.PRODUCT: np.logical_and,
                 dist.ReduceOp.BAND: np.logical_and, dist.ReduceOp.BXOR: np.logical_xor}[op]
            want = f.reduce(np.stack(vals))
        else:
            ints = [v.astype(np.int64) for v in vals] if not dtype.is_complex else vals
            want = {dist.ReduceOp.SUM: lambda: sum(vals), dist.ReduceOp.MAX: lambda: np.max(vals, 0),
                    dist.ReduceOp.MIN: lambda: np.min(vals, 0), dist.ReduceOp.PRODUCT: lambda: np.prod(vals, 0),
                    dist.ReduceOp.BAND: lambda: np.bitwise_and.reduce(ints), dist.ReduceOp.BOR:
                    lambda: np.bitwise_or.reduce(ints), dist.ReduceOp.BXOR: lambda: np.bitwise_xor.reduce(ints)}[op]()
            if dtype == torch.int8 or dtype == torch.uint8:  # wraps as the tensor's own dtype does
                want = np.asarray(want).astype(np.int64).astype(rank_value(0, dtype).numpy().dtype)
        expect(t, want)
    # async all_reduce, AVG on floats, reduce to rank n-1
    t = rank_value(r, dtype)
    work = dist.all_reduce(t, async_op=True)
    assert work.wait() and work.is_completed()
    if dtype != torch.bool:
        expect(t, sum(vals) if dtype not in (torch.int8, torch.uint8) else
               np.asarray(sum(vals)).astype(np.int64).astype(rank_value(0, dtype).numpy().dtype))
    if dtype.is_floating_point:
        t = rank_value(r, dtype)
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        expect(t, sum(vals) / n)
    # broadcast from the last rank; all_gather; gather to 0; scatter from the last rank; all_to_all_single
    t = rank_value(r, dtype)
    dist.broadcast(t, src=n - 1)
    expect(t, vals[n - 1])
    outs = [torch.zeros(3, 4, dtype=dtype) for _ in range(n)]
    dist.all_gather(outs, rank_value(r, dtype))
    for k in range(n):
        expect(outs[k], vals[k])
    big = torch.zeros(3 * n, 4, dtype=dtype)
    dist.all_gather_into_tensor(big, rank_value(r, dtype))
    expect(big, np.concatenate(vals))
    glist = [torch.zeros(3, 4, dtype=dtype) for _ in range(n)] if r == 0 else None
    dist.gather(rank_value(r, dtype), glist, dst=0)
    if r == 0:
        for k in range(n):
            expect(glist[k], vals[k])
    t = torch.zeros(3, 4, dtype=dtype)
    dist.scatter(t, [rank_value(k, dtype) for k in range(n)] if r == n - 1 else None, src=n - 1)
    expect(t, vals[r])
    src = torch.cat([rank_value(r, dtype)[:1] for _ in range(n)])  # block j goes to rank j
    dst = torch.zeros(n, 4, dtype=dtype)
    dist.all_to_all_single(dst, src)
    expect(dst, np.stack([vals[k][0] for k in range(n)]))

# reduce_scatter(_tensor), reduce to a non-zero rank, uneven all_to_all, non-contiguous tensors
x = torch.arange(2. * n * 3).reshape(2 * n, 3) + r
out = torch.zeros(2, 3)
dist.reduce_scatter_tensor(out, x)
want = sum(np.arange(2. * n * 3).reshape(2 * n, 3) + k for k in range(n))
expect(out, want[2 * r:2 * r + 2])
out2 = torch.zeros(2, 3)
dist.reduce_scatter(out2, list(x.chunk(n)))
expect(out2, want[2 * r:2 * r + 2])
t = torch.full((5,), float(r + 1))
dist.reduce(t, dst=n - 1, op=dist.ReduceOp.SUM)
expect(t, np.full(5, n * (n + 1) / 2) if r == n - 1 else np.full(5, r + 1.0))
nc = torch.arange(12.).reshape(3, 4).t()  # non-contiguous
nc = nc * (r + 1)
dist.all_reduce(nc)
expect(nc, np.arange(12.).reshape(3, 4).T * (n * (n + 1) / 2))
ins = [torch.full((k + 1,), float(r)) for k in range(n)]          # rank r sends k+1 values to rank k
outs = [torch.zeros(r + 1) for _ in range(n)]                     # rank r gets r+1 values from everyone
dist.all_to_all(outs, ins)
for k in range(n):
    expect(outs[k], np.full(r + 1, float(k)))
# point to point: a ring
t = torch.full((4,), float(r))
if r % 2 == 0:
    dist.send(t, dst=(r + 1) % n)
    got = torch.zeros(4)
    assert dist.recv(got, src=(r - 1) % n) == (r - 1) % n
else:
    got = torch.zeros(4)
    assert dist.recv(got) == (r - 1) % n
    dist.send(t, dst=(r + 1) % n)
expect(got, np.full(4, float((r - 1) % n)))
reqs = [dist.isend(torch.full((2,), float(r)), dst=(r + 1) % n), dist.irecv(got2 := torch.zeros(2), src=(r - 1) % n)]
for w in reqs:
    w.wait()
expect(got2, np.full(2, float((r - 1) % n)))
ops = [dist.P2POp(dist.isend, torch.full((2,), 10. + r), (r + 1) % n),
       dist.P2POp(dist.irecv, got3 := torch.zeros(2), (r - 1) % n)]
for w in dist.batch_isend_irecv(ops):
    w.wait()
expect(got3, np.full(2, 10. + (r - 1) % n))
# objects
objs = [None] * n
dist.all_gather_object(objs, {"rank": r, "s": "x" * r})
assert objs == [{"rank": k, "s": "x" * k} for k in range(n)], objs
lst = [r, "mine"] if r == 1 else [None, None]
dist.broadcast_object_list(lst, src=1)
assert lst == [1, "mine"], lst
g = [None] * n if r == 0 else None
dist.gather_object(("g", r), g, dst=0)
assert r != 0 or g == [("g", k) for k in range(n)]
o = [None]
dist.scatter_object_list(o, [k * k for k in range(n)] if r == 0 else None, src=0)
assert o == [r * r]
# groups: the even ranks
evens = list(range(0, n, 2))
pg = dist.new_group(evens)
if r in evens:
    assert dist.get_rank(pg) == evens.index(r) and dist.get_world_size(pg) == len(evens)
    t = torch.ones(2) * r
    dist.all_reduce(t, group=pg)
    expect(t, np.full(2, float(sum(evens))))
    t = torch.zeros(1) + r
    dist.broadcast(t, src=evens[-1], group=pg)
    expect(t, np.full(1, float(evens[-1])))
    assert dist.get_process_group_ranks(pg) == evens
else:
    assert pg == dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(pg) == -1
dist.barrier()
dist.monitored_barrier(timeout=30)
dist.barrier(async_op=True).wait()
dist.destroy_process_group()
if r == 0:
    print("collectives ok", n, flush=True)
