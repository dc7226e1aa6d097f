"""torch.distributions.binomial's module path, which torch pickles name classes by: re-exports."""
from .discrete import Binomial  # noqa: F401

__all__ = ["Binomial"]
