"""torch.distributions.pareto's module path, which torch pickles name classes by: re-exports."""
from .wrappers import Pareto  # noqa: F401

__all__ = ["Pareto"]
