"""torch.nn.grad: the gradients of a convolution with respect to its input and to its weight, given the
gradient of its output (what a custom autograd.Function wrapping a convolution returns from backward).

A convolution is linear in each of input and weight, so each is the vjp of the convolution at zero in that
argument; it is itself differentiable (with respect to the other argument and grad_output)."""
from __future__ import annotations

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from .. import autograd as _autograd
from ..autograd import enable_grad as _enable_grad
from . import functional as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]


def _vjp(conv, which, size, other, grad_output, stride, padding, dilation, groups):
    size = tuple(int(s) for s in size)
    with _enable_grad():
        z = _fg.zeros(size, dtype=grad_output.dtype).requires_grad_()
        x, w = (z, other) if which == "input" else (other, z)
        y = conv(x, w, None, stride, padding, dilation, groups)
        if tuple(y.shape) != tuple(grad_output.shape):
            raise RuntimeError(f"conv {which} gradient: grad_output has shape {list(grad_output.shape)} but the "
                               f"convolution gives {list(y.shape)} for {which} size {list(size)}")
        keep = other.requires_grad or grad_output.requires_grad
        g, = _autograd.grad(y, z, grad_output, create_graph=keep)
    return g


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _vjp(F.conv1d, "input", input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _vjp(F.conv1d, "weight", weight_size, input, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _vjp(F.conv2d, "input", input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _vjp(F.conv2d, "weight", weight_size, input, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _vjp(F.conv3d, "input", input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _vjp(F.conv3d, "weight", weight_size, input, grad_output, stride, padding, dilation, groups)
