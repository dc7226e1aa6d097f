"""torch.distributed's vocabulary: ReduceOp, Backend, the error types and the group placeholders."""
from __future__ import annotations

import enum

__all__ = ["ReduceOp", "Backend", "DistError", "DistBackendError", "group", "GroupMember", "GradBucket"]


class DistError(RuntimeError):
    """Base of the errors of the distributed package."""


class DistBackendError(DistError):
    """A collective failed in the backend (MPI)."""


class _NoProcessGroupError(ValueError, RuntimeError):
    """No default process group: torch raises ValueError; programs that catch RuntimeError also see it."""


_NO_GROUP = ("Default process group has not been initialized, please make sure to call init_process_group.")


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
    """A backend's name, lower-cased: `Backend("GLOO") == "gloo" == Backend.GLOO`. funcgrad runs "mpi" and serves
    "gloo" (CPU tensors) with MPI too; "nccl" needs GPUs (not yet)."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    backend_list = [UNDEFINED, GLOO, NCCL, UCC, MPI, XCCL]
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL, "xpu": XCCL, "mps": GLOO}

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, got {type(name).__name__}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return str.__new__(cls, value)



class GroupMember:
    """`GroupMember.WORLD` is the default process group once initialized; NON_GROUP_MEMBER is what
    new_group returns on ranks outside the new group."""
    WORLD = None
    NON_GROUP_MEMBER = -100


class group:  # noqa: N801 (torch's spelling)
    """torch.distributed.group: `group.WORLD` is the default process group once initialised."""
    WORLD = None


class GradBucket:
    """One DDP bucket handed to a communication hook (torch.distributed.GradBucket): the flat buffer of its
    parameters' gradients and where each one lies in it."""

    def __init__(self, index: int, buffer, params: list, offsets, is_last: bool):
        self._index, self._buffer, self._params = index, buffer, list(params)
        self._offsets, self._is_last = offsets, is_last

    def index(self) -> int:
        """The bucket's position in the reduction order (0 goes first)."""
        return self._index

    def buffer(self):
        """The flattened gradients (a 1-D Tensor sharing the bucket's memory)."""
        return self._buffer

    def set_buffer(self, buffer) -> None:
        self._buffer = buffer

    def gradients(self) -> list:
        """Each parameter's gradient as a view of the buffer, shaped as the parameter."""
        return [self._buffer[int(lo):int(hi)].view(tuple(p.shape))
                for p, lo, hi in zip(self._params, self._offsets[:-1], self._offsets[1:])]

    def parameters(self) -> list:
        return list(self._params)

    def is_last(self) -> bool:
        """Whether this is the last bucket of the backward pass (the last one reduced)."""
        return self._is_last
