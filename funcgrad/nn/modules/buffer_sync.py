"""torch.nn.Buffer (mark a tensor to be registered as a buffer on assignment) and SyncBatchNorm (on one
process it is BatchNorm over the whole batch: there is no process group to synchronise with here)."""
from __future__ import annotations

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes

from .batchnorm import SyncBatchNorm  # noqa: F401  (defined where torch defines it)

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
