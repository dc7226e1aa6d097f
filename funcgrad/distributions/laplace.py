"""torch.distributions.laplace's module path, which torch pickles name classes by: re-exports."""
from .continuous import Laplace  # noqa: F401

__all__ = ["Laplace"]
