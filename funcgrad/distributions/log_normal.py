"""torch.distributions.log_normal's module path, which torch pickles name classes by: re-exports."""
from .wrappers import LogNormal  # noqa: F401

__all__ = ["LogNormal"]
