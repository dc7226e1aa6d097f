"""torch.ao.nn.quantized: modules over quantized tensors (Quantize, DeQuantize, Linear, Conv2d) and the dynamic
package."""
from .modules import Conv2d, DeQuantize, Linear, LinearPackedParams, Quantize  # noqa: F401
from . import dynamic  # noqa: F401

__all__ = ["Quantize", "DeQuantize", "Linear", "Conv2d", "LinearPackedParams", "dynamic"]
