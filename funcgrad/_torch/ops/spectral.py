"""The short-time Fourier transform stft and its inverse istft."""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import _creation as _C
from .. import _dtype as D
from . import arithmetic, join_split
from .complex_parts import view_as_real

_float = builtins.float


def _window_or_ones(window, win_length, n_fft, dtype):
    if window is None:
        w = _C.ones(win_length, dtype=dtype)
    else:
        if window.ndim != 1 or window.shape[0] != win_length:
            raise RuntimeError(f"stft: expected a 1D window tensor of size equal to win_length={win_length}, but got "
                               f"window with size {list(window.shape)}")
        w = window
    if win_length < n_fft:  # centred in n_fft
        left = (n_fft - win_length) // 2
        w = join_split.cat([_C.zeros(left, dtype=w.dtype), w, _C.zeros(n_fft - win_length - left, dtype=w.dtype)])
    return w


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """The short-time Fourier transform: (*, n_fft // 2 + 1 (onesided) or n_fft, n_frames) complex."""
    from ... import fft as _fft  # (funcgrad.fft's torch half imports this package)
    if return_complex is None:
        if not input.is_complex() and (window is None or not window.is_complex()):
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will "
                               "further require that return_complex=True in a future PyTorch release.")
        return_complex = True
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.ndim}D")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not 0 < win <= n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win_length}")
    if hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    x = input if input.ndim == 2 else input.unsqueeze(0)
    if center:
        from ...nn import functional as F  # (funcgrad.nn imports this package)
        p = n_fft // 2
        x = F.pad(x.unsqueeze(1), (p, p), mode=pad_mode).squeeze(1)
    L = x.shape[-1]
    if n_fft > L or n_fft <= 0:
        raise RuntimeError(f"stft: expected 0 < n_fft < {L}, but got n_fft={n_fft}")
    frames = x.unfold(-1, n_fft, hop)  # (B, n_frames, n_fft)
    w = _window_or_ones(window, win, n_fft, x.dtype if not x.is_complex() else
                        D.from_np(np.dtype(np.float32 if x._np_dtype() == np.complex64 else np.float64)))
    frames = arithmetic.mul(frames, w)
    one = (not x.is_complex() and (window is None or not window.is_complex())) if onesided is None else onesided
    spec = _fft.rfft(frames, dim=-1) if one else _fft.fft(frames, dim=-1)
    if normalized:
        spec = arithmetic.mul(spec, 1 / math.sqrt(n_fft))
    spec = spec.transpose_(-1, -2)  # (in place, as torch: TransposeBackward1)
    if input.ndim == 1:
        spec = spec.squeeze_(0)  # (in place, as torch: SqueezeBackward4)
    if not return_complex:
        return view_as_real(spec.contiguous())
    return spec


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse of stft by windowed overlap-add (divided by the summed squared window)."""
    from ... import fft as _fft  # (funcgrad.fft's torch half imports this package)
    from ...nn import functional as F  # (funcgrad.nn imports this package)
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor.")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    spec = input if input.ndim == 3 else input.unsqueeze(0)
    n_frames = spec.shape[-1]
    one = (spec.shape[-2] != n_fft) if onesided is None else onesided
    if normalized:
        spec = arithmetic.mul(spec, math.sqrt(n_fft))
    frames_f = spec.transpose(-1, -2)  # (B, n_frames, freq)
    if one:
        frames = _fft.irfft(frames_f, n=n_fft, dim=-1)
    else:
        frames = _fft.ifft(frames_f, n=n_fft, dim=-1)
        if not return_complex:
            frames = frames.real
    rdt = frames.dtype if not frames.is_complex() else D.from_np(
        np.dtype(np.float32 if frames._np_dtype() == np.complex64 else np.float64))
    w = _window_or_ones(window, win, n_fft, rdt)
    frames = arithmetic.mul(frames, w)
    total = n_fft + hop * (n_frames - 1)
    B = frames.shape[0]
    y = F.fold(frames.transpose(1, 2).reshape(B, n_fft, n_frames), (1, total), (1, n_fft), stride=(1, hop))
    y = y.reshape(B, total)
    env = F.fold(arithmetic.mul(w, w).reshape(1, n_fft, 1).expand(1, n_fft, n_frames), (1, total), (1, n_fft),
                 stride=(1, hop)).reshape(total)
    start = n_fft // 2 if center else 0
    end = total - n_fft // 2 if (center and length is None) else (start + length if length is not None else total)
    env_h = env._host()[start:min(end, total)]
    if env_h.size and np.abs(env_h).min() < 1e-11:
        raise RuntimeError("istft(...): window overlap add min: " + str(_float(np.abs(env_h).min())))
    y = join_split.narrow(y, 1, start, min(end, total) - start)
    env = join_split.narrow(env, 0, start, min(end, total) - start)
    y = arithmetic.div(y, env)
    if length is not None and y.shape[-1] < length:
        y = join_split.cat([y, _C.zeros(B, length - y.shape[-1], dtype=y.dtype)], -1)
    return y.squeeze(0) if input.ndim == 2 else y



# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods_ops
METHODS = ()
INPLACE = ()

__all__ = ["stft", "istft"]
