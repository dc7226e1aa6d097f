"""torch.optim.adamax's module path, which torch pickles name classes by: re-exports."""
from .adadelta_adamax import Adamax  # noqa: F401

__all__ = ["Adamax"]
