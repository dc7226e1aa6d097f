"""The fft primitive: discrete Fourier transforms over the trailing axes, as jax.lax.fft.

`fft(x, fft_type, fft_lengths)` transforms the trailing `len(fft_lengths)` axes of x:

- "FFT"   complex -> complex, unnormalised forward transform (numpy.fft.fftn);
- "IFFT"  complex -> complex, inverse transform with the 1/N factor (numpy.fft.ifftn);
- "RFFT"  real -> complex, the last axis shrinks from n to n//2 + 1 (numpy.fft.rfftn);
- "IRFFT" complex -> real, the last axis grows from n//2 + 1 to n = fft_lengths[-1] (numpy.fft.irfftn).

Precision is preserved: float32/complex64 give complex64 (float32 for IRFFT), float64/complex128 give
complex128 (float64). The operand's trailing shape must already match `fft_lengths` (for IRFFT, the last
axis must have n//2 + 1 entries); funcgrad.numpy.fft crops and pads.

Derivatives follow JAX: every transform is (real-)linear, so the jvp is the same transform of the
tangent, and the vjp is the transpose with respect to the bilinear pairing <u, v> = Re(sum(u * v))
(no conjugation), which is JAX's convention for complex cotangents:

- FFT and IFFT: the DFT matrices are symmetric, so the transpose is the same transform.
- RFFT = slice(FFT(complex(x))) on the last axis, so its transpose is real(FFT(zero-pad(g))).
- IRFFT: x_j = (1/N) Re(sum_k c_k X_k w^{-jk}) with c_k = 2 for the bins whose mirror image was
  dropped and 1 for the DC bin (and the Nyquist bin for even n); its transpose is
  c * conj(RFFT(g)) / N.

All rules are written with funcgrad primitives (fft itself, convert_element_type, pad, mul and
broadcast_in_dim of constants), so they differentiate and batch again.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import dtypes
from ..core.array import wrap
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import elementwise as ew
from . import shape as sh
from ._util import type_error, value_error
from .shape import move_axis

FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")


def _complex_of(dt) -> np.dtype:
    return dtypes.complex128 if np.dtype(dt) in (dtypes.float64, dtypes.complex128) else dtypes.complex64


def _real_of(dt) -> np.dtype:
    return dtypes.float64 if np.dtype(dt) in (dtypes.float64, dtypes.complex128) else dtypes.float32


# --- shape rule -----------------------------------------------------------------------------------

def _fft_rule(x: ShapedArray, *, fft_type, fft_lengths) -> ShapedArray:
    op = "fft"
    if fft_type not in FFT_TYPES:
        value_error(op, f"fft_type must be one of {FFT_TYPES}, got {fft_type!r}")
    k = len(fft_lengths)
    if k == 0:
        value_error(op, "fft_lengths must name at least one axis")
    if k > x.ndim:
        type_error(op, f"{k} fft_lengths {tuple(fft_lengths)} for operand {x.str_short()} of rank {x.ndim}")
    if any(n < 1 for n in fft_lengths):
        value_error(op, f"fft_lengths must be positive, got {tuple(fft_lengths)}")
    lead = tuple(x.shape[:x.ndim - k])
    tail = tuple(x.shape[x.ndim - k:])
    lengths = tuple(fft_lengths)
    if fft_type == "RFFT":
        if not dtypes.is_float(x.dtype) or x.dtype not in (dtypes.float32, dtypes.float64):
            type_error(op, f"RFFT needs a float32 or float64 operand, got {x.str_short()}")
        if tail != lengths:
            type_error(op, f"RFFT operand {x.str_short()} must end in the fft_lengths {lengths}")
        return ShapedArray(lead + lengths[:-1] + (lengths[-1] // 2 + 1,), _complex_of(x.dtype), x.weak_type)
    if not dtypes.is_complex(x.dtype):
        type_error(op, f"{fft_type} needs a complex64 or complex128 operand, got {x.str_short()}")
    if fft_type == "IRFFT":
        want = lengths[:-1] + (lengths[-1] // 2 + 1,)
        if tail != want:
            type_error(op, f"IRFFT operand {x.str_short()} must end in {want} "
                           f"(fft_lengths {lengths} with n//2 + 1 entries on the last axis)")
        return ShapedArray(lead + lengths, _real_of(x.dtype), x.weak_type)
    if tail != lengths:
        type_error(op, f"{fft_type} operand {x.str_short()} must end in the fft_lengths {lengths}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


# --- implementation -------------------------------------------------------------------------------

def _fft_impl(xp):
    def f(x, *, fft_type, fft_lengths):
        k = len(fft_lengths)
        axes = tuple(range(x.ndim - k, x.ndim))
        s = tuple(fft_lengths)
        # numpy.fft would crop or pad silently; the eager path must reject what the shape rule rejects
        want = s[:-1] + (s[-1] // 2 + 1,) if fft_type == "IRFFT" else s
        if k > x.ndim or tuple(x.shape[x.ndim - k:]) != want or fft_type not in FFT_TYPES:
            raise ValueError(f"operand shape {x.shape} does not fit {fft_type} with fft_lengths {s}")
        if x.dtype.kind != ("f" if fft_type == "RFFT" else "c") or x.dtype.itemsize not in (4, 8, 16):
            raise TypeError(f"{fft_type} does not accept dtype {x.dtype}")
        if fft_type == "FFT":
            out, dt = xp.fft.fftn(x, s=s, axes=axes), x.dtype
        elif fft_type == "IFFT":
            out, dt = xp.fft.ifftn(x, s=s, axes=axes), x.dtype
        elif fft_type == "RFFT":
            out, dt = xp.fft.rfftn(x, s=s, axes=axes), _complex_of(x.dtype)
        else:
            out, dt = xp.fft.irfftn(x, s=s, axes=axes), _real_of(x.dtype)
        return out if out.dtype == dt else out.astype(dt)
    return f


# --- derivative rules -----------------------------------------------------------------------------

def _const_on_last_axis(values: np.ndarray, dtype, shape):
    """A constant vector laid along the last axis of `shape` (broadcast to it)."""
    c = wrap(np.asarray(values, dtype=dtype), False)
    return sh.broadcast_in_dim(c, tuple(shape), (len(shape) - 1,))


def _conj(z):
    """conj(z) = 2 re(z) - z, from convert_element_type alone (exact in floating point)."""
    re = ew.convert_element_type(ew.convert_element_type(z, _real_of(z.dtype)), z.dtype)
    return ew.sub(ew.add(re, re), z)


def _rfft_transpose(g, fft_lengths):
    # RFFT(x) = slice(FFT(complex(x))) along the last axis: transpose each piece in reverse order.
    n = fft_lengths[-1]
    m = g.shape[-1]
    cfg = [(0, 0, 0)] * (g.ndim - 1) + [(0, n - m, 0)]
    full = sh.pad(g, sh.full((), 0, g.dtype), cfg)
    y = fft(full, "FFT", fft_lengths)
    return ew.convert_element_type(y, _real_of(g.dtype))


def _irfft_mask(n: int) -> np.ndarray:
    m = n // 2 + 1
    c = np.full(m, 2.0)
    c[0] = 1.0
    if n % 2 == 0:
        c[-1] = 1.0
    return c


def _irfft_transpose(g, fft_lengths):
    # IRFFT(X)_j = (1/N) Re(sum_k c_k X_k w^-jk)  =>  transpose(g)_k = (c_k / N) conj(RFFT(g))_k.
    y = fft(g, "RFFT", fft_lengths)
    c = _irfft_mask(fft_lengths[-1]) / math.prod(fft_lengths)
    return ew.mul(_conj(y), _const_on_last_axis(c, y.dtype, y.shape))


def _fft_jvp(t, ans, x, *, fft_type, fft_lengths):
    return fft(t, fft_type, fft_lengths)


def _fft_vjp(g, ans, x, *, fft_type, fft_lengths):
    if fft_type == "RFFT":
        return _rfft_transpose(g, fft_lengths)
    if fft_type == "IRFFT":
        return _irfft_transpose(g, fft_lengths)
    return fft(g, fft_type, fft_lengths)


def _fft_batch(args, dims, *, fft_type, fft_lengths):
    (x,), (d,) = args, dims
    if d >= x.ndim - len(fft_lengths):  # the batch axis sits among the transformed ones: move it out
        x, d = move_axis(x, d, 0), 0
    return fft(x, fft_type, fft_lengths), d


fft_p = Primitive("fft", impl=_fft_impl, abstract_eval=_fft_rule,
                  jvp=[_fft_jvp], vjp=[_fft_vjp], batch=_fft_batch)


def fft(x, fft_type: str, fft_lengths):
    """lax-style fft: transform the trailing len(fft_lengths) axes of x (see the module docstring)."""
    if isinstance(fft_type, str):
        fft_type = fft_type.upper()
    if isinstance(fft_lengths, (int, np.integer)):
        fft_lengths = (fft_lengths,)
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=tuple(int(n) for n in fft_lengths))


__all__ = ["fft", "fft_p", "FFT_TYPES"]
