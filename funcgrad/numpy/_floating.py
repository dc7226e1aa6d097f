"""NumPy's floating-point routines on real input: fabs, modf, ldexp, frexp and spacing, written with
funcgrad's functions so they trace, batch and (where defined) differentiate."""
from __future__ import annotations

from .._src.core import dtypes
from .._src.prims import elementwise as ew
from . import _ufuncs as u
from ._dtype_helpers import finfo
from ._promote import asarray_any

__all__ = ["fabs", "frexp", "ldexp", "modf", "spacing"]


class _ComplexInputError(TypeError, ValueError):
    """Complex input where only real input is defined: NumPy raises TypeError, jax.numpy ValueError."""


class _ExponentTypeError(TypeError, ValueError):
    """A non-integer ldexp exponent: NumPy raises TypeError, jax.numpy ValueError."""


def _float_input(x, op: str):
    """x as a real floating array; integers and bools become a float as in jax.numpy (float32 for
    bool and integers of up to 32 bits, the default float for 64-bit and Python integers)."""
    x = asarray_any(x)
    if dtypes.is_complex(x.dtype):
        raise _ComplexInputError(f"{op}: ufunc '{op}' not supported for complex input ({x.dtype})")
    return u._to_inexact(x)  # JAX's to_inexact: float32 for bool and integers of up to 32 bits


def fabs(x, /):
    """|x| for real input (integers give floats), as numpy.fabs (complex input is a TypeError)."""
    return u.absolute(_float_input(x, "fabs"))


def modf(x, /):
    """(fractional part, integral part), both with x's sign, as jax.numpy.modf: the fraction is x - trunc(x),
    so NaN at +-inf (NumPy's is +-0 there)."""
    x = _float_input(x, "modf")
    whole = u.trunc(x)
    frac = u.subtract(x, whole)
    # A zero fraction takes x's sign: signed_zero - (0 - frac) is that zero (0 - (+-0) is +0) and keeps
    # frac's derivative, 1 (as jax.numpy.modf's x - whole), where copysign would flip it for negative x.
    zero = ew.zeros_like(x)
    signed_zero = u.where(u.signbit(x), ew.neg(zero), zero)
    return u.where(ew.eq(frac, zero), signed_zero - (zero - frac), frac), whole


def ldexp(x1, x2, /):
    """x1 * 2**x2 (x2 integers), as numpy.ldexp; the power is applied in two halves so that an exponent
    beyond the dtype's range does not overflow or underflow on its own."""
    m = _float_input(x1, "ldexp")
    e = asarray_any(x2)
    if e.dtype == dtypes.bool_:  # as jax.numpy (NumPy has no loop for a bool exponent)
        e = ew.convert_element_type(e, dtypes.int32)
    if not dtypes.is_integer(e.dtype):
        raise _ExponentTypeError(f"ldexp: the exponent must be an integer array, got {e.dtype}")
    h = u.floor_divide(e, 2)
    two = lambda k: u.exp2(ew.convert_element_type(k, m.dtype))  # noqa: E731
    return u.multiply(u.multiply(m, two(h)), two(u.subtract(e, h)))


def frexp(x, /):
    """(mantissa, exponent) with x = mantissa * 2**exponent and 0.5 <= |mantissa| < 1, as numpy.frexp
    (exponent int32; zeros, infinities and NaN give mantissa x and exponent 0)."""
    x = _float_input(x, "frexp")
    finite = u.logical_and(u.isfinite(x), u.not_equal(x, 0))
    a = u.where(finite, u.absolute(x), ew.ones_like(x))
    e = ew.convert_element_type(u.floor(u.log2(a)), dtypes.int32)
    e = u.add(e, 1)
    m = ldexp(a, u.negative(e))  # log2 may be off by one near powers of two: fix up
    big, small = u.greater_equal(m, 1), u.less(m, 0.5)
    e = u.where(big, u.add(e, 1), u.where(small, u.subtract(e, 1), e))
    m = ldexp(a, u.negative(e))
    mant = u.where(finite, u.copysign(m, x), x)
    return mant, u.where(finite, e, ew.zeros_like(e))


def spacing(x, /):
    """The distance from x to the next representable value away from zero (toward copysign(inf, x), so
    negative for negative x and -0.0), a zero distance being the smallest subnormal with x's sign, as
    jax.numpy.spacing; float16 steps toward +inf for every x, as jax.numpy does (spacing(-1.0) is
    +2**-11, spacing(-inf) is inf, spacing(inf) NaN)."""
    x = _float_input(x, "spacing")
    pos = u.add(ew.zeros_like(x), float("inf"))
    if x.dtype == dtypes.float16:
        return u._strong(u.subtract(u.nextafter(x, pos), x))  # (strong, as jax.numpy's)
    r = u.subtract(u.nextafter(x, u.copysign(pos, x)), x)
    tiny = u.add(ew.zeros_like(x), float(finfo(x.dtype).smallest_subnormal))
    return u._strong(u.where(u.equal(r, 0), u.copysign(tiny, x), r))
