"""torch.distributions.gamma's module path, which torch pickles name classes by: re-exports."""
from .continuous import Gamma  # noqa: F401

__all__ = ["Gamma"]
