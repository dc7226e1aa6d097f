"""torch.distributions.weibull's module path, which torch pickles name classes by: re-exports."""
from .wrappers import Weibull  # noqa: F401

__all__ = ["Weibull"]
