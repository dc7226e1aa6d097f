"""torch.nn.parallel.DistributedDataParallel over funcgrad.distributed's process groups.

At construction the module's parameters and buffers are broadcast from rank 0, so every rank starts equal.
Parameters are grouped into buckets (reverse registration order, which is roughly the order backward
produces gradients; about bucket_cap_mb each, the first one 1 MB so reduction starts early). A hook on each
parameter copies its gradient into its bucket once accumulated; a full bucket is reduced with one
non-blocking Allreduce while backward goes on. Buckets start in index order on every rank (MPI needs the
same order of collectives everywhere). When the last bucket has started, the reductions are awaited and
every parameter's .grad becomes the average over ranks, so training on N ranks equals training on the
concatenated batch. `no_sync()` skips the reduction (gradients accumulate locally until the next synced
backward). With find_unused_parameters=True, parameters the forward pass did not reach count as ready with
zero gradients, and a parameter no rank used keeps its .grad as it was.
"""
from __future__ import annotations

import contextlib

import numpy as np

from ... import distributed as _dist
from ..._torch._creation import from_numpy
from ..._torch._tensor import Tensor
from ...autograd.graph import AccumulateGrad
from ...distributed.process_group import SUM
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1 << 20


class _Bucket:
    __slots__ = ("params", "offsets", "flat", "pending", "work")

    def __init__(self, params, dtype):
        self.params = params
        sizes = [int(np.prod(p.shape, dtype=np.int64)) for p in params]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.flat = np.zeros(int(self.offsets[-1]), dtype)
        self.pending = len(params)
        self.work = None


def _tensors_of(out):
    """The tensors in a forward output (nested tuples/lists/dicts)."""
    if isinstance(out, Tensor):
        yield out
    elif isinstance(out, (list, tuple)):
        for o in out:
            yield from _tensors_of(o)
    elif isinstance(out, dict):
        for o in out.values():
            yield from _tensors_of(o)


