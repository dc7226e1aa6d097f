"""torch.nn.functional's attention: scaled_dot_product_attention and multi_head_attention_forward."""
from __future__ import annotations

import math
import warnings

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from .dropout import dropout as _dropout
from .linear import linear as _linear
from ..._torch._argcheck import dtype_error as _dtype_error
from .common import _F32

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]



def _safe_softmax(scores):
    """softmax over the last dim, giving 0 (not NaN) on rows where every score is -inf."""
    dead = (scores == float("-inf")).all(-1, keepdim=True)
    p = _fg.softmax(_fg.where(dead, _fg.zeros_like(scores), scores), -1)
    return _fg.where(dead, _fg.zeros_like(p), p)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None, enable_gqa: bool = False):
    """softmax(Q K^T * scale + mask) V over the last two dims (query (..., L, E), key (..., S, E),
    value (..., S, Ev)). A bool attn_mask marks allowed positions; is_causal masks j > i."""
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    qd = query._np_dtype()
    if key._np_dtype() != qd or value._np_dtype() != qd:
        raise _dtype_error("Expected query, key, and value to have the same dtype, but got query.dtype: {0:c} "
                           "key.dtype: {1:c} and value.dtype: {2:c} instead.", query, key, value)
    if attn_mask is not None and attn_mask._np_dtype() != qd:  # a bool mask, a float32 one, or the query's dtype
        md = attn_mask._np_dtype()
        if md != _F32 and md.kind != "b":
            raise _dtype_error("Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                               "attn_mask.dtype: {0:c} and  query.dtype: {1:c} instead.", attn_mask, query)
        if md == _F32:
            attn_mask = attn_mask.to(query.dtype)
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(f"scaled_dot_product_attention: query and key must have the same embedding "
                           f"dimension, got query {list(query.shape)} and key {list(key.shape)}")
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: key and value must have the same sequence length, "
                           f"got key {list(key.shape)} and value {list(value.shape)}")
    L, S = query.shape[-2], key.shape[-2]
    if enable_gqa and query.dim() >= 3 and key.dim() >= 3:
        hq, hk = query.shape[-3], key.shape[-3]
        if hk != hq:
            if hk == 0 or hq % hk:
                raise RuntimeError(f"scaled_dot_product_attention: number of heads in key/value ({hk}) must "
                                   f"divide the number of heads in query ({hq}) when enable_gqa=True")
            key = key.repeat_interleave(hq // hk, -3)
            value = value.repeat_interleave(hq // value.shape[-3], -3)
    scale_factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = _fg.matmul(query, key.transpose(-2, -1)) * scale_factor
    if is_causal:
        keep = _fg.ones(L, S, dtype=_fg.bool).tril()
        scores = scores.masked_fill(keep.logical_not(), float("-inf"))
    elif attn_mask is not None:
        if attn_mask.dtype == _fg.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask
    p = _safe_softmax(scores)
    if dropout_p > 0.0:
        p = _dropout(p, dropout_p, True)
    return _fg.matmul(p, value)


def _canonical_mask(mask, name, target_dtype, other=None, other_name=""):
    """A bool mask (True = masked out) becomes a float mask with -inf; a float mask stays as it is. With the
    other mask of the pair (`other`), a dtype differing from its warns as torch does (deprecated mixing)."""
    if mask is None:
        return None
    if other is not None and mask.dtype != other.dtype and (mask.dtype == _fg.bool or mask.is_floating_point()):
        warnings.warn(f"Support for mismatched {name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=3)
    if mask.dtype == _fg.bool:
        return _fg.zeros(tuple(mask.shape), dtype=target_dtype).masked_fill(mask, float("-inf"))
    if not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def _pad_last(mask):
    """Append one zero column (a key that is never masked) to a float mask."""
    if mask is None:
        return None
    return _fg.cat([mask, _fg.zeros(tuple(mask.shape[:-1]) + (1,), dtype=mask.dtype)], -1)


def _check_mha_ranks(nd: int, key, value, key_padding_mask, attn_mask) -> None:
    """torch's checks that key, value and the masks match a query of rank nd (3: batched, 2: unbatched)."""
    which = "batched (3-D)" if nd == 3 else "unbatched (2-D)"
    if key.dim() != nd or value.dim() != nd:
        raise AssertionError(f"For {which} `query`, expected `key` and `value` to be {nd}-D but found "
                             f"{key.dim()}-D and {value.dim()}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != nd - 1:
        raise AssertionError(f"For {which} `query`, expected `key_padding_mask` to be `None` or {nd - 1}-D "
                             f"but found {key_padding_mask.dim()}-D tensor instead")
    if attn_mask is not None and attn_mask.dim() not in (2, 3):
        raise AssertionError(f"For {which} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                             f"found {attn_mask.dim()}-D tensor instead")


def _split_heads(name: str, x, static, n: int, head_dim: int):
    """Keys or values (S, N, E) as (N * heads, S, head_dim) = (n, S, head_dim), or the given static ones after
    checking their shape."""
    if static is None:
        return x.reshape(x.shape[0], n, head_dim).transpose(0, 1)
    if tuple(static.shape[::2]) != (n, head_dim):
        raise AssertionError(f"expecting {name} of size {(n, '*', head_dim)}, but got {tuple(static.shape)}")
    return static


def multi_head_attention_forward(query, key, value, embed_dim_to_check: int, num_heads: int, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn: bool, dropout_p: float,
                                 out_proj_weight, out_proj_bias, training: bool = True, key_padding_mask=None,
                                 need_weights: bool = True, attn_mask=None, use_separate_proj_weight: bool = False,
                                 q_proj_weight=None, k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights: bool = True, is_causal: bool = False):
    """Multi-head attention on sequence-first inputs (L, N, E) (or unbatched (L, E)).
    Returns (output (L, N, E), weights (N, L, S) averaged over heads, or per head, or None)."""
    if query.dim() not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D "
                             f"query tensor")
    batched = query.dim() == 3
    _check_mha_ranks(query.dim(), key, value, key_padding_mask, attn_mask)
    if not batched:
        if attn_mask is not None and attn_mask.dim() == 3 and attn_mask.shape[0] != num_heads:
            raise AssertionError(f"Expected `attn_mask` shape to be {(num_heads, query.shape[0], key.shape[0])} "
                                 f"but got {tuple(attn_mask.shape)}")
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:2])} do not match value's "
                                 f"{tuple(value.shape[:2])}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", query.dtype, attn_mask, "attn_mask")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the causal mask is applied by scaled_dot_product_attention
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", query.dtype)
        if key_padding_mask is not None:
            is_causal = False

    # input projections
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        bq = bk = bv = None
        if in_proj_bias is not None:
            bq, bk, bv = in_proj_bias.chunk(3)
        if query is key and key is value:
            q, k, v = _linear(query, in_proj_weight, in_proj_bias).chunk(3, -1)
        else:
            wq, wk, wv = in_proj_weight.chunk(3)
            q = _linear(query, wq, bq)
            if key is value:
                k, v = _linear(key, _fg.cat([wk, wv]), None if bk is None else _fg.cat([bk, bv])).chunk(2, -1)
            else:
                k, v = _linear(key, wk, bk), _linear(value, wv, bv)
    else:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight, k_proj_weight or "
                                 "v_proj_weight is None")
        bq = bk = bv = None
        if in_proj_bias is not None:
            bq, bk, bv = (in_proj_bias[:embed_dim], in_proj_bias[embed_dim:2 * embed_dim],
                          in_proj_bias[2 * embed_dim:])
        q = _linear(query, q_proj_weight, bq)
        k, v = _linear(key, k_proj_weight, bk), _linear(value, v_proj_weight, bv)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key/value.")
        k = _fg.cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = _fg.cat([v, bias_v.expand(1, bsz, embed_dim)])
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    elif (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k and bias_v must both be given or both be None")

    # (L, N, E) -> (N * heads, L, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _split_heads("static_k", k, static_k, bsz * num_heads, head_dim)
    v = _split_heads("static_v", v, static_v, bsz * num_heads, head_dim)
    if add_zero_attn:
        zshape = (bsz * num_heads, 1, head_dim)
        k = _fg.cat([k, _fg.zeros(zshape, dtype=k.dtype)], 1)
        v = _fg.cat([v, _fg.zeros(zshape, dtype=v.dtype)], 1)
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    src_len = k.shape[1]

    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{tuple(key_padding_mask.shape)}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0

    if need_weights:
        if attn_mask is not None and attn_mask._np_dtype() != q._np_dtype():  # (torch's baddbmm(mask, q, k^T))
            raise _dtype_error("Input dtypes must be the same, got: input {0:c}, batch1: {1:c}, batch2: {2:c}",
                               attn_mask, q, k)
        scores = _fg.matmul(q * math.sqrt(1.0 / head_dim), k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        w = _fg.softmax(scores, -1)
        if dropout_p > 0.0:
            w = _dropout(w, dropout_p, True)
        out = _fg.bmm(w, v)  # (N * heads, L, head_dim)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = _linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
        w = w.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            w = w.mean(1)
        if not batched:
            out, w = out.squeeze(1), w.squeeze(0)
        return out, w
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = _linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    if not batched:
        out = out.squeeze(1)
    return out, None
