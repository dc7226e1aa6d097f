"""DistributedDataParallel on N ranks equals one process training on the concatenated batch.
Each rank also trains the single-process reference itself and compares parameters after every step.
Variants: plain; no_sync gradient accumulation; find_unused_parameters with a branch unused on some ranks;
small buckets (many Allreduces in flight). Rank 0 prints 'ddp ok N'."""
import numpy as np

import funcgrad as torch
import funcgrad.distributed as dist
import funcgrad.nn as nn
from funcgrad.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 16), nn.ReLU())
        self.head = nn.Linear(16, 2)
        self.extra = nn.Linear(16, 2)  # used only when the flag says so
        self.register_buffer("steps", torch.zeros(()))

    def forward(self, x, use_extra=False):
        h = self.body(x)
        return self.head(h) + (self.extra(h) if use_extra else 0)


def batches(step, per_rank=4):
    g = np.random.default_rng(100 + step)
    x = g.standard_normal((per_rank * n, 5)).astype(np.float32)
    y = g.standard_normal((per_rank * n, 2)).astype(np.float32)
    return torch.from_numpy(x), torch.from_numpy(y)


def run(variant):
    torch.manual_seed(1234 + r)  # different on every rank: DDP's construction must broadcast rank 0's
    model = Net()
    ddp = DDP(model, bucket_cap_mb=0.0005 if variant == "small_buckets" else None,
              find_unused_parameters=(variant == "unused"))
    torch.manual_seed(1234)  # the reference starts from rank 0's initial parameters
    ref = Net()
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    per = 4
    for step in range(4):
        x, y = batches(step, per)
        mine = slice(r * per, (r + 1) * per)
        def use_extra(k):  # with "unused", the extra head is used on some ranks only (or none, at step 2)
            return variant != "unused" or (step != 2 and (step + k) % 2 == 1)
        opt.zero_grad()
        ref_opt.zero_grad()
        if variant == "no_sync":  # two micro-batches, the first without synchronisation
            half = per // 2
            with ddp.no_sync():
                nn.functional.mse_loss(ddp(x[mine][:half], True), y[mine][:half]).mul(0.5).backward()
            nn.functional.mse_loss(ddp(x[mine][half:], True), y[mine][half:]).mul(0.5).backward()
            for k in range(n):  # the reference: the same micro-batch losses, averaged over ranks
                for part in (slice(k * per, k * per + half), slice(k * per + half, (k + 1) * per)):
                    (nn.functional.mse_loss(ref(x[part], True), y[part]) * 0.5 / n).backward()
        else:
            nn.functional.mse_loss(ddp(x[mine], use_extra(r)), y[mine]).backward()
            # DDP averages the ranks' gradients: the reference averages the per-rank losses
            for k in range(n):
                part = slice(k * per, (k + 1) * per)
                (nn.functional.mse_loss(ref(x[part], use_extra(k)), y[part]) / n).backward()
        for (name, p), q in zip(model.named_parameters(), ref.parameters()):
            if q.grad is None:
                assert p.grad is None, (variant, step, name)
            else:
                np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=2e-5, atol=1e-6,
                                           err_msg=f"{variant} step {step} {name}")
        opt.step()
        ref_opt.step()
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=2e-5, atol=1e-6,
                                   err_msg=f"{variant} final {name}")
    assert list(ddp.state_dict()) == ["module." + k for k in model.state_dict()]


for variant in ("plain", "no_sync", "unused", "small_buckets"):
    run(variant)
dist.destroy_process_group()
if r == 0:
    print("ddp ok", n, flush=True)
