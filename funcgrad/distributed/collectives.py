"""torch.distributed's collectives on Tensors, in place, with torch's signatures.

Each function unwraps its tensors to NumPy buffers, runs the process group's operation and writes the
result back into the tensors (bumping their version counters, as torch's in-place ops do). With
`async_op=True` it returns a Work whose `wait()` completes the operation and the write-back; otherwise None
(`recv` returns the sender's rank, as torch). `src`/`dst` are global ranks; `group_src`/`group_dst` are
ranks within `group`. Collectives are not recorded by autograd (torch's c10d ones are not either).
"""
from __future__ import annotations

import time

import numpy as np

from .._torch._tensor import Tensor
from ._groups import _group
from ._types import ReduceOp
from .process_group import Work

__all__ = ["all_reduce", "reduce", "broadcast", "all_gather", "all_gather_into_tensor", "gather", "scatter",
           "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single", "barrier",
           "monitored_barrier", "send", "recv", "isend", "irecv", "P2POp", "batch_isend_irecv",
           "all_gather_object", "gather_object", "broadcast_object_list", "scatter_object_list",
           "send_object_list", "recv_object_list"]


def _value(t, op: str) -> np.ndarray:
    """The tensor's NumPy storage view (read)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(t).__name__}")
    v = t._v
    if v is None:
        raise RuntimeError(f"{op}: collectives need concrete tensors, not values traced by funcgrad's "
                           f"transforms (use lax.psum and friends inside pmap)")
    return v


def _writable(t, op: str) -> np.ndarray:
    v = _value(t, op)
    if not v.flags.writeable:
        raise RuntimeError(f"{op}: the output tensor is read-only (a broadcast view?); pass a tensor of its own")
    return v


def _store(t, result: np.ndarray) -> None:
    """Writes result into t's storage and bumps its version."""
    v = t._v
    if v is not result:
        np.copyto(v, result.reshape(v.shape), casting="unsafe")
    t._bump()


def _inplace_buf(v: np.ndarray) -> bool:
    return v.flags.c_contiguous and v.flags.writeable


def _done(work: Work, async_op: bool, then=None, result=None):
    """Finish now (blocking) or hand back the Work with `then` run at completion; `result` (the output
    tensors) is what the Work's future holds."""
    if result is not None:
        work._result = list(result)
    if then is not None:
        previous = work._finish

        def finish():
            if previous is not None:
                previous()
            then()
        work._finish = finish
    if async_op:
        return work
    work.wait()
    return None


def _op(op) -> int:
    if isinstance(op, ReduceOp):
        return int(op.op)
    try:
        return int(op)
    except (TypeError, ValueError):
        raise TypeError(f"op must be a ReduceOp, got {op!r}") from None


def _root(pg, src, group_src, what: str) -> int:
    if group_src is not None:
        if src is not None:
            raise ValueError(f"{what}: pass either {what[:3]} or group_{what[:3]}, not both")
        if not 0 <= group_src < pg.size():
            raise ValueError(f"group_{what[:3]} {group_src} is outside the group (size {pg.size()})")
        return group_src
    if src is None:
        return 0
    return pg.group_rank(int(src), what)


# --- reductions ------------------------------------------------------------------------------------------------
def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduces tensor over the group; every rank gets the result in tensor."""
    pg, v = _group(group), _writable(tensor, "all_reduce")
    out, work = pg.allreduce(v, _op(op), blocking=not async_op, inplace=_inplace_buf(v))
    return _done(work, async_op, lambda: _store(tensor, out), [tensor])


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op: bool = False, group_dst=None):
    """Reduces tensor over the group into dst's tensor (the others' tensors are left as they were)."""
    pg, v = _group(group), _writable(tensor, "reduce")
    root = _root(pg, dst, group_dst, "dst")
    out, work = pg.reduce(v, root, _op(op), blocking=not async_op)
    return _done(work, async_op, (lambda: _store(tensor, out)) if pg.rank() == root else None, [tensor])


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """input holds size blocks along dim 0 (or is stacked (size, *output.shape)); rank r's output gets the
    reduction of block r."""
    pg = _group(group)
    iv, ov = _value(input, "reduce_scatter_tensor"), _writable(output, "reduce_scatter_tensor")
    n = pg.size()
    if iv.size != ov.size * n:
        raise ValueError(f"reduce_scatter_tensor: input has {iv.size} elements, the output {ov.size}; the input "
                         f"must hold world_size ({n}) times the output's elements")
    out, work = pg.reduce_scatter(iv.reshape((n,) + ov.shape), _op(op), blocking=not async_op)
    return _done(work, async_op, lambda: _store(output, out), [output])


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """input_list[r] (one tensor per rank, each shaped as output) is reduced over ranks into rank r's output."""
    pg = _group(group)
    if len(input_list) != pg.size():
        raise ValueError(f"reduce_scatter: input_list has {len(input_list)} tensors; it needs one per rank "
                         f"({pg.size()})")
    ov = _writable(output, "reduce_scatter")
    stacked = np.stack([_value(t, "reduce_scatter").reshape(ov.shape) for t in input_list])
    out, work = pg.reduce_scatter(stacked, _op(op), blocking=not async_op)
    return _done(work, async_op, lambda: _store(output, out))


