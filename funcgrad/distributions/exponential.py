"""torch.distributions.exponential's module path, which torch pickles name classes by: re-exports."""
from .continuous import Exponential  # noqa: F401

__all__ = ["Exponential"]
