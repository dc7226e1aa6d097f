"""torch.optim.SGD, applying funcgrad.optim.functional.sgd_update to tensors in place."""
from __future__ import annotations

import numpy as np

import funcgrad as _fg

from . import functional as F
from .optimizer import Optimizer, _as_array, _write, required

__all__ = ["SGD"]


class SGD(Optimizer):
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
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    st = self.state[p] if group["momentum"] != 0 else {}
                    buf = st.get("momentum_buffer")
                    fstate = {"step": 0 if buf is None else 1}
                    if group["momentum"] != 0:
                        fstate["momentum_buffer"] = _as_array(buf) if buf is not None else _as_array(p.grad)
                    new_p, new_st = F.sgd_update(_as_array(p), _as_array(p.grad), fstate, hp)
                    _write(p, new_p)
                    if group["momentum"] != 0:
                        if buf is None:
                            st["momentum_buffer"] = _fg.from_numpy(np.array(new_st["momentum_buffer"], copy=True))
                        else:
                            _write(buf, new_st["momentum_buffer"])
        return loss
