"""torch.distributions.normal's module path, which torch pickles name classes by: re-exports."""
from .continuous import Normal  # noqa: F401

__all__ = ["Normal"]
