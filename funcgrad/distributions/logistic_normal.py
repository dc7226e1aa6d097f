"""torch.distributions.logistic_normal's module path, which torch pickles name classes by: re-exports."""
from .wrappers import LogisticNormal  # noqa: F401

__all__ = ["LogisticNormal"]
