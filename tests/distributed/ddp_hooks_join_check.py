"""DistributedDataParallel's communication hooks and join() on N ranks, against a single-process reference that
every rank computes itself. Hooks: the stock allreduce_hook equals DDP without a hook; fp16/bf16_compress_hook
within their precision; a custom hook sees every bucket once per backward, in order, the last one flagged.
join(): rank k has 2 + k batches; gradients are divided by the initial world size (or, with
divide_by_initial_world_size=False, by the ranks still training); throw_on_early_termination raises on every
rank. Rank 0 prints 'ddp hooks join ok N'."""
import numpy as np

import funcgrad as torch
import funcgrad.distributed as dist
import funcgrad.nn as nn
from funcgrad.distributed.algorithms.ddp_comm_hooks import default_hooks
from funcgrad.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()


def make_net():
    return nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 3))


def batch(step, k, per=4):
    g = np.random.default_rng(1000 * step + k)
    return (torch.from_numpy(g.standard_normal((per, 5)).astype(np.float32)),
            torch.from_numpy(g.standard_normal((per, 3)).astype(np.float32)))


def reference_step(ref, ref_opt, step, ranks, divisor):
    ref_opt.zero_grad()
    for k in ranks:
        x, y = batch(step, k)
        (nn.functional.mse_loss(ref(x), y) / divisor).backward()
    ref_opt.step()


def train(hook=None, steps=3, rtol=2e-5, atol=1e-6, bucket_cap_mb=0.0001):
    torch.manual_seed(7 + r)
    model = make_net()
    ddp = DDP(model, bucket_cap_mb=bucket_cap_mb)  # small buckets: several hook calls per backward
    if hook is not None:
        ddp.register_comm_hook(None, hook)
    torch.manual_seed(7)
    ref = make_net()
    opt, ref_opt = torch.optim.SGD(ddp.parameters(), lr=0.1), torch.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(steps):
        opt.zero_grad()
        x, y = batch(step, r)
        nn.functional.mse_loss(ddp(x), y).backward()
        opt.step()
        reference_step(ref, ref_opt, step, range(n), n)
        for p, q in zip(model.parameters(), ref.parameters()):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=rtol, atol=atol)
    return ddp


# stock hooks
train(default_hooks.allreduce_hook)
train(default_hooks.fp16_compress_hook, rtol=2e-3, atol=2e-3)
train(default_hooks.bf16_compress_hook, rtol=2e-2, atol=2e-2)

# a custom hook: sees each bucket once per backward, in index order, the last one flagged; sums (no averaging)
seen = []


def summing_hook(state, bucket):
    seen.append((bucket.index(), bucket.is_last(), [tuple(g.shape) for g in bucket.gradients()],
                 [tuple(p.shape) for p in bucket.parameters()]))
    state["calls"] += 1
    return dist.all_reduce(bucket.buffer(), async_op=True).get_future().then(lambda f: f.value()[0])


torch.manual_seed(3)
model = make_net()
ddp = DDP(model, bucket_cap_mb=0.0001)
state = {"calls": 0}
ddp.register_comm_hook(state, summing_hook)
x, y = batch(0, r)
nn.functional.mse_loss(ddp(x), y).backward()
idx = [s[0] for s in seen]
assert idx == list(range(len(idx))) and len(idx) > 1, idx
assert [s[1] for s in seen] == [False] * (len(idx) - 1) + [True]
assert all(s[2] == s[3] for s in seen)
torch.manual_seed(3)
ref = make_net()
for k in range(n):  # the hook sums: the reference sums the ranks' losses
    xk, yk = batch(0, k)
    nn.functional.mse_loss(ref(xk), yk).backward()
for p, q in zip(model.parameters(), ref.parameters()):
    np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=2e-5, atol=1e-6)
try:
    ddp.register_comm_hook(None, summing_hook)
    raise AssertionError("a second register_comm_hook must raise")
except RuntimeError as e:
    assert "only be called once" in str(e)

# join(): uneven inputs
for divide_initial in (True, False):
    torch.manual_seed(11)
    model = make_net()
    ddp = DDP(model)
    torch.manual_seed(11)
    ref = make_net()
    opt, ref_opt = torch.optim.SGD(ddp.parameters(), lr=0.1), torch.optim.SGD(ref.parameters(), lr=0.1)
    with ddp.join(divide_by_initial_world_size=divide_initial):
        for step in range(2 + r):
            opt.zero_grad()
            x, y = batch(step, r)
            nn.functional.mse_loss(ddp(x), y).backward()
            opt.step()
    for step in range(2 + n - 1):
        active = [k for k in range(n) if step < 2 + k]
        reference_step(ref, ref_opt, step, active, n if divide_initial else len(active))
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=2e-5, atol=1e-6,
                                   err_msg=f"join divide_by_initial_world_size={divide_initial}")

# join(throw_on_early_termination=True): every rank raises once one runs out
model = make_net()
ddp = DDP(model)
raised = False
try:
    with ddp.join(throw_on_early_termination=True):
        for step in range(2 + r):
            x, y = batch(step, r)
            nn.functional.mse_loss(ddp(x), y).backward()
except RuntimeError as e:
    raised = "exhausted" in str(e)
assert raised, "throw_on_early_termination must raise on every rank"
dist.barrier()
dist.destroy_process_group()
if r == 0:
    print("ddp hooks join ok", n, flush=True)