class DistributedDataParallel(Module):
    """Data-parallel training of `module` over the ranks of a process group (see the module docstring)."""

    def __init__(self, module, device_ids=None, output_device=None, dim: int = 0, broadcast_buffers: bool = True,
                 init_sync: bool = True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False, **kwargs):
        super().__init__()
        self.module = module
        self.process_group = _dist._groups._group(process_group)
        self.device_ids, self.output_device, self.dim = device_ids, output_device, dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * (1 << 20))
        self._params = [p for p in module.parameters() if p.requires_grad]
        if init_sync:
            self._broadcast([p for p in module.parameters()] + [b for b in module.buffers()])
        self._buckets = self._make_buckets()
        self._where = {}
        for b, bucket in enumerate(self._buckets):
            for i, p in enumerate(bucket.params):
                self._where[id(p)] = (b, i)
                p.register_post_accumulate_grad_hook(self._grad_ready)
        self._ready: set = set()
        self._used: set = set()
        self._next = 0
        self._armed = False

    # --- construction ---------------------------------------------------------------------------------
    def _broadcast(self, tensors) -> None:
        """Every rank's tensors become rank 0's (one flat broadcast per dtype)."""
        by_dtype: dict = {}
        for t in tensors:
            by_dtype.setdefault(t._v.dtype, []).append(t)
        root = self.process_group.ranks[0]
        for dtype, ts in by_dtype.items():
            flat = np.concatenate([t._v.reshape(-1) for t in ts]) if ts else np.zeros(0, dtype)
            self.process_group.broadcast(flat, self.process_group.group_rank(root))
            at = 0
            for t in ts:
                n = t._v.size
                np.copyto(t._v, flat[at:at + n].reshape(t._v.shape))
                t._bump()
                at += n

    def _make_buckets(self) -> list:
        buckets, current, size, cap = [], [], 0, _FIRST_BUCKET_BYTES
        for p in reversed(self._params):
            if current and (size >= cap or p._v.dtype != current[0]._v.dtype):
                buckets.append(_Bucket(current, current[0]._v.dtype))
                current, size, cap = [], 0, self.bucket_bytes_cap
            current.append(p)
            size += p._v.nbytes
        if current:
            buckets.append(_Bucket(current, current[0]._v.dtype))
        return buckets

    # --- forward ---------------------------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        if self._armed and self._ready:
            raise RuntimeError(
                "DistributedDataParallel: expected to have finished reduction in the prior iteration before "
                "starting a new one: some parameters received no gradient in the last backward pass "
                f"({len(self._params) - len(self._ready)} of {len(self._params)} were missing). Pass "
                "find_unused_parameters=True if the forward pass does not use every parameter, and make sure "
                "the loss depends on all of the module's outputs.")
        if self.broadcast_buffers and self.require_forward_param_sync:
            buffers = list(self.module.buffers())
            if buffers:
                self._broadcast(buffers)
        out = self.module(*inputs, **kwargs)
        self._ready, self._used, self._next = set(), set(), 0
        for bucket in self._buckets:
            bucket.pending, bucket.work = len(bucket.params), None
        self._armed = self.require_backward_grad_sync and self.training and bool(self._params)
        if self._armed and self.find_unused_parameters:
            reached = self._reachable(out)
            for p in self._params:
                if id(p) not in reached:
                    self._mark(p, None)
        return out

    def _reachable(self, out) -> set:
        """ids of the parameters the autograd graph of `out` reaches."""
        seen, found = set(), set()
        stack = [t.grad_fn for t in _tensors_of(out) if t.grad_fn is not None]
        for t in _tensors_of(out):
            if t.grad_fn is None and t.requires_grad:
                found.add(id(t))
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, AccumulateGrad):
                found.add(id(node.variable))
                continue
            stack.extend(n for n, _ in node.next_functions)
        return found

    # --- backward --------------------------------------------------------------------------------------
    def _grad_ready(self, p) -> None:
        if not self._armed or id(p) in self._ready:
            return
        self._used.add(id(p))
        self._mark(p, p.grad)

    def _mark(self, p, grad) -> None:
        """p's gradient (None: unused, zeros) goes into its bucket; full buckets start in order."""
        b, i = self._where[id(p)]
        bucket = self._buckets[b]
        lo, hi = bucket.offsets[i], bucket.offsets[i + 1]
        if grad is None:
            bucket.flat[lo:hi] = 0
        else:
            bucket.flat[lo:hi] = grad._v.reshape(-1)
        self._ready.add(id(p))
        bucket.pending -= 1
        while self._next < len(self._buckets) and self._buckets[self._next].pending == 0:
            nb = self._buckets[self._next]
            _, nb.work = self.process_group.allreduce(nb.flat, SUM, blocking=False, inplace=True)
            self._next += 1
        if self._next == len(self._buckets):
            self._finish()

    def _finish(self) -> None:
        pg = self.process_group
        n = pg.size()
        used_anywhere = None
        if self.find_unused_parameters:
            local = np.array([id(p) in self._used for p in self._params], np.uint8)
            used_anywhere, _ = pg.allreduce(local, 4)  # MAX
        index = {id(p): k for k, p in enumerate(self._params)}
        for bucket in self._buckets:
            bucket.work.wait()
            bucket.flat /= n
            for i, p in enumerate(bucket.params):
                if used_anywhere is not None and not used_anywhere[index[id(p)]]:
                    continue
                avg = bucket.flat[bucket.offsets[i]:bucket.offsets[i + 1]].reshape(p.shape)
                g = p.grad
                if g is not None and g._v is not None and g._v.flags.writeable:
                    np.copyto(g._v, avg)
                    g._bump()
                else:
                    p.grad = from_numpy(avg.copy())
        self._armed = False
        self._ready = set()

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes inside skip the reduction; gradients accumulate locally until the next synced one."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def join(self, divide_by_initial_world_size: bool = True, enable: bool = True,
             throw_on_early_termination: bool = False):
        raise NotImplementedError("DistributedDataParallel.join (uneven inputs) is not supported: give every "
                                  "rank the same number of batches (DistributedSampler does)")

    def register_comm_hook(self, state, hook):
        raise NotImplementedError("DistributedDataParallel.register_comm_hook is not supported yet: gradients "
                                  "are averaged with Allreduce")
