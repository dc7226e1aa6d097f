"""A small CNN on real handwritten digits (scikit-learn's load_digits), written as ordinary PyTorch code.

    pip install -e ".[examples]"        # scikit-learn (the data), tqdm (progress), matplotlib (figures)
    python examples/digits_cnn.py [--epochs N] [--quick] [--out DIR] [--resume]

A DataLoader over the 1,347 training digits with random affine augmentation (funcgrad.vision.transforms),
Adam with a cosine learning-rate schedule, a checkpoint (model, optimizer, scheduler, history) saved after
every epoch and reloaded for the final evaluation (--resume continues from it), a tqdm bar per epoch, and
three figures in --out (default ./digits_cnn_out): loss and accuracy curves, the confusion matrix and the
misclassified test digits. Exits with status 1 if the test accuracy is below --floor (0.95).
Only the imports differ from PyTorch (`import torch`, `torchvision.transforms`).
"""
from __future__ import annotations

import os
import sys
import time

if __name__ == "__main__":
    # Small matrices: one BLAS thread is fastest (set before NumPy is imported; an explicit setting wins).
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import argparse  # noqa: E402

import numpy as np  # noqa: E402

import funcgrad as torch  # noqa: E402
from funcgrad import nn  # noqa: E402
from funcgrad.utils.data import DataLoader, Dataset  # noqa: E402
from funcgrad.vision import transforms  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _digits  # noqa: E402  (the data split, progress bar and figures shared with digits_dpsgd.py)


class Digits(Dataset):
    """8x8 digits as (1, 8, 8) float tensors in [0, 1], passed through `transform` (augmentation) if given."""

    def __init__(self, images: np.ndarray, labels: np.ndarray, transform=None):
        self.images = torch.tensor(images).unsqueeze(1)
        self.labels = torch.tensor(labels)
        self.transform = transform

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i):
        x = self.images[i]
        return (self.transform(x) if self.transform is not None else x), self.labels[i]


class DigitsCNN(nn.Module):
    def __init__(self, n_classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.MaxPool2d(2))                                   # 32 x 4 x 4
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.25), nn.Linear(32 * 4 * 4, 64), nn.ReLU(),
                                        nn.Linear(64, n_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


def evaluate(model: nn.Module, loader: DataLoader):
    """(accuracy, predictions) over loader, in eval mode and without recording gradients."""
    model.eval()
    preds = []
    with torch.no_grad():
        for x, _ in loader:
            preds.append(model(x).argmax(1).numpy())
    preds = np.concatenate(preds)
    return float(np.mean(preds == loader.dataset.labels.numpy())), preds


def make_model_and_optimizer(lr: float, epochs: int):
    model = DigitsCNN()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    return model, optimizer, scheduler


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="a short run (4 epochs): a smoke test")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--out", default=os.path.join(os.getcwd(), "digits_cnn_out"),
                    help="folder for the figures and the checkpoint (default ./digits_cnn_out)")
    ap.add_argument("--resume", action="store_true", help="continue from the checkpoint in --out")
    ap.add_argument("--floor", type=float, default=None,
                    help="exit 1 if the test accuracy is below this (default 0.95; 0.9 with --quick)")
    args = ap.parse_args(argv)
    epochs = 4 if args.quick else args.epochs
    floor = args.floor if args.floor is not None else (0.9 if args.quick else 0.95)
    os.makedirs(args.out, exist_ok=True)
    ckpt_path = os.path.join(args.out, "checkpoint.pt")

    torch.manual_seed(0)
    x_tr, y_tr, x_te, y_te = _digits.load_digits_split()
    # small random rotations, shifts of up to a pixel and rescaling, drawn afresh for every image of every epoch
    augment = transforms.RandomAffine(degrees=10, translate=(0.125, 0.125), scale=(0.9, 1.1))
    train = Digits(x_tr, y_tr, transform=augment)
    test = Digits(x_te, y_te)
    train_loader = DataLoader(train, batch_size=args.batch_size, shuffle=True,
                              generator=torch.Generator().manual_seed(0))
    train_eval_loader = DataLoader(Digits(x_tr, y_tr), batch_size=512)
    test_loader = DataLoader(test, batch_size=512)
    print(f"digits: {len(train)} training and {len(test)} test images of 8x8")

    model, optimizer, scheduler = make_model_and_optimizer(args.lr, epochs)
    loss_fn = nn.CrossEntropyLoss()
    history = {"loss": [], "train_acc": [], "test_acc": []}
    start = 0
    if args.resume and os.path.exists(ckpt_path):
        ckpt = torch.load(ckpt_path)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        history, start = ckpt["history"], ckpt["epoch"]
        print(f"resumed from {ckpt_path} after epoch {start}")

    t0 = time.time()
    for epoch in range(start + 1, epochs + 1):
        model.train()
        total = seen = 0.0
        bar = _digits.progress(train_loader, desc=f"epoch {epoch}/{epochs}")
        for x, y in bar:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            total += float(loss) * len(y)
            seen += len(y)
            if hasattr(bar, "set_postfix"):
                bar.set_postfix(loss=f"{total / seen:.4f}")
        scheduler.step()
        train_acc, _ = evaluate(model, train_eval_loader)
        test_acc, _ = evaluate(model, test_loader)
        history["loss"].append(total / seen)
        history["train_acc"].append(train_acc)
        history["test_acc"].append(test_acc)
        print(f"epoch {epoch}: loss {total / seen:.4f}  train accuracy {train_acc:.3f}  "
              f"test accuracy {test_acc:.3f}  lr {scheduler.get_last_lr()[0]:.2e}  ({time.time() - t0:.1f}s)",
              flush=True)
        torch.save({"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "history": history}, ckpt_path)

    # The final numbers come from the checkpoint on disk, loaded into fresh objects: what a later run would use.
    ckpt = torch.load(ckpt_path)
    restored, restored_opt, _ = make_model_and_optimizer(args.lr, epochs)
    restored.load_state_dict(ckpt["model"])
    restored_opt.load_state_dict(ckpt["optimizer"])
    acc, preds = evaluate(restored, test_loader)
    print(f"checkpoint {ckpt_path} (epoch {ckpt['epoch']}): test accuracy {acc:.3f}")

    paths = _digits.save_figures(args.out, ckpt["history"], x_te, y_te, preds, title="digits CNN")
    _digits.report(paths, args.out)
    if acc < floor:
        print(f"test accuracy {acc:.3f} is below the floor {floor}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
