"""funcgrad.distributed (torch.distributed): process groups and collectives on MPI.

Processes of one job exchange tensors through MPI (mpi4py and an MPI implementation, the `distributed`
extra: `pip install 'funcgrad[distributed]'` brings the MPICH wheel). Backends "gloo" and "mpi" both run
on MPI, so CPU scripts written for gloo run unchanged. A job is started by funcgrad's torchrun-compatible
launcher (`funcgrad-run --nproc-per-node N script.py`, or `python -m funcgrad.distributed.run`), by
`mpiexec`, or by the script itself (`mp.spawn` + MASTER_ADDR/MASTER_PORT; see `rendezvous`).

Layers: `process_group` (the backend seam: collectives on NumPy buffers over one communicator) <-
`_groups` (the default group, new_group, ranks) <- `collectives` (torch's functions on Tensors) <-
`nn.parallel.DistributedDataParallel`; `multiprocess` is JAX's face of the same job
(`jax.distributed.initialize`, `experimental.multihost_utils`). Without mpi4py the package imports, `is_available()` is False and
asking for a process group raises an ImportError naming the extra.
"""
from __future__ import annotations

from . import rendezvous  # noqa: F401
from ._groups import (default_pg_timeout, destroy_process_group, get_backend,  # noqa: F401
                      get_default_backend_for_device, get_global_rank,
                      get_group_rank, get_process_group_ranks, get_rank, get_world_size, init_process_group,
                      is_available, is_gloo_available, is_initialized, is_mpi_available, is_nccl_available,
                      is_torchelastic_launched, is_ucc_available, is_xccl_available, new_group)
from ._types import (Backend, DistBackendError, DistError, GradBucket, GroupMember, ReduceOp,  # noqa: F401
                     _NO_GROUP, _NoProcessGroupError, group)
from .collectives import (P2POp, all_gather, all_gather_into_tensor, all_gather_object, all_reduce,  # noqa: F401
                          all_to_all, all_to_all_single, barrier, batch_isend_irecv, broadcast,
                          broadcast_object_list, gather, gather_object, irecv, isend, monitored_barrier, recv,
                          recv_object_list, reduce, reduce_scatter, reduce_scatter_tensor, scatter,
                          scatter_object_list, send, send_object_list)
from .multiprocess import initialize, shutdown  # noqa: F401  (jax.distributed)
from .process_group import ProcessGroup, Work  # noqa: F401
from . import algorithms  # noqa: E402,F401  (ddp_comm_hooks)

__all__ = ["is_available", "is_initialized", "is_torchelastic_launched", "is_nccl_available",
           "is_gloo_available", "is_mpi_available", "is_ucc_available", "is_xccl_available",
           "init_process_group", "destroy_process_group", "get_rank", "get_world_size", "get_backend",
           "get_default_backend_for_device",
           "new_group", "get_process_group_ranks", "get_global_rank", "get_group_rank", "barrier",
           "monitored_barrier", "all_reduce", "reduce", "broadcast", "all_gather", "all_gather_into_tensor",
           "all_gather_object", "gather", "gather_object", "scatter", "scatter_object_list", "reduce_scatter",
           "reduce_scatter_tensor", "all_to_all", "all_to_all_single", "broadcast_object_list",
           "send_object_list", "recv_object_list", "send", "recv", "isend", "irecv", "P2POp",
           "batch_isend_irecv", "ReduceOp", "Backend", "group", "GroupMember", "ProcessGroup", "Work",
           "DistError", "DistBackendError", "GradBucket", "default_pg_timeout", "initialize", "shutdown", "algorithms"]
