"""torch.optim.Adafactor and SparseAdam.

Adafactor (Shazeer & Stern 2018, in torch's form): second moments of a matrix gradient kept factored as a
row and a column running mean of g^2 (their outer product over the rows' mean estimates the full matrix),
a relative step size max(eps2, RMS(param)) * min(lr, 1/sqrt(t)), decay 1 - t^beta2_decay and update
clipping by RMS / d. SparseAdam is Adam that touches only the entries a sparse gradient holds; funcgrad
gradients are dense, so "held" means the rows (first-dim slices) with a non-zero entry, which gives torch's
results for embedding gradients unless a looked-up row's gradient is exactly zero."""
from __future__ import annotations

import math

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ..autograd import enable_grad as _enable_grad, no_grad as _no_grad

from .optimizer import Optimizer

__all__ = ["Adafactor", "SparseAdam"]


def _closure(closure):
    if closure is None:
        return None
    with _enable_grad():
        return closure()


class Adafactor(Optimizer):
    """torch.optim.Adafactor(params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0)."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, _fg.Tensor):
            lr = float(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))

    def step(self, closure=None):
        loss = _closure(closure)
        with _no_grad():
            for group in self.param_groups:
                lr, eps1, eps2 = group["lr"], group["eps"][0], group["eps"][1]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.grad.is_complex():
                        raise RuntimeError("Adafactor does not support complex parameters")
                    g = -p.grad if group["maximize"] else p.grad
                    st = self.state[p]
                    if not st:
                        st["step"] = _fg.tensor(0.0, dtype=_fg.float32)
                        if g.dim() > 1:
                            st["row_var"] = _fg.zeros(*g.shape[:-1], 1, dtype=g.dtype)
                            st["col_var"] = _fg.zeros(*g.shape[:-2], 1, g.shape[-1], dtype=g.dtype)
                        else:
                            st["variance"] = _fg.zeros_like(g)
                    e1 = _fg.finfo(p.dtype).eps if eps1 is None else eps1
                    st["step"] += 1
                    t = st["step"].item()
                    mix = t ** group["beta2_decay"]  # 1 - beta2_t
                    rho = min(lr, 1 / math.sqrt(t))
                    alpha = max(eps2, p.norm(2).item() / math.sqrt(p.numel())) * rho
                    if group["weight_decay"] != 0:
                        p.mul_(1 - lr * group["weight_decay"])
                    if g.dim() > 1:
                        row, col = st["row_var"], st["col_var"]
                        row.lerp_((g * g).mean(-1, keepdim=True), mix)
                        col.lerp_((g * g).mean(-2, keepdim=True), mix)
                        v = (row @ col) / row.mean(-2, keepdim=True).clamp(min=e1)
                    else:
                        st["variance"].lerp_(g * g, mix)
                        v = st["variance"].clone()
                    u = v.clamp(min=e1 * e1).rsqrt() * g
                    denom = max(1.0, u.norm(2).item() / (math.sqrt(u.numel()) * group["d"]))
                    p.add_(u, alpha=-alpha / denom)
        return loss


class SparseAdam(Optimizer):
    """torch.optim.SparseAdam (lazy Adam: moments and parameters change only where the gradient is held)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize: bool = False):
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize))

    def step(self, closure=None):
        loss = _closure(closure)
        with _no_grad():
            for group in self.param_groups:
                b1, b2 = group["betas"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    g = -p.grad if group["maximize"] else p.grad
                    st = self.state[p]
                    if not st:
                        st["step"] = 0
                        st["exp_avg"] = _fg.zeros_like(p)
                        st["exp_avg_sq"] = _fg.zeros_like(p)
                    st["step"] += 1
                    nz = g != 0
                    if g.dim() > 1:  # the rows a lookup reached (a sparse gradient holds whole rows)
                        nz = nz.reshape(g.shape[0], -1).any(1).reshape(-1, *([1] * (g.dim() - 1)))
                    held = nz.to(p.dtype)
                    m, v = st["exp_avg"], st["exp_avg_sq"]
                    m.add_((g - m) * (1 - b1) * held)
                    v.add_((g * g - v) * (1 - b2) * held)
                    bc1, bc2 = 1 - b1 ** st["step"], 1 - b2 ** st["step"]
                    step_size = group["lr"] * math.sqrt(bc2) / bc1
                    p.add_(m / (v.sqrt() + group["eps"]) * held, alpha=-step_size)
        return loss
