"""funcgrad.custom_derivatives: JAX's module of the same name (custom_jvp, custom_vjp, custom_gradient,
closure_convert), for code that imports them from there."""
from ._jax.api import closure_convert, custom_gradient  # noqa: F401
from ._src.interpreters import custom_jvp, custom_vjp  # noqa: F401
from ._src.interpreters.custom import SymbolicZero  # noqa: F401

__all__ = ["custom_jvp", "custom_vjp", "custom_gradient", "closure_convert", "SymbolicZero"]
