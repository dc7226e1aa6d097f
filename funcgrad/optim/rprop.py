"""torch.optim.rprop's module path, which torch pickles name classes by: re-exports."""
from .asgd_rprop import Rprop  # noqa: F401

__all__ = ["Rprop"]
