"""torch.distributions.multivariate_normal's module path, which torch pickles name classes by: re-exports."""
from .multivariate import MultivariateNormal  # noqa: F401

__all__ = ["MultivariateNormal"]
