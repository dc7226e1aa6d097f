"""The torch.* names of nn.functional operations (torch.conv2d, torch.batch_norm, torch.dropout, torch.kl_div,
...), with the argument orders and defaults of their torch.* signatures (which differ from F's in places:
batch_norm's parameter order, embedding's (weight, indices), losses' integer `reduction`, max_pool1d's
`stride=()`; the losses' torch.* bindings reduce nothing unless `reduction` is given, 0/1/2 meaning none/mean/sum).
Each forwards to funcgrad.nn.functional, imported lazily (nn is built on this package)."""
from __future__ import annotations

import functools

_RED = {0: "none", 1: "mean", 2: "sum"}


def _F():
    from ..nn import functional
    return functional


def _red(r):
    if isinstance(r, str):
        return r
    if r not in _RED:
        raise ValueError(f"{r} is not a valid value for reduction")
    return _RED[r]


def _forward(name, doc=None):
    def fn(*args, **kwargs):
        return getattr(_F(), name)(*args, **kwargs)
    fn.__name__ = name
    fn.__doc__ = doc or f"torch.{name}: funcgrad.nn.functional.{name}."
    return fn


for _n in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "avg_pool1d",
           "adaptive_avg_pool1d", "bilinear", "pixel_shuffle", "pixel_unshuffle", "prelu", "hardshrink", "pdist",
           "pairwise_distance", "channel_shuffle", "selu", "celu", "selu_", "celu_", "threshold", "threshold_",
           "rrelu", "rrelu_"):
    globals()[_n] = _forward(_n)
native_channel_shuffle = _forward("channel_shuffle")


def _pool(name):
    def fn(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        return getattr(_F(), name)(input, kernel_size, stride if stride not in ((), []) else None, padding,
                                   dilation, ceil_mode)
    fn.__name__ = name
    return fn


max_pool1d = _pool("max_pool1d")
max_pool2d = _pool("max_pool2d")
max_pool3d = _pool("max_pool3d")
max_pool1d_with_indices = _pool("max_pool1d_with_indices")


def adaptive_max_pool1d(input, output_size):
    """(values, indices), as torch.adaptive_max_pool1d returns both."""
    return _F().adaptive_max_pool1d(input, output_size, return_indices=True)


def dropout(input, p, train):
    return _F().dropout(input, p, train)


def dropout_(input, p, train):
    return _F().dropout(input, p, train, inplace=True)


def alpha_dropout(input, p, train):
    return _F().alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    return _F().alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input, p, train):
    return _F().feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    return _F().feature_alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input, p, train):
    """Dropout of whole channels (dim 1)."""
    return _F().dropout2d(input, p, train) if input.ndim != 3 else _F().dropout1d(input, p, train)


def feature_dropout_(input, p, train):
    return input.copy_(feature_dropout(input, p, train))


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    return _F().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return _F().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    return _F().group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return _F().rms_norm(input, normalized_shape, weight, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return _F().embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                          scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def constant_pad_nd(input, pad, value=0):
    return _F().pad(input, pad, "constant", value)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return _F().cosine_embedding_loss(input1, input2, target, margin, reduction=_red(reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return _F().hinge_embedding_loss(input, target, margin, reduction=_red(reduction))


def kl_div(input, target, reduction=0, *, log_target=False):
    return _F().kl_div(input, target, reduction=_red(reduction), log_target=log_target)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    return _F().margin_ranking_loss(input1, input2, target, margin, reduction=_red(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return _F().poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_red(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, reduction=0):
    return _F().triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=_red(reduction))


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    return _F().binary_cross_entropy_with_logits(input, target, weight, reduction=_red(reduction),
                                                 pos_weight=pos_weight)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False):
    return _F().ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _red(reduction), zero_infinity)


__all__ = [n for n, v in list(globals().items()) if callable(v) and not n.startswith("_")
           and getattr(v, "__module__", None) == __name__]
_ = functools
