"""funcgrad.distributed (torch.distributed) as in a build without distributed support.

funcgrad runs in one process: `is_available()` is False, so programs written for either case take their
single-process path (`if dist.is_available() and dist.is_initialized(): ...`). The names such programs touch
exist: `ReduceOp`, `Backend`, `group.WORLD`, and the collective and group functions. Those that need a
process group raise as torch does when none has been initialized (the error is both a ValueError, which torch
raises, and a RuntimeError); `init_process_group` raises RuntimeError, since no group can be made here.
"""
from __future__ import annotations

import enum
import functools
from datetime import timedelta

__all__ = ["is_available", "is_initialized", "is_torchelastic_launched", "is_nccl_available",
           "is_gloo_available", "is_mpi_available", "is_ucc_available", "is_xccl_available",
           "init_process_group", "destroy_process_group", "get_rank", "get_world_size", "get_backend",
           "new_group", "barrier", "monitored_barrier", "all_reduce", "reduce", "broadcast", "all_gather",
           "all_gather_into_tensor", "all_gather_object", "gather", "gather_object", "scatter",
           "scatter_object_list", "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single",
           "broadcast_object_list", "send", "recv", "isend", "irecv", "ReduceOp", "Backend", "group",
           "GroupMember", "ProcessGroup", "DistError", "DistBackendError", "default_pg_timeout"]

default_pg_timeout = timedelta(minutes=30)


class DistError(RuntimeError):
    """Base of the errors of the distributed package."""


class DistBackendError(DistError):
    pass


class _NoProcessGroupError(ValueError, RuntimeError):
    """No default process group: torch raises ValueError; programs that catch RuntimeError also see it."""


_NO_GROUP = ("Default process group has not been initialized, please make sure to call init_process_group "
             "(funcgrad is built without distributed support, so none can be initialized).")


def is_available() -> bool:
    """False: funcgrad is a single-process build without torch.distributed's process groups."""
    return False


def is_initialized() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    return False


def is_nccl_available() -> bool:
    return False


is_gloo_available = is_mpi_available = is_ucc_available = is_xccl_available = is_nccl_available


class ReduceOp:
    """The reduction of a collective: `ReduceOp.SUM`, `.PRODUCT`, `.MIN`, `.MAX`, `.BAND`, `.BOR`, `.BXOR`,
    `.AVG`, `.PREMUL_SUM` (members of the enum `ReduceOp.RedOpType`)."""

    class RedOpType(enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8
        UNUSED = 9

    def __init__(self, op=RedOpType.SUM):
        self.op = ReduceOp.RedOpType(op)

    def __eq__(self, other):
        if isinstance(other, ReduceOp):
            return self.op == other.op
        if isinstance(other, int):  # (RedOpType members are ints)
            return self.op == other
        return False

    def __hash__(self):
        return hash(self.op)

    def __repr__(self):
        return f"<ReduceOp.{self.op.name}>"


for _m in ReduceOp.RedOpType:
    if _m.name != "UNUSED":
        setattr(ReduceOp, _m.name, _m)
del _m


class Backend(str):
    """A backend's name, lower-cased: `Backend("GLOO") == "gloo" == Backend.GLOO`. No backend can run here."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    backend_list = [UNDEFINED, GLOO, NCCL, UCC, MPI, XCCL]

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, got {type(name).__name__}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return str.__new__(cls, value)


class ProcessGroup:
    """The type of a process group; none can be made in funcgrad."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("funcgrad is built without distributed support: a ProcessGroup cannot be created")


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = -100


class group:  # noqa: N801 (torch's spelling)
    WORLD = None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Raises RuntimeError: funcgrad is built without distributed support (see `is_available()`)."""
    raise RuntimeError("Distributed package doesn't have a process group backend available: funcgrad is built "
                       "without distributed support (torch.distributed.is_available() is False), so "
                       "init_process_group cannot create a process group")


def destroy_process_group(group=None):
    """With no process group initialized, torch fails its check that there is a group to destroy."""
    raise AssertionError("Process group cannot be None (no default process group has been initialized)")


def _needs_group(name):
    def fn(*args, **kwargs):
        raise _NoProcessGroupError(_NO_GROUP)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.distributed.{name}: raises, as no default process group can be initialized here."
    return fn


for _name in ["get_rank", "get_world_size", "get_backend", "new_group", "barrier", "monitored_barrier",
              "all_reduce", "reduce", "broadcast", "all_gather", "all_gather_into_tensor", "all_gather_object",
              "gather", "gather_object", "scatter", "scatter_object_list", "reduce_scatter",
              "reduce_scatter_tensor", "all_to_all", "all_to_all_single", "broadcast_object_list", "send",
              "recv", "isend", "irecv"]:
    globals()[_name] = _needs_group(_name)
del _name
del functools
