"""torch.distributions.chi2's module path, which torch pickles name classes by: re-exports."""
from .continuous import Chi2  # noqa: F401

__all__ = ["Chi2"]
