"""funcgrad.scipy.signal: N-dimensional convolve / correlate and convolve2d / correlate2d with SciPy's
modes ('full', 'same', 'valid'), as one conv_general_dilated each (differentiable, jittable).

Only method='auto'/'direct' semantics are offered (the result is the same for 'fft'), and for the 2-d
functions only boundary='fill' with fillvalue=0, as in JAX.
"""
from __future__ import annotations

from .. import numpy as jnp
from .._src.core import dtypes
from .._src.prims.conv import conv_general_dilated

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve"]


def _arrays(name, in1, in2, mode):
    """in1 and in2 as arrays of the same rank, mode checked: scipy.signal's common argument checks."""
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"{name}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    a, b = jnp.asarray(in1), jnp.asarray(in2)
    if a.ndim != b.ndim:
        raise ValueError(f"{name}: in1 and in2 should have the same dimensionality, got shapes {a.shape} "
                         f"and {b.shape}")
    return a, b


def _check(name, in1, in2, mode, method):
    if method not in ("auto", "direct", "fft"):
        raise ValueError(f"{name}: method must be 'auto', 'direct' or 'fft', got {method!r}")
    a, b = _arrays(name, in1, in2, mode)
    if a.size == 0 or b.size == 0:
        raise ValueError(f"{name}: inputs cannot be empty")
    dt = jnp.result_type(a, b)
    if not dtypes.is_inexact(dt):   # integers and bools convolve in the default float, as JAX's
        dt = dtypes.to_inexact(dt, False)
    return a.astype(dt), b.astype(dt)


def _full_conv(a, b):
    """The 'full' N-d convolution of a and b (same rank)."""
    nd = a.ndim
    if nd == 0:
        return a * b
    lhs = jnp.reshape(a, (1, 1) + tuple(a.shape))
    rhs = jnp.reshape(jnp.flip(b), (1, 1) + tuple(b.shape))
    pads = [(k - 1, k - 1) for k in b.shape]
    out = conv_general_dilated(lhs, rhs, (1,) * nd, pads)
    return jnp.reshape(out, out.shape[2:])


def _crop(full, s1, s2, mode):
    if mode == "full":
        return full
    if mode == "same":
        starts = [(f - n) // 2 for f, n in zip(full.shape, s1)]
        sizes = s1
    else:
        sizes = [max(n, m) - min(n, m) + 1 for n, m in zip(s1, s2)]
        starts = [min(n, m) - 1 for n, m in zip(s1, s2)]
    return full[tuple(slice(st, st + sz) for st, sz in zip(starts, sizes))]


def _valid_ok(s1, s2) -> bool:
    return all(n >= m for n, m in zip(s1, s2)) or all(m >= n for n, m in zip(s1, s2))


def convolve(in1, in2, mode: str = "full", method: str = "auto", *, precision=None):
    """N-d linear convolution of in1 and in2 (same rank), as scipy.signal.convolve."""
    a, b = _check("convolve", in1, in2, mode, method)
    if mode == "valid" and not _valid_ok(a.shape, b.shape):
        raise ValueError("convolve: for 'valid' mode, one must be at least as large as the other in every dimension")
    return _crop(_full_conv(a, b), a.shape, b.shape, mode)


def correlate(in1, in2, mode: str = "full", method: str = "auto", *, precision=None):
    """N-d cross-correlation z[k] = sum_n in1[n + k] conj(in2[n]), as scipy.signal.correlate."""
    a, b = _check("correlate", in1, in2, mode, method)
    if mode == "valid" and not _valid_ok(a.shape, b.shape):
        raise ValueError("correlate: for 'valid' mode, one must be at least as large as the other in every dimension")
    swap = mode == "valid" and not all(n >= m for n, m in zip(a.shape, b.shape))
    if swap:  # SciPy: correlate(in2, in1) reversed and conjugated
        out = _crop(_full_conv(b, jnp.flip(jnp.conj(a))), b.shape, a.shape, mode)
        return jnp.flip(jnp.conj(out))
    return _crop(_full_conv(a, jnp.flip(jnp.conj(b))), a.shape, b.shape, mode)


def _check2d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}: only boundary='fill' with fillvalue=0 is supported")
    if jnp.ndim(in1) != 2 or jnp.ndim(in2) != 2:
        raise ValueError(f"{name}: inputs must be 2-D, got shapes {jnp.shape(in1)} and {jnp.shape(in2)}")


