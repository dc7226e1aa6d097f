"""funcgrad.numpy.fft: numpy.fft's API over the `fft` primitive, usable under grad, vmap and jit.

    import funcgrad.numpy.fft as jfft
    jfft.rfft(x, n=64, norm="ortho")

Semantics are NumPy's (`n` / `s`, `axis` / `axes`, `norm` in {None, "backward", "ortho", "forward"}),
with JAX's differences, all deliberate:

- Precision is preserved: float32 / complex64 input gives complex64 (float32 from irfft, hfft),
  float64 / complex128 gives complex128 (float64). Integer and bool input is computed in the default
  float dtype (float32, or float64 with x64 enabled): complex64 where NumPy gives complex128.
- Repeated axes in `axes` raise ValueError (NumPy transforms such an axis twice).
- `s` without `axes` transforms the last len(s) axes, as NumPy does (NumPy 2 deprecates that form).
- fftfreq / rfftfreq return the default float dtype unless `dtype` is given (NumPy: float64).
- `out=` is not supported (arrays are immutable).

A length `n` (or `s[i]`) different from the axis length crops or zero-pads the input first; for
irfft / irfftn the last axis is cropped or padded to n//2 + 1 entries. The derivative of every
function follows JAX's convention for complex numbers (cotangents are transposes, not adjoints).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .._src.core import dtypes
from .._src.core.array import ArrayBase, wrap
from .._src.prims import elementwise as ew
from .._src.prims import shape as sh
from .._src.prims.fft import _conj as _conj_complex
from .._src.prims.fft import fft as _lax_fft
from ._device import put
from ._manipulation import moveaxis
from ._promote import asarray_any, normalize_index
from ._ufuncs import divide, multiply

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
           "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = (None, "backward", "ortho", "forward")


# --- dtype and argument helpers -------------------------------------------------------------------

def _complex_for(dt) -> np.dtype:
    dt = np.dtype(dt)
    if dtypes.is_complex(dt):
        return dt
    if dt == dtypes.float64:
        return dtypes.complex128
    if dtypes.is_float(dt):  # float16, bfloat16, float32
        return dtypes.complex64
    # integers and bools: the complex of JAX's to_inexact dtype (complex64 up to 32 bits, as jnp.fft)
    return dtypes.complex128 if dtypes.to_inexact(dt) == dtypes.float64 else dtypes.complex64


def _as_complex(x):
    dt = _complex_for(x.dtype)
    return x if x.dtype == dt else ew.convert_element_type(x, dt, x.weak_type)


def _as_real(x, op: str):
    dt = x.dtype
    if dtypes.is_complex(dt):
        raise TypeError(f"{op}: input must be real, got {dt}; use fft/fftn for complex input")
    if dt in (dtypes.float32, dtypes.float64):
        return x
    target = dtypes.float32 if dtypes.is_float(dt) else dtypes.defaults.float_
    return ew.convert_element_type(x, target, x.weak_type)


def _conj(x):
    return _conj_complex(_as_complex(x))


def _check_norm(norm, op: str):
    if norm not in _NORMS:
        raise ValueError(f'{op}: invalid norm value {norm!r}; should be "backward", "ortho" or "forward"')


def _swap_direction(norm):
    return {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}[norm]


def _check_out(out, op: str):
    if out is not None:
        raise TypeError(f"{op}: out= is not supported: funcgrad arrays are immutable")


def _positive_length(n, op: str) -> int:
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{op}: the FFT length must be an integer, got {type(n).__name__}") from None
    if n < 1:
        raise ValueError(f"{op}: invalid number of FFT data points ({n}) specified")
    return n


def _axes_and_lengths(x, s, axes, kind: str, op: str):
    """Normalised transform axes and logical transform lengths (output lengths for IRFFT)."""
    if axes is None:
        axes = tuple(range(x.ndim)) if s is None else tuple(range(x.ndim - len(s), x.ndim))
    elif isinstance(axes, (int, np.integer)):
        axes = (axes,)
    axes = tuple(normalize_index(a, x.ndim, op) for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{op}: repeated axes are not supported, got axes {axes}")
    if s is None:
        s = [None] * len(axes)
    elif isinstance(s, (int, np.integer)):
        s = [s]
    s = list(s)
    if len(s) != len(axes):
        raise ValueError(f"{op}: shape s {tuple(s)} and axes {axes} have different lengths")
    lengths = []
    for i, (n, a) in enumerate(zip(s, axes)):
        if n is None:  # the 1-D default: the axis length, or 2 * (m - 1) for the last axis of irfft
            n = x.shape[a]
            if kind == "IRFFT" and i == len(axes) - 1:
                n = 2 * (n - 1)
        elif operator.index(n) == -1:  # NumPy 2: -1 means the axis length, for every transform
            n = x.shape[a]
        lengths.append(_positive_length(n, op))
    return axes, tuple(lengths)


def _resize_axis(x, axis: int, n: int):
    """Crop or zero-pad x along `axis` to n entries."""
    size = x.shape[axis]
    if n < size:
        hi = list(x.shape)
        hi[axis] = n
        return sh.slice(x, (0,) * x.ndim, hi)
    if n > size:
        cfg = [(0, 0, 0)] * x.ndim
        cfg[axis] = (0, n - size, 0)
        return sh.pad(x, sh.full((), 0, x.dtype), cfg)
    return x


def _scale(y, norm, lengths, inverse: bool):
    if norm is None or norm == "backward":
        return y
    total = math.prod(lengths)
    if norm == "ortho":
        factor = math.sqrt(total) if inverse else 1 / math.sqrt(total)
    else:  # "forward"
        factor = total if inverse else 1 / total
    return multiply(y, float(factor))


def _fftn(a, s, axes, norm, kind: str, op: str):
    _check_norm(norm, op)
    x = asarray_any(a)
    x = _as_real(x, op) if kind == "RFFT" else _as_complex(x)
    if x.ndim == 0:
        raise ValueError(f"{op}: input must have at least one dimension, got a 0-d array")
    axes, lengths = _axes_and_lengths(x, s, axes, kind, op)
    k = len(axes)
    if k == 0:
        if kind in ("RFFT", "IRFFT"):
            raise ValueError(f"{op}: needs at least one axis to transform")
        return x
    nd = x.ndim
    trailing = tuple(range(nd - k, nd))
    x = moveaxis(x, axes, trailing)
    for i, n in enumerate(lengths):
        target = n // 2 + 1 if (kind == "IRFFT" and i == k - 1) else n
        x = _resize_axis(x, nd - k + i, target)
    y = _lax_fft(x, kind, lengths)
    y = _scale(y, norm, lengths, inverse=kind in ("IFFT", "IRFFT"))
    return moveaxis(y, trailing, axes)


def _one_axis(n, axis):
    return (None if n is None else (n,)), (axis,)


# --- one-dimensional transforms -------------------------------------------------------------------

def fft(a, n=None, axis=-1, norm=None, out=None):
    """One-dimensional discrete Fourier transform, as numpy.fft.fft."""
    _check_out(out, "fft")
    return _fftn(a, *_one_axis(n, axis), norm, "FFT", "fft")


def ifft(a, n=None, axis=-1, norm=None, out=None):
    """One-dimensional inverse discrete Fourier transform, as numpy.fft.ifft."""
    _check_out(out, "ifft")
    return _fftn(a, *_one_axis(n, axis), norm, "IFFT", "ifft")


def rfft(a, n=None, axis=-1, norm=None, out=None):
    """Transform of real input, the n//2 + 1 non-negative frequencies, as numpy.fft.rfft."""
    _check_out(out, "rfft")
    return _fftn(a, *_one_axis(n, axis), norm, "RFFT", "rfft")