# --- data movement -------------------------------------------------------------------------------------------
def broadcast(tensor, src=None, group=None, async_op: bool = False, group_src=None):
    """tensor on every rank becomes src's tensor."""
    pg, v = _group(group), _writable(tensor, "broadcast")
    root = _root(pg, src, group_src, "src")
    buf = v if _inplace_buf(v) else np.ascontiguousarray(v)
    work = pg.broadcast(buf, root, blocking=not async_op)
    return _done(work, async_op, lambda: _store(tensor, buf), [tensor])


def all_gather(tensor_list, tensor, group=None, async_op: bool = False):
    """tensor_list[r] receives rank r's tensor."""
    pg = _group(group)
    if len(tensor_list) != pg.size():
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors; it needs one per rank "
                         f"({pg.size()})")
    v = _value(tensor, "all_gather")
    for t in tensor_list:
        _writable(t, "all_gather")
    out, work = pg.allgather(v, blocking=not async_op)

    def then():
        for r, t in enumerate(tensor_list):
            _store(t, out[r])
    return _done(work, async_op, then)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op: bool = False):
    """output_tensor (size * input rows along dim 0, or stacked (size, *input.shape)) receives every rank's
    input in rank order."""
    pg = _group(group)
    iv, ov = _value(input_tensor, "all_gather_into_tensor"), _writable(output_tensor, "all_gather_into_tensor")
    if ov.size != iv.size * pg.size():
        raise ValueError(f"all_gather_into_tensor: output has {ov.size} elements; it must hold world_size "
                         f"({pg.size()}) times the input's {iv.size}")
    out, work = pg.allgather(iv, blocking=not async_op)
    return _done(work, async_op, lambda: _store(output_tensor, out), [output_tensor])


