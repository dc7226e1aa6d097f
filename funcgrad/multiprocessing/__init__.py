"""funcgrad.multiprocessing (torch.multiprocessing): Python's multiprocessing, with Tensors shared, not copied.

Everything in `multiprocessing` is re-exported unchanged (Process, Queue, SimpleQueue, Pool, Pipe, Event,
Lock, get_context, set_start_method, cpu_count, ...). Importing this module registers pickling hooks with
multiprocessing's ForkingPickler, so a Tensor (or nn.Parameter) put on a Queue, sent through a Pipe or
passed to a spawned Process moves into shared memory and arrives sharing it: writes on either side are seen
by the other. Under the 'fork' start method a child inherits shared tensors directly. Shared memory is
unnamed (see .reductions) and is freed when the last process using it ends, even after a crash.

`spawn(fn, args, nprocs)` runs fn(rank, *args) in nprocs processes and re-raises a child's failure
(ProcessRaisedException with its traceback). `share_module_memory(m)` is Module.share_memory().
"""
import multiprocessing as _mp
from multiprocessing import *  # noqa: F401,F403

from .reductions import init_reductions, share_module_memory  # noqa: F401
from .spawn import (ProcessContext, ProcessException, ProcessExitedException,  # noqa: F401
                    ProcessRaisedException, SpawnContext, spawn, start_processes)

__all__ = list(_mp.__all__) + ["spawn", "start_processes", "ProcessContext", "SpawnContext",
                               "ProcessException", "ProcessRaisedException", "ProcessExitedException",
                               "get_sharing_strategy", "set_sharing_strategy", "get_all_sharing_strategies",
                               "init_reductions", "share_module_memory"]

_sharing_strategy = "file_descriptor"


def set_sharing_strategy(new_strategy: str) -> None:
    """Only 'file_descriptor' (unnamed shared memory handed over as descriptors) is supported."""
    if new_strategy not in get_all_sharing_strategies():
        raise ValueError(f"unsupported sharing strategy {new_strategy!r}; funcgrad supports only "
                         f"'file_descriptor' (its memory cannot leak, so 'file_system' is not needed)")


def get_sharing_strategy() -> str:
    return _sharing_strategy


def get_all_sharing_strategies() -> set:
    return {"file_descriptor"}


init_reductions()
