"""funcgrad.nn.parallel (torch.nn.parallel): `DataParallel` (runs the wrapped module, as on a machine without
GPUs), `DistributedDataParallel` (gradients averaged over the ranks of a funcgrad.distributed process group)
and `data_parallel`."""
from __future__ import annotations

from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
