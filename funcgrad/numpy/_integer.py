"""NumPy's integer routines: gcd and lcm (elementwise, integers only) and packbits / unpackbits (the bits of
integer or boolean arrays packed into uint8 bytes and back), written with funcgrad's functions so they
trace and batch."""
from __future__ import annotations

from .._src.core import dtypes
from .._src.prims import elementwise as ew
from .._src.control.while_loop import while_loop
from . import _ufuncs as u
from ._creation import asarray
from ._manipulation import expand_dims, moveaxis, ravel, reshape
from ._pad import pad
from ._promote import asarray_any, normalize_index, promote_args, result_dtype
from ._reductions import sum as _sum
from ._statistics import any as _any

__all__ = ["gcd", "lcm", "packbits", "unpackbits"]


class _IntegersOnlyError(TypeError, ValueError):
    """gcd/lcm of non-integers: NumPy raises TypeError, jax.numpy ValueError."""


def _int_pair(x1, x2, op):
    a, b = asarray_any(x1), asarray_any(x2)
    dt = result_dtype(a, b)[0]  # integers after promotion (bools alone are not, as in jax.numpy); the
    if not dtypes.is_integer(dt):  # error is a TypeError, NumPy's, and JAX's ValueError
        raise _IntegersOnlyError(f"{op}: ufunc '{op}' not supported for {dt} input (integers only)")
    return promote_args(op, x1, x2)  # (before |.|, as jax.numpy: a Python int wraps into a narrower dtype)


def gcd(x1, x2, /):
    """Greatest common divisor of |x1| and |x2| (gcd(0, 0) = 0), as numpy.gcd: Euclid's algorithm,
    elementwise, in a while_loop (so it works under jit and vmap)."""
    a, b = _int_pair(x1, x2, "gcd")
    a, b = u.absolute(a), u.absolute(b)
    a, b = u.add(a, u.multiply(b, 0)), u.add(b, u.multiply(a, 0))  # common dtype and shape

    def step(ab):
        p, q = ab
        nz = u.not_equal(q, 0)
        safe = u.where(nz, q, ew.ones_like(q))
        return u.where(nz, q, p), u.where(nz, u.remainder(p, safe), q)

    return u.scalar_weak(while_loop(lambda ab: _any(u.not_equal(ab[1], 0)), step, (a, b))[0])


def lcm(x1, x2, /):
    """Least common multiple of |x1| and |x2| (0 if either is 0), as numpy.lcm."""
    a, b = _int_pair(x1, x2, "lcm")
    g = gcd(a, b)
    safe = u.where(u.equal(g, 0), ew.ones_like(g), g)
    return u.scalar_weak(u.absolute(u.multiply(u.floor_divide(a, safe), b)))


def _bit_weights(bitorder: str, op: str):
    if bitorder not in ("big", "little"):
        raise ValueError(f"{op}: 'order' must be either 'little' or 'big', got {bitorder!r}")
    w = [1 << (7 - i) for i in range(8)] if bitorder == "big" else [1 << i for i in range(8)]
    return asarray(w, dtype=dtypes.uint8)


def packbits(a, /, axis=None, bitorder="big"):
    """The truth values of a packed into uint8 bytes along `axis` (flattened when None), the last
    byte zero-padded, as numpy.packbits."""
    x = asarray_any(a)
    if not (dtypes.is_integer(x.dtype) or x.dtype == dtypes.bool_):
        raise TypeError(f"packbits: expected an input array of integer or boolean data type, got {x.dtype}")
    if axis is None:
        x, ax = ravel(x), 0
    else:
        ax = normalize_index(axis, x.ndim, "packbits")
    x = moveaxis(ew.convert_element_type(u.not_equal(x, 0), dtypes.uint8), ax, -1)
    n = x.shape[-1]
    x = pad(x, [(0, 0)] * (x.ndim - 1) + [(0, -n % 8)])
    x = reshape(x, tuple(x.shape[:-1]) + (-1, 8))
    packed = _sum(u.multiply(x, _bit_weights(bitorder, "packbits")), axis=-1, dtype=dtypes.uint8)
    return moveaxis(packed, -1, ax)


def unpackbits(a, /, axis=None, count=None, bitorder="big"):
    """The bits of uint8 a as 0/1 uint8 values along `axis` (flattened when None), `count` of them
    (negative: drop from the end), as numpy.unpackbits."""
    x = asarray_any(a)
    if x.dtype != dtypes.uint8:
        raise TypeError(f"unpackbits: expected an input array of unsigned byte data type, got {x.dtype}")
    if axis is None:
        x, ax = ravel(x), 0
    else:
        ax = normalize_index(axis, x.ndim, "unpackbits")
    x = moveaxis(x, ax, -1)
    bits = u.not_equal(u.bitwise_and(expand_dims(x, -1), _bit_weights(bitorder, "unpackbits")), 0)
    bits = reshape(ew.convert_element_type(bits, dtypes.uint8), tuple(x.shape[:-1]) + (-1,))
    if count is not None:
        n = bits.shape[-1]
        keep = count if count >= 0 else max(n + count, 0)
        if keep > n:
            bits = pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, keep - n)])
        bits = bits[..., :keep]
    return moveaxis(bits, -1, ax)
