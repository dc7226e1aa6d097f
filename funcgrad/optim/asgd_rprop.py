"""torch.optim.ASGD and Rprop, applying funcgrad.optim.functional's updates to tensors in place."""
from __future__ import annotations

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes

from . import functional as F
from .optimizer import Optimizer, _check_nonnegative, _functional_step, _lr, _step_tensor

__all__ = ["ASGD", "Rprop"]


class ASGD(Optimizer):
    """torch.optim.ASGD, averaged SGD (update math: funcgrad.optim.functional.asgd_update)."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        lr = _lr(lr)
        _check_nonnegative(lr=lr, weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def step(self, closure=None):
        return _functional_step(self, closure, F.ASGD_DEFAULTS, F.asgd_update, lambda p, g: {
            "step": _step_tensor(), "eta": _fg.tensor(float(g["lr"]), dtype=_fg.float32),
            "mu": _fg.tensor(1.0, dtype=_fg.float32), "ax": _fg.zeros_like(p.detach())})


class Rprop(Optimizer):
    """torch.optim.Rprop, resilient backpropagation (update math: funcgrad.optim.functional.rprop_update)."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        lr = _lr(lr)
        _check_nonnegative(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    def step(self, closure=None):
        return _functional_step(self, closure, F.RPROP_DEFAULTS, F.rprop_update, lambda p, g: {
            "step": _step_tensor(), "prev": _fg.zeros_like(p.detach()),
            "step_size": _fg.full_like(p.grad.detach(), complex(g["lr"], g["lr"]) if p.is_complex()
                                       else float(g["lr"]))})
