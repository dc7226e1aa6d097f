"""torch.nn.functional's lookups: embedding, embedding_bag, one_hot."""
from __future__ import annotations

import numpy as np

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ...autograd import no_grad as _no_grad
from ..._src.core.array import Array as _Array
from ..._src.prims import stop_gradient as _stop_gradient
from ..._torch import _jnp  # funcgrad.numpy with torch's dtypes
from ..._torch._dispatch import _apply1

from ..._torch._argcheck import DtypeName, dtype_error as _dtype_error
from .common import _concrete

__all__ = ["embedding", "embedding_bag", "one_hot"]



# --- embeddings ---------------------------------------------------------------------------------------
def _embedding_renorm_(weight, input, max_norm, norm_type):
    """Rescales (in place, without gradient) the rows of weight that input refers to, to norm <= max_norm."""
    with _no_grad():
        idx = _fg.unique(input.reshape(-1))
        rows = weight.index_select(0, idx)
        norms = _fg.norm(rows, norm_type, 1, keepdim=True)
        scale = _fg.where(norms > max_norm, max_norm / (norms + 1e-7), _fg.ones_like(norms))
        weight.index_copy_(0, idx, rows * scale)


def _scale_grad(out, flat, num, valid=None):
    """out unchanged in value, its gradient divided by how often each row's index occurs in flat (counting
    only the valid positions, when a mask is given)."""
    w = None if valid is None else valid.to(out.dtype)
    counts = _fg.bincount(flat, w, minlength=num).to(out.dtype)
    s = (1.0 / _fg.clamp(counts.index_select(0, flat), min=1)).unsqueeze(-1)
    d = out.detach()
    return d + (out - d) * s


def _padding_idx(padding_idx, num):
    if padding_idx is None:
        return None
    if padding_idx > 0:
        assert padding_idx < num, "Padding_idx must be within num_embeddings"
    elif padding_idx < 0:
        assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
        padding_idx += num
    return padding_idx


