"""jax.test_util's public names: the numerical derivative checks, from funcgrad.testing."""
from .testing import check_grads, check_jvp, check_vjp

__all__ = ["check_grads", "check_jvp", "check_vjp"]
