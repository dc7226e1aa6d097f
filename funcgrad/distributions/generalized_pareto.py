"""torch.distributions.generalized_pareto's module path, which torch pickles name classes by: re-exports."""
from .continuous import GeneralizedPareto  # noqa: F401

__all__ = ["GeneralizedPareto"]
