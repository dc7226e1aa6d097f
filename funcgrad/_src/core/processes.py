"""Which process of a multi-process job this is: one record below both faces.

funcgrad.distributed sets it when a job starts (torch's init_process_group or JAX's
distributed.initialize); the JAX face's process_index()/process_count() read it. A single process is
index 0 of 1.
"""
from __future__ import annotations

__all__ = ["index", "count", "set_job", "clear_job"]

_job = [0, 1]


def index() -> int:
    return _job[0]


def count() -> int:
    return _job[1]


def set_job(process_index: int, process_count: int) -> None:
    _job[0], _job[1] = int(process_index), int(process_count)


def clear_job() -> None:
    _job[0], _job[1] = 0, 1
