"""torch.distributions.half_normal's module path, which torch pickles name classes by: re-exports."""
from .continuous import HalfNormal  # noqa: F401

__all__ = ["HalfNormal"]
