"""torch.optim.SGD, applying funcgrad.optim.functional.sgd_update to tensors in place."""
from __future__ import annotations

import funcgrad as _fg

from . import functional as F
from .optimizer import Optimizer, _apply_update, required

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, with momentum (dampening, nesterov), weight decay and maximize as torch's.

    Examples:
        >>> import funcgrad as torch
        >>> w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
        >>> opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> (w ** 2).sum().backward()
        >>> opt.step()
        >>> w
        Parameter containing:
        tensor([0.8000, 1.6000], requires_grad=True)
    """
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure(closure)
        with _fg.no_grad():
            for group in self.param_groups:
                hp = {k: group[k] for k in F.SGD_DEFAULTS}
                momentum = group["momentum"] != 0
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if not momentum:  # as torch: no state at all
                        _apply_update(F.sgd_update, p, g, {}, hp, step=0)
                        continue
                    st = self.state[p]
                    first = st.get("momentum_buffer") is None
                    if first:  # torch's buffer starts as a copy of the first (decayed) gradient
                        st["momentum_buffer"] = _fg.zeros_like(p.detach())
                    _apply_update(F.sgd_update, p, g, st, hp, step=0 if first else 1)
        return loss
