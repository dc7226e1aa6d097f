"""torch.optim.rmsprop's module path, which torch pickles name classes by: re-exports."""
from .rmsprop_adagrad import RMSprop  # noqa: F401

__all__ = ["RMSprop"]