def irfft(a, n=None, axis=-1, norm=None, out=None):
    """Inverse of rfft: n real points (default 2 * (m - 1)), as numpy.fft.irfft."""
    _check_out(out, "irfft")
    return _fftn(a, *_one_axis(n, axis), norm, "IRFFT", "irfft")


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """Transform of a Hermitian-symmetric signal given by its first half (real output), as numpy.fft.hfft."""
    _check_out(out, "hfft")
    _check_norm(norm, "hfft")
    return _fftn(_conj(asarray_any(a)), *_one_axis(n, axis), _swap_direction(norm), "IRFFT", "hfft")


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """Inverse of hfft for real input (n//2 + 1 complex outputs), as numpy.fft.ihfft."""
    _check_out(out, "ihfft")
    _check_norm(norm, "ihfft")
    return _conj_complex(_fftn(a, *_one_axis(n, axis), _swap_direction(norm), "RFFT", "ihfft"))


# --- multi-dimensional transforms -----------------------------------------------------------------

def fftn(a, s=None, axes=None, norm=None, out=None):
    """N-dimensional discrete Fourier transform (all axes by default), as numpy.fft.fftn."""
    _check_out(out, "fftn")
    return _fftn(a, s, axes, norm, "FFT", "fftn")


def ifftn(a, s=None, axes=None, norm=None, out=None):
    """N-dimensional inverse discrete Fourier transform, as numpy.fft.ifftn."""
    _check_out(out, "ifftn")
    return _fftn(a, s, axes, norm, "IFFT", "ifftn")


