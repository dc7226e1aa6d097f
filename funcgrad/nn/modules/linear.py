"""Identity, Linear and Bilinear layers."""
from __future__ import annotations

import math

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ['Identity', 'Linear', 'Bilinear']


def _empty(*shape, dtype=None):
    return _fg.empty(tuple(shape), dtype=dtype)


def _add_bias(module: Module, bias: bool, out_features: int, dtype) -> None:
    """module.bias: an uninitialised (out_features,) Parameter when bias, else registered as None (as torch,
    so that state_dict and named_parameters agree)."""
    if bias:
        module.bias = Parameter(_empty(out_features, dtype=dtype))
    else:
        module.register_parameter("bias", None)


class Identity(Module):
    """Returns its input unchanged (arguments are accepted and ignored)."""
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x @ weight.T + bias, over the last dim of x; weight (out, in) and bias drawn from U(-k, k), k = in ** -0.5.

    Examples:
        >>> import funcgrad as torch
        >>> _ = torch.manual_seed(0)
        >>> layer = torch.nn.Linear(3, 2)
        >>> layer(torch.ones(4, 3)).shape
        torch.Size([4, 2])
        >>> layer.weight
        Parameter containing:
        tensor([[-0.0043,  0.3097, -0.4752],
                [-0.4249, -0.2224,  0.1548]], requires_grad=True)
    """
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_empty(out_features, in_features, dtype=dtype))
        _add_bias(self, bias, out_features, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    """The output projection of MultiheadAttention: a Linear under torch's name, so its pickles and repr match."""


class Bilinear(Module):
    """y = x1^T A x2 + b, with A of shape (out_features, in1_features, in2_features)."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(_empty(out_features, in1_features, in2_features, dtype=dtype))
        _add_bias(self, bias, out_features, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.shape[1]) if self.weight.shape[1] else 0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")

