"""torch.optim.swa_utils: stochastic weight averaging and EMA of a model's parameters (AveragedModel, the
get_ema_* averaging functions), the SWALR schedule and update_bn (recompute BatchNorm statistics)."""
from __future__ import annotations

import copy
import itertools
import math
import warnings

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from .. import nn as _nn
from ..autograd import no_grad as _no_grad

from .lr_scheduler import LRScheduler

__all__ = ["AveragedModel", "SWALR", "update_bn", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]


def get_ema_avg_fn(decay: float = 0.999):
    """avg_fn(averaged, current, num_averaged): the exponential moving average with `decay`."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """avg_fn(averaged, current, num_averaged): the running (equal-weight) mean."""
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


def get_ema_multi_avg_fn(decay: float = 0.999):
    avg = get_ema_avg_fn(decay)

    def ema_update(ema_params, current_params, num_averaged):
        for e, c in zip(ema_params, current_params):
            e.copy_(avg(e, c, num_averaged))
    return ema_update


def get_swa_multi_avg_fn():
    avg = get_swa_avg_fn()

    def swa_update(averaged_params, current_params, num_averaged):
        for a, c in zip(averaged_params, current_params):
            a.copy_(avg(a, c, num_averaged))
    return swa_update


class AveragedModel(_nn.Module):
    """A copy of `model` whose parameters (and buffers, with use_buffers=True) hold the running average of the
    model's over update_parameters() calls (the mean by default, or avg_fn / multi_avg_fn, e.g. an EMA). Without
    use_buffers the copy's buffers keep their values from construction: recompute BatchNorm statistics with
    update_bn, as in torch."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        self.register_buffer("n_averaged", _fg.tensor(0, dtype=_fg.int64))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model) -> None:
        mine = itertools.chain(self.module.parameters(), self.module.buffers()) if self.use_buffers \
            else self.parameters()
        mine = [p for p in mine if p is not self.n_averaged]
        theirs = list(itertools.chain(model.parameters(), model.buffers()) if self.use_buffers
                      else model.parameters())
        n = int(self.n_averaged.item())
        with _no_grad():
            if n == 0:
                for a, c in zip(mine, theirs):
                    a.copy_(c.detach())
            elif self.multi_avg_fn is not None:
                self.multi_avg_fn([a for a in mine if a.is_floating_point()],
                                  [c.detach() for a, c in zip(mine, theirs) if a.is_floating_point()],
                                  self.n_averaged)
            else:
                fn = self.avg_fn or get_swa_avg_fn()
                for a, c in zip(mine, theirs):
                    if a.is_floating_point() or a.is_complex():
                        a.copy_(fn(a.detach(), c.detach(), self.n_averaged.to(a.dtype) if self.avg_fn is None
                                   else self.n_averaged))
                    else:
                        a.copy_(c.detach())
            self.n_averaged += 1


def update_bn(loader, model, device=None) -> None:
    """One pass over loader (inputs, or (inputs, ...) tuples) in train mode with cumulative averaging, so that
    the BatchNorm layers' running statistics are those of the averaged weights."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _nn.modules.batchnorm._BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with _no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            model(batch)
    for module, m in momenta.items():
        module.momentum = m
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's learning rate to swa_lr over anneal_epochs (cosine or linear), then holds it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1) -> None:
        lrs = swa_lr if isinstance(swa_lr, (list, tuple)) else [swa_lr] * len(optimizer.param_groups)
        if len(lrs) != len(optimizer.param_groups):
            raise ValueError(f"swa_lr must have the same length as optimizer.param_groups: swa_lr has {len(lrs)}, "
                             f"optimizer.param_groups has {len(optimizer.param_groups)}")
        for lr, group in zip(lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}")
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(self.optimizer.param_groups, prev_lrs)]
