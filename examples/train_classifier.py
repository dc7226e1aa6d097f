"""Train a small CNN on generated 16x16 shapes, written as ordinary PyTorch code on top of funcgrad.

Four classes (horizontal bar, vertical bar, hollow square, diagonal line), drawn at random positions with
noise. The script uses the torch face only: `import funcgrad as torch`, nn.Module, DataLoader over a
TensorDataset (with worker processes), Adam, a StepLR schedule, and torch.save/torch.load of a checkpoint
that is reloaded into a fresh model and evaluated.

    python examples/train_classifier.py [--epochs 4] [--n 2000] [--workers 2]

Prints loss and accuracy per epoch; exits with status 1 if the final test accuracy is below 90%. The same file
run with torch in funcgrad's place prints the same losses (tests/test_examples_match_torch.py): same initial
weights and shuffles from the same seed, and the float32 forward pass bit for bit; the backward pass's reductions
(a bias gradient's sum over batch and pixels) round in another order, which Adam amplifies to ~1e-5 relative
after a few hundred steps.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

if __name__ == "__main__":
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import funcgrad as torch  # noqa: E402
import funcgrad.nn as nn  # noqa: E402
import funcgrad.nn.functional as F  # noqa: E402
from funcgrad.utils.data import DataLoader, TensorDataset  # noqa: E402

CLASSES = ("hbar", "vbar", "square", "diagonal")


def make_shapes(n: int, seed: int):
    """n noisy 1x16x16 images of the four shapes and their labels (numpy, vectorised per class)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 0.3, (n, 16, 16)).astype(np.float32)
    y = rng.integers(0, 4, n)
    r, c = rng.integers(2, 10, n), rng.integers(2, 10, n)   # top-left corner of a 6x6 box
    L = rng.integers(4, 7, n)                               # shape size
    rows, cols = np.arange(16)[None, :, None], np.arange(16)[None, None, :]
    R, C, LL = r[:, None, None], c[:, None, None], L[:, None, None]
    in_r, in_c = (rows >= R) & (rows < R + LL), (cols >= C) & (cols < C + LL)
    masks = {
        0: (rows == R + LL // 2) & in_c,
        1: (cols == C + LL // 2) & in_r,
        2: in_r & in_c & ((rows == R) | (rows == R + LL - 1) | (cols == C) | (cols == C + LL - 1)),
        3: in_r & in_c & (rows - R == cols - C),
    }
    for k, m in masks.items():
        x += np.where((y[:, None, None] == k) & m, 1.0, 0.0).astype(np.float32)
    return torch.from_numpy(x[:, None]), torch.from_numpy(y.astype(np.int64))


class SmallCNN(nn.Module):
    def __init__(self, n_classes: int = 4):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(16 * 4 * 4, n_classes)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        return self.fc(torch.flatten(x, 1))


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for xb, yb in loader:
            correct += int((model(xb).argmax(1) == yb).sum())
            total += yb.shape[0]
    return correct / total


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--n", type=int, default=2000, help="training images")
    ap.add_argument("--workers", type=int, default=2, help="DataLoader worker processes")
    ap.add_argument("--batch-size", type=int, default=64)
    args = ap.parse_args(argv)
    torch.manual_seed(0)
    t0 = time.time()
    train = TensorDataset(*make_shapes(args.n, seed=1))
    test = TensorDataset(*make_shapes(max(args.n // 4, 200), seed=2))
    train_loader = DataLoader(train, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                              persistent_workers=args.workers > 0, generator=torch.Generator().manual_seed(0))
    test_loader = DataLoader(test, batch_size=256)

    model = SmallCNN()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.3)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(1, args.epochs + 1):
        model.train()
        total_loss = seen = 0
        for xb, yb in train_loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            total_loss += loss.item() * yb.shape[0]
            seen += yb.shape[0]
        scheduler.step()
        acc = evaluate(model, test_loader)
        print(f"epoch {epoch}: loss {total_loss / seen:.8f}  test accuracy {acc:.3f}  "
              f"lr {scheduler.get_last_lr()[0]:.2e}  ({time.time() - t0:.1f}s)", flush=True)

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "checkpoint.pt")
        torch.save({"epoch": args.epochs, "model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)
        ckpt = torch.load(path)
    restored = SmallCNN()
    restored.load_state_dict(ckpt["model"])
    torch.optim.Adam(restored.parameters(), lr=1e-2).load_state_dict(ckpt["optimizer"])
    final = evaluate(restored, test_loader)
    print(f"reloaded checkpoint (epoch {ckpt['epoch']}): final accuracy: {final:.3f}")
    return 0 if final >= 0.9 else 1


if __name__ == "__main__":
    sys.exit(main())
