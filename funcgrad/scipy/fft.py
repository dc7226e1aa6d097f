"""funcgrad.scipy.fft: the type-2 discrete cosine transform and its inverse (dct, idct, dctn, idctn),
as jax.scipy.fft, computed with one complex FFT of a reordered input (differentiable, jittable).

dct(x)[k] = 2 sum_n x[n] cos(pi k (2n + 1) / (2N)); norm="ortho" scales it to an orthogonal transform;
idct inverts it (a scaled type-3 transform).
"""
from __future__ import annotations

import math

from .. import numpy as jnp

__all__ = ["dct", "idct", "dctn", "idctn"]


def _check(name, type, norm):  # noqa: A002
    if type != 2:
        raise NotImplementedError(f"{name}: only type=2 is supported (as in JAX), got type={type}")
    if norm not in (None, "ortho", "backward"):
        raise ValueError(f"{name}: norm must be None, 'backward' or 'ortho', got {norm!r}")


def _resize(x, n, axis):
    if n is None:
        return x
    size = x.shape[axis]
    if n < 1:
        raise ValueError(f"invalid number of data points ({n}) specified")
    if n <= size:
        return jnp.take(x, jnp.arange(n), axis=axis)
    pad = [(0, 0)] * x.ndim
    pad[axis] = (0, n - size)
    return jnp.pad(x, pad)


def _dct_last(x, ortho: bool):
    N = x.shape[-1]
    v = jnp.concatenate([x[..., ::2], jnp.flip(x[..., 1::2], axis=-1)], axis=-1)
    V = jnp.fft.fft(v, axis=-1)
    k = jnp.arange(N)
    tw = jnp.exp(-1j * math.pi * k / (2 * N))
    y = 2 * jnp.real(V * tw)
    if ortho:
        scale = jnp.where(k == 0, math.sqrt(1 / (4 * N)), math.sqrt(1 / (2 * N)))
        y = y * scale
    return y.astype(x.dtype) if jnp.issubdtype(x.dtype, jnp.floating) else y


def _idct_last(y, ortho: bool):
    N = y.shape[-1]
    k = jnp.arange(N)
    if ortho:  # undo the orthonormal scaling, then invert the unnormalised transform
        y = y / jnp.where(k == 0, math.sqrt(1 / (4 * N)), math.sqrt(1 / (2 * N)))
    # V[k] = (y[k] - i y[N-k]) exp(i pi k / 2N) / 2, with y[N] = 0
    y_rev = jnp.concatenate([jnp.zeros_like(y[..., :1]), jnp.flip(y[..., 1:], axis=-1)], axis=-1)
    V = (y - 1j * y_rev) * jnp.exp(1j * math.pi * k / (2 * N)) / 2
    v = jnp.real(jnp.fft.ifft(V, axis=-1))
    half = (N + 1) // 2
    x = jnp.zeros_like(v)
    x = x.at[..., ::2].set(v[..., :half])
    x = x.at[..., 1::2].set(jnp.flip(v[..., half:], axis=-1))
    return x.astype(y.dtype) if jnp.issubdtype(y.dtype, jnp.floating) else x


def _float(x):
    x = jnp.asarray(x)
    if jnp.iscomplexobj(x):
        raise TypeError("dct: complex input is not supported")
    return x if jnp.issubdtype(x.dtype, jnp.floating) else x.astype(jnp.result_type(float))


def dct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):  # noqa: A002
    """The type-2 DCT along `axis` (input truncated or zero-padded to n points)."""
    _check("dct", type, norm)
    x = _resize(_float(x), n, axis)
    return jnp.moveaxis(_dct_last(jnp.moveaxis(x, axis, -1), norm == "ortho"), -1, axis)


def idct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):  # noqa: A002
    """The inverse of dct along `axis`: idct(dct(x)) == x for the same norm."""
    _check("idct", type, norm)
    x = _resize(_float(x), n, axis)
    return jnp.moveaxis(_idct_last(jnp.moveaxis(x, axis, -1), norm == "ortho"), -1, axis)


def _axes(x, s, axes):
    nd = jnp.ndim(x)
    if axes is None:
        axes = tuple(range(nd)) if s is None else tuple(range(nd - len(s), nd))
    axes = tuple(a % nd for a in ((axes,) if isinstance(axes, int) else axes))
    sizes = (None,) * len(axes) if s is None else tuple(s)
    if len(sizes) != len(axes):
        raise ValueError("dctn: s and axes must have the same length")
    return axes, sizes


def _separable(name, transform, x, type, s, axes, norm):  # noqa: A002
    """An n-d transform as the 1-d transform (dct or idct) along each of axes in turn, at size s[i]."""
    _check(name, type, norm)
    axes, sizes = _axes(x, s, axes)
    for a, n in zip(axes, sizes):
        x = transform(x, 2, n, a, norm)
    return x


def dctn(x, type: int = 2, s=None, axes=None, norm: str | None = None):  # noqa: A002
    """The type-2 DCT over several axes (all by default)."""
    return _separable("dctn", dct, x, type, s, axes, norm)


def idctn(x, type: int = 2, s=None, axes=None, norm: str | None = None):  # noqa: A002
    """The inverse of dctn."""
    return _separable("idctn", idct, x, type, s, axes, norm)
