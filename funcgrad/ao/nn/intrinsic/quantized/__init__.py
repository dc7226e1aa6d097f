"""torch.ao.nn.intrinsic.quantized: the quantized fused modules LinearReLU and ConvReLU1d / 2d / 3d."""
from ...quantized.modules import LinearReLU  # noqa: F401
from ...quantized.conv import ConvReLU1d, ConvReLU2d, ConvReLU3d  # noqa: F401

__all__ = ["LinearReLU", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d"]
