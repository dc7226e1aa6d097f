"""torch.distributions.transformed_distribution's module path, which torch pickles name classes by: re-exports."""
from .wrappers import TransformedDistribution  # noqa: F401

__all__ = ["TransformedDistribution"]
