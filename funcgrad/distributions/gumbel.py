"""torch.distributions.gumbel's module path, which torch pickles name classes by: re-exports."""
from .wrappers import Gumbel  # noqa: F401

__all__ = ["Gumbel"]
