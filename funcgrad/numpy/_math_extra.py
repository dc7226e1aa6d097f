"""NumPy's remaining elementwise math (fabs, frexp, ldexp, modf, spacing, gcd, lcm, sort_complex), written
with funcgrad's functions so they trace, batch and (where defined) differentiate."""
from __future__ import annotations

from ..core import dtypes
from ..primitives import elementwise as ew
from . import _ufuncs as u
from ._promote import asarray_any


class _ComplexInputError(TypeError, ValueError):
    """Complex input where only real input is defined: NumPy raises TypeError, jax.numpy ValueError."""


class _IntegersOnlyError(TypeError, ValueError):
    """gcd/lcm of non-integers: NumPy raises TypeError, jax.numpy ValueError."""


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
    """(fractional part, integral part), both with x's sign, as numpy.modf (modf(-inf) = (-0.0, -inf))."""
    x = _float_input(x, "modf")
    whole = u.trunc(x)
    frac = u.where(u.isinf(x), ew.zeros_like(x), u.subtract(x, whole))
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
    """The distance from x to the next representable value away from zero, as numpy.spacing
    (for either zero: the smallest positive subnormal)."""
    x = _float_input(x, "spacing")
    pos = u.add(ew.zeros_like(x), float("inf"))
    inf = u.where(u.equal(x, 0), pos, u.copysign(pos, x))
    return u._strong(u.subtract(u.nextafter(x, inf), x))  # (strong, as jax.numpy's)


def _int_pair(x1, x2, op):
    a, b = asarray_any(x1), asarray_any(x2)
    from ._promote import result_dtype
    dt = result_dtype(a, b)[0]  # integers after promotion (bools alone are not, as in jax.numpy); the
    if not dtypes.is_integer(dt):  # error is a TypeError, NumPy's, and JAX's ValueError
        raise _IntegersOnlyError(f"{op}: ufunc '{op}' not supported for {dt} input (integers only)")
    return a, b


def gcd(x1, x2, /):
    """Greatest common divisor of |x1| and |x2| (gcd(0, 0) = 0), as numpy.gcd: Euclid's algorithm,
    elementwise, in a while_loop (so it works under jit and vmap)."""
    from ..lax import while_loop
    a, b = _int_pair(x1, x2, "gcd")
    a, b = u.absolute(a), u.absolute(b)
    a, b = u.add(a, u.multiply(b, 0)), u.add(b, u.multiply(a, 0))  # common dtype and shape

    def step(ab):
        p, q = ab
        nz = u.not_equal(q, 0)
        safe = u.where(nz, q, ew.ones_like(q))
        return u.where(nz, q, p), u.where(nz, u.remainder(p, safe), q)

    from ._statistics import any as any_
    return while_loop(lambda ab: any_(u.not_equal(ab[1], 0)), step, (a, b))[0]


def lcm(x1, x2, /):
    """Least common multiple of |x1| and |x2| (0 if either is 0), as numpy.lcm."""
    a, b = _int_pair(x1, x2, "lcm")
    g = gcd(a, b)
    safe = u.where(u.equal(g, 0), ew.ones_like(g), g)
    return u.absolute(u.multiply(u.floor_divide(a, safe), b))


def sort_complex(a):
    """a sorted (real part first, then imaginary), as a complex array, as numpy.sort_complex."""
    from ._sorting import sort
    x = asarray_any(a)
    if not dtypes.is_complex(x.dtype):  # as jax.numpy: the dtype promoted with complex64
        x = ew.convert_element_type(x, dtypes.complex128 if x.dtype.itemsize == 8 else dtypes.complex64)
    return sort(x)


