"""torch.cond on the tensor face, run eagerly: the branch pred picks is called with the operands."""
from __future__ import annotations

from . import Tensor

__all__ = ["cond"]


def cond(pred, true_fn, false_fn, operands=()):
    """torch.cond(pred, true_fn, false_fn, operands): `true_fn(*operands)` if pred else `false_fn(*operands)`.

    pred is a Python bool/int/float or a one-element Tensor. Eager code: the result is differentiable
    through the branch taken, like any other Tensor code. (Under funcgrad's functional `jit`, use
    `funcgrad.lax.cond`, which traces both branches.)"""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
        pred = bool(pred.item())
    elif isinstance(pred, (bool, int, float)):
        pred = bool(pred)
    else:
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    return true_fn(*operands) if pred else false_fn(*operands)
