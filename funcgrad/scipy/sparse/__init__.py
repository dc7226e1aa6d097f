"""funcgrad.scipy.sparse: linalg.cg, as jax.scipy.sparse."""
from . import linalg  # noqa: F401
