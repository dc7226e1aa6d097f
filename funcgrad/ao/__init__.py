"""torch.ao: quantization (torch.ao.quantization) and its modules (torch.ao.nn)."""
from . import quantization, nn  # noqa: F401  (quantization first: ao.nn uses its observers)

__all__ = ["nn", "quantization"]