def convolve2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0, precision=None):
    """2-d convolution, as scipy.signal.convolve2d (zero fill only)."""
    _check2d("convolve2d", in1, in2, boundary, fillvalue)
    return convolve(in1, in2, mode)


def correlate2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0, precision=None):
    """2-d cross-correlation, as scipy.signal.correlate2d (zero fill only)."""
    _check2d("correlate2d", in1, in2, boundary, fillvalue)
    if mode != "same":
        return correlate(in1, in2, mode)
    # SciPy centres correlate2d's 'same' output from the other end of the kernel than correlate's
    a, b = _check("correlate2d", in1, in2, mode, "auto")
    full = _full_conv(a, jnp.flip(jnp.conj(b)))
    starts = [m - 1 - (m - 1) // 2 for m in b.shape]
    return full[tuple(slice(st, st + n) for st, n in zip(starts, a.shape))]


def fftconvolve(in1, in2, mode: str = "full", axes=None):
    """N-d convolution through the FFT, as scipy.signal.fftconvolve: over `axes` (default all), the
    other axes broadcast against each other; modes 'full', 'same' (in1's size) and 'valid'."""
    a, b = _arrays("fftconvolve", in1, in2, mode)
    if a.ndim == 0:
        return a * b
    if a.size == 0 or b.size == 0:
        return jnp.zeros((0,) * a.ndim, jnp.result_type(a, b))
    nd = a.ndim
    axes = list(range(nd)) if axes is None else sorted({int(ax) % nd for ax in jnp.atleast_1d(
        jnp.asarray(axes)).tolist()}) if not isinstance(axes, int) else [axes % nd]
    for ax in range(nd):
        if ax not in axes and a.shape[ax] != b.shape[ax] and 1 not in (a.shape[ax], b.shape[ax]):
            raise ValueError(f"fftconvolve: incompatible shapes for in1 and in2 along axis {ax}: "
                             f"{a.shape} and {b.shape}")
    if mode == "valid" and not _valid_ok([a.shape[ax] for ax in axes], [b.shape[ax] for ax in axes]):
        raise ValueError("fftconvolve: for 'valid' mode, one must be at least as large as the other in "
                         "every dimension")
    dt = jnp.result_type(a, b)
    if not (jnp.issubdtype(dt, jnp.floating) or jnp.issubdtype(dt, jnp.complexfloating)):
        dt = jnp.result_type(dt, 1.0)
    a, b = a.astype(dt), b.astype(dt)
    full = [a.shape[ax] + b.shape[ax] - 1 for ax in axes]
    if jnp.issubdtype(dt, jnp.complexfloating):
        out = jnp.fft.ifftn(jnp.fft.fftn(a, s=full, axes=axes) * jnp.fft.fftn(b, s=full, axes=axes),
                            s=full, axes=axes)
    else:
        out = jnp.fft.irfftn(jnp.fft.rfftn(a, s=full, axes=axes) * jnp.fft.rfftn(b, s=full, axes=axes),
                             s=full, axes=axes)
    out = out.astype(dt)
    if mode == "full":
        return out
    index = [slice(None)] * nd
    for ax, f in zip(axes, full):
        n, m = a.shape[ax], b.shape[ax]
        if mode == "same":
            start, size = (f - n) // 2, n
        else:
            start, size = min(n, m) - 1, max(n, m) - min(n, m) + 1
        index[ax] = slice(start, start + size)
    return out[tuple(index)]
