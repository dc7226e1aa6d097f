"""torch.distributions.dirichlet's module path, which torch pickles name classes by: re-exports."""
from .continuous import Dirichlet  # noqa: F401

__all__ = ["Dirichlet"]
