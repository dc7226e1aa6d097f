"""torch.optim.asgd's module path, which torch pickles name classes by: re-exports."""
from .asgd_rprop import ASGD  # noqa: F401

__all__ = ["ASGD"]
