"""torch.distributions.kumaraswamy's module path, which torch pickles name classes by: re-exports."""
from .wrappers import Kumaraswamy  # noqa: F401

__all__ = ["Kumaraswamy"]
