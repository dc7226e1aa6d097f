"""torch.optim.Adam and AdamW, applying funcgrad.optim.functional.adam_update to tensors in place."""
from __future__ import annotations

import funcgrad as _fg

from . import functional as F
from .optimizer import Optimizer, _as_array, _write

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=None):
        if isinstance(lr, _fg.Tensor):
            lr = float(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if decoupled_weight_decay is None:
            decoupled_weight_decay = self._decoupled
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure(closure)
        with _fg.no_grad():
            for group in self.param_groups:
                hp = {k: group[k] for k in F.ADAM_DEFAULTS}
                hp["decoupled_weight_decay"] = group.get("decoupled_weight_decay", self._decoupled)
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    st = self.state[p]
                    if len(st) == 0:
                        st["step"] = _fg.tensor(0.0, dtype=_fg.float32)
                        st["exp_avg"] = _fg.zeros_like(p.detach())
                        st["exp_avg_sq"] = _fg.zeros_like(p.detach())
                        if group["amsgrad"]:
                            st["max_exp_avg_sq"] = _fg.zeros_like(p.detach())
                    fstate = {"step": int(st["step"].item()), "exp_avg": _as_array(st["exp_avg"]),
                              "exp_avg_sq": _as_array(st["exp_avg_sq"])}
                    if group["amsgrad"]:
                        fstate["max_exp_avg_sq"] = _as_array(st["max_exp_avg_sq"])
                    new_p, new_st = F.adam_update(_as_array(p), _as_array(p.grad), fstate, hp)
                    _write(p, new_p)
                    st["step"].add_(1)
                    for k in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
                        if k in new_st:
                            _write(st[k], new_st[k])
        return loss


class AdamW(Adam):
    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

