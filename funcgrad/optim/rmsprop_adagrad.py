"""torch.optim.RMSprop and Adagrad, applying funcgrad.optim.functional's updates to tensors in place."""
from __future__ import annotations

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes

from . import functional as F
from .optimizer import Optimizer, _check_nonnegative, _functional_step, _step_tensor

__all__ = ["RMSprop", "Adagrad"]


def _init_zeros(names):
    """State initialiser: a float32 step counter and zero buffers named by names(group)."""
    def init(p, group):
        st = {"step": _step_tensor()}
        st.update((n, _fg.zeros_like(p.detach())) for n in names(group))
        return st
    return init


class RMSprop(Optimizer):
    """RMSprop: divide the gradient by a running root mean square (centered, momentum optional)."""
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_nonnegative(lr=lr, eps=eps, weight_decay=weight_decay, momentum=momentum, alpha=alpha)
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    def step(self, closure=None):
        return _functional_step(self, closure, F.RMSPROP_DEFAULTS, F.rmsprop_update, _init_zeros(
            lambda g: ["square_avg"] + (["momentum_buffer"] if g["momentum"] > 0 else [])
            + (["grad_avg"] if g["centered"] else [])))


class Adagrad(Optimizer):
    """Adagrad: per-parameter step sizes from the accumulated squared gradients."""
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_nonnegative(lr=lr, eps=eps, weight_decay=weight_decay)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))
        # as torch: the state of every parameter exists from the start
        for group in self.param_groups:
            for p in group["params"]:
                st = self.state[p]
                st["step"] = _step_tensor()
                st["sum"] = _fg.full_like(p.detach(), group["initial_accumulator_value"])

    def step(self, closure=None):
        return _functional_step(self, closure, F.ADAGRAD_DEFAULTS, F.adagrad_update, lambda p, g: {
            "step": _step_tensor(), "sum": _fg.full_like(p.detach(), g["initial_accumulator_value"])})
