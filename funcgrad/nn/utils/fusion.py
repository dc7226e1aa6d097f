"""torch.nn.utils.fusion: fold an eval-mode BatchNorm into the preceding convolution or linear layer."""
from __future__ import annotations

import copy

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose: bool = False):
    """(weight, bias) of the convolution that computes bn(conv(x)) with bn's running statistics."""
    dt = conv_w.dtype
    if conv_b is None:
        conv_b = _fg.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = _fg.ones_like(bn_rm)
    if bn_b is None:
        bn_b = _fg.zeros_like(bn_rm)
    var_rsqrt = _fg.rsqrt(bn_rv + bn_eps)
    shape = [1] * conv_w.dim()
    shape[1 if transpose else 0] = -1
    w = (conv_w * (bn_w * var_rsqrt).reshape(shape)).to(dt)
    b = ((conv_b - bn_rm) * var_rsqrt * bn_w + bn_b).to(dt)
    return Parameter(w, conv_w.requires_grad), Parameter(b, conv_b.requires_grad)


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A copy of conv with bn (both in eval mode) folded into its weight and bias."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("BatchNorm must track running statistics to be fused")
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The weight and bias of one Linear equal to a Linear followed by a BatchNorm in eval mode (running statistics folded in)."""
    if linear_b is None:
        linear_b = _fg.zeros_like(bn_rm)
    scale = bn_w * _fg.rsqrt(bn_rv + bn_eps)
    w = linear_w * scale.unsqueeze(-1)
    b = (linear_b - bn_rm) * scale + bn_b
    return Parameter(w, linear_w.requires_grad), Parameter(b, linear_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of linear with bn (both in eval mode) folded in."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features must equal bn.num_features or bn.num_features must be 1")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused
