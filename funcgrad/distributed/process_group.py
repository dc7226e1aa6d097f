"""A process group: the collectives of one communicator on NumPy buffers (the backend seam).

`ProcessGroup` is what `torch.distributed` functions and DistributedDataParallel call. It speaks NumPy
arrays, so the Tensor layer above it only unwraps and writes back, and a second backend (NCCL through CuPy
for GPU arrays) can implement the same methods on device buffers. This one runs on an MPI communicator:

- Reductions map torch's ReduceOp to MPI's ops. float16 and bfloat16 are reduced in float32 and rounded
  once (MPI has no bfloat16; the sum is then the correctly rounded sum, slightly more accurate than a
  half-precision pairwise sum). Bool tensors reduce with the logical ops (SUM/MAX -> or, PRODUCT/MIN -> and).
  AVG is SUM divided by the group size (rounded toward zero for integers).
- Data movement (broadcast, gathers, scatters, all-to-all, send/recv) moves raw bytes, so every dtype works.
- Every operation has a non-blocking form returning a `Work` whose `wait()` finishes it (MPI's
  non-blocking collectives), so DistributedDataParallel overlaps gradient reduction with the backward pass.
"""
from __future__ import annotations

import functools
import sys
import threading
import time

import numpy as np

from .._torch.futures import Future
from . import _mpi
from ._types import DistBackendError

__all__ = ["ProcessGroup", "Work"]

SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR, PREMUL_SUM = range(9)  # ReduceOp.RedOpType values
_OP_NAMES = ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"]


def _mpi_op(MPI, op: int, dtype: np.dtype):
    if dtype == np.bool_:
        return {SUM: MPI.LOR, MAX: MPI.LOR, PRODUCT: MPI.LAND, MIN: MPI.LAND, BAND: MPI.LAND, BOR: MPI.LOR,
                BXOR: MPI.LXOR}[op]
    if op in (BAND, BOR, BXOR) and dtype.kind not in "iu":
        raise RuntimeError(f"all_reduce: ReduceOp.{_OP_NAMES[op]} needs an integer or bool tensor, got {dtype}")
    if op in (MIN, MAX) and dtype.kind == "c":
        raise RuntimeError(f"all_reduce: ReduceOp.{_OP_NAMES[op]} is not defined for complex tensors ({dtype})")
    return {SUM: MPI.SUM, AVG: MPI.SUM, PRODUCT: MPI.PROD, MIN: MPI.MIN, MAX: MPI.MAX, BAND: MPI.BAND,
            BOR: MPI.BOR, BXOR: MPI.BXOR}[op]


def _wire(a: np.ndarray) -> np.ndarray:
    """A contiguous view MPI can send whatever the dtype: types it does not know travel as bytes."""
    a = np.ascontiguousarray(a)
    if a.dtype.kind in "biufc" and a.dtype.itemsize <= 16 and a.dtype.name not in ("float16", "longdouble",
                                                                                   "clongdouble"):
        return a
    return a.reshape(-1).view(np.uint8)


