"""torch.signal: signal-processing functions; today the window functions of torch.signal.windows."""
from . import windows  # noqa: F401

__all__ = ["windows"]
