"""torch.utils.data.backward_compatibility: the worker_init_fn that old DataLoader pipelines passed to shard
their datasets. The DataLoader shards in every worker itself, so calling it only warns, as torch's does."""
from __future__ import annotations

import warnings


def worker_init_fn(worker_id: int) -> None:
    """Does nothing but warn (FutureWarning): the DataLoader applies sharding in every worker itself."""
    warnings.warn("Usage of `backward_compatibility.worker_init_fn` is deprecated as `DataLoader` automatically "
                  "applies sharding in every worker", FutureWarning, stacklevel=2)
