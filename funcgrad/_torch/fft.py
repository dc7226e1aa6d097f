"""funcgrad.fft (torch.fft): discrete Fourier transforms of tensors, with torch's argument names (`n`/`s`,
`dim`, `norm` in {None, "backward", "ortho", "forward"}) and dtypes (real float32 -> complex64, integer input
in the default float dtype), recorded for autograd over funcgrad.numpy.fft (the `fft` primitive).

    import funcgrad as torch
    spec = torch.fft.rfft(signal, norm="ortho")
"""
from __future__ import annotations

from typing import Optional, Sequence, Union

import numpy as np

from ..numpy import fft as _jfft
from .._src.core.array import Array
from .._src.prims import elementwise as _ew
from . import _dtype as _D
from ._errors import _legacy
from .ops._common import _out
from ._tensor import Tensor, _wrap
from ._dispatch import _apply1

_Dims = Optional[Union[int, Sequence[int]]]

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _check(input, name: str, norm, real_only: bool = False) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"fft_{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if norm not in (None, "backward", "ortho", "forward"):
        raise RuntimeError(f"Invalid normalization mode: \"{norm}\"")
    if real_only and input.is_complex():
        got = _legacy(input._np_dtype())
        if name in ("rfft2", "rfftn"):  # (torch's messages by function)
            raise RuntimeError(f"rfftn expects a real-valued input tensor, but got {got}")
        if name in ("ihfft2", "ihfftn"):
            raise RuntimeError(f"Only supports floating-point dtypes, but found: {got}")
        raise RuntimeError(f"{name} expects a real input tensor, but got {got}")
    if input.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")


def _n(n, name):
    if n is not None and n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _s(s, name):
    if s is not None:
        s = [int(v) for v in s]
        for v in s:
            if v < 1 and v != -1:
                raise RuntimeError(f"Invalid number of data points ({v}) specified")
    return s


def _dims(input, dim, s):
    if dim is None:
        return None if s is None else tuple(range(input.ndim - len(s), input.ndim))
    if isinstance(dim, int):
        dim = (dim,)
    nd = input.ndim
    out = []
    for d in dim:
        if not -nd <= d < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {d})")
        out.append(d % nd)
    if len(set(out)) != len(out):
        raise RuntimeError("FFT dims must be unique")
    if s is not None and len(s) != len(out):
        raise RuntimeError(f"When given, dim and shape arguments must have the same length")
    return tuple(out)


def _fill_s(input, s, dims):
    """-1 entries of s mean 'the input's size along that dim'."""
    if s is None:
        return None
    return tuple(input.shape[d] if v == -1 else v for v, d in zip(s, dims))


# torch's node of each transform (the last op of its decomposition): real-to-complex (FftR2CBackward0),
# complex-to-complex and complex-to-real kernels, or the conjugate that ends ifft of real input and ihfft
# (ihfft2/ihfftn of several dims end in a complex-to-complex one); by (name, input complex?, several dims?)
_NODES = {"fft": ("FftR2C", "FftC2C"), "ifft": ("Conj", "FftC2C"), "rfft": ("FftR2C",) * 2,
          "irfft": ("FftC2R",) * 2, "hfft": ("FftC2R",) * 2, "ihfft": ("Conj",) * 2}


def _node(name, input, ndims=1):
    if name.endswith(("2", "n")):
        base = name[:-1]
        if base in ("fft", "ifft"):
            return "FftC2C"  # (real input is made complex first)
        if base == "ihfft":
            return "Conj" if ndims == 1 else "FftC2C"
        name = base
    return _NODES[name][input._np_dtype().kind == "c"]


def _one(name, kind, real_only=False):
    jfn = getattr(_jfft, kind)

    def op(input: Tensor, n: Optional[int] = None, dim: int = -1, norm: Optional[str] = None, *, out=None):
        _check(input, name, norm, real_only)
        _n(n, name)
        (d,) = _dims(input, dim, None)
        return _out(_apply1(_node(name, input), lambda a: jfn(a, n, d, norm), input), out)
    op.__name__ = name
    op.__doc__ = f"torch.fft.{name}: the one-dimensional {kind} along dim (length n, cropped or zero-padded)."
    return op


fft = _one("fft", "fft")
ifft = _one("ifft", "ifft")
rfft = _one("rfft", "rfft", real_only=True)
irfft = _one("irfft", "irfft")
hfft = _one("hfft", "hfft")
ihfft = _one("ihfft", "ihfft", real_only=True)


