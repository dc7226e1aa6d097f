"""torch.distributions.uniform's module path, which torch pickles name classes by: re-exports."""
from .continuous import Uniform  # noqa: F401

__all__ = ["Uniform"]
