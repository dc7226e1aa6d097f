"""funcgrad.nn.parallel (torch.nn.parallel): `DataParallel` (runs the wrapped module, as on a machine without
GPUs), `DistributedDataParallel` (needs a process group, which funcgrad's single-process build cannot make:
constructing one raises as torch does with none initialized) and `data_parallel`."""
from __future__ import annotations

from ..modules import Module
from ... import distributed as _dist
from .data_parallel import DataParallel, data_parallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


class DistributedDataParallel(Module):
    """torch.nn.parallel.DistributedDataParallel. Wrapping a module needs a default process group
    (`torch.distributed.init_process_group`); funcgrad has none, so construction raises the error torch
    raises when none has been initialized (a ValueError, also a RuntimeError). Single-process programs
    use the module itself, or `DataParallel`."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, **kwargs):
        super().__init__()
        raise _dist._NoProcessGroupError(_dist._NO_GROUP)
