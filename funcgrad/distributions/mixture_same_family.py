"""torch.distributions.mixture_same_family's module path, which torch pickles name classes by: re-exports."""
from .wrappers import MixtureSameFamily  # noqa: F401

__all__ = ["MixtureSameFamily"]
