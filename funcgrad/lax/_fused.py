"""Correctly rounded a * b + c, and its error-free pieces (TwoSum, Dekker's product, rounding to odd).

XLA's CPU code lets LLVM contract a product and a sum into one fused multiply-add, so JAX's values
carry one rounding where the naive NumPy formula carries two (jax.random.uniform's scaling, linspace's
samples). NumPy has no FMA: these compose one from funcgrad's elementwise cards, exactly."""
from __future__ import annotations

import numpy as np

from .._src.prims import elementwise as ew
from .._src.prims import shape as sh


def _const(value, dtype, shape=()):
    c = sh.full((), value, np.dtype(dtype))
    return sh.broadcast_in_dim(c, tuple(shape), ()) if shape else c


def two_sum(a, b):
    """(s, e) with s = fl(a + b) and s + e == a + b exactly (Knuth's TwoSum)."""
    s = ew.add(a, b)
    bb = ew.sub(s, a)
    return s, ew.add(ew.sub(a, ew.sub(s, bb)), ew.sub(b, bb))


def two_prod(a, b):
    """(p, e) with p = fl(a * b) and p + e == a * b exactly (Dekker's product, float64 operands)."""
    p = ew.mul(a, b)
    split = _const(134217729.0, a.dtype, a.shape)   # 2**27 + 1
    ca, cb = ew.mul(split, a), ew.mul(split, b)
    ah, bh = ew.sub(ca, ew.sub(ca, a)), ew.sub(cb, ew.sub(cb, b))
    al, bl = ew.sub(a, ah), ew.sub(b, bh)
    e = ew.add(ew.add(ew.add(ew.sub(ew.mul(ah, bh), p), ew.mul(ah, bl)), ew.mul(al, bh)), ew.mul(al, bl))
    return p, e


def round_to_odd_sum(a, b):
    """a + b rounded to odd: the exact sum where representable, else the neighbour of the
    round-to-nearest sum whose last significand bit is 1. Rounding that result again to a format at
    least two bits narrower rounds the exact sum correctly (Boldo and Melquiond, "Emulation of FMA
    and correctly rounded sums: proved algorithms using rounding to odd", 2008). Float64 operands."""
    s, e = two_sum(a, b)
    ibits = np.dtype(f"int{8 * np.dtype(s.dtype).itemsize}")
    even = ew.eq(ew.bitwise_and(ew.bitcast_convert_type(s, ibits), _const(1, ibits, s.shape)),
                 _const(0, ibits, s.shape))
    # inexact (e != 0; a NaN e means s is not finite, left as it is) with an even last bit
    inexact = ew.bitwise_and(ew.bitwise_and(ew.ne(e, _const(0.0, e.dtype, e.shape)), ew.eq(e, e)), even)
    toward = ew.select(ew.gt(e, _const(0.0, e.dtype, e.shape)), _const(np.inf, s.dtype, s.shape),
                       _const(-np.inf, s.dtype, s.shape))
    return ew.select(inexact, ew.nextafter(ew.stop_gradient(s), toward), s)  # (nextafter: no derivative)


def fma(a, b, c):
    """a * b + c rounded once, as a fused multiply-add (float64 operands of one shape): the exact
    product a * b = p + e (Dekker), p + c = t + u (TwoSum), then t + (u + e rounded to odd) rounded
    to nearest, which is correctly rounded (Boldo and Melquiond 2008). Where the splitting overflows
    (|a| or |b| above ~1e300) or the result is not finite, the twice-rounded a * b + c is used."""
    naive = ew.add(ew.mul(a, b), c)
    p, e = two_prod(a, b)
    t, u = two_sum(c, p)
    fused = ew.add(t, round_to_odd_sum(u, e))
    return ew.select(ew.is_finite(fused), fused, naive)


def fma_any(a, b, c):
    """fma for float32 or float64 operands of one shape, valued as one rounding of the exact a * b + c
    and differentiated as a * b + c. Float32 goes through float64, where a * b is exact and the sum is
    rounded to odd, so the one rounding back to float32 is the correct one."""
    dt = np.dtype(a.dtype)
    naive = ew.add(ew.mul(a, b), c)
    if dt == np.float64:
        exact = fma(*(ew.stop_gradient(v) for v in (a, b, c)))
    elif dt == np.float32:
        w = [ew.convert_element_type(ew.stop_gradient(v), np.dtype(np.float64)) for v in (a, b, c)]
        exact = ew.convert_element_type(round_to_odd_sum(ew.mul(w[0], w[1]), w[2]), dt)
        exact = ew.select(ew.is_finite(exact), exact, ew.stop_gradient(naive))
    else:
        return naive
    return ew.add(naive, ew.stop_gradient(ew.sub(exact, naive)))
