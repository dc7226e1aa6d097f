"""torch.signal.windows: the window functions of scipy.signal.windows that torch offers (bartlett, blackman,
cosine, exponential, gaussian, general_cosine, general_hamming, hamming, hann, kaiser, nuttall).

Each is computed as torch computes it, with torch-face operations in the requested dtype (a linspace of the
window's positions, then the elementwise formula), so the values match torch's to the last bit where the
elementwise kernels do. `sym=True` (the default) gives a symmetric window for filter design, `sym=False` a
periodic one for spectral analysis (the symmetric window of length M + 1 without its last point).
"""
from __future__ import annotations

import math
from collections.abc import Iterable

from .. import _torch as T
from .._torch._formats import strided

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _checked(name: str, M: int, dtype, layout):
    """torch's argument checks, shared by every window: the dtype to compute in (the default dtype if None)."""
    dtype = T.get_default_dtype() if dtype is None else dtype
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (T.float32, T.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _trivial(M: int, dtype, requires_grad: bool, one: bool = True):
    """The window of length 0 (empty), or of length 1 (a single 1) where the window defines it so; else None."""
    if M == 0:
        return T.empty((0,), dtype=dtype, requires_grad=requires_grad)
    if M == 1 and one:
        return T.ones((1,), dtype=dtype, requires_grad=requires_grad)
    return None


def _positions(start, step, M: int, dtype, requires_grad: bool):
    """M evenly spaced positions start, start + step, ..., as torch.linspace gives them."""
    return T.linspace(start, start + (M - 1) * step, M, dtype=dtype, requires_grad=requires_grad)


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True, dtype=None,
                layout=strided, device=None, requires_grad: bool = False):
    """The exponential (Poisson) window exp(-|n - center| / tau)."""
    dtype = _checked("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _trivial(M, dtype, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k = _positions(-center / tau, 1 / tau, M, dtype, requires_grad)
    return T.exp(-T.abs(k))


def cosine(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None, requires_grad: bool = False):
    """The cosine (sine) window sin(pi (n + 1/2) / M)."""
    dtype = _checked("cosine", M, dtype, layout)
    if M == 0:
        return _trivial(M, dtype, requires_grad)
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    return T.sin(_positions(0.5 * step, step, M, dtype, requires_grad))


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None, layout=strided, device=None,
             requires_grad: bool = False):
    """The Gaussian window exp(-((n - (M - 1) / 2) / std)^2 / 2)."""
    dtype = _checked("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _trivial(M, dtype, requires_grad)
    start, step = -(M if not sym and M > 1 else M - 1) / 2.0, 1 / (std * math.sqrt(2))
    k = _positions(start * step, step, M, dtype, requires_grad)
    return T.exp(-(k ** 2))


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None, layout=strided, device=None,
           requires_grad: bool = False):
    """The Kaiser window I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)."""
    dtype = _checked("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    trivial = _trivial(M, dtype, requires_grad)
    if trivial is not None:
        return trivial
    beta = T.tensor(beta, dtype=dtype)  # in the window's dtype, as torch (no NaN from rounding at the ends)
    step = 2.0 * beta / (M if not sym else M - 1)
    end = T.minimum(beta, -beta + (M - 1) * step)
    k = T.linspace(-beta, end, M, dtype=dtype, requires_grad=requires_grad)
    return T.i0(T.sqrt(beta * beta - T.pow(k, 2))) / T.i0(beta)


def general_cosine(M: int, *, a: Iterable, sym: bool = True, dtype=None, layout=strided, device=None,
                   requires_grad: bool = False):
    """The generalised cosine window sum_i (-1)^i a_i cos(2 pi i n / (M - 1))."""
    dtype = _checked("general_cosine", M, dtype, layout)
    trivial = _trivial(M, dtype, requires_grad)
    if trivial is not None:
        return trivial
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    k = _positions(0, 2 * math.pi / (M if not sym else M - 1), M, dtype, requires_grad)
    a_i = T.tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, requires_grad=requires_grad)
    i = T.arange(a_i.shape[0], dtype=a_i.dtype, requires_grad=a_i.requires_grad)
    return (a_i.unsqueeze(-1) * T.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True, dtype=None, layout=strided, device=None,
                    requires_grad: bool = False):
    """The generalised Hamming window alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None, requires_grad: bool = False):
    """The Hann window 1/2 - 1/2 cos(2 pi n / (M - 1)).

    Examples:
        >>> import funcgrad as torch
        >>> torch.signal.windows.hann(5)
        tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
        >>> torch.signal.windows.hann(4, sym=False)
        tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None, requires_grad: bool = False):
    """The Hamming window 0.54 - 0.46 cos(2 pi n / (M - 1))."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None, requires_grad: bool = False):
    """The Bartlett (triangular) window 1 - |2n / (M - 1) - 1|."""
    dtype = _checked("bartlett", M, dtype, layout)
    trivial = _trivial(M, dtype, requires_grad)
    if trivial is not None:
        return trivial
    k = _positions(-1, 2 / (M if not sym else M - 1), M, dtype, requires_grad)
    return 1 - T.abs(k)


def blackman(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None, requires_grad: bool = False):
    """The Blackman window 0.42 - 0.5 cos(2 pi n / (M - 1)) + 0.08 cos(4 pi n / (M - 1))."""
    dtype = _checked("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None, requires_grad: bool = False):
    """The minimum 4-term Blackman-Harris window of Nuttall (1981)."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          requires_grad=requires_grad)
