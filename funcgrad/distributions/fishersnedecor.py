"""torch.distributions.fishersnedecor's module path, which torch pickles name classes by: re-exports."""
from .continuous import FisherSnedecor  # noqa: F401

__all__ = ["FisherSnedecor"]
