"""torch.distributions.lkj_cholesky's module path, which torch pickles name classes by: re-exports."""
from .multivariate import LKJCholesky  # noqa: F401

__all__ = ["LKJCholesky"]
