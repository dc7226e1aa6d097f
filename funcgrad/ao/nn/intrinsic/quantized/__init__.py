"""torch.ao.nn.intrinsic.quantized: the quantized fused modules LinearReLU and ConvReLU2d."""
from ...quantized.modules import ConvReLU2d, LinearReLU  # noqa: F401

__all__ = ["LinearReLU", "ConvReLU2d"]
