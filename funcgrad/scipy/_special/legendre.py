"""The associated Legendre functions lpmn / lpmn_values and the spherical harmonics sph_harm_y / sph_harm, as
jax.scipy.special's: recurrences written with funcgrad.numpy operations (so they jit, vmap and differentiate)."""
from __future__ import annotations

import math
import operator

from ... import numpy as jnp
from ..._src.core import dtypes
from ...numpy._promote import asarray_any
from .common import promote_float

_PI = math.pi


def _alf_table(l_max, z, s, normalized):
    """P[m][l] for 0 <= m <= l <= l_max at z = cos(theta), s = sin(theta) >= 0, with the Condon-Shortley
    phase (-1)^m; normalized: times sqrt((2l + 1) (l - m)! / (4 pi (l + m)!)), by the normalised
    recurrences (no factorials, so no overflow at high degree)."""
    P = [[None] * (l_max + 1) for _ in range(l_max + 1)]
    diag = jnp.full_like(z, 1 / math.sqrt(4 * _PI) if normalized else 1.0)
    for m in range(l_max + 1):
        if m:
            f = math.sqrt((2 * m + 1) / (2 * m)) if normalized else (2 * m - 1)
            diag = -f * s * diag
        P[m][m] = diag
        if m + 1 <= l_max:
            P[m][m + 1] = (math.sqrt(2 * m + 3) if normalized else (2 * m + 1)) * z * diag
        for l in range(m + 2, l_max + 1):
            if normalized:
                a = math.sqrt((4 * l * l - 1) / (l * l - m * m))
                b = math.sqrt(((l - 1) ** 2 - m * m) / (4 * (l - 1) ** 2 - 1))
                P[m][l] = a * (z * P[m][l - 1] - b * P[m][l - 2])
            else:
                P[m][l] = ((2 * l - 1) * z * P[m][l - 1] - (l + m - 1) * P[m][l - 2]) / (l - m)
    return P


def _lpmn_args(name, m, n, z):
    try:
        m, n = operator.index(m), operator.index(n)
    except TypeError:
        raise TypeError(f"{name}: m and n must be concrete Python ints (the table's shape depends on "
                        f"them); got {type(m).__name__} and {type(n).__name__}") from None
    z = asarray_any(z)
    if z.dtype not in (jnp.float32, jnp.float64):
        raise TypeError(f"{name}: z.dtype={z.dtype} is not supported; z must be float32 or float64")
    if z.ndim != 1:
        raise ValueError(f"{name}: z must be a 1D array, got shape {tuple(z.shape)}")
    if m < 0 or n < 0:
        raise ValueError(f"{name}: m and n must be non-negative, got m={m}, n={n}")
    if m != n:
        raise NotImplementedError(f"{name}: computations for m != n are not supported (as in JAX); "
                                  f"got m={m}, n={n}")
    return n, z


def _stack_table(P, l_max, z):
    zero = jnp.zeros_like(z)
    return jnp.stack([jnp.stack([P[m][l] if m <= l else zero for l in range(l_max + 1)])
                      for m in range(l_max + 1)])


def lpmn_values(m, n, z, is_normalized):
    """The associated Legendre functions P_l^m(z) (Condon-Shortley phase, as SciPy's lpmn) for all
    orders 0..m and degrees 0..n, as an array of shape (m + 1, n + 1, len(z)) (zero where m > l).

    As JAX's: m and n are concrete ints and must be equal (NotImplementedError otherwise); z is a 1D
    float32/float64 array in [-1, 1] (NaN outside). is_normalized=True multiplies by
    sqrt((2l + 1) (l - m)! / (4 pi (l + m)!)), the spherical-harmonic normalisation, computed by the
    normalised recurrences (so high degrees do not overflow). Three-term recurrences in l: about 1e-14
    relative in float64. Differentiable in z through the recurrences.
    """
    l_max, z = _lpmn_args("lpmn_values", m, n, z)
    ok = jnp.abs(z) <= 1
    zs = jnp.where(ok, z, 0.0)
    P = _alf_table(l_max, zs, jnp.sqrt((1 - zs) * (1 + zs)), bool(is_normalized))
    out = _stack_table(P, l_max, zs)
    return jnp.where(ok, out, jnp.nan)


