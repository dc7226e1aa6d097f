"""torch.distributions.bernoulli's module path, which torch pickles name classes by: re-exports."""
from .discrete import Bernoulli  # noqa: F401

__all__ = ["Bernoulli"]
