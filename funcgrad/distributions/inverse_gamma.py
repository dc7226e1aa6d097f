"""torch.distributions.inverse_gamma's module path, which torch pickles name classes by: re-exports."""
from .wrappers import InverseGamma  # noqa: F401

__all__ = ["InverseGamma"]
