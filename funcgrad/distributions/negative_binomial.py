"""torch.distributions.negative_binomial's module path, which torch pickles name classes by: re-exports."""
from .discrete import NegativeBinomial  # noqa: F401

__all__ = ["NegativeBinomial"]
