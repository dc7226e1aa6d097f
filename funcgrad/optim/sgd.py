"""torch.optim.SGD, applying funcgrad.optim.functional.sgd_update to tensors in place."""
from __future__ import annotations

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ..autograd import no_grad as _no_grad

from . import functional as F
from .optimizer import Optimizer, _apply_update, _apply_update_foreach, required

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
        with _no_grad():
            for group in self.param_groups:
                hp = {k: group[k] for k in F.SGD_DEFAULTS}
                momentum = group["momentum"] != 0
                # (the parameters with a gradient, by whether their momentum buffer is new: one update each)
                runs = {0: ([], [], []), 1: ([], [], [])}
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    step = 0
                    if momentum:
                        st = self.state[p]
                        if st.get("momentum_buffer") is None:  # torch's buffer starts as a copy of the first
                            st["momentum_buffer"] = _fg.zeros_like(p.detach())  # (decayed) gradient
                        else:
                            step = 1
                    ps, gs, sts = runs[step]
                    ps.append(p)
                    gs.append(g)
                    if momentum:
                        sts.append(st)
                for step, (ps, gs, sts) in runs.items():
                    if not ps or (group["foreach"] is not False and
                                  _apply_update_foreach(F.sgd_update, ps, gs, sts or None, hp, step)):
                        continue
                    for i, (p, g) in enumerate(zip(ps, gs)):  # as torch without momentum: no state at all
                        _apply_update(F.sgd_update, p, g, sts[i] if momentum else {}, hp, step=step)
        return loss
