"""torch.distributions.poisson's module path, which torch pickles name classes by: re-exports."""
from .discrete import Poisson  # noqa: F401

__all__ = ["Poisson"]
