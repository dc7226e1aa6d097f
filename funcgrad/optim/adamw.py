"""torch.optim.adamw's module path, which torch pickles name classes by: re-exports."""
from .adam import AdamW  # noqa: F401

__all__ = ["AdamW"]
