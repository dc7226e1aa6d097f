"""torch.optim.radam's module path, which torch pickles name classes by: re-exports."""
from .nadam_radam import RAdam  # noqa: F401

__all__ = ["RAdam"]
