"""Data-parallel training with DistributedDataParallel, and the same run in one process for comparison.

    funcgrad-run --nproc-per-node 2 examples/ddp_train.py [EPOCHS]  # N ranks, each on its shard of every batch
    python examples/ddp_train.py [EPOCHS]                            # one process, the whole batch

Both print the loss each epoch and a checksum of the final parameters: the N-rank run and the single-process
run agree up to float32 round-off (it grows over the Adam steps), since DDP averages the ranks' gradients of equal shards. A small MLP learns
to classify points of two interleaved spirals; DistributedSampler gives each rank its share of the data.
"""
import math
import os
import sys

import numpy as np

import funcgrad as torch
import funcgrad.distributed as dist
import funcgrad.nn as nn
from funcgrad.utils.data import DataLoader, DistributedSampler, TensorDataset


def spirals(n=2048, seed=0):
    g = np.random.default_rng(seed)
    t = g.uniform(0.25, 2 * math.pi, n // 2)
    arm = np.stack([t * np.cos(t), t * np.sin(t)], 1) / (2 * math.pi)
    x = np.concatenate([arm, -arm]) + g.normal(0, 0.02, (n, 2))
    y = np.concatenate([np.zeros(n // 2), np.ones(n // 2)]).astype(np.int64)
    return torch.tensor(x, dtype=torch.float32), torch.tensor(y)


def main(epochs=40, batch=128):
    distributed = "RANK" in os.environ
    if distributed:
        dist.init_process_group("gloo")
    rank, world = (dist.get_rank(), dist.get_world_size()) if distributed else (0, 1)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 2))
    net = nn.parallel.DistributedDataParallel(model) if distributed else model
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    data = TensorDataset(*spirals())
    # shuffle=False: every rank's shard of a global batch is a fixed slice, so the N-rank run equals the
    # single-process run batch for batch
    sampler = DistributedSampler(data, shuffle=False) if distributed else None
    loader = DataLoader(data, batch_size=batch // world, sampler=sampler, shuffle=False)
    for epoch in range(epochs):
        total = torch.zeros(())
        for x, y in loader:
            opt.zero_grad()
            loss = nn.functional.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
            total += loss.detach() * len(y)
        if distributed:
            dist.all_reduce(total)
        if rank == 0 and (epoch % 10 == 9 or epoch == epochs - 1):
            print(f"epoch {epoch + 1}: loss {total.item() / len(data):.4f}", flush=True)
    x, y = data.tensors
    acc = (model(x).argmax(1) == y).float().mean().item()
    checksum = sum(float(p.detach().abs().sum()) for p in model.parameters())
    if rank == 0:
        print(f"ranks {world}: accuracy {acc:.3f}, parameter checksum {checksum:.4f}", flush=True)
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main(epochs=int(sys.argv[1]) if len(sys.argv) > 1 else 40)
