"""torch.ao.nn.quantized.dynamic: dynamically quantized Linear and LSTM."""
from .modules import LSTM, Linear  # noqa: F401

__all__ = ["Linear", "LSTM"]
