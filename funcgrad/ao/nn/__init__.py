"""torch.ao.nn: quantized (static and dynamic), fused (intrinsic) and quantization-aware-training (qat) modules."""
from . import quantized, intrinsic, qat  # noqa: F401

__all__ = ["quantized", "intrinsic", "qat"]