def gather(tensor, gather_list=None, dst=None, group=None, async_op: bool = False, group_dst=None):
    """dst's gather_list[r] receives rank r's tensor (gather_list only on dst)."""
    pg = _group(group)
    root = _root(pg, dst, group_dst, "dst")
    me = pg.rank()
    if me == root and (gather_list is None or len(gather_list) != pg.size()):
        raise ValueError(f"gather: the destination rank needs gather_list with one tensor per rank ({pg.size()})")
    if me != root and gather_list:
        raise ValueError("gather: gather_list must be None (or empty) on ranks other than the destination")
    out, work = pg.gather(_value(tensor, "gather"), root, blocking=not async_op)

    def then():
        if me == root:
            for r, t in enumerate(gather_list):
                _store(t, out[r])
    return _done(work, async_op, then)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op: bool = False, group_src=None):
    """Rank r's tensor receives src's scatter_list[r] (scatter_list only on src)."""
    pg = _group(group)
    root = _root(pg, src, group_src, "src")
    v = _writable(tensor, "scatter")
    chunks = None
    if pg.rank() == root:
        if scatter_list is None or len(scatter_list) != pg.size():
            raise ValueError(f"scatter: the source rank needs scatter_list with one tensor per rank ({pg.size()})")
        chunks = np.stack([_value(t, "scatter").reshape(v.shape) for t in scatter_list])
    elif scatter_list:
        raise ValueError("scatter: scatter_list must be None (or empty) on ranks other than the source")
    buf = v if _inplace_buf(v) else np.empty(v.shape, v.dtype)
    work = pg.scatter(chunks, buf, root, blocking=not async_op)
    return _done(work, async_op, lambda: _store(tensor, buf))


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op: bool = False):
    """Rank r sends block j of input (along dim 0; equal blocks or input_split_sizes) to rank j, and receives
    rank j's block r into block j of output."""
    pg = _group(group)
    iv, ov = _value(input, "all_to_all_single"), _writable(output, "all_to_all_single")
    n = pg.size()
    if input_split_sizes is None and iv.shape[0] % n:
        raise ValueError(f"all_to_all_single: input's first dimension {iv.shape[0]} does not split into "
                         f"{n} equal blocks; pass input_split_sizes")
    if output_split_sizes is None and ov.shape[0] % n:
        raise ValueError(f"all_to_all_single: output's first dimension {ov.shape[0]} does not split into "
                         f"{n} equal blocks; pass output_split_sizes")
    buf = ov if _inplace_buf(ov) else np.empty(ov.shape, ov.dtype)
    work = pg.alltoall(np.ascontiguousarray(iv, dtype=ov.dtype), buf,
                       None if input_split_sizes is None else [int(c) for c in input_split_sizes],
                       None if output_split_sizes is None else [int(c) for c in output_split_sizes],
                       blocking=not async_op)
    return _done(work, async_op, lambda: _store(output, buf))


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op: bool = False):
    """output_tensor_list[j] receives rank j's input_tensor_list[r] (r: this rank)."""
    pg = _group(group)
    n = pg.size()
    if len(output_tensor_list) != n or len(input_tensor_list) != n:
        raise ValueError(f"all_to_all: both lists need one tensor per rank ({n})")
    outs = [_writable(t, "all_to_all") for t in output_tensor_list]
    ins = [_value(t, "all_to_all") for t in input_tensor_list]
    dtype = outs[0].dtype
    send = np.concatenate([np.ascontiguousarray(a, dtype=dtype).reshape(-1) for a in ins])
    recv = np.empty(sum(o.size for o in outs), dtype)
    work = pg.alltoall(send, recv, [a.size for a in ins], [o.size for o in outs], blocking=not async_op)

    def then():
        at = 0
        for t, o in zip(output_tensor_list, outs):
            _store(t, recv[at:at + o.size])
            at += o.size
    return _done(work, async_op, then)


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Returns when every rank of the group has reached it."""
    return _done(_group(group).barrier(blocking=not async_op), async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks: bool = False):
    """A barrier that names the ranks that did not arrive within timeout (default: the group's timeout)."""
    pg = _group(group)
    seconds = pg.timeout if timeout is None else (timeout.total_seconds() if hasattr(timeout, "total_seconds")
                                                  else float(timeout))
    work = pg.barrier(blocking=False)
    deadline = time.monotonic() + seconds
    while not work.is_completed():
        if time.monotonic() > deadline:
            raise RuntimeError(f"monitored_barrier: rank {pg.rank()} timed out after {seconds:g} s waiting for "
                               f"the other ranks of the group (size {pg.size()})")
        time.sleep(0.001)


# --- point to point --------------------------------------------------------------------------------------------
def _peer(pg, rank, group_rank, what: str):
    if group_rank is not None:
        return group_rank
    if rank is None:
        return None
    return pg.group_rank(int(rank), what)


def send(tensor, dst=None, group=None, tag: int = 0, group_dst=None) -> None:
    """Send tensor to rank dst (blocking)."""
    pg = _group(group)
    peer = _peer(pg, dst, group_dst, "dst")
    if peer is None:
        raise ValueError("send: dst is required")
    pg.send(_value(tensor, "send"), peer, tag)


def recv(tensor, src=None, group=None, tag: int = 0, group_src=None) -> int:
    """Receives into tensor from src (None: any rank); returns the sender's global rank."""
    pg = _group(group)
    v = _writable(tensor, "recv")
    buf = v if _inplace_buf(v) else np.empty(v.shape, v.dtype)
    sender, _ = pg.recv(buf, _peer(pg, src, group_src, "src"), tag)
    _store(tensor, buf)
    return pg.ranks[sender]


def isend(tensor, dst=None, group=None, tag: int = 0, group_dst=None) -> Work:
    """Send tensor to rank dst without waiting; the returned Work's wait() completes it."""
    pg = _group(group)
    peer = _peer(pg, dst, group_dst, "dst")
    if peer is None:
        raise ValueError("isend: dst is required")
    return pg.send(_value(tensor, "isend"), peer, tag, blocking=False)


def irecv(tensor, src=None, group=None, tag: int = 0, group_src=None) -> Work:
    """Receive into tensor from rank src (any rank if None) without waiting; wait() on the Work completes it."""
    pg = _group(group)
    v = _writable(tensor, "irecv")
    buf = v if _inplace_buf(v) else np.empty(v.shape, v.dtype)
    _, work = pg.recv(buf, _peer(pg, src, group_src, "src"), tag, blocking=False)
    return _done(work, True, lambda: _store(tensor, buf))


class P2POp:
    """One send or receive for batch_isend_irecv: P2POp(dist.isend or dist.irecv, tensor, peer, group, tag)."""

    def __init__(self, op, tensor, peer=None, group=None, tag: int = 0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("P2POp: op must be torch.distributed.isend or torch.distributed.irecv")
        self.op, self.tensor, self.peer, self.group, self.tag, self.group_peer = op, tensor, peer, group, tag, group_peer


def batch_isend_irecv(p2p_op_list) -> list:
    """Starts every operation of the list; returns their Works."""
    works = []
    for p in p2p_op_list:
        key = "group_dst" if p.op is isend else "group_src"
        works.append(p.op(p.tensor, p.peer, p.group, p.tag, **{key: p.group_peer}))
    return works


# --- Python objects ------------------------------------------------------------------------------------------
def all_gather_object(object_list, obj, group=None) -> None:
    """object_list[r] becomes rank r's obj (pickled; only between ranks of one job)."""
    pg = _group(group)
    if len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list has {len(object_list)} entries; it needs one per rank "
                         f"({pg.size()})")
    object_list[:] = pg.allgather_object(obj)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None) -> None:
    """Gather a picklable object from every rank into object_gather_list on rank dst."""
    pg = _group(group)
    root = _root(pg, dst, group_dst, "dst")
    objs = pg.gather_object(obj, root)
    if pg.rank() == root:
        if object_gather_list is None or len(object_gather_list) != pg.size():
            raise ValueError(f"gather_object: the destination rank needs object_gather_list with one entry per "
                             f"rank ({pg.size()})")
        object_gather_list[:] = objs


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None) -> None:
    """object_list on every rank becomes src's (same length on every rank)."""
    pg = _group(group)
    root = _root(pg, src, group_src, "src")
    objs = pg.broadcast_object(list(object_list) if pg.rank() == root else None, root)
    if len(objs) != len(object_list):
        raise ValueError(f"broadcast_object_list: rank {pg.rank()}'s list has {len(object_list)} entries, "
                         f"the source's {len(objs)}; the lists must have the same length")
    object_list[:] = objs


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None) -> None:
    """scatter_object_output_list[0] becomes src's scatter_object_input_list[rank]."""
    pg = _group(group)
    root = _root(pg, src, group_src, "src")
    if pg.rank() == root and (scatter_object_input_list is None or len(scatter_object_input_list) != pg.size()):
        raise ValueError(f"scatter_object_list: the source rank needs one input object per rank ({pg.size()})")
    if not scatter_object_output_list:
        raise ValueError("scatter_object_list: scatter_object_output_list must have at least one entry")
    scatter_object_output_list[0] = pg.scatter_object(
        list(scatter_object_input_list) if pg.rank() == root else None, root)


def send_object_list(object_list, dst=None, group=None, device=None, group_dst=None) -> None:
    """Send a list of picklable objects to rank dst (received with recv_object_list)."""
    pg = _group(group)
    peer = _peer(pg, dst, group_dst, "dst")
    if peer is None:
        raise ValueError("send_object_list: dst is required")
    pg.send_object(list(object_list), peer)


def recv_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Fills object_list from src's send_object_list; returns the sender's global rank."""
    pg = _group(group)
    objs, sender = pg.recv_object(_peer(pg, src, group_src, "src"))
    object_list[:len(objs)] = objs
    return pg.ranks[sender]
