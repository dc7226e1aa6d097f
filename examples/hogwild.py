"""Hogwild!: several processes train one model whose parameters live in shared memory, without locks.

Written as ordinary PyTorch code (`import funcgrad as torch`, `import funcgrad.multiprocessing as mp`): the
model's parameters are moved to shared memory with `model.share_memory()`, each process runs its own SGD
loop on its own shard of a generated classification problem, and all of them update the same parameters
in place. The parent then evaluates the shared model.

    python examples/hogwild.py [--procs 3] [--steps 150]

Prints the loss before and after; exits with status 1 unless the loss fell to below a third.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

if __name__ == "__main__":
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import funcgrad as torch  # noqa: E402
import funcgrad.multiprocessing as mp  # noqa: E402
import funcgrad.nn as nn  # noqa: E402
import funcgrad.nn.functional as F  # noqa: E402
from funcgrad.utils.data import DataLoader, TensorDataset  # noqa: E402


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.fc2 = nn.Linear(32, 3)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def make_data(n: int, seed: int):
    """Three Gaussian blobs in 8 dimensions."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 3, (n,), generator=g)
    centres = torch.tensor([[2.0] * 4 + [0.0] * 4, [0.0] * 4 + [2.0] * 4, [-2.0] * 8])
    return centres[y] + torch.randn(n, 8, generator=g), y


def train(rank: int, model: nn.Module, steps: int, seed: int) -> None:
    """One Hogwild worker: plain SGD on its own data, writing straight into the shared parameters."""
    torch.manual_seed(seed + rank)
    x, y = make_data(steps * 16, seed=100 + rank)
    loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
    for xb, yb in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(xb), yb).backward()
        optimizer.step()


def evaluate(model, x, y):
    with torch.no_grad():
        out = model(x)
        return float(F.cross_entropy(out, y)), float((out.argmax(1) == y).float().mean())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--procs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=150, help="SGD steps per process")
    ap.add_argument("--start-method", default="fork" if "fork" in mp.get_all_start_methods() else "spawn")
    args = ap.parse_args(argv)
    torch.manual_seed(0)
    model = Net()
    model.share_memory()                      # the parameters now live in shared memory
    x_test, y_test = make_data(1000, seed=7)
    loss0, acc0 = evaluate(model, x_test, y_test)
    print(f"before: loss {loss0:.4f}  accuracy {acc0:.3f}", flush=True)

    t0 = time.time()
    ctx = mp.get_context(args.start_method)
    processes = [ctx.Process(target=train, args=(rank, model, args.steps, 0)) for rank in range(args.procs)]
    for p in processes:
        p.start()
    for p in processes:
        p.join()
    if any(p.exitcode != 0 for p in processes):
        print(f"a training process failed: exit codes {[p.exitcode for p in processes]}")
        return 1
    loss1, acc1 = evaluate(model, x_test, y_test)
    print(f"after {args.procs} processes x {args.steps} steps ({time.time() - t0:.1f}s): loss {loss1:.4f}  "
          f"accuracy {acc1:.3f}")
    return 0 if loss1 < loss0 / 3 else 1


if __name__ == "__main__":
    sys.exit(main())
