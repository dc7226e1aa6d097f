"""torch.optim.adadelta's module path, which torch pickles name classes by: re-exports."""
from .adadelta_adamax import Adadelta  # noqa: F401

__all__ = ["Adadelta"]