def lpmn(m, n, z):
    """The associated Legendre functions P_l^m(z) and their z-derivatives for all orders 0..m and degrees
    0..n: a pair of arrays of shape (m + 1, n + 1, len(z)), as JAX's lpmn (SciPy's lpmn at each z, with
    the Condon-Shortley phase).

    m and n are concrete ints and must be equal (NotImplementedError otherwise, as in JAX); z is a 1D
    float32/float64 array in [-1, 1] (NaN outside). The derivatives use
    (z^2 - 1) P_l^m' = l z P_l^m - (l + m) P_{l-1}^m, so they are finite only for |z| < 1.
    About 1e-14 relative in float64 for l <= 20 (away from the zeros).
    """
    l_max, z = _lpmn_args("lpmn", m, n, z)
    ok = jnp.abs(z) <= 1
    zs = jnp.where(ok, z, 0.0)
    P = _alf_table(l_max, zs, jnp.sqrt((1 - zs) * (1 + zs)), False)
    vals = _stack_table(P, l_max, zs)
    zero = jnp.zeros_like(zs)
    den = zs * zs - 1
    D = [[None] * (l_max + 1) for _ in range(l_max + 1)]
    for mm in range(l_max + 1):
        for l in range(mm, l_max + 1):
            prev = P[mm][l - 1] if l - 1 >= mm else zero
            D[mm][l] = (l * zs * P[mm][l] - (l + mm) * prev) / den
    ders = _stack_table(D, l_max, zs)
    return jnp.where(ok, vals, jnp.nan), jnp.where(ok, ders, jnp.nan)


def _int_array(name, v):
    v = asarray_any(v)
    if not (dtypes.is_integer(v.dtype) or v.dtype == jnp.bool_):
        raise TypeError(f"{name}: the degree and order must be integer arrays, got {v.dtype}")
    return v.astype(jnp.int32)


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """The spherical harmonics Y_n^m(theta, phi) = sqrt((2n + 1) (n - m)! / (4 pi (n + m)!))
    P_n^m(cos theta) e^(i m phi) (Condon-Shortley phase), theta the polar and phi the azimuthal angle,
    as scipy.special.sph_harm_y / jax.scipy.special.sph_harm_y; a complex array of the broadcast shape.

    n and m are integer arrays (|m| <= n; 0 where |m| > n, as SciPy). n_max, as in JAX, is the largest
    degree (a concrete int); by default max(n), which needs a concrete n (pass n_max under jit). Degrees
    above n_max are clipped to it, as JAX does. diff_n (SciPy's derivative output) is not supported, as
    in JAX. Computed by the normalised recurrences up to n_max: about 1e-13 relative in float64.
    Differentiable in theta and phi.
    """
    if diff_n is not None and diff_n != 0:
        raise NotImplementedError("sph_harm_y: diff_n is not supported (as in JAX)")
    n = _int_array("sph_harm_y", n)
    m = _int_array("sph_harm_y", m)
    theta, phi = promote_float("sph_harm_y", theta, phi)
    if n_max is None:
        try:
            n_max = int(jnp.max(n))
        except Exception as e:  # a tracer under jit/vmap
            raise TypeError("sph_harm_y: n_max must be given when n is not concrete (under jit or "
                            "vmap); pass n_max=<the largest degree>") from e
    n_max = operator.index(n_max)
    if n_max < 0:
        raise ValueError(f"sph_harm_y: n_max must be non-negative, got {n_max}")
    n, m, theta, phi = jnp.broadcast_arrays(n, m, theta, phi)
    n = jnp.minimum(n, n_max)
    am = jnp.abs(m)
    P = _alf_table(n_max, jnp.cos(theta), jnp.abs(jnp.sin(theta)), True)
    val = jnp.zeros_like(theta)
    for mm in range(n_max + 1):
        for l in range(mm, n_max + 1):
            val = jnp.where((am == mm) & (n == l), P[mm][l], val)
    # Y_n^-m = (-1)^m conj(Y_n^m)
    val = jnp.where((m < 0) & (jnp.remainder(am, 2) == 1), -val, val)
    val = jnp.where((am > n) | (n < 0), 0.0, val)
    ang = m.astype(phi.dtype) * phi
    cdt = jnp.complex64 if theta.dtype == jnp.float32 else jnp.complex128
    return jnp.asarray(val * jnp.cos(ang)).astype(cdt) + 1j * jnp.asarray(val * jnp.sin(ang)).astype(cdt)


def sph_harm(m, n, theta, phi, n_max=None):
    """The spherical harmonics in SciPy's older argument order and angle convention (removed from SciPy
    1.17, deprecated in JAX): theta the azimuthal and phi the polar angle;
    sph_harm(m, n, theta, phi) == sph_harm_y(n, m, phi, theta)."""
    return sph_harm_y(n, m, phi, theta, n_max=n_max)


__all__ = ["lpmn", "lpmn_values", "sph_harm_y", "sph_harm"]
