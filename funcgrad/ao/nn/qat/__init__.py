"""torch.ao.nn.qat: Linear and Conv2d for quantization-aware training: their weights pass through a FakeQuantize
(qconfig.weight()) in forward, so training sees the rounding that convert will apply; LinearReLU / ConvReLU2d
apply ReLU after."""
from __future__ import annotations

from ....nn import functional as F
from ....nn.modules.container import Sequential as _Sequential
from ....nn.modules.conv import Conv2d as _Conv2d
from ....nn.modules.linear import Linear as _Linear

__all__ = ["Linear", "Conv2d", "LinearReLU", "ConvReLU2d"]


class _FakeQuantWeight:
    """A float layer whose forward sees its weight through `weight_fake_quant` (then ReLU when _relu)."""
    _relu = False

    def _attach(self, qconfig):
        if qconfig is None:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight()

    def forward(self, input):
        y = self._apply_weight(input, self.weight_fake_quant(self.weight), self.bias)
        return F.relu(y) if self._relu else y

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The QAT module of a float (or fused float + ReLU) module with a qconfig, sharing its parameters."""
        inner = mod[0] if isinstance(mod, _Sequential) else mod
        qat = cls(*cls._shape_args(inner), qconfig=mod.qconfig)
        qat.weight, qat.bias = inner.weight, inner.bias
        return qat


class Linear(_FakeQuantWeight, _Linear):
    """nn.Linear whose weight is fake-quantized in forward."""

    def __init__(self, in_features, out_features, bias=True, qconfig=None, device=None, dtype=None):
        super().__init__(in_features, out_features, bias)
        self._attach(qconfig)

    def _apply_weight(self, input, weight, bias):
        return F.linear(input, weight, bias)

    @staticmethod
    def _shape_args(lin):
        return (lin.in_features, lin.out_features, lin.bias is not None)


class LinearReLU(Linear):
    _relu = True


class Conv2d(_FakeQuantWeight, _Conv2d):
    """nn.Conv2d whose weight is fake-quantized in forward."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", qconfig=None, device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation,
                         groups=groups, bias=bias, padding_mode=padding_mode)
        self._attach(qconfig)

    def _apply_weight(self, input, weight, bias):
        return self._conv_forward(input, weight, bias)

    @staticmethod
    def _shape_args(conv):
        return (conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride, conv.padding, conv.dilation,
                conv.groups, conv.bias is not None, conv.padding_mode)


class ConvReLU2d(Conv2d):
    _relu = True