def i0(x):
    """The modified Bessel function of the first kind, order 0, as numpy.i0: its power series
    sum_k ((x/2)^k / k!)^2 for |x| <= 30 and the asymptotic expansion e^|x| / sqrt(2 pi |x|) *
    sum_k ((2k-1)!!)^2 / (k! (8|x|)^k) beyond (both accurate to a few ulp in float64)."""
    x = _float_input(x, "i0")
    a = u.absolute(x)
    small = u.less_equal(a, 30.0)
    s = u.where(small, x, ew.zeros_like(x))  # x, not |x|: the series in x^2 is smooth at 0 to every order
    q = u.multiply(u.multiply(s, s), 0.25)
    term, total = ew.ones_like(a), ew.ones_like(a)
    for k in range(1, 90):
        term = u.divide(u.multiply(term, q), float(k * k))
        total = u.add(total, term)
    b = u.where(small, ew.ones_like(a) * 31.0, a)
    inv = u.divide(1.0, u.multiply(b, 8.0))
    term2, tail = ew.ones_like(a), ew.ones_like(a)
    for k in range(1, 30):
        term2 = u.multiply(term2, u.multiply(inv, float((2 * k - 1) ** 2) / k))
        tail = u.add(tail, term2)
    big = u.divide(u.multiply(u.exp(b), tail), u.sqrt(u.multiply(b, 2 * 3.141592653589793)))
    return u.where(small, total, big)


def _bit_weights(bitorder: str, op: str):
    if bitorder not in ("big", "little"):
        raise ValueError(f"{op}: 'order' must be either 'little' or 'big', got {bitorder!r}")
    from ._creation import asarray
    w = [1 << (7 - i) for i in range(8)] if bitorder == "big" else [1 << i for i in range(8)]
    return asarray(w, dtype=dtypes.uint8)


def packbits(a, /, axis=None, bitorder="big"):
    """The truth values of a packed into uint8 bytes along `axis` (flattened when None), the last
    byte zero-padded, as numpy.packbits."""
    from ._manipulation import moveaxis, pad, ravel, reshape
    from ._reductions import sum as sum_
    x = asarray_any(a)
    if not (dtypes.is_integer(x.dtype) or x.dtype == dtypes.bool_):
        raise TypeError(f"packbits: expected an input array of integer or boolean data type, got {x.dtype}")
    if axis is None:
        x, ax = ravel(x), 0
    else:
        from ._promote import normalize_index
        ax = normalize_index(axis, x.ndim, "packbits")
    x = moveaxis(ew.convert_element_type(u.not_equal(x, 0), dtypes.uint8), ax, -1)
    n = x.shape[-1]
    x = pad(x, [(0, 0)] * (x.ndim - 1) + [(0, -n % 8)])
    x = reshape(x, tuple(x.shape[:-1]) + (-1, 8))
    packed = sum_(u.multiply(x, _bit_weights(bitorder, "packbits")), axis=-1, dtype=dtypes.uint8)
    return moveaxis(packed, -1, ax)


def unpackbits(a, /, axis=None, count=None, bitorder="big"):
    """The bits of uint8 a as 0/1 uint8 values along `axis` (flattened when None), `count` of them
    (negative: drop from the end), as numpy.unpackbits."""
    from ._manipulation import expand_dims, moveaxis, ravel, reshape
    x = asarray_any(a)
    if x.dtype != dtypes.uint8:
        raise TypeError(f"unpackbits: expected an input array of unsigned byte data type, got {x.dtype}")
    if axis is None:
        x, ax = ravel(x), 0
    else:
        from ._promote import normalize_index
        ax = normalize_index(axis, x.ndim, "unpackbits")
    x = moveaxis(x, ax, -1)
    bits = u.not_equal(u.bitwise_and(expand_dims(x, -1), _bit_weights(bitorder, "unpackbits")), 0)
    bits = reshape(ew.convert_element_type(bits, dtypes.uint8), tuple(x.shape[:-1]) + (-1,))
    if count is not None:
        n = bits.shape[-1]
        keep = count if count >= 0 else max(n + count, 0)
        if keep > n:
            from ._manipulation import pad
            bits = pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, keep - n)])
        bits = bits[..., :keep]
    return moveaxis(bits, -1, ax)
