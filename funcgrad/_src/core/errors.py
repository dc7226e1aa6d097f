"""Error types users catch, and the helper that finds the user's own source line for messages."""
from __future__ import annotations

import os
import sys

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # funcgrad/


class ConcretizationError(TypeError):
    """A traced (abstract) value was used where a concrete Python value is needed."""


class IncompatibleShapesError(ValueError, TypeError):
    """Operands whose shapes do not fit together (broadcasting, reshape, matmul, concatenate): a
    ValueError, as NumPy raises, and a TypeError, as JAX raises."""


class InvalidIndexTypeError(IndexError, TypeError):
    """An index of a type that cannot index (a float, a string, a float array): an IndexError, as NumPy
    raises, and a TypeError, as JAX raises."""


class UnexpectedTracerError(RuntimeError):
    """A tracer escaped the transform that created it and was used later."""


# The particular conversions of a traced value, as JAX names them (all ConcretizationErrors, so TypeErrors).
class TracerBoolConversionError(ConcretizationError):
    """bool() of a traced value (a Python `if`/`while` on it)."""


class TracerIntegerConversionError(ConcretizationError):
    """int() / __index__ of a traced value (a Python index or range bound)."""


class TracerArrayConversionError(ConcretizationError):
    """numpy.asarray (or another __array__ conversion) of a traced value."""


class NonConcreteSliceError(IndexError, TracerIntegerConversionError):
    """x[a:b] with a traced bound: slice bounds must be static (JAX raises IndexError; use
    lax.dynamic_slice for a traced start)."""


class NonConcreteBooleanIndexError(IndexError, ConcretizationError):
    """x[mask] with a traced boolean mask: the result's shape would depend on its values. An IndexError,
    as in JAX, and a ConcretizationError (the reason)."""


def user_frame(skip: int = 1):
    """(filename, lineno, function) of the innermost frame outside the funcgrad package, or None."""
    f = sys._getframe(skip)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(_PKG_DIR):
            return fn, f.f_lineno, f.f_code.co_name
        f = f.f_back
    return None


def user_location(skip: int = 2) -> str:
    """'file.py:12 (in fn)' for the user's line that led here."""
    fr = user_frame(skip)
    if fr is None:
        return "<unknown location>"
    return f"{fr[0]}:{fr[1]} (in {fr[2]})"


def ignore_fp_warnings() -> None:
    """Floating-point exceptions inside funcgrad's own kernels are values (inf, nan), as in JAX and PyTorch,
    not warnings. NumPy attributes them to the calling frame, so this filter covers funcgrad's modules
    (and jit's generated code, whose module is `funcgrad.jit_generated`) and leaves the user's NumPy code
    as it was. Installed on import."""
    import warnings
    warnings.filterwarnings("ignore", r"(divide by zero|invalid value|overflow|underflow) encountered",
                            RuntimeWarning, r"funcgrad(\.|$)")
