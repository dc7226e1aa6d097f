"""torch.distributions.von_mises's module path, which torch pickles name classes by: re-exports."""
from .continuous import VonMises  # noqa: F401

__all__ = ["VonMises"]
