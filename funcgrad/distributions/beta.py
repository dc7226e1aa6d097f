"""torch.distributions.beta's module path, which torch pickles name classes by: re-exports."""
from .continuous import Beta  # noqa: F401

__all__ = ["Beta"]
