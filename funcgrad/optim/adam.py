"""torch.optim.Adam and AdamW, applying funcgrad.optim.functional.adam_update to tensors in place."""
from __future__ import annotations

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes

from . import functional as F
from .optimizer import Optimizer, _check_betas, _check_nonnegative, _functional_step, _lr, _step_tensor

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam (Kingma & Ba), with weight_decay (L2, added to the gradient), amsgrad and maximize as torch's.

    Examples:
        >>> import funcgrad as torch
        >>> w = torch.nn.Parameter(torch.tensor([1.0, -1.0]))
        >>> opt = torch.optim.Adam([w], lr=0.1)
        >>> (w ** 2).sum().backward()
        >>> opt.step()
        >>> w
        Parameter containing:
        tensor([ 0.9000, -0.9000], requires_grad=True)
    """
    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=None):
        lr = _lr(lr)
        _check_nonnegative(lr=lr, eps=eps)
        _check_betas(betas)
        _check_nonnegative(weight_decay=weight_decay)
        if decoupled_weight_decay is None:
            decoupled_weight_decay = self._decoupled
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def step(self, closure=None):
        def init(p, group):
            st = {"step": _step_tensor(), "exp_avg": _fg.zeros_like(p.detach()),
                  "exp_avg_sq": _fg.zeros_like(p.detach())}
            if group["amsgrad"]:
                st["max_exp_avg_sq"] = _fg.zeros_like(p.detach())
            return st
        return _functional_step(self, closure, F.ADAM_DEFAULTS, F.adam_update, init)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): p -= lr * weight_decay * p before the step."""
    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

