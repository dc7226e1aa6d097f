"""Which process of a multi-process job this is: one record below both faces.

funcgrad.distributed sets it when a job starts (torch's init_process_group or JAX's
distributed.initialize); the JAX face's process_index()/process_count()/devices() read it, and pmap's
collectives reach the other processes through the job's `reducer` (the default process group: an object
with `allreduce(a)` and `allgather(a)` on NumPy buffers, each returning `(result, work)`), so nothing below
funcgrad.distributed imports MPI. A single process is index 0 of 1, with no reducer.
"""
from __future__ import annotations

__all__ = ["index", "count", "set_job", "clear_job", "reducer"]

_job = [0, 1, None]


def index() -> int:
    return _job[0]


def count() -> int:
    return _job[1]


def set_job(process_index: int, process_count: int, reducer=None) -> None:
    _job[0], _job[1], _job[2] = int(process_index), int(process_count), reducer


def clear_job() -> None:
    _job[0], _job[1], _job[2] = 0, 1, None


def reducer():
    """The job's collectives (see the module docstring); RuntimeError when this process is not in a job."""
    if _job[2] is None:
        raise RuntimeError("collectives across processes need a job: call funcgrad.distributed.initialize() "
                           "(or torch.distributed.init_process_group) first")
    return _job[2]
