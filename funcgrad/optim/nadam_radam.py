"""torch.optim.NAdam and RAdam, applying funcgrad.optim.functional's updates to tensors in place."""
from __future__ import annotations

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes

from . import functional as F
from .optimizer import Optimizer, _check_betas, _check_nonnegative, _functional_step, _lr, _step_tensor

__all__ = ["NAdam", "RAdam"]


class NAdam(Optimizer):
    """torch.optim.NAdam (update math: funcgrad.optim.functional.nadam_update)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        lr = _lr(lr)
        _check_nonnegative(lr=lr, eps=eps, weight_decay=weight_decay)
        _check_betas(betas)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    def step(self, closure=None):
        return _functional_step(self, closure, F.NADAM_DEFAULTS, F.nadam_update, lambda p, g: {
            "step": _step_tensor(), "mu_product": _fg.tensor(1.0, dtype=_fg.float32),
            "exp_avg": _fg.zeros_like(p.detach()), "exp_avg_sq": _fg.zeros_like(p.detach())})


class RAdam(Optimizer):
    """torch.optim.RAdam (update math: funcgrad.optim.functional.radam_update)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        lr = _lr(lr)
        _check_nonnegative(lr=lr, eps=eps, weight_decay=weight_decay)
        _check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      differentiable=differentiable))

    def step(self, closure=None):
        return _functional_step(self, closure, F.RADAM_DEFAULTS, F.radam_update, lambda p, g: {
            "step": _step_tensor(), "exp_avg": _fg.zeros_like(p.detach()),
            "exp_avg_sq": _fg.zeros_like(p.detach())})
