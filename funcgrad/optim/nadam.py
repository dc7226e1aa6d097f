"""torch.optim.nadam's module path, which torch pickles name classes by: re-exports."""
from .nadam_radam import NAdam  # noqa: F401

__all__ = ["NAdam"]