def _reduce_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype a reduction runs in: half precision (float16, bfloat16) in float32."""
    return np.dtype(np.float32) if dtype.itemsize == 2 and dtype.kind not in "iub" else dtype


def _reported(op: str):
    """MPI's errors (a message truncated because ranks passed different sizes, ...) become DistBackendError
    naming the operation, this rank's buffer and the likely cause, with MPI's own text after it."""
    def wrap(method):
        @functools.wraps(method)
        def run(self, *args, **kwargs):
            start = time.monotonic()
            self._busy = (op, start)
            try:
                out = method(self, *args, **kwargs)
                work = out[1] if isinstance(out, tuple) and len(out) == 2 else out
                if isinstance(work, Work) and work._requests:  # non-blocking: its wait() is watched from now
                    work._watch = (self, op, start)
                return out
            except _mpi.MPI().Exception as e:
                a = next((x for x in args if isinstance(x, np.ndarray)), None)
                what = f" (this rank's tensor: shape {list(a.shape)}, dtype {a.dtype})" if a is not None else ""
                raise DistBackendError(
                    f"{op} failed on rank {self.rank()} of {self.size()}{what}: do all ranks call the same "
                    f"collectives in the same order, with tensors of the same shape and dtype? MPI says: "
                    f"{e.Get_error_string().splitlines()[0]}") from e
            finally:
                self._busy = None
        return run
    return wrap


class _Watchdog(threading.Thread):
    """Ends the job when a blocking collective of a group, or the wait() on a non-blocking one (timed from its
    start), waits longer than the group's timeout (as torch's watchdog does: a collective whose peers never
    arrive would otherwise wait forever)."""

    def __init__(self):
        super().__init__(daemon=True, name="funcgrad-distributed-watchdog")
        self.groups: list = []

    def run(self) -> None:
        while True:
            time.sleep(0.5)
            now = time.monotonic()
            for pg in list(self.groups):
                busy = pg._busy
                if busy is not None and pg.timeout is not None and now - busy[1] > pg.timeout:
                    sys.stderr.write(f"funcgrad.distributed: rank {pg.rank()}: {busy[0]} did not complete within "
                                     f"the process group's timeout ({pg.timeout:g} s); the other ranks did not "
                                     f"reach it. Ending the job.\n")
                    sys.stderr.flush()
                    time.sleep(1.0)  # let the process manager forward the message before it tears the job down
                    _mpi.MPI().COMM_WORLD.Abort(1)


_watchdog = _Watchdog()


class Work:
    """A started operation (torch's Work): `wait()` finishes it and runs its completion (copying results
    into place); `is_completed()` tests without blocking."""

    def __init__(self, requests=(), finish=None, result=None):
        self._requests = list(requests)
        self._finish = finish
        self._result = result
        self._done = False
        self._watch = None  # (group, operation, start time): the group's watchdog times wait() from the start

    def _complete(self) -> None:
        if not self._done:
            self._done = True
            if self._finish is not None:
                self._finish()

    def wait(self, timeout=None) -> bool:
        if self._requests:
            pg = self._watch[0] if self._watch is not None else None
            if pg is not None:  # the watchdog ends the job if the operation outlives the group's timeout
                pg._busy = (f"{self._watch[1]} (started with async_op=True)", self._watch[2])
            try:
                _mpi.MPI().Request.Waitall(self._requests)
            finally:
                if pg is not None:
                    pg._busy = None
            self._requests = []
        self._complete()
        return True

    def is_completed(self) -> bool:
        if self._done:
            return True
        if not self._requests or _mpi.MPI().Request.Testall(self._requests):
            self._requests = []
            self._complete()
            return True
        return False

    def is_success(self) -> bool:
        return self.is_completed()

    def exception(self):
        return None

    def result(self):
        self.wait()
        return self._result

    def get_future(self) -> Future:
        """A Future whose value is the operation's output tensors (a list), ready once the operation is."""
        def finish():
            self.wait()
            return self._result if isinstance(self._result, list) else [] if self._result is None else \
                [self._result]
        return Future._pending(finish, self.is_completed)



