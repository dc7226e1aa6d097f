"""funcgrad.errors: the exception types JAX programs catch (jax.errors), funcgrad's own ones."""
from __future__ import annotations

from ._src.core.errors import (ConcretizationError, NonConcreteBooleanIndexError, TracerArrayConversionError,
                          TracerBoolConversionError, TracerIntegerConversionError, UnexpectedTracerError)

ConcretizationTypeError = ConcretizationError


class KeyReuseError(RuntimeError):
    """A random key used twice (raised only by key-reuse checking, which funcgrad does not run)."""


class JaxRuntimeError(RuntimeError):
    """A failure while running compiled code."""


__all__ = ["ConcretizationTypeError", "TracerBoolConversionError", "TracerIntegerConversionError",
           "TracerArrayConversionError", "UnexpectedTracerError", "NonConcreteBooleanIndexError",
           "KeyReuseError", "JaxRuntimeError"]
