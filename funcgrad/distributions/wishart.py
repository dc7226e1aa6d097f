"""torch.distributions.wishart's module path, which torch pickles name classes by: re-exports."""
from .multivariate import Wishart  # noqa: F401

__all__ = ["Wishart"]
