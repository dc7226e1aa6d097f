"""torch.distributions.multinomial's module path, which torch pickles name classes by: re-exports."""
from .discrete import Multinomial  # noqa: F401

__all__ = ["Multinomial"]
