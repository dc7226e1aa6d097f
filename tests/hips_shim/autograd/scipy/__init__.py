"""autograd.scipy on funcgrad.scipy (jax.scipy's namespace)."""
from . import integrate, linalg, signal, special, stats  # noqa: F401
