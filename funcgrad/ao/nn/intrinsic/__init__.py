"""torch.ao.nn.intrinsic: fused float modules (what fuse_modules makes): LinearReLU, ConvReLU1d / 2d / 3d,
ConvBn2d, ConvBnReLU2d, as Sequentials of their parts, which convert maps to the fused quantized modules."""
from ....nn.modules.container import Sequential
from . import quantized  # noqa: F401

__all__ = ["LinearReLU", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "ConvBn2d", "ConvBnReLU2d", "quantized"]


class _FusedModule(Sequential):
    pass


class LinearReLU(_FusedModule):
    """Linear followed by ReLU, fused for quantization."""

    def __init__(self, linear, relu):
        super().__init__(linear, relu)


class ConvReLU1d(_FusedModule):
    """Conv1d followed by ReLU, fused for quantization."""

    def __init__(self, conv, relu):
        super().__init__(conv, relu)


class ConvReLU2d(_FusedModule):
    """Conv2d followed by ReLU, fused for quantization."""

    def __init__(self, conv, relu):
        super().__init__(conv, relu)


class ConvReLU3d(_FusedModule):
    """Conv3d followed by ReLU, fused for quantization."""

    def __init__(self, conv, relu):
        super().__init__(conv, relu)


class ConvBn2d(_FusedModule):
    """Conv2d followed by BatchNorm2d (for quantization-aware training)."""

    def __init__(self, conv, bn):
        super().__init__(conv, bn)


class ConvBnReLU2d(_FusedModule):
    """Conv2d, BatchNorm2d and ReLU (for quantization-aware training)."""

    def __init__(self, conv, bn, relu):
        super().__init__(conv, bn, relu)
