"""torch.nn.parallel.DistributedDataParallel over funcgrad.distributed's process groups.

At construction the module's parameters and buffers are broadcast from rank 0, so every rank starts equal.
Parameters are grouped into buckets (reverse registration order, which is roughly the order backward
produces gradients; about bucket_cap_mb each, the first one 1 MB with the default cap, so reduction starts
early). A hook on each parameter copies its gradient into its bucket once accumulated; a full bucket is
reduced with one non-blocking Allreduce while backward goes on. Buckets start in index order on every rank
(MPI needs the same order of collectives everywhere). When the last bucket has started, the reductions are awaited and
every parameter's .grad becomes the average over ranks, so training on N ranks equals training on the
concatenated batch. `no_sync()` skips the reduction (gradients accumulate locally until the next synced
backward). With find_unused_parameters=True, parameters the forward pass did not reach count as ready with
zero gradients, and a parameter no rank used keeps its .grad as it was.

`register_comm_hook(state, hook)` replaces the Allreduce: each full bucket goes to `hook(state, GradBucket)`,
which returns a Future of the reduced buffer (and does its own averaging). `join()` trains on uneven inputs:
every forward inside it counts the ranks still training (one small Allreduce), and a rank whose data ran out
waits at the end of its `with` block, shadowing the others' collectives with zero gradients until all are done.
"""
from __future__ import annotations

import contextlib

import numpy as np

