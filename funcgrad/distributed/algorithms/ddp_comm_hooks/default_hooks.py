"""DDP's stock communication hooks (torch.distributed.algorithms.ddp_comm_hooks.default_hooks).

A hook is called as `hook(state, bucket)` for each gradient bucket, in bucket order on every rank, and returns
a Future of the reduced flat buffer; DDP writes that buffer back into the parameters' .grad. With a hook DDP
does not divide by the world size itself: the hook does (each one here divides before reducing).
"""
from __future__ import annotations

from ...._torch._dtype import bfloat16, float16
from ...._torch.futures import Future
from ... import collectives, _groups
from ..._types import GradBucket

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook"]


def _allreduce_fut(process_group, tensor) -> Future:
    """Average `tensor` over the group in place: a Future of it."""
    group = _groups._group(process_group)
    tensor.div_(group.size())
    work = collectives.all_reduce(tensor, group=process_group, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket: GradBucket) -> Future:
    """The default: average the bucket over `process_group` (None: the default group) with Allreduce."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket: GradBucket) -> Future:
    buffer = bucket.buffer()
    compressed = buffer.to(dtype)
    fut = _allreduce_fut(process_group, compressed)

    def decompress(fut):
        buffer.copy_(fut.value())
        return buffer
    return fut.then(decompress)


def fp16_compress_hook(process_group, bucket: GradBucket) -> Future:
    """Average in float16: the bucket is cast down, divided by the world size, reduced and cast back (half
    the bytes on the wire, float16's precision)."""
    return _compress_hook(float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket: GradBucket) -> Future:
    """As fp16_compress_hook, in bfloat16 (float32's range, 8 bits of mantissa)."""
    return _compress_hook(bfloat16, process_group, bucket)
