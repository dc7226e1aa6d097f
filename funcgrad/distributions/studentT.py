"""torch.distributions.studentT's module path, which torch pickles name classes by: re-exports."""
from .continuous import StudentT  # noqa: F401

__all__ = ["StudentT"]
