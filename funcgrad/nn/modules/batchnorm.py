"""Batch normalisation with running statistics."""
from __future__ import annotations

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ...autograd import no_grad as _no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ['BatchNorm1d', 'BatchNorm2d', 'BatchNorm3d', 'SyncBatchNorm']


def _affine_parameters(module: Module, shape, affine: bool, bias: bool, dtype) -> None:
    """A normalisation layer's learnt per-feature scale `weight` (ones) and shift `bias` (zeros), registered as
    None when affine (or bias) is off."""
    module.register_parameter("weight", Parameter(_fg.ones(shape, dtype=dtype)) if affine else None)
    module.register_parameter("bias", Parameter(_fg.zeros(shape, dtype=dtype)) if affine and bias else None)


def _reset_affine(module: Module) -> None:
    """weight back to ones and bias to zeros, where the layer has them."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class _NormBase(Module):
    """Shared by batch and instance norm: affine parameters and (optionally) running statistics."""
    _dims = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, bias=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _affine_parameters(self, num_features, affine, bias, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", _fg.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", _fg.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", _fg.tensor(0, dtype=_fg.long))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input):
        if input.dim() not in self._dims:
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self._dims)} input (got {input.dim()}D "
                             "input)")

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        eaf = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with _no_grad():
                self.num_batches_tracked.add_(1)
            eaf = 1.0 / float(self.num_batches_tracked.item()) if self.momentum is None else self.momentum
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_running = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_running else None,
                            self.running_var if use_running else None, self.weight, self.bias, bn_training,
                            eaf, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over (N, C) or (N, C, L) input, with running statistics for eval mode."""
    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over (N, C, H, W) input, with running statistics for eval mode."""
    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalisation over (N, C, D, H, W) input, with running statistics for eval mode."""
    _dims = (5,)


class SyncBatchNorm(_BatchNorm):
    """BatchNorm over (N, C, *) inputs; with a single process its statistics are the local batch's."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device=device, dtype=dtype)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """module with every BatchNorm*d replaced by a SyncBatchNorm holding the same parameters and buffers."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats,
                      process_group)
            with _no_grad():
                stats = ("running_mean", "running_var", "num_batches_tracked")
                for name in (("weight", "bias") if module.affine else ()) + stats:
                    setattr(out, name, getattr(module, name))
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