def rfftn(a, s=None, axes=None, norm=None, out=None):
    """N-dimensional transform of real input (the last axis halved), as numpy.fft.rfftn."""
    _check_out(out, "rfftn")
    return _fftn(a, s, axes, norm, "RFFT", "rfftn")


def irfftn(a, s=None, axes=None, norm=None, out=None):
    """Inverse of rfftn, as numpy.fft.irfftn (the last axis gives s[-1], default 2 * (m - 1))."""
    _check_out(out, "irfftn")
    return _fftn(a, s, axes, norm, "IRFFT", "irfftn")


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """Two-dimensional discrete Fourier transform, as numpy.fft.fft2."""
    _check_out(out, "fft2")
    return _fftn(a, s, axes, norm, "FFT", "fft2")


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """Two-dimensional inverse discrete Fourier transform, as numpy.fft.ifft2."""
    _check_out(out, "ifft2")
    return _fftn(a, s, axes, norm, "IFFT", "ifft2")


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """Two-dimensional transform of real input, as numpy.fft.rfft2."""
    _check_out(out, "rfft2")
    return _fftn(a, s, axes, norm, "RFFT", "rfft2")


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """Inverse of rfft2, as numpy.fft.irfft2."""
    _check_out(out, "irfft2")
    return _fftn(a, s, axes, norm, "IRFFT", "irfft2")


# --- frequencies and shifts -----------------------------------------------------------------------

def _freq_dtype(dtype):
    dt = dtypes.defaults.float_ if dtype is None else dtypes.canonicalize(dtype)
    if not dtypes.is_inexact(dt):
        raise TypeError(f"fftfreq: dtype must be a floating dtype, got {dt}")
    return dt


def _freqs(k: np.ndarray, n: int, d, dtype, op: str):
    dt = _freq_dtype(dtype)
    if isinstance(d, ArrayBase):  # a traced or concrete spacing: stay differentiable in d
        ks = wrap(k.astype(dt), False)
        return divide(ks, multiply(asarray_any(d).astype(dt), float(n)))
    return wrap((k / (n * float(d))).astype(dt), False)


def _int_n(n, op: str) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise ValueError(f"{op}: n should be an integer, got {n!r}")
    n = int(n)
    if n < 1:
        raise ValueError(f"{op}: n must be positive, got {n}")
    return n


def fftfreq(n, d=1.0, device=None, *, dtype=None):
    """Sample frequencies [0, 1, ..., -1] / (d * n), as numpy.fft.fftfreq (default float dtype)."""
    n = _int_n(n, "fftfreq")
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)]).astype(np.float64)
    return put(_freqs(k, n, d, dtype, "fftfreq"), device, "fftfreq")


def rfftfreq(n, d=1.0, device=None, *, dtype=None):
    """Sample frequencies [0, 1, ..., n//2] / (d * n) for rfft, as numpy.fft.rfftfreq."""
    n = _int_n(n, "rfftfreq")
    k = np.arange(0, n // 2 + 1).astype(np.float64)
    return put(_freqs(k, n, d, dtype, "rfftfreq"), device, "rfftfreq")


def _roll_axis(x, shift: int, axis: int):
    size = x.shape[axis]
    if size == 0:
        return x
    shift %= size
    if shift == 0:
        return x
    cut = size - shift
    lo, hi = [0] * x.ndim, list(x.shape)
    hi[axis] = cut
    first = sh.slice(x, lo, hi)
    lo2 = [0] * x.ndim
    lo2[axis] = cut
    second = sh.slice(x, lo2, list(x.shape))
    return sh.concatenate([second, first], axis)


def _shift(x, axes, op: str, inverse: bool):
    x = asarray_any(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, (int, np.integer)):
        axes = (axes,)
    for a in axes:
        ax = normalize_index(a, x.ndim, op)
        half = x.shape[ax] // 2
        x = _roll_axis(x, -half if inverse else half, ax)
    return x


def fftshift(x, axes=None):
    """Move the zero-frequency term to the centre (all axes by default), as numpy.fft.fftshift."""
    return _shift(x, axes, "fftshift", inverse=False)


def ifftshift(x, axes=None):
    """Inverse of fftshift, as numpy.fft.ifftshift."""
    return _shift(x, axes, "ifftshift", inverse=True)
