"""torch.optim.adagrad's module path, which torch pickles name classes by: re-exports."""
from .rmsprop_adagrad import Adagrad  # noqa: F401

__all__ = ["Adagrad"]