def _check_indices(dt, fn: str) -> None:
    """torch's embedding / embedding_bag take int64 or int32 indices only."""
    if dt != _fg.int64 and dt != _fg.int32:
        got = "CPUBoolType" if dt == _fg.bool else format(DtypeName(dt), "T")
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {got} instead (while checking arguments for {fn})")


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of weight looked up by the integer indices in input (padding_idx rows get no gradient)."""
    if sparse:
        raise NotImplementedError("embedding: sparse gradients are not supported (funcgrad has no sparse "
                                  "gradients); use sparse=False")
    _check_indices(input.dtype, "embedding")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    padding_idx = _padding_idx(padding_idx, weight.shape[0])
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    if input._v is not None and weight._v is not None:
        return _embedding_node(input._v, weight, padding_idx, scale_grad_by_freq)
    flat = input.reshape(-1).long()
    out = _fg.index_select(weight, 0, flat)
    if padding_idx is not None:
        keep = (flat != padding_idx).unsqueeze(-1)
        out = _fg.where(keep, out, out.detach())
    if scale_grad_by_freq:
        out = _scale_grad(out, flat, weight.shape[0])
    return out.reshape(tuple(input.shape) + (weight.shape[1],))


def _embedding_node(ids, weight, padding_idx, scale_grad_by_freq):
    """The rows of weight at the host indices ids as ONE node, torch's EmbeddingBackward0: a gather, whose
    rule scatter-adds the gradient into the rows; the rows at padding_idx take no gradient (stop_gradient)
    and with scale_grad_by_freq each row's gradient is divided by how often it is looked up (the value
    d + (rows - d) * s with d the rows under stop_gradient: exactly the rows)."""
    num = weight.shape[0]
    flat = ids.reshape(-1).astype(np.int64)
    if flat.size and (flat.min() < 0 or flat.max() >= num):
        raise IndexError("index out of range in self")
    shape = tuple(ids.shape) + (weight.shape[1],)
    dt = weight._v.dtype
    keep = None if padding_idx is None else _Array((flat != padding_idx)[:, None])
    scale = None
    if scale_grad_by_freq:
        counts = np.bincount(flat, minlength=num)
        scale = _Array((1.0 / np.maximum(counts[flat], 1)).astype(dt)[:, None])
    at = _Array(flat)

    def fn(w):
        rows = _jnp.take(w, at, axis=0)
        if keep is not None:
            rows = _jnp.where(keep, rows, _stop_gradient(rows))
        if scale is not None:
            d = _stop_gradient(rows)
            rows = d + (rows - d) * scale
        return _jnp.reshape(rows, shape)
    return _apply1("Embedding", fn, weight)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """Sums, means or maxes of bags of embeddings: rows of a 2D input, or segments of a 1D input at offsets."""
    if sparse:
        raise NotImplementedError("embedding_bag: sparse gradients are not supported (funcgrad has no sparse "
                                  "gradients); use sparse=False")
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is not None, "
                         f"then it must have the same shape as the input ({tuple(input.shape)})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    # (torch promotes 1-D indices and offsets to one dtype, then wants it int64 or int32)
    _check_indices(input.dtype if offsets is None or input.dim() != 1 else _fg.promote_types(input.dtype,
                                                                                            offsets.dtype),
                   "embedding_bag")
    if per_sample_weights is not None and per_sample_weights._np_dtype() != weight._np_dtype():
        raise _dtype_error("Expected tensor for argument #1 'weight' to have the same type as tensor for argument #1 "
                           "'per_sample_weights'; but type {0:T} does not equal {1:T} (while checking arguments for "
                           "embedding_bag)", weight, per_sample_weights)
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences. However, found offsets of type "
                             f"{type(offsets).__module__.split('.')[0]}.{type(offsets).__name__}")
        b, length = input.shape
        ids = input
        mask = _fg.ones((b, length), dtype=_fg.bool)
        psw = per_sample_weights
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        n = input.shape[0]
        offs = offsets.long()
        if offs.numel() and _concrete(offs) and int(offs[0].item()) != 0:
            raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                               f"from position 0. However, got {int(offs[0].item())}")
        if include_last_offset:
            starts, ends = offs[:-1], offs[1:]
        else:
            starts = offs
            ends = _fg.cat([offs[1:], _fg.tensor([n], dtype=_fg.int64)])
        lengths = _fg.clamp(ends, max=n) - starts
        b = starts.shape[0]
        length = int(lengths.max().item()) if b else 0
        pos = _fg.arange(length)
        mask = pos.unsqueeze(0) < lengths.unsqueeze(1)
        where_ = _fg.where(mask, starts.unsqueeze(1) + pos.unsqueeze(0), _fg.zeros((), dtype=_fg.int64))
        ids = input.long()[where_] if n else _fg.zeros((b, length), dtype=_fg.int64)
        psw = per_sample_weights[where_] if per_sample_weights is not None and n else per_sample_weights
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                  "on GitHub.")
    if scale_grad_by_freq and mode == "max":
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    pidx = _padding_idx(padding_idx, weight.shape[0])
    if pidx is not None:
        mask = mask & (ids != pidx)
    d = weight.shape[1]
    if ids.numel() == 0:
        return _fg.zeros((b, d), dtype=weight.dtype) + weight.sum() * 0
    emb = _fg.index_select(weight, 0, ids.reshape(-1))
    if scale_grad_by_freq:
        emb = _scale_grad(emb, ids.reshape(-1), weight.shape[0], mask.reshape(-1))
    emb = emb.reshape(tuple(ids.shape) + (d,))
    m = mask.unsqueeze(-1)
    count = mask.sum(1, keepdim=True)
    if mode == "max":
        picked = _fg.where(m, emb, _fg.full((), float("-inf"), dtype=emb.dtype)).max(1).values
        return _fg.where(count > 0, picked, _fg.zeros((), dtype=emb.dtype))
    w = mask.to(emb.dtype)
    if psw is not None:
        w = w * psw
    total = (emb * w.unsqueeze(-1)).sum(1)
    if mode == "sum":
        return total
    return total / _fg.clamp(count, min=1).to(emb.dtype)


def one_hot(tensor, num_classes=-1):
    """One-hot int64 encoding of class indices (num_classes=-1: max + 1)."""
    if tensor.dtype != _fg.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() and _concrete(tensor):
        lo, hi = int(tensor.min().item()), int(tensor.max().item())
        if lo < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = hi + 1
        elif hi >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    elif num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max().item()) + 1
    ar = _fg.arange(num_classes)
    return (tensor.unsqueeze(-1) == ar).long()
