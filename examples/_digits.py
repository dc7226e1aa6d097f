"""What examples/digits_cnn.py and examples/digits_dpsgd.py share: the digits data set, a progress bar that
falls back to plain lines without tqdm, and the figures (drawn with matplotlib when it is installed).

The data is scikit-learn's `load_digits` (1,797 8x8 handwritten digits, shipped inside its wheel: nothing is
downloaded), split 75/25 with every class in proportion. Install the extras with
`pip install -e ".[examples]"`.
"""
from __future__ import annotations

import os
import sys
from typing import Iterable, List, Optional, Sequence

import numpy as np

try:
    from tqdm import tqdm as _tqdm
except ImportError:  # the plain fallback: one line per epoch, printed by the caller
    _tqdm = None

try:
    import matplotlib
    matplotlib.use("Agg")  # files only: no window, works without a display
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator
except ImportError:
    plt = None


def load_digits_split(seed: int = 0):
    """(x_train, y_train, x_test, y_test): images float32 in [0, 1] of shape (n, 8, 8), labels int64.

    Exits with a message when scikit-learn (the `examples` extra) is missing."""
    try:
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split
    except ImportError:
        sys.exit("this example reads scikit-learn's digits data set: pip install scikit-learn "
                 "(or pip install -e \".[examples]\")")
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.25, stratify=y, random_state=seed)
    return x_tr, y_tr, x_te, y_te


def progress(iterable: Iterable, desc: str, total: Optional[int] = None):
    """A tqdm bar over iterable when tqdm is installed (shown on a terminal only), else the iterable itself."""
    if _tqdm is None:
        return iterable
    return _tqdm(iterable, desc=desc, total=total, leave=False, disable=None, dynamic_ncols=True)


def confusion_matrix(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int = 10) -> np.ndarray:
    """Counts: row = true class, column = predicted class."""
    cm = np.zeros((n_classes, n_classes), np.int64)
    np.add.at(cm, (np.asarray(y_true), np.asarray(y_pred)), 1)
    return cm


def save_figures(out: str, history: dict, images: np.ndarray, y_true: np.ndarray, y_pred: np.ndarray,
                 title: str, dpi: int = 100) -> List[str]:
    """Write the loss/accuracy curves, the confusion matrix and a grid of misclassified test digits into out;
    the paths written (none, with a note, when matplotlib is missing).

    history holds per-epoch lists: "loss" (training loss), "train_acc" and "test_acc"."""
    if plt is None:
        print("matplotlib is not installed (pip install matplotlib): no figures written")
        return []
    os.makedirs(out, exist_ok=True)
    paths = []
    epochs = np.arange(1, len(history["loss"]) + 1)

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8, 3.2))
    ax1.plot(epochs, history["loss"], "o-", label="training loss")
    ax1.set_xlabel("epoch")
    ax1.set_ylabel("cross-entropy")
    ax1.set_yscale("log")
    ax1.legend()
    ax2.plot(epochs, history["train_acc"], "o-", label="train")
    ax2.plot(epochs, history["test_acc"], "s-", label="test")
    ax2.set_xlabel("epoch")
    ax2.set_ylabel("accuracy")
    ax2.legend(loc="lower right")
    for ax in (ax1, ax2):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.suptitle(title)
    fig.tight_layout()
    paths.append(_save(fig, os.path.join(out, "curves.png"), dpi))

    cm = confusion_matrix(y_true, y_pred)
    fig, ax = plt.subplots(figsize=(4.6, 4))
    im = ax.imshow(cm, cmap="Blues")
    for i in range(10):
        for j in range(10):
            if cm[i, j]:
                ax.text(j, i, str(cm[i, j]), ha="center", va="center", fontsize=7,
                        color="white" if cm[i, j] > cm.max() / 2 else "black")
    ax.set_xticks(range(10))
    ax.set_yticks(range(10))
    ax.set_xlabel("predicted")
    ax.set_ylabel("true")
    ax.set_title(f"{title}: confusion matrix\n(test accuracy {np.mean(y_true == y_pred):.3f})", fontsize=9)
    fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    paths.append(_save(fig, os.path.join(out, "confusion_matrix.png"), dpi))

    paths.append(misclassified_grid(os.path.join(out, "misclassified.png"), images, y_true, y_pred, title, dpi))
    return paths


def misclassified_grid(path: str, images: np.ndarray, y_true: np.ndarray, y_pred: np.ndarray, title: str,
                       dpi: int = 100, limit: int = 24) -> str:
    """Up to `limit` misclassified digits, each titled "true -> predicted"."""
    wrong = np.flatnonzero(np.asarray(y_true) != np.asarray(y_pred))[:limit]
    cols = 8
    rows = max(1, -(-len(wrong) // cols))
    fig, axes = plt.subplots(rows, cols, figsize=(cols * 1.0, rows * 1.15 + 0.4), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, k in zip(axes.flat, wrong):
        ax.imshow(images[k].reshape(8, 8), cmap="gray_r", vmin=0, vmax=1)
        ax.set_title(f"{y_true[k]} -> {y_pred[k]}", fontsize=8, color="C3")
    fig.suptitle(f"{title}: misclassified test digits ({int(np.sum(y_true != y_pred))} in all)"
                 if len(wrong) else f"{title}: no test digit misclassified", fontsize=9)
    fig.tight_layout()
    return _save(fig, path, dpi)


def _save(fig, path: str, dpi: int) -> str:
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def report(paths: Sequence[str], out: str) -> None:
    """Say where the figures went."""
    if paths:
        print(f"figures written to {os.path.abspath(out)}:")
        for p in paths:
            print(f"  {os.path.basename(p)}")
