"""torch.distributions.categorical's module path, which torch pickles name classes by: re-exports."""
from .discrete import Categorical  # noqa: F401

__all__ = ["Categorical"]