def _many(name, kind, default_dim, real_only=False):
    jfn = getattr(_jfft, kind + "n")

    def op(input: Tensor, s: Optional[Sequence[int]] = None, dim: _Dims = default_dim,
           norm: Optional[str] = None, *, out=None):
        _check(input, name, norm, real_only)
        s = _s(s, name)
        dims = _dims(input, dim, s)
        if dims is None:
            dims = tuple(range(input.ndim))
        ss = _fill_s(input, s, dims)
        if kind in ("rfft", "irfft") and not dims:
            raise RuntimeError(f"{name} must transform at least one axis")
        return _out(_apply1(_node(name, input, len(dims)), lambda a: jfn(a, ss, dims, norm), input), out)
    op.__name__ = name
    op.__doc__ = f"torch.fft.{name}: the {kind} over dims {default_dim or 'all'} (sizes s)."
    return op


fft2 = _many("fft2", "fft", (-2, -1))
ifft2 = _many("ifft2", "ifft", (-2, -1))
rfft2 = _many("rfft2", "rfft", (-2, -1), real_only=True)
irfft2 = _many("irfft2", "irfft", (-2, -1))
fftn = _many("fftn", "fft", None)
ifftn = _many("ifftn", "ifft", None)
rfftn = _many("rfftn", "rfft", None, real_only=True)
irfftn = _many("irfftn", "irfft", None)


def _hermitian_many(name, default_dim, inverse):
    def op(input: Tensor, s: Optional[Sequence[int]] = None, dim: _Dims = default_dim,
           norm: Optional[str] = None, *, out=None):
        """hfftn: irfftn of the conjugate with the normalisation swapped; ihfftn: the conjugate of rfftn so."""
        _check(input, name, norm, real_only=inverse)
        s = _s(s, name)
        dims = _dims(input, dim, s)
        if dims is None:
            dims = tuple(range(input.ndim))
        ss = _fill_s(input, s, dims)
        sw = _SWAP[norm]
        if inverse:
            fn = lambda a: _ew.conj(_jfft.rfftn(a, ss, dims, sw))  # noqa: E731
        else:
            fn = lambda a: _jfft.irfftn(_ew.conj(_jfft._as_complex(a)), ss, dims, sw)  # noqa: E731
        return _out(_apply1(_node(name, input, len(dims)), fn, input), out)
    op.__name__ = name
    return op


hfft2 = _hermitian_many("hfft2", (-2, -1), False)
ihfft2 = _hermitian_many("ihfft2", (-2, -1), True)
hfftn = _hermitian_many("hfftn", None, False)
ihfftn = _hermitian_many("ihfftn", None, True)


def _freq(name):
    jfn = getattr(_jfft, name)

    def op(n: int, d: float = 1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad: bool = False):
        if n < 0:
            raise RuntimeError(f"{name}: n must be non-negative, got {n}")
        if dtype is not None and _D.to_np(dtype).kind not in "fc":
            raise RuntimeError(f"{name} requires a floating point or complex dtype, got {dtype}")
        dt = _D.to_np(dtype) if dtype is not None else _D.default_float()
        if n == 0:
            t = _wrap(Array(np.zeros((0,), dt)))
        else:
            t = _wrap(jfn(n, float(d), dtype=dt))
        if requires_grad:
            t.requires_grad_(True)
        return _out(t, out)
    op.__name__ = name
    op.__doc__ = f"torch.fft.{name}: the sample frequencies of a length-n signal with spacing d."
    return op


fftfreq = _freq("fftfreq")
rfftfreq = _freq("rfftfreq")


def _shift(name):
    jfn = getattr(_jfft, name)

    def op(input: Tensor, dim: _Dims = None) -> Tensor:
        dims = tuple(range(input.ndim)) if dim is None else _dims(input, dim, None)
        return _apply1("Roll", lambda a: jfn(a, dims), input)  # (torch's: a roll)
    op.__name__ = name
    op.__doc__ = f"torch.fft.{name}: roll each of dims by half its length ({'inverse ' if name[0] == 'i' else ''}shift)."
    return op


fftshift = _shift("fftshift")
ifftshift = _shift("ifftshift")


from . import overrides as _overrides  # noqa: E402
_overrides.install(globals(), __all__, "fft", "funcgrad.fft", distinct=True)  # (`__torch_function__` dispatch)
