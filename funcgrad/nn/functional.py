"""torch.nn.functional: the functional forms of the layers and losses, built on funcgrad's Tensor ops.
Convolution and pooling apply funcgrad.lax primitives through the recorded-op mechanism of
funcgrad.tensor (`_apply`), so autograd comes from the primitives' own derivative rules."""
from __future__ import annotations

import math

import funcgrad as _fg
from ..tensor._tensor import _apply

_REDUCTIONS = ("none", "mean", "sum")


def _pair(v, n=2):
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return tuple(int(v[0]) for _ in range(n))
        return tuple(int(x) for x in v)
    return tuple(int(v) for _ in range(n))


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


# --- linear / activations --------------------------------------------------------------------------
def linear(input, weight, bias=None):
    out = _fg.matmul(input, weight.t()) if weight.dim() == 2 else _fg.matmul(input, weight)
    return out if bias is None else out + bias


def bilinear(input1, input2, weight, bias=None):
    out = _fg.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


def relu(input, inplace=False):
    return _fg.relu(input)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return _fg.clamp(input, min_val, max_val)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _fg.where(input > 0, input, input * negative_slope)


def elu(input, alpha=1.0, inplace=False):
    return _fg.where(input > 0, input, alpha * (_fg.exp(_fg.clamp(input, max=0)) - 1))


def sigmoid(input):
    return _fg.sigmoid(input)


def tanh(input):
    return _fg.tanh(input)


def gelu(input, approximate="none"):
    if approximate == "none":
        return input * 0.5 * (1.0 + _fg.erf(input * (1.0 / math.sqrt(2.0))))
    if approximate == "tanh":
        return 0.5 * input * (1.0 + _fg.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 * input ** 3)))
    raise RuntimeError("approximate argument must be either none or tanh.")


def silu(input, inplace=False):
    return input * _fg.sigmoid(input)


def softplus(input, beta=1.0, threshold=20.0):
    z = input * beta
    soft = (_fg.log1p(_fg.exp(-_fg.abs(z))) + _fg.clamp(z, min=0)) / beta
    return _fg.where(z > threshold, input, soft)


def _softmax_dim(ndim):
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.dim())
    return _fg.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.dim())
    return _fg.log_softmax(input, dim, dtype=dtype)


def dropout(input, p=0.5, training=True, inplace=False):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    mask = _fg.empty(tuple(input.shape), dtype=input.dtype).bernoulli_(1.0 - p)
    return input * mask / (1.0 - p)


# --- normalisation ---------------------------------------------------------------------------------
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5):
    dims = [0] + list(range(2, input.dim()))
    shape = [1, -1] + [1] * (input.dim() - 2)
    if training:
        n = input.numel() // input.shape[1]
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                             f"{list(input.shape)}")
        mean = input.mean(dims)
        var = ((input - mean.reshape(shape)) ** 2).mean(dims)
        if running_mean is not None:
            with _fg.no_grad():
                running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
                running_var.mul_(1 - momentum).add_(var.detach() * (momentum * n / (n - 1)))
    else:
        mean, var = running_mean, running_var
    out = (input - mean.reshape(shape)) * _fg.rsqrt(var.reshape(shape) + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    k = len(normalized_shape)
    if tuple(input.shape[input.dim() - k:]) != tuple(normalized_shape):
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in normalized_shape)}], but got input of size"
                           f"{list(input.shape)}")
    dims = list(range(input.dim() - k, input.dim()))
    mean = input.mean(dims, keepdim=True)
    var = ((input - mean) ** 2).mean(dims, keepdim=True)
    out = (input - mean) * _fg.rsqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: max_norm, scale_grad_by_freq and sparse are not supported yet")
    flat = input.reshape(-1)
    out = _fg.index_select(weight, 0, flat)
    if padding_idx is not None:
        if padding_idx < 0:
            padding_idx += weight.shape[0]
        keep = (flat != padding_idx).unsqueeze(-1)
        out = _fg.where(keep, out, out.detach())
    return out.reshape(tuple(input.shape) + (weight.shape[1],))


def one_hot(tensor, num_classes=-1):
    if tensor.dtype != _fg.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(tensor.max().item()) + 1 if tensor.numel() else 0
    ar = _fg.arange(num_classes)
    return (tensor.unsqueeze(-1) == ar).long()


# --- losses -----------------------------------------------------------------------------------------
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _reduce((input - target) ** 2, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _reduce(_fg.abs(input - target), reduction)


def _to_last(x):
    """(N, C, d1, ...) -> (N*d1*..., C)."""
    if x.dim() > 2:
        x = x.movedim(1, -1)
    return x.reshape(-1, x.shape[-1])


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if input.dim() == 1:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    out_shape = tuple(target.shape)
    logp = _to_last(input)
    t = target.reshape(-1)
    valid = t != ignore_index
    tc = _fg.where(valid, t, _fg.zeros_like(t))
    picked = -logp.gather(1, tc.unsqueeze(1)).squeeze(1)
    w = weight[tc] if weight is not None else _fg.ones_like(picked)
    w = w * valid.to(picked.dtype)
    loss = picked * w
    if reduction == "none":
        return loss.reshape(out_shape)
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / w.sum()


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    cdim = 0 if input.dim() == 1 else 1
    logp = log_softmax(input, cdim)
    C = input.shape[cdim]
    if target.is_floating_point():  # class probabilities
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / C
        wshape = [1] * input.dim()
        wshape[cdim] = C
        term = logp * target
        if weight is not None:
            term = term * weight.reshape(wshape)
        loss = -term.sum(cdim)
        if reduction == "mean":
            return loss.sum() / (input.numel() // C)
        return _reduce(loss, reduction)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return nll
    if input.dim() == 1:
        logp, target = logp.unsqueeze(0), target.unsqueeze(0)
    lp = _to_last(logp)
    t = target.reshape(-1)
    valid = (t != ignore_index).to(lp.dtype)
    smooth = -(lp * weight).sum(1) if weight is not None else -lp.sum(1)
    smooth = smooth * valid
    if reduction == "none":
        smooth = smooth.reshape(tuple(target.shape)) if input.dim() > 1 else smooth.reshape(())
    elif reduction == "sum":
        smooth = smooth.sum()
    else:
        if weight is not None:
            tc = _fg.where(t != ignore_index, t, _fg.zeros_like(t))
            smooth = smooth.sum() / (weight[tc] * valid).sum()
        else:
            smooth = smooth.sum() / valid.sum()
    return (1 - label_smoothing) * nll + (label_smoothing / C) * smooth


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    loss = -(target * _fg.clamp(_fg.log(input), min=-100) + (1 - target) * _fg.clamp(_fg.log(1 - input), min=-100))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    sp = _fg.log1p(_fg.exp(-_fg.abs(input))) + _fg.clamp(-input, min=0)  # log(1 + exp(-x))
    if pos_weight is not None:
        lw = 1 + (pos_weight - 1) * target
        loss = (1 - target) * input + lw * sp
    else:
        loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# Convolution, pooling and resampling live in their own module; attention in another.
from ._functional_conv import *  # noqa: E402,F401,F403
from ._functional_attention import *  # noqa: E402,F401,F403
