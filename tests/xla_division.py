"""jax.numpy's (XLA's) floor division and remainder, computed with NumPy: the reference for the tests of
funcgrad.numpy.floor_divide / remainder / divmod, where XLA departs from NumPy and the Array API standard
(signed zeros, infinities, integer division by zero)."""
from __future__ import annotations

import numpy as np


def xla_floor_divide(x, y):
    """jax.numpy.floor_divide's values, from NumPy's: for finite floats Python's floor division with a zero
    quotient signed as y (XLA computes (x - fmod(x, y)) / y); an infinite x over a finite nonzero y is NaN;
    a finite x over an infinite y is -1 where the signs differ, else a zero signed as y; x / 0 is x / y.
    Integers: Python's, and XLA's x // 0: -1 (all bits set) less one where x != 0 for signed dtypes."""
    with np.errstate(all="ignore"):
        r = np.asarray(np.floor_divide(x, y))
        x, y = np.broadcast_arrays(np.asarray(x, r.dtype), np.asarray(y, r.dtype))
        if r.dtype.kind in "iu":
            neg1 = np.array(-1).astype(r.dtype)
            at0 = neg1 - (x != 0).astype(r.dtype) if r.dtype.kind == "i" else np.broadcast_to(neg1, r.shape)
            return np.where(y == 0, at0, r).astype(r.dtype)
        r = np.where(r == 0, np.copysign(np.zeros_like(r), y), r)
        r = np.where(np.isinf(x) & np.isfinite(y) & (y != 0), x - np.fmod(x, y), r)  # (fmod's NaN)
        fin_over_inf = np.where((x != 0) & (np.sign(x) != np.sign(y)), -1, np.copysign(np.zeros_like(r), y))
        r = np.where(np.isfinite(x) & np.isinf(y), fin_over_inf, r)
        return np.where(y == 0, x / y, r).astype(r.dtype)


def xla_remainder(x, y):
    """jax.numpy.remainder's values: fmod(x, y), plus y where it is nonzero with a sign unlike y's (a zero
    keeps x's sign, where NumPy gives y's); integer x % 0 is 0, as NumPy's."""
    with np.errstate(all="ignore"):
        m = np.asarray(np.fmod(x, y))
        if m.dtype.kind in "biu":
            return np.asarray(np.remainder(x, y))
        y = np.asarray(y, m.dtype)
        return np.where((m != 0) & ((m < 0) != (y < 0)), m + y, m).astype(m.dtype)
