"""Special-matrix constructors of jax.scipy.linalg (circulant, companion, convolution_matrix, dft, fiedler,
hadamard, hankel, helmert, hilbert, invhilbert, invpascal, leslie, pascal).

Constructors from arrays (circulant, companion, convolution_matrix, fiedler, hankel, leslie) are gathers
and arithmetic on their input, so they are differentiable, batchable and jittable by composition; those
that take only a size build a constant with NumPy at trace time (the size must be static)."""
from __future__ import annotations

import math
import operator

import numpy as np

from .. import numpy as jnp

__all__ = ["circulant", "companion", "convolution_matrix", "dft", "fiedler", "hadamard", "hankel", "helmert",
           "hilbert", "invhilbert", "invpascal", "leslie", "pascal"]


def _size(n, op: str) -> int:
    try:
        return operator.index(n)
    except TypeError:
        raise TypeError(f"{op}: n must be a static Python integer, got {type(n).__name__}") from None


def _float(x):
    """A NumPy float64 constant as the default float dtype (float32 unless x64 is enabled)."""
    return jnp.asarray(x, dtype=jnp.result_type(float))


def circulant(c):
    """C[..., i, j] = c[..., (i - j) mod n]: the circulant matrix with first column c (batched over leading
    axes of c, as JAX)."""
    c = jnp.atleast_1d(jnp.asarray(c))
    n = c.shape[-1]
    idx = (np.arange(n)[:, None] - np.arange(n)[None, :]) % n
    return c[..., idx]


def hankel(c, r=None):
    """H[i, j] = c[i + j] for i + j < len(c), else r[i + j - len(c) + 1] (r defaults to zeros; r[0] is
    ignored), as scipy.linalg.hankel; c and r are flattened."""
    c = jnp.ravel(jnp.asarray(c))
    r = jnp.zeros_like(c) if r is None else jnp.ravel(jnp.asarray(r))
    vals = jnp.concatenate([c, r[1:]])
    idx = np.arange(c.shape[0])[:, None] + np.arange(r.shape[0])[None, :]
    return vals[idx]


def companion(a):
    """The companion matrix of the polynomial with coefficients a (highest degree first): first row
    -a[1:] / a[0], ones on the subdiagonal (batched over leading axes, as JAX)."""
    a = jnp.atleast_1d(jnp.asarray(a))
    n = a.shape[-1]
    if n < 2:
        raise ValueError("companion: the length of a must be at least 2")
    first = -a[..., 1:] / a[..., :1]
    sub = np.eye(n - 2, n - 1, dtype=bool) if n > 2 else np.zeros((0, 1), bool)
    rest = jnp.broadcast_to(jnp.asarray(sub.astype(np.int8)).astype(first.dtype),
                            first.shape[:-1] + (n - 2, n - 1))
    return jnp.concatenate([first[..., None, :], rest], axis=-2)


def fiedler(a):
    """F[..., i, j] = |a[..., i] - a[..., j]| (batched over leading axes)."""
    a = jnp.atleast_1d(jnp.asarray(a))
    return jnp.abs(a[..., :, None] - a[..., None, :])


def leslie(f, s):
    """The Leslie matrix: fecundities f (n) in the first row, survival rates s (n - 1) on the subdiagonal
    (batched over leading axes)."""
    f, s = jnp.atleast_1d(jnp.asarray(f)), jnp.atleast_1d(jnp.asarray(s))
    n = f.shape[-1]
    if s.shape[-1] != n - 1:
        raise ValueError(f"leslie: s must have length len(f) - 1 = {n - 1}, got {s.shape[-1]}")
    dt = jnp.result_type(f, s)
    batch = jnp.broadcast_shapes(f.shape[:-1], s.shape[:-1])
    f = jnp.broadcast_to(f.astype(dt), batch + (n,))
    sub = jnp.broadcast_to(s.astype(dt), batch + (n - 1,))[..., :, None] * jnp.asarray(np.eye(n - 1, n), dt)
    return jnp.concatenate([f[..., None, :], sub], axis=-2)


