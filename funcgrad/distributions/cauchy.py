"""torch.distributions.cauchy's module path, which torch pickles name classes by: re-exports."""
from .continuous import Cauchy  # noqa: F401

__all__ = ["Cauchy"]
