"""JAX's multi-process API on funcgrad.distributed: `jax.distributed.initialize/shutdown` and the helpers of
`jax.experimental.multihost_utils` (process_allgather, broadcast_one_to_all, sync_global_devices,
assert_equal).

`initialize()` joins the job the way init_process_group does (the launcher, mpiexec or srun are detected;
otherwise coordinator_address, num_processes and process_id say where the processes meet) and makes the
default process group, so both faces share one job. Afterwards `funcgrad.process_index()` and
`process_count()` give this process' place in it, `devices()` lists every process's CPU and
`local_devices()` this process's, and `pmap` maps this process's devices while the collectives inside it
(lax.psum, pmean, pmax, pmin, all_gather, ppermute, axis_index) act over every process's members, in
process order: the default process group is the job's reducer (_src/core/processes.py). These helpers
combine values across processes outside pmap.
"""
from __future__ import annotations

import os

import numpy as np

from .._src.core.tree_util import tree_flatten, tree_unflatten
from ..numpy import asarray as _wrap
from . import _groups
from .process_group import MAX, MIN

__all__ = ["initialize", "shutdown", "is_initialized", "process_allgather", "broadcast_one_to_all",
           "sync_global_devices", "assert_equal"]


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, local_device_ids=None, cluster_detection_method=None,
               initialization_timeout: int = 300, coordinator_bind_address=None) -> None:
    """jax.distributed.initialize: joins this process to its job (see the module docstring)."""
    if _groups.is_initialized():
        raise RuntimeError("distributed.initialize should only be called once")
    if coordinator_address is not None:
        host, _, port = coordinator_address.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"initialize: coordinator_address must be 'host:port', got {coordinator_address!r}")
        os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = host, port
    for var, value in (("SLURM_PROCID", process_id), ("SLURM_NTASKS", num_processes)):
        if value is None and var in os.environ and cluster_detection_method != "deactivate":
            value = int(os.environ[var])
            process_id, num_processes = (value, num_processes) if var == "SLURM_PROCID" else (process_id, value)
    _groups.init_process_group("mpi", timeout=float(initialization_timeout),
                               world_size=-1 if num_processes is None else num_processes,
                               rank=-1 if process_id is None else process_id)


def shutdown() -> None:
    """jax.distributed.shutdown: leaves the job (destroys the default process group)."""
    if _groups.is_initialized():
        _groups.destroy_process_group()


def is_initialized() -> bool:
    return _groups.is_initialized()


def _leaves(in_tree):
    leaves, treedef = tree_flatten(in_tree)
    return [np.asarray(x) for x in leaves], treedef


def process_allgather(in_tree, tiled: bool = False):
    """Every process' value of each leaf, stacked along a new leading axis (tiled: concatenated along axis 0),
    the same on every process."""
    leaves, treedef = _leaves(in_tree)
    pg = _groups._default() if _groups.is_initialized() else None
    out = []
    for a in leaves:
        stacked = a[None] if pg is None else pg.allgather(a)[0]
        out.append(_wrap(stacked.reshape((-1,) + a.shape[1:]) if tiled and a.ndim else stacked))
    return tree_unflatten(treedef, out)


def broadcast_one_to_all(in_tree, is_source: bool | None = None):
    """Process 0's value (or the one process with is_source=True) on every process."""
    leaves, treedef = _leaves(in_tree)
    if not _groups.is_initialized():
        return tree_unflatten(treedef, [_wrap(a) for a in leaves])
    pg = _groups._default()
    me = pg.rank()
    flags = pg.allgather(np.array(me == 0 if is_source is None else bool(is_source)))[0]
    sources = np.flatnonzero(flags)
    if len(sources) != 1:
        raise ValueError(f"broadcast_one_to_all: exactly one process must be the source; is_source is True on "
                         f"processes {sources.tolist()}")
    out = []
    for a in leaves:
        buf = np.ascontiguousarray(a).copy()
        pg.broadcast(buf, int(sources[0]))
        out.append(_wrap(buf))
    return tree_unflatten(treedef, out)


def sync_global_devices(name: str) -> None:
    """A barrier across processes that also checks every process reached the same named point."""
    if not _groups.is_initialized():
        return
    names = _groups._default().allgather_object(name)
    if len(set(names)) != 1:
        raise AssertionError(f"sync_global_devices: the processes reached different points: {names}")


def assert_equal(in_tree, fail_message: str = "") -> None:
    """Raises AssertionError unless every process holds the same value of every leaf."""
    leaves, _ = _leaves(in_tree)
    if not _groups.is_initialized():
        return
    pg = _groups._default()
    for a in leaves:
        lo = pg.allreduce(a, MIN)[0]
        hi = pg.allreduce(a, MAX)[0]
        if not np.array_equal(lo, hi, equal_nan=True):
            raise AssertionError(f"assert_equal: the processes hold different values. {fail_message}")