class ProcessGroup:
    """The ranks of one communicator and its collectives. `ranks` lists each member's rank in the default
    (world) group, so torch's global `src`/`dst` can be translated to this group's."""

    def __init__(self, comm, backend: str = "mpi", ranks=None, timeout=None):
        self.comm = comm
        self.backend = backend
        self.ranks = list(range(comm.Get_size())) if ranks is None else list(ranks)
        self.timeout = timeout
        self._busy = None  # (operation, start time) while a blocking collective runs
        if comm.Get_size() > 1 and timeout is not None:
            _watchdog.groups.append(self)
            if not _watchdog.is_alive():
                _watchdog.start()

    # --- identity ----------------------------------------------------------------------------------------
    def rank(self) -> int:
        return self.comm.Get_rank()

    def size(self) -> int:
        return self.comm.Get_size()

    def group_rank(self, global_rank: int, what: str = "rank") -> int:
        try:
            return self.ranks.index(global_rank)
        except ValueError:
            raise ValueError(f"{what} {global_rank} is not part of this process group (its global ranks are "
                             f"{self.ranks})") from None

    def name(self) -> str:
        return self.backend

    def __repr__(self) -> str:
        return f"ProcessGroup(backend={self.backend!r}, rank={self.rank()}, size={self.size()})"

    # --- reductions ----------------------------------------------------------------------------------------
    def _reduce(self, a: np.ndarray, op: int, root, blocking: bool, inplace: bool = False):
        """Reduces a over the group; returns (the result buffer, Work); root None: every rank gets it.
        inplace: a is C-contiguous and writable, and may receive the result itself (no copies)."""
        MPI = _mpi.MPI()
        if op == PREMUL_SUM:
            raise ValueError("ReduceOp.PREMUL_SUM is only available with NCCL; use SUM after scaling the tensor")
        rdt = _reduce_dtype(a.dtype)
        if inplace and rdt == a.dtype:
            recv = a
            send = MPI.IN_PLACE if root is None or self.rank() == root else a
        else:
            send = np.ascontiguousarray(a, dtype=rdt)
            recv = np.empty_like(send)
        mop = _mpi_op(MPI, op, a.dtype)
        n = self.size()

        def finish():
            if op == AVG:
                if recv.dtype.kind in "iu":
                    recv[...] = np.trunc(recv / n).astype(recv.dtype)
                else:
                    recv[...] /= n
        if root is None:
            if blocking:
                self.comm.Allreduce(send, recv, op=mop)
                finish()
                return recv, Work()
            req = self.comm.Iallreduce(send, recv, op=mop)
        else:
            if blocking:
                self.comm.Reduce(send, recv, op=mop, root=root)
                if self.rank() == root:
                    finish()
                return recv, Work()
            req = self.comm.Ireduce(send, recv, op=mop, root=root)
            if self.rank() != root:
                return recv, Work([req])
        return recv, Work([req], finish)

    @_reported("all_reduce")
    def allreduce(self, a: np.ndarray, op: int = SUM, blocking: bool = True, inplace: bool = False):
        return self._reduce(a, op, None, blocking, inplace)

    @_reported("reduce")
    def reduce(self, a: np.ndarray, root: int, op: int = SUM, blocking: bool = True):
        return self._reduce(a, op, root, blocking)

    # --- data movement ---------------------------------------------------------------------------------------
    @_reported("broadcast")
    def broadcast(self, a: np.ndarray, root: int, blocking: bool = True):
        """a (contiguous) replaced by root's a on every rank."""
        w = _wire(a)
        if blocking:
            self.comm.Bcast(w, root=root)
            return Work()
        return Work([self.comm.Ibcast(w, root=root)])

    @_reported("all_gather")
    def allgather(self, a: np.ndarray, blocking: bool = True):
        """Every rank's a, stacked: shape (size, *a.shape)."""
        send = np.ascontiguousarray(a)
        out = np.empty((self.size(),) + a.shape, a.dtype)
        if blocking:
            self.comm.Allgather(_wire(send), _wire(out))
            return out, Work()
        return out, Work([self.comm.Iallgather(_wire(send), _wire(out))])

    @_reported("gather")
    def gather(self, a: np.ndarray, root: int, blocking: bool = True):
        send = np.ascontiguousarray(a)
        out = np.empty((self.size(),) + a.shape, a.dtype) if self.rank() == root else None
        args = (_wire(send), None if out is None else _wire(out))
        if blocking:
            self.comm.Gather(*args, root=root)
            return out, Work()
        return out, Work([self.comm.Igather(*args, root=root)])

    @_reported("scatter")
    def scatter(self, chunks, out: np.ndarray, root: int, blocking: bool = True):
        """out (contiguous) receives root's chunks[rank]; chunks: an array of shape (size, *out.shape) at root."""
        send = None if chunks is None else _wire(np.ascontiguousarray(chunks, dtype=out.dtype))
        if blocking:
            self.comm.Scatter(send, _wire(out), root=root)
            return Work()
        return Work([self.comm.Iscatter(send, _wire(out), root=root)])

    @_reported("reduce_scatter")
    def reduce_scatter(self, stacked: np.ndarray, op: int = SUM, blocking: bool = True):
        """stacked: (size, *shape) on every rank; returns (the reduction over ranks of row `rank`, Work)."""
        MPI = _mpi.MPI()
        if op == PREMUL_SUM:
            raise ValueError("ReduceOp.PREMUL_SUM is only available with NCCL; use SUM after scaling the tensor")
        send = np.ascontiguousarray(stacked, dtype=_reduce_dtype(stacked.dtype))
        recv = np.empty(send.shape[1:], send.dtype)
        mop, n = _mpi_op(MPI, op, stacked.dtype), self.size()

        def finish():
            if op == AVG:
                recv[...] = np.trunc(recv / n).astype(recv.dtype) if recv.dtype.kind in "iu" else recv / n
        if blocking:
            self.comm.Reduce_scatter_block(send, recv, op=mop)
            finish()
            return recv, Work()
        return recv, Work([self.comm.Ireduce_scatter_block(send, recv, op=mop)], finish)

    @_reported("all_to_all")
    def alltoall(self, send: np.ndarray, recv: np.ndarray, send_counts=None, recv_counts=None,
                 blocking: bool = True):
        """Equal blocks along the first axis, or the given per-rank element counts along it."""
        s, r = np.ascontiguousarray(send), recv
        if send_counts is None and recv_counts is None:
            args = (_wire(s), _wire(r))
            if blocking:
                self.comm.Alltoall(*args)
                return Work()
            return Work([self.comm.Ialltoall(*args)])
        row_s = int(np.prod(s.shape[1:], dtype=np.int64)) * s.dtype.itemsize
        row_r = int(np.prod(r.shape[1:], dtype=np.int64)) * r.dtype.itemsize
        n = self.size()
        sc = [s.shape[0] // n] * n if send_counts is None else list(send_counts)
        rc = [r.shape[0] // n] * n if recv_counts is None else list(recv_counts)
        sc, rc = [c * row_s for c in sc], [c * row_r for c in rc]
        sd, rd = np.concatenate([[0], np.cumsum(sc)[:-1]]), np.concatenate([[0], np.cumsum(rc)[:-1]])
        MPI = _mpi.MPI()
        args = ([s.view(np.uint8).reshape(-1), (sc, sd.tolist()), MPI.BYTE],
                [r.view(np.uint8).reshape(-1), (rc, rd.tolist()), MPI.BYTE])
        if blocking:
            self.comm.Alltoallv(*args)
            return Work()
        return Work([self.comm.Ialltoallv(*args)])

    @_reported("barrier")
    def barrier(self, blocking: bool = True):
        if blocking:
            self.comm.Barrier()
            return Work()
        return Work([self.comm.Ibarrier()])

    # --- point to point --------------------------------------------------------------------------------------
    @_reported("send")
    def send(self, a: np.ndarray, dst: int, tag: int = 0, blocking: bool = True):
        w = _wire(np.ascontiguousarray(a))
        if blocking:
            self.comm.Send(w, dest=dst, tag=tag)
            return Work()
        return Work([self.comm.Isend(w, dest=dst, tag=tag)])

    @_reported("recv")
    def recv(self, out: np.ndarray, src, tag: int = 0, blocking: bool = True):
        """Receives into out (contiguous); src None: any source. Returns (sender's rank or None, Work)."""
        MPI = _mpi.MPI()
        source = MPI.ANY_SOURCE if src is None else src
        if blocking:
            status = MPI.Status()
            self.comm.Recv(_wire(out), source=source, tag=tag, status=status)
            return status.Get_source(), Work()
        return None, Work([self.comm.Irecv(_wire(out), source=source, tag=tag)])

    # --- Python objects (pickled, between the ranks of one job) ------------------------------------------
    def allgather_object(self, obj):
        return self.comm.allgather(obj)

    def gather_object(self, obj, root: int):
        return self.comm.gather(obj, root=root)

    def broadcast_object(self, obj, root: int):
        return self.comm.bcast(obj, root=root)

    def scatter_object(self, objs, root: int):
        return self.comm.scatter(objs, root=root)

    def send_object(self, obj, dst: int, tag: int = 0):
        self.comm.send(obj, dest=dst, tag=tag)

    def recv_object(self, src, tag: int = 0):
        """Returns (the object, the sender's rank in this group); src None: any source."""
        MPI = _mpi.MPI()
        status = MPI.Status()
        obj = self.comm.recv(source=MPI.ANY_SOURCE if src is None else src, tag=tag, status=status)
        return obj, status.Get_source()

    def destroy(self) -> None:
        if self in _watchdog.groups:
            _watchdog.groups.remove(self)
        MPI = _mpi.MPI()
        if self.comm not in (MPI.COMM_WORLD, MPI.COMM_SELF) and not MPI.Is_finalized():
            self.comm.Free()
