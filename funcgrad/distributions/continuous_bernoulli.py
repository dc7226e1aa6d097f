"""torch.distributions.continuous_bernoulli's module path, which torch pickles name classes by: re-exports."""
from .continuous import ContinuousBernoulli  # noqa: F401

__all__ = ["ContinuousBernoulli"]