from ... import distributed as _dist
from ..._torch._creation import from_numpy
from ..._torch._tensor import Tensor
from ...autograd.graph import AccumulateGrad
from ..._torch.futures import Future
from ...distributed._types import GradBucket
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
        # as torch: a small first bucket (reduction starts early) only when the cap is the default
        self._first_bucket_bytes = _FIRST_BUCKET_BYTES if bucket_cap_mb is None else self.bucket_bytes_cap
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
        self._comm_hook = None   # (state, hook)
        self._join = None        # (divide_by_initial_world_size, throw_on_early_termination) inside join()
        self._n_active = None    # ranks still training in this iteration (inside join())
        self._join_steps = 0     # forward passes this rank ran inside join()

    # --- construction ---------------------------------------------------------------------------------
    def _broadcast(self, tensors, root: int = 0) -> None:
        """Every rank's tensors become those of the group's rank `root` (one flat broadcast per dtype)."""
        by_dtype: dict = {}
        for t in tensors:
            by_dtype.setdefault(t._v.dtype, []).append(t)
        for dtype, ts in by_dtype.items():
            flat = np.concatenate([t._v.reshape(-1) for t in ts]) if ts else np.zeros(0, dtype)
            self.process_group.broadcast(flat, root)
            at = 0
            for t in ts:
                n = t._v.size
                np.copyto(t._v, flat[at:at + n].reshape(t._v.shape))
                t._bump()
                at += n

    def _make_buckets(self) -> list:
        buckets, current, size, cap = [], [], 0, self._first_bucket_bytes
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
        if self._join is not None:
            self._count_active(1, int(self.require_backward_grad_sync and self.training))
            self._join_steps += 1
        self._sync_buffers()
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

    def _sync_buffers(self) -> None:
        if self.broadcast_buffers and self.require_forward_param_sync:
            buffers = list(self.module.buffers())
            if buffers:
                self._broadcast(buffers)

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
            self._start(self._next)
            self._next += 1
        if self._next == len(self._buckets):
            self._finish()

    def _start(self, b: int) -> None:
        """Start reducing bucket b: the Allreduce, or the registered communication hook."""
        bucket = self._buckets[b]
        if self._comm_hook is None:
            _, bucket.work = self.process_group.allreduce(bucket.flat, SUM, blocking=False, inplace=True)
            return
        state, hook = self._comm_hook
        grad_bucket = GradBucket(b, from_numpy(bucket.flat), bucket.params, bucket.offsets,
                                 b == len(self._buckets) - 1)
        fut = hook(state, grad_bucket)
        if not isinstance(fut, Future):
            raise TypeError(f"DistributedDataParallel: the communication hook {getattr(hook, '__name__', hook)!r} "
                            f"returned {type(fut).__name__}; it must return a torch.futures.Future of the "
                            "bucket's reduced buffer (e.g. dist.all_reduce(..., async_op=True).get_future())")
        bucket.work = fut

    def _reduced(self, bucket) -> np.ndarray:
        """The bucket's averaged gradients, once its reduction is done."""
        if self._comm_hook is None:
            bucket.work.wait()
            divide_initial = self._join is None or self._join[0]
            return bucket.flat / (self.process_group.size() if divide_initial else self._n_active)
        out = bucket.work.wait()
        out = out[0] if isinstance(out, (list, tuple)) else out
        if not isinstance(out, Tensor) or out.numel() != bucket.flat.size:
            raise TypeError("DistributedDataParallel: the communication hook's Future must hold a Tensor of the "
                            f"bucket's {bucket.flat.size} elements, got {type(out).__name__}"
                            + (f" of {out.numel()} elements" if isinstance(out, Tensor) else ""))
        return np.asarray(out.detach().numpy(), bucket.flat.dtype).reshape(-1)

    def _finish(self) -> None:
        pg = self.process_group
        used_anywhere = None
        if self.find_unused_parameters:
            local = np.array([id(p) in self._used for p in self._params], np.uint8)
            used_anywhere, _ = pg.allreduce(local, 4)  # MAX
        index = {id(p): k for k, p in enumerate(self._params)}
        for bucket in self._buckets:
            flat = self._reduced(bucket)
            for i, p in enumerate(bucket.params):
                if used_anywhere is not None and not used_anywhere[index[id(p)]]:
                    continue
                avg = flat[bucket.offsets[i]:bucket.offsets[i + 1]].reshape(p.shape)
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

    @contextlib.contextmanager
    def join(self, divide_by_initial_world_size: bool = True, enable: bool = True,
             throw_on_early_termination: bool = False):
        """Train on uneven inputs: wrap the training loop; a rank that leaves the block early takes part in the
        others' collectives (with zero gradients) until every rank has left. Gradients are divided by the
        initial world size, or with divide_by_initial_world_size=False by the ranks still training. With
        throw_on_early_termination=True every rank raises RuntimeError as soon as one has run out of data.
        On leaving, every rank takes the model of the last rank to join. Assumes each forward inside is
        followed by its backward, as in a training loop."""
        if not enable:
            yield
            return
        self._join = (bool(divide_by_initial_world_size), bool(throw_on_early_termination))
        self._join_steps = 0
        try:
            yield
            self._shadow_until_all_joined()
            self._sync_final_model()
        finally:
            self._join = self._n_active = None

    def _count_active(self, active: int, syncing: int) -> tuple:
        """One Allreduce of (am I training, will I reduce gradients) over the group: the sums."""
        counts, _ = self.process_group.allreduce(np.array([active, syncing], np.int64), SUM)
        n_active, n_sync = int(counts[0]), int(counts[1])
        self._n_active = n_active
        if self._join[1] and n_active < self.process_group.size():
            raise RuntimeError("DistributedDataParallel.join: detected at least one rank that exhausted its "
                               "inputs (throw_on_early_termination=True): throwing across all ranks")
        return n_active, n_sync

    def _shadow_until_all_joined(self) -> None:
        """This rank is out of data: mirror the others' per-iteration collectives until none is left."""
        while True:
            n_active, n_sync = self._count_active(0, 0)
            if n_active == 0:
                return
            self._sync_buffers()
            if not n_sync:
                continue
            for b, bucket in enumerate(self._buckets):
                bucket.flat[:] = 0
                self._start(b)
            if self.find_unused_parameters:
                self.process_group.allreduce(np.zeros(len(self._params), np.uint8), 4)  # MAX
            for bucket in self._buckets:
                bucket.work.wait()

    def _sync_final_model(self) -> None:
        """The ranks that joined early stopped updating: every rank takes the model of the last one to join
        (the highest group rank among those that ran the most iterations), as torch's join hook does."""
        pg = self.process_group
        key, _ = pg.allreduce(np.array([self._join_steps * pg.size() + pg.rank()], np.int64), 4)  # MAX
        self._broadcast(list(self.module.parameters()) + list(self.module.buffers()), int(key[0]) % pg.size())

    def register_comm_hook(self, state, hook) -> None:
        """Reduce each gradient bucket with `hook(state, bucket)` instead of the Allreduce (see the stock hooks
        in torch.distributed.algorithms.ddp_comm_hooks.default_hooks). Register once, before training."""
        if self._comm_hook is not None:
            raise RuntimeError("DistributedDataParallel.register_comm_hook can only be called once")
        if not callable(hook):
            raise TypeError(f"DistributedDataParallel.register_comm_hook: hook must be callable, got "
                            f"{type(hook).__name__}")
        self._comm_hook = (state, hook)
