"""torch.distributions.half_cauchy's module path, which torch pickles name classes by: re-exports."""
from .continuous import HalfCauchy  # noqa: F401

__all__ = ["HalfCauchy"]
