"""torch.distributions.independent's module path, which torch pickles name classes by: re-exports."""
from .wrappers import Independent  # noqa: F401

__all__ = ["Independent"]
