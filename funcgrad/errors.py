"""funcgrad.errors: the exception types JAX programs catch (jax.errors), funcgrad's own ones."""
from __future__ import annotations

from .core.errors import (ConcretizationError, TracerArrayConversionError, TracerBoolConversionError,
                          TracerIntegerConversionError, UnexpectedTracerError)

ConcretizationTypeError = ConcretizationError


class NonConcreteBooleanIndexError(IndexError):
    """A boolean mask index whose values are not known while tracing (use jnp.where or a static size)."""


class KeyReuseError(RuntimeError):
    """A random key used twice (raised only by key-reuse checking, which funcgrad does not run)."""


class JaxRuntimeError(RuntimeError):
    """A failure while running compiled code."""


__all__ = ["ConcretizationTypeError", "TracerBoolConversionError", "TracerIntegerConversionError",
           "TracerArrayConversionError", "UnexpectedTracerError", "NonConcreteBooleanIndexError",
           "KeyReuseError", "JaxRuntimeError"]
