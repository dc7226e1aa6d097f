"""torch.optim.Adadelta and Adamax, applying funcgrad.optim.functional's updates to tensors in place."""
from __future__ import annotations

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes

from . import functional as F
from .optimizer import Optimizer, _check_betas, _check_nonnegative, _functional_step, _lr, _step_tensor

__all__ = ["Adadelta", "Adamax"]


class Adadelta(Optimizer):
    """torch.optim.Adadelta (update math: funcgrad.optim.functional.adadelta_update)."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        lr = _lr(lr)
        _check_nonnegative(lr=lr, eps=eps, weight_decay=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    def step(self, closure=None):
        return _functional_step(self, closure, F.ADADELTA_DEFAULTS, F.adadelta_update, lambda p, g: {
            "step": _step_tensor(), "square_avg": _fg.zeros_like(p.detach()),
            "acc_delta": _fg.zeros_like(p.detach())})


class Adamax(Optimizer):
    """torch.optim.Adamax (update math: funcgrad.optim.functional.adamax_update)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        lr = _lr(lr)
        _check_nonnegative(lr=lr, eps=eps, weight_decay=weight_decay)
        _check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def step(self, closure=None):
        return _functional_step(self, closure, F.ADAMAX_DEFAULTS, F.adamax_update, lambda p, g: {
            "step": _step_tensor(), "exp_avg": _fg.zeros_like(p.detach()), "exp_inf": _fg.zeros_like(p.detach())})
