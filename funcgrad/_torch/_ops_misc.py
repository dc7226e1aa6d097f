"""Remaining torch top-level names that ordinary code reaches for: memory formats and layouts, gradient
(numpy.gradient's finite differences), stft/istft, histogramdd, binomial, empty_strided, frombuffer,
from_dlpack, the *_copy forms of the view ops, and small aliases. Differentiable ones compose Tensor ops."""
from __future__ import annotations

import builtins
import math
import warnings

import numpy as np

from .._src.core.array import Array
from . import _creation as C
from . import _dtype as D
from . import _ops as O
from ._tensor import Tensor, _dim, _wrap

_int = builtins.int
_float = builtins.float


from ._formats import (_mkldnn, channels_last, channels_last_3d, contiguous_format, layout,  # noqa: E402,F401
                       legacy_contiguous_format, memory_format, preserve_format, sparse_coo, sparse_csr, strided)


# --- small aliases ------------------------------------------------------------------------------------------

def conj(input):
    return input.conj()


def detach(input):
    return input.detach()


def adjoint(input):
    return input.mH


def is_signed(input) -> bool:
    return input.is_signed()


def matrix_rank(*args, **kwargs):
    raise RuntimeError("This function was deprecated since version 1.9 and is now removed.\nPlease use the "
                       "`torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was renamed in "
                       "`torch.linalg.matrix_rank()` to 'hermitian'.")


_INTEROP = [1]


def get_num_interop_threads() -> _int:
    return _INTEROP[0]


def set_num_interop_threads(n: _int) -> None:
    _INTEROP[0] = _int(n)


def set_flush_denormal(mode: bool) -> bool:
    """NumPy cannot flush denormals: returns False (as torch does where it is unsupported)."""
    return False


def set_default_tensor_type(t) -> None:
    """Deprecated in torch: sets the default float dtype from a tensor type ('torch.DoubleTensor', ...)."""
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.", UserWarning,
                  stacklevel=2)
    name = t if isinstance(t, str) else getattr(t, "__name__", str(t))
    table = {"FloatTensor": D.float32, "DoubleTensor": D.float64, "HalfTensor": D.float16}
    for k, v in table.items():
        if name.endswith(k):
            D.set_default_dtype(v) if hasattr(D, "set_default_dtype") else None
            return
    raise TypeError(f"only floating-point types are supported as the default type, got {name}")


# --- creation --------------------------------------------------------------------------------------------

def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """An uninitialised (zero) tensor of `size` viewed with `stride` over a storage just large enough."""
    size, stride = tuple(_int(s) for s in size), tuple(_int(s) for s in stride)
    n = 1 + sum((a - 1) * s for a, s in zip(size, stride)) if all(size) else 0
    base = C.zeros(max(n, 0), dtype=dtype)
    t = base.as_strided(size, stride, 0)
    if requires_grad:
        t = t.detach().requires_grad_(True)
    return t


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-d tensor over the bytes of a buffer-protocol object (sharing its memory when it is writable)."""
    dt = D.to_np(dtype)
    arr = np.frombuffer(buffer, dtype=dt, count=count, offset=offset)
    if arr.size == 0:
        raise ValueError("both buffer length (0) and count (-1) must not be 0")
    if not arr.flags.writeable:
        warnings.warn("The given buffer is not writable, and PyTorch does not support non-writable tensors. This "
                      "means you can write to the underlying (supposedly non-writable) buffer using the tensor.",
                      UserWarning, stacklevel=2)
        arr = arr.copy()
    t = C.from_numpy(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def from_dlpack(ext_tensor):
    """A tensor from an object with __dlpack__ (a NumPy array, a funcgrad Array, a torch tensor, ...)."""
    return C.from_numpy(np.from_dlpack(ext_tensor))


def binomial(count, prob, generator=None):
    """Binomial(count, prob) draws (float, no gradient), from the tensor face's generator."""
    from ._creation import default_generator
    g = generator or default_generator
    seed = _int(C.randint(0, 2 ** 31 - 1, (1,), generator=g).item())
    rng = np.random.default_rng(seed)
    n, p = np.broadcast_arrays(count._host(), prob._host())
    return _wrap(Array(rng.binomial(n.astype(np.int64), p).astype(count._np_dtype())))


# --- *_copy: the view ops returning a fresh tensor --------------------------------------------------------

def _copy_of(view_fn, name):
    def fn(input, *args, **kwargs):
        out = view_fn(input, *args, **kwargs)
        if isinstance(out, (tuple, list)):
            return type(out)(o.clone() for o in out)
        return out.clone()
    fn.__name__ = name + "_copy"
    fn.__doc__ = f"torch.{name}_copy: the view op {name} returning a new tensor (not a view)."
    return fn


def _method(name):
    return lambda input, *args, **kwargs: getattr(input, name)(*args, **kwargs)


def _slice(input, dim=0, start=None, end=None, step=1):
    d = _dim(dim, input.ndim)
    return input[(slice(None),) * d + (slice(start, end, step),)]


