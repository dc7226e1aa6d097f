"""torch.nn.Buffer (mark a tensor to be registered as a buffer on assignment) and SyncBatchNorm (on one
process it is BatchNorm over the whole batch: there is no process group to synchronise with here)."""
from __future__ import annotations

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ...autograd import no_grad as _no_grad

from .batchnorm import _BatchNorm

__all__ = ["Buffer", "SyncBatchNorm"]


class _BufferMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return bool(getattr(obj, "_is_buffer", False))


class Buffer(metaclass=_BufferMeta):
    """Buffer(data, *, persistent=True): a tensor that Module.__setattr__ registers as a buffer."""

    def __new__(cls, data=None, *, persistent: bool = True):
        t = (data if data is not None else _fg.empty(0)).detach()
        t._is_buffer = True
        t._buffer_persistent = persistent
        return t


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
                if module.affine:
                    out.weight = module.weight
                    out.bias = module.bias
                out.running_mean = module.running_mean
                out.running_var = module.running_var
                out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
