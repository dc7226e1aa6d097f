"""Shared plumbing of torch.nn.functional's families: argument tuples, reductions and the legacy
size_average/reduce arguments, in-place application (`inplace=True`, `op_`)."""
from __future__ import annotations

import warnings
import numpy as np
import numpy as _np
from typing import Sequence, Union

from ..._torch._tensor import _traced
from ..._torch._views import _inplace as _tensor_inplace

__all__ = []


_REDUCTIONS = ("none", "mean", "sum")


def _pair(v, n=2):
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return tuple(int(v[0]) for _ in range(n))
        return tuple(int(x) for x in v)
    return tuple(int(v) for _ in range(n))


def _size(t) -> str:
    return f"torch.Size({list(t.shape)})"


def _concrete(*ts) -> bool:
    """Whether the tensors hold concrete values (so host-side value checks are possible)."""
    return all(t is None or getattr(t, "_v", None) is not None for t in ts)


# --- in-place plumbing ------------------------------------------------------------------------------
def _inplace_apply(input, fn, name):
    """input <- fn(input), written into input's buffer and recorded as one in-place op (torch's `op_`)."""
    def afn(a):
        r = fn(_traced(a))
        return r._a if r._v is None else r._arr()
    return _tensor_inplace(name, input, afn)


def _maybe_inplace(input, inplace, fn, name):
    return _inplace_apply(input, fn, name) if inplace else fn(input)


# --- reductions and the legacy size_average/reduce arguments ------------------------------------------
def _legacy_get_string(size_average, reduce, emit_warning=True):
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = ("mean" if size_average else "sum") if reduce else "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                      stacklevel=3)
    return ret


def _reduction(size_average, reduce, reduction, allowed=_REDUCTIONS):
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    if reduction not in allowed:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_target_size(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({_size(target)}) that is different to the input size ({_size(input)}). "
                      "This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)


def _weighted(loss, weight, input, reduction, mean_by_weight=True):
    if weight is None:
        return _reduce(loss, reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "mean" and mean_by_weight:
        return loss.sum() / weight.sum()
    return _reduce(loss, reduction)


def _unbatched(input, batched, fn):
    if batched:
        return fn(input)
    out = fn(input.unsqueeze(0))
    return out.squeeze(0)


_F32 = _np.dtype(_np.float32)


_IntOrTuple = Union[int, Sequence[int]]


def _ntuple(op, name, v, n):
    """v as n ints (an int is repeated); a sequence of the wrong length is a RuntimeError as in torch."""
    if isinstance(v, (tuple, list)):
        t = tuple(int(x) for x in v)
        if len(t) == 1 and n > 1:
            t = t * n
        if len(t) != n:
            raise RuntimeError(f"{op}: expected {name} to be a single integer value or a list of {n} values "
                               f"to match the {n}d operation, but got {name}={list(t)}")
        return t
    return (int(v),) * n


def _dt_name(t):
    return str(t.dtype).replace("funcgrad.", "").replace("torch.", "")


def _np_dtype(t):
    return np.dtype(t._np_dtype())


def _shape(t):
    return list(t.shape)
