"""torch.distributions.geometric's module path, which torch pickles name classes by: re-exports."""
from .discrete import Geometric  # noqa: F401

__all__ = ["Geometric"]