def convolution_matrix(a, n, mode: str = "full"):
    """The matrix A with A @ v == numpy.convolve(a, v, mode) for v of length n, as
    scipy.linalg.convolution_matrix (mode 'full', 'same' or 'valid')."""
    a = jnp.asarray(a)
    if a.ndim != 1:
        raise ValueError("convolution_matrix: a must be one-dimensional")
    m = a.shape[0]
    n = _size(n, "convolution_matrix")
    if m == 0:
        raise ValueError("convolution_matrix: len(a) must be at least 1")
    if n <= 0:
        raise ValueError("convolution_matrix: n must be a positive integer")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"convolution_matrix: mode must be 'full', 'valid' or 'same', got {mode!r}")
    rows = m + n - 1
    i = np.arange(rows)[:, None] - np.arange(n)[None, :]  # full[i, j] = a[i - j] where 0 <= i - j < m
    valid = (i >= 0) & (i < m)
    full = jnp.where(jnp.asarray(valid), a[np.clip(i, 0, m - 1)], jnp.zeros((), a.dtype))
    if mode == "full":
        return full
    if mode == "valid":
        length = max(m, n) - min(m, n) + 1
        start = min(m, n) - 1
    else:
        length = max(m, n)
        start = (rows - length) // 2
    return full[start:start + length]


def hilbert(n):
    """H[i, j] = 1 / (i + j + 1)."""
    n = _size(n, "hilbert")
    i = np.arange(n)
    return _float(1.0 / (i[:, None] + i[None, :] + 1.0))


def invhilbert(n):
    """The exact inverse of hilbert(n) (integers, computed exactly in Python and rounded to float)."""
    n = _size(n, "invhilbert")
    out = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            s = i + j
            out[i, j] = ((-1) ** s * (s + 1) * math.comb(n + i, n - j - 1) * math.comb(n + j, n - i - 1)
                         * math.comb(s, i) ** 2)
    return _float(out)


def _pascal_np(n, kind):
    lower = np.array([[math.comb(i, j) for j in range(n)] for i in range(n)], dtype=np.float64)
    if kind == "lower":
        return lower
    if kind == "upper":
        return lower.T
    return lower @ lower.T


def _kind(kind, op):
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"{op}: kind must be 'symmetric', 'lower', or 'upper', got {kind!r}")
    return kind


def pascal(n, kind=None):
    """The Pascal matrix: binomial coefficients C(i, j) ('lower'), its transpose ('upper'), or their product
    ('symmetric', the default: C(i + j, i))."""
    n = _size(n, "pascal")
    return _float(_pascal_np(n, _kind(kind, "pascal")))


def invpascal(n, kind=None):
    """The exact inverse of pascal(n, kind): lower/upper are signed binomials, symmetric is
    inv(upper) @ inv(lower)."""
    n = _size(n, "invpascal")
    kind = _kind(kind, "invpascal")
    sign = (-1.0) ** (np.arange(n)[:, None] + np.arange(n)[None, :])
    inv_lower = _pascal_np(n, "lower") * sign
    if kind == "lower":
        return _float(inv_lower)
    if kind == "upper":
        return _float(inv_lower.T)
    return _float(inv_lower.T @ inv_lower)


def hadamard(n, dtype=int):
    """The n x n Hadamard matrix of Sylvester's construction (n a power of two)."""
    n = _size(n, "hadamard")
    if n < 1 or n & (n - 1):
        raise ValueError("hadamard: n must be a positive integer power of two")
    h = np.ones((1, 1), dtype=np.int64)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return jnp.asarray(h, dtype=jnp.result_type(int) if dtype is int else jnp.dtype(dtype))


def helmert(n, full: bool = False):
    """The Helmert matrix (orthogonal): first row 1 / sqrt(n), row k the k-th contrast; without full, the
    (n - 1) x n matrix of the contrasts."""
    n = _size(n, "helmert")
    h = np.tril(np.ones((n, n)), -1) - np.diag(np.arange(n, dtype=np.float64))
    d = np.arange(n) * np.arange(1, n + 1)
    h[0] = 1.0
    d[0] = n
    h = h / np.sqrt(d)[:, None]
    return _float(h if full else h[1:])


def dft(n, scale=None, *, dtype=None):
    """The n x n discrete Fourier transform matrix W[j, k] = exp(-2 pi i j k / n), divided by sqrt(n)
    (scale='sqrtn') or n (scale='n')."""
    n = _size(n, "dft")
    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"dft: scale must be None, 'sqrtn', or 'n'; {scale!r} is not valid")
    k = np.arange(n)
    w = np.exp(-2j * np.pi * ((k[:, None] * k[None, :]) % n) / n)
    if scale == "sqrtn":
        w = w / math.sqrt(n)
    elif scale == "n":
        w = w / n
    dt = jnp.result_type(complex) if dtype is None else jnp.dtype(dtype)
    return jnp.asarray(w, dtype=dt)
