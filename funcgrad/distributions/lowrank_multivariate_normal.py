"""torch.distributions.lowrank_multivariate_normal's module path, which torch pickles name classes by: re-exports."""
from .multivariate import LowRankMultivariateNormal  # noqa: F401

__all__ = ["LowRankMultivariateNormal"]