def _view_fns() -> dict:
    from . import _ops_more as M
    fns = {n: _method(n) for n in ("view", "t", "transpose", "permute", "expand", "squeeze", "unsqueeze", "diagonal",
                                   "select", "narrow", "unbind", "split", "split_with_sizes", "as_strided", "detach",
                                   "unfold")}
    fns.update(alias=lambda input: input.view_as(input), slice=_slice, view_as_real=M.view_as_real,
               view_as_complex=M.view_as_complex)
    return fns


_COPIES = {n + "_copy": _copy_of(f, n) for n, f in _view_fns().items()}
globals().update(_COPIES)


# --- numerical gradient ---------------------------------------------------------------------------------

def _one_gradient(f, d, h, coords, edge_order):
    n = f.shape[d]
    if n < edge_order + 1:
        raise RuntimeError(f"torch.gradient expected each dimension size to be at least edge_order+1")

    def sl(a, b):
        return O.narrow(f, d, a, b - a)

    if coords is None:  # uniform spacing h
        inner = O.div(O.sub(sl(2, n), sl(0, n - 2)), 2 * h)
        if edge_order == 1:
            first = O.div(O.sub(sl(1, 2), sl(0, 1)), h)
            last = O.div(O.sub(sl(n - 1, n), sl(n - 2, n - 1)), h)
        else:
            first = O.div(O.add(O.add(O.mul(sl(0, 1), -1.5), O.mul(sl(1, 2), 2.0)), O.mul(sl(2, 3), -0.5)), h)
            last = O.div(O.add(O.add(O.mul(sl(n - 3, n - 2), 0.5), O.mul(sl(n - 2, n - 1), -2.0)),
                               O.mul(sl(n - 1, n), 1.5)), h)
        return O.cat([first, inner, last], d)
    if tuple(coords.shape) != (n,):
        raise RuntimeError(f"torch.gradient expected each tensor to be on the same device, and the coordinates of "
                           f"dim {d} to have size {n}, got {list(coords.shape)}")
    c = coords if coords._np_dtype().kind == "f" else coords.to(f.dtype)
    dx = O.sub(O.narrow(c, 0, 1, n - 1), O.narrow(c, 0, 0, n - 1))  # differentiable in the coordinates too
    shape = [1] * f.ndim
    shape[d] = -1

    def col(t):
        return t.reshape(shape)
    hl, hr = O.narrow(dx, 0, 0, n - 2), O.narrow(dx, 0, 1, n - 2)
    a = -hr / (hl * (hl + hr))
    b = (hr - hl) / (hl * hr)
    cc = hl / (hr * (hl + hr))
    inner = sl(0, n - 2) * col(a) + sl(1, n - 1) * col(b) + sl(2, n) * col(cc)
    if edge_order == 1:
        first = (sl(1, 2) - sl(0, 1)) / col(dx[:1])
        last = (sl(n - 1, n) - sl(n - 2, n - 1)) / col(dx[-1:])
    else:
        h1, h2 = dx[:1], dx[1:2]
        first = sl(0, 1) * col(-(2 * h1 + h2) / (h1 * (h1 + h2))) + sl(1, 2) * col((h1 + h2) / (h1 * h2)) + \
            sl(2, 3) * col(-h1 / (h2 * (h1 + h2)))
        h1, h2 = dx[-2:-1], dx[-1:]
        last = sl(n - 3, n - 2) * col(h2 / (h1 * (h1 + h2))) + sl(n - 2, n - 1) * col(-(h2 + h1) / (h1 * h2)) + \
            sl(n - 1, n) * col((2 * h2 + h1) / (h2 * (h1 + h2)))
    return O.cat([first, inner, last], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The derivative of input estimated by second-order central differences inside and first- or
    second-order one-sided differences at the edges, along each of dim (all dims by default). spacing: one
    number for every dim, one number per dim, or one coordinate tensor per dim."""
    if edge_order not in (1, 2):
        raise RuntimeError(f"torch.gradient only supports edge_order=1 and edge_order=2.")
    if isinstance(dim, _int):
        dims = [_dim(dim, input.ndim)]
    elif dim is None:
        dims = list(range(input.ndim))
    else:
        dims = [_dim(d, input.ndim) for d in dim]
    if isinstance(spacing, (_int, _float)):
        sp = [spacing] * len(dims)
    elif isinstance(spacing, Tensor) and spacing.ndim == 0:
        sp = [spacing.item()] * len(dims)
    else:
        sp = list(spacing)
        if len(sp) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
                               f"dim arguments to have the same length, but got a spacing argument of length "
                               f"{len(sp)} and a dim argument of length {len(dims)}.")
    f = input if input._np_dtype().kind in "fc" else input.to(D.from_np(D.default_float()))
    out = []
    for d, s in zip(dims, sp):
        if isinstance(s, Tensor) and s.ndim == 1:
            out.append(_one_gradient(f, d, None, s, edge_order))
        else:
            out.append(_one_gradient(f, d, _float(s.item() if isinstance(s, Tensor) else s), None, edge_order))
    return tuple(out)


# --- histogramdd -------------------------------------------------------------------------------------------

def histogramdd(input, bins=10, *, range=None, weight=None, density=False):  # noqa: A002
    """(hist, bin_edges) of the points input (..., D) in D dimensions."""
    v = input._host()
    pts = v.reshape(-1, v.shape[-1])
    if isinstance(bins, Tensor):
        bins = bins.tolist()
    elif isinstance(bins, (list, tuple)) and bins and isinstance(bins[0], Tensor):
        bins = [b._host() for b in bins]
    rng = None if range is None else [(range[2 * i], range[2 * i + 1]) for i in builtins.range(len(range) // 2)]
    w = None if weight is None else weight._host().reshape(-1)
    h, edges = np.histogramdd(pts, bins=bins, range=rng, weights=w, density=density)
    dt = input._np_dtype()
    from .return_types import histogramdd as rt
    return rt(_wrap(Array(h.astype(dt))), [_wrap(Array(e.astype(dt))) for e in edges])


# --- short-time Fourier transform ------------------------------------------------------------------------

def _window_or_ones(window, win_length, n_fft, dtype):
    if window is None:
        w = C.ones(win_length, dtype=dtype)
    else:
        if window.ndim != 1 or window.shape[0] != win_length:
            raise RuntimeError(f"stft: expected a 1D window tensor of size equal to win_length={win_length}, but got "
                               f"window with size {list(window.shape)}")
        w = window
    if win_length < n_fft:  # centred in n_fft
        left = (n_fft - win_length) // 2
        w = O.cat([C.zeros(left, dtype=w.dtype), w, C.zeros(n_fft - win_length - left, dtype=w.dtype)])
    return w


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """The short-time Fourier transform: (*, n_fft // 2 + 1 (onesided) or n_fft, n_frames) complex."""
    from . import fft as _fft
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
        from ..nn import functional as F
        p = n_fft // 2
        x = F.pad(x.unsqueeze(1), (p, p), mode=pad_mode).squeeze(1)
    L = x.shape[-1]
    if n_fft > L or n_fft <= 0:
        raise RuntimeError(f"stft: expected 0 < n_fft < {L}, but got n_fft={n_fft}")
    frames = x.unfold(-1, n_fft, hop)  # (B, n_frames, n_fft)
    w = _window_or_ones(window, win, n_fft, x.dtype if not x.is_complex() else
                        D.from_np(np.dtype(np.float32 if x._np_dtype() == np.complex64 else np.float64)))
    frames = O.mul(frames, w)
    one = (not x.is_complex() and (window is None or not window.is_complex())) if onesided is None else onesided
    spec = _fft.rfft(frames, dim=-1) if one else _fft.fft(frames, dim=-1)
    if normalized:
        spec = O.mul(spec, 1 / math.sqrt(n_fft))
    spec = spec.transpose(-1, -2)
    if input.ndim == 1:
        spec = spec.squeeze(0)
    if not return_complex:
        from ._ops_more import view_as_real
        return view_as_real(spec.contiguous())
    return spec


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse of stft by windowed overlap-add (divided by the summed squared window)."""
    from . import fft as _fft
    from ..nn import functional as F
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor.")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    spec = input if input.ndim == 3 else input.unsqueeze(0)
    n_frames = spec.shape[-1]
    one = (spec.shape[-2] != n_fft) if onesided is None else onesided
    if normalized:
        spec = O.mul(spec, math.sqrt(n_fft))
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
    frames = O.mul(frames, w)
    total = n_fft + hop * (n_frames - 1)
    B = frames.shape[0]
    y = F.fold(frames.transpose(1, 2).reshape(B, n_fft, n_frames), (1, total), (1, n_fft), stride=(1, hop))
    y = y.reshape(B, total)
    env = F.fold(O.mul(w, w).reshape(1, n_fft, 1).expand(1, n_fft, n_frames), (1, total), (1, n_fft),
                 stride=(1, hop)).reshape(total)
    start = n_fft // 2 if center else 0
    end = total - n_fft // 2 if (center and length is None) else (start + length if length is not None else total)
    env_h = env._host()[start:min(end, total)]
    if env_h.size and np.abs(env_h).min() < 1e-11:
        raise RuntimeError("istft(...): window overlap add min: " + str(_float(np.abs(env_h).min())))
    y = O.narrow(y, 1, start, min(end, total) - start)
    env = O.narrow(env, 0, start, min(end, total) - start)
    y = O.div(y, env)
    if length is not None and y.shape[-1] < length:
        y = O.cat([y, C.zeros(B, length - y.shape[-1], dtype=y.dtype)], -1)
    return y.squeeze(0) if input.ndim == 2 else y


__all__ = (["contiguous_format", "channels_last", "channels_last_3d", "preserve_format", "legacy_contiguous_format",
            "strided", "sparse_coo", "sparse_csr", "memory_format", "layout", "conj", "detach", "adjoint",
            "is_signed", "matrix_rank", "get_num_interop_threads", "set_num_interop_threads", "set_flush_denormal",
            "set_default_tensor_type", "empty_strided", "frombuffer", "from_dlpack", "binomial", "gradient",
            "histogramdd", "stft", "istft"] + sorted(_COPIES))
