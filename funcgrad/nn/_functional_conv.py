"""nn.functional convolution, pooling, padding and resampling: funcgrad.lax primitives and funcgrad.numpy
operations applied to Tensors through the recorded-op mechanism of funcgrad.tensor (`_apply`), so autograd
comes from the primitives' own rules. Index tables (windows, resampling taps) are static NumPy arrays
computed from the shapes, so every op is one vectorised gather, window reduction or convolution."""
from __future__ import annotations

import math
from typing import Optional, Sequence, Union

import numpy as np

import funcgrad as _fg
import funcgrad.numpy as _jnp
from .. import lax as _lax
from ..primitives.conv import conv_general_dilated as _conv
from ..primitives.shape import pad as _lax_pad
from ..primitives.windowed import reduce_window_max as _rw_max, reduce_window_sum as _rw_sum
from ..tensor._tensor import _apply, _apply_nograd
from ..tensor._argcheck import dtype_error as _dtype_error

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d_with_indices", "max_unpool1d", "max_unpool2d", "pad", "interpolate",
           "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle",
           "unfold", "fold"]

_IntOrTuple = Union[int, Sequence[int]]


def _pair(v, n=2):
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return tuple(int(v[0]) for _ in range(n))
        return tuple(int(x) for x in v)
    return tuple(int(v) for _ in range(n))


def _ntuple(op, name, v, n):
    """v as n ints (an int is repeated); a sequence of the wrong length is a RuntimeError as in torch."""
    if isinstance(v, (tuple, list)):
        t = tuple(int(x) for x in v)
        if len(t) == 1 and n > 1:
            t = t * n
        if len(t) != n:
            raise RuntimeError(f"{op}: expected {name} to be a single integer value or a list of {n} values "
                               f"to match the {n}d operation, but got {name}={list(t)}")
        return t
    return (int(v),) * n


def _dt_name(t):
    return str(t.dtype).replace("funcgrad.", "").replace("torch.", "")


def _np_dtype(t):
    return np.dtype(t._np_dtype())


def _shape(t):
    return list(t.shape)


# --- convolution ------------------------------------------------------------------------------------
def _conv_common(op, input, weight, bias, n, stride, dilation, groups, transposed):
    """Validate and unsqueeze an unbatched input; returns (input, batched, stride, dilation)."""
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {op}, but got "
                           f"input of size: {_shape(input)}")
    batched = input.dim() == n + 2
    if not batched:
        input = input.unsqueeze(0)
    if weight.dim() != n + 2:
        raise RuntimeError(f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight "
                           f"{_shape(weight)}, but got {input.dim()}-dimensional input of size "
                           f"{_shape(input)} instead")
    stride = _ntuple(op, "stride", stride, n)
    dilation = _ntuple(op, "dilation", dilation, n)
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    # torch: the bias (of a plain convolution; a transposed one casts it) checked first, then the weight
    if not transposed and bias is not None and bias._np_dtype() != input._np_dtype():
        raise _dtype_error("Input type ({0:c}) and bias type ({1:c}) should be the same", input, bias)
    if input._np_dtype() != weight._np_dtype():
        raise _dtype_error("expected scalar type {0} but found {1}", input, weight)
    cin = input.shape[1]
    if transposed:
        if cin != weight.shape[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {_shape(weight)}, expected input"
                               f"{_shape(input)} to have {weight.shape[0]} channels, but got {cin} channels "
                               "instead")
        if weight.shape[0] % groups:
            raise RuntimeError(f"{op}: weight of size {_shape(weight)} has {weight.shape[0]} input channels, "
                               f"not divisible by groups={groups}")
        cout = weight.shape[1] * groups
    else:
        if cin != weight.shape[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {_shape(weight)}, expected input"
                               f"{_shape(input)} to have {weight.shape[1] * groups} channels, but got {cin} "
                               "channels instead")
        if weight.shape[0] % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
                               f"0, but got weight of size {_shape(weight)} instead")
        cout = weight.shape[0]
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != cout):
        raise RuntimeError(f"Given weight of size {_shape(weight)}, expected bias to be 1-dimensional with "
                           f"{cout} elements, but got bias of size {_shape(bias)} instead")
    return input, batched, stride, dilation


def _with_bias(fn, input, weight, bias, n):
    """One recorded 'Convolution' op (as torch's ConvolutionBackward0), the bias added inside it."""
    if bias is None:
        return _apply("Convolution", fn, (input, weight))
    shape = (1, -1) + (1,) * n
    return _apply("Convolution", lambda a, w, b: fn(a, w) + _jnp.reshape(b, shape), (input, weight, bias))


def _convnd(op, n, input, weight, bias, stride, padding, dilation, groups):
    input, batched, stride, dilation = _conv_common(op, input, weight, bias, n, stride, dilation, groups,
                                                    False)
    ksize = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            pads = [(0, 0)] * n
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            pads = []
            for d, k in zip(dilation, ksize):
                total = d * (k - 1)
                pads.append((total // 2, total - total // 2))
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        p = _ntuple(op, "padding", padding, n)
        if any(x < 0 for x in p):
            raise RuntimeError("negative padding is not supported")
        pads = [(x, x) for x in p]
    padded = [s + lo + hi for s, (lo, hi) in zip(input.shape[2:], pads)]
    keff = [d * (k - 1) + 1 for d, k in zip(dilation, ksize)]
    if any(pi < ki for pi, ki in zip(padded, keff)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                           f"size: ({' x '.join(map(str, keff))}). Kernel size can't be greater than actual "
                           "input size")
    out = _with_bias(lambda a, w: _conv(a, w, stride, pads, rhs_dilation=dilation, feature_group_count=groups),
                     input, weight, bias, n)
    return out if batched else out.squeeze(0)


def conv1d(input, weight, bias=None, stride: _IntOrTuple = 1, padding: Union[str, _IntOrTuple] = 0,
           dilation: _IntOrTuple = 1, groups: int = 1):
    """1-D cross-correlation over (N, C_in, L) or unbatched (C_in, L) input (torch.nn.functional.conv1d)."""
    return _convnd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride: _IntOrTuple = 1, padding: Union[str, _IntOrTuple] = 0,
           dilation: _IntOrTuple = 1, groups: int = 1):
    """2-D cross-correlation over (N, C_in, H, W) or unbatched (C_in, H, W) input."""
    return _convnd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride: _IntOrTuple = 1, padding: Union[str, _IntOrTuple] = 0,
           dilation: _IntOrTuple = 1, groups: int = 1):
    """3-D cross-correlation over (N, C_in, D, H, W) or unbatched (C_in, D, H, W) input."""
    return _convnd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _transpose_kernel(w, groups, n):
    """(C_in, C_out/g, k...) transposed-conv weight -> the (C_out, C_in/g, k...) kernel, flipped spatially."""
    cin, cog = w.shape[0], w.shape[1]
    k = tuple(w.shape[2:])
    w = _jnp.reshape(w, (groups, cin // groups, cog) + k)
    w = _jnp.swapaxes(w, 1, 2)
    w = _jnp.reshape(w, (groups * cog, cin // groups) + k)
    return _jnp.flip(w, axis=tuple(range(2, 2 + n)))


def _convtnd(op, n, input, weight, bias, stride, padding, output_padding, groups, dilation):
    input, batched, stride, dilation = _conv_common(op, input, weight, bias, n, stride, dilation, groups, True)
    padding = _ntuple(op, "padding", padding, n)
    output_padding = _ntuple(op, "output_padding", output_padding, n)
    if any(x < 0 for x in padding):
        raise RuntimeError("negative padding is not supported")
    if any(x < 0 for x in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(op_ >= s and op_ >= d for op_, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got "
                           f"output_padding={list(output_padding)}, stride={list(stride)}, "
                           f"dilation={list(dilation)}")
    if bias is not None and bias._np_dtype() != input._np_dtype():  # (torch casts it)
        bias = bias.to(input.dtype)
    ksize = tuple(weight.shape[2:])
    pads = [(d * (k - 1) - p, d * (k - 1) - p + o) for d, k, p, o in zip(dilation, ksize, padding, output_padding)]
    outs = [(i - 1) * s - 2 * p + d * (k - 1) + o + 1
            for i, s, p, d, k, o in zip(input.shape[2:], stride, padding, dilation, ksize, output_padding)]
    if any(o <= 0 for o in outs):
        raise RuntimeError(f"{op}: given input of size {_shape(input)}, weight of size {_shape(weight)}, "
                           f"stride={list(stride)} and padding={list(padding)}, the calculated output size "
                           f"{outs} is too small")
    out = _with_bias(lambda a, w: _conv(a, _transpose_kernel(w, groups, n), (1,) * n, pads, lhs_dilation=stride,
                                        rhs_dilation=dilation, feature_group_count=groups),
                     input, weight, bias, n)
    return out if batched else out.squeeze(0)


def conv_transpose1d(input, weight, bias=None, stride: _IntOrTuple = 1, padding: _IntOrTuple = 0,
                     output_padding: _IntOrTuple = 0, groups: int = 1, dilation: _IntOrTuple = 1):
    """1-D transposed convolution ("deconvolution"); weight is (C_in, C_out/groups, k)."""
    return _convtnd("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride: _IntOrTuple = 1, padding: _IntOrTuple = 0,
                     output_padding: _IntOrTuple = 0, groups: int = 1, dilation: _IntOrTuple = 1):
    """2-D transposed convolution; weight is (C_in, C_out/groups, kH, kW)."""
    return _convtnd("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride: _IntOrTuple = 1, padding: _IntOrTuple = 0,
                     output_padding: _IntOrTuple = 0, groups: int = 1, dilation: _IntOrTuple = 1):
    """3-D transposed convolution; weight is (C_in, C_out/groups, kD, kH, kW)."""
    return _convtnd("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups, dilation)


# --- padding ----------------------------------------------------------------------------------------
_PAD_NAMES = {"reflect": "ReflectionPad", "replicate": "ReplicationPad", "circular": "CircularPad"}


def _pad_index(mode, size, lo, hi, dim, shape, pairs):
    """Source indices (into the original axis) of an axis cropped by negative pads, then padded by mode."""
    c0, c1 = max(-lo, 0), max(-hi, 0)
    n = size - c0 - c1
    lo, hi = max(lo, 0), max(hi, 0)
    if mode == "reflect" and (lo >= size or hi >= size):
        raise RuntimeError(f"Padding size should be less than the corresponding input dimension, but got: "
                           f"padding {pairs} at dimension {dim} of input {list(shape)}")
    if mode == "circular" and (lo > n or hi > n):
        raise RuntimeError("Padding value causes wrapping around more than once.")
    if n <= 0 and (lo or hi):
        raise RuntimeError(f"pad: input of shape {list(shape)} is empty at dimension {dim} after cropping, "
                           f"cannot {mode}-pad it")
    j = np.arange(-lo, n + hi)
    if mode == "reflect":
        j = np.abs(j)
        j = np.where(j >= n, 2 * (n - 1) - j, j)
    elif mode == "replicate":
        j = np.clip(j, 0, n - 1)
    else:
        j = j % n
    return (j + c0).astype(np.int64)


def pad(input, pad: Sequence[int], mode: str = "constant", value: Optional[float] = None):
    """Pads the last len(pad)//2 dims (pad lists (left, right) for the last dim first); negative pads crop.

    mode: 'constant' (fill value, default 0), 'reflect', 'replicate' or 'circular'."""
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    m = len(pad) // 2
    if m > input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but "
                           f"got padding length {len(pad)} and input of dimension {input.dim()}")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    shape = tuple(input.shape)
    nd = len(shape)
    pairs = [(0, 0)] * (nd - m) + [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(m))]
    if mode == "constant":
        for d, ((lo, hi), s) in enumerate(zip(pairs, shape)):
            if s + lo + hi < 0:
                raise RuntimeError(f"pad: padding {(lo, hi)} at dimension {d} of input {list(shape)} leaves a "
                                   "negative size")
        if all(p == (0, 0) for p in pairs):
            return input.clone()
        dt = _np_dtype(input)
        fill = np.asarray(0 if value is None else value).astype(dt)
        cfg = [(lo, hi, 0) for lo, hi in pairs]
        return _apply("ConstantPadNd", lambda a: _lax_pad(a, _jnp.asarray(fill), cfg), (input,))
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if m not in (1, 2, 3) or nd not in (m + 1, m + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {nd}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    takes = []
    for d in range(nd - m, nd):
        lo, hi = pairs[d]
        if (lo, hi) != (0, 0):
            takes.append((d, _pad_index(mode, shape[d], lo, hi, d, shape, (lo, hi))))

    def fn(a):
        for d, idx in takes:
            a = _jnp.take(a, idx, axis=d)
        return a
    return _apply(f"{_PAD_NAMES[mode]}{m}D", fn, (input,))


# --- pooling ----------------------------------------------------------------------------------------
def _pool_out(size, k, s, p, d, ceil_mode):
    """torch's pooling output length (ceil mode drops a last window that would start in the right pad)."""
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _pool_setup(op, input, n, kernel_size, stride, padding, dilation, ceil_mode, avg=False):
    """Validated pooling geometry: k, s, p, d, output sizes and per-dim (lo, hi) pads of the spatial dims."""
    if input.dim() not in (n + 1, n + 2):
        b = "3D" if n == 1 else f"{n + 2}D"
        raise RuntimeError(f"{op}: Expected {n + 1}D or {b} (batch mode) tensor with optional 0 dim batch size "
                           f"for input, but got:{_shape(input)}")
    k = _ntuple(op, "kernel_size", kernel_size, n)
    no_stride = stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0)
    s = k if no_stride else _ntuple(op, "stride", stride, n)
    p = _ntuple(op, "padding", padding, n)
    d = _ntuple(op, "dilation", dilation, n)
    if any(v <= 0 for v in k):
        raise RuntimeError(f"{op}: kernel_size must be greater than zero, but got {list(k)}")
    if any(v <= 0 for v in s):
        raise RuntimeError(f"{op}: stride must be greater than zero, but got {list(s)}")
    if any(v <= 0 for v in d):
        raise RuntimeError(f"{op}: dilation must be greater than zero, but got {list(d)}")
    if any(v < 0 for v in p):
        raise RuntimeError(f"{op}: pad must be non-negative, but got pad: {list(p)}")
    for pi, ki, di in zip(p, k, d):
        if pi > ((ki - 1) * di + 1) // 2:
            raise RuntimeError("pad should be at most half of effective kernel size, but got pad="
                               f"{pi}, kernel_size={ki} and dilation={di}")
    sizes = tuple(input.shape[-n:])
    outs = tuple(_pool_out(L, ki, si, pi, di, ceil_mode) for L, ki, si, pi, di in zip(sizes, k, s, p, d))
    if any(o < 1 for o in outs):
        lead = tuple(input.shape[-n - 1:-n])
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, lead + sizes))}). Calculated output size: "
                           f"({'x'.join(map(str, lead + outs))}). Output size is too small")
    pads = [(pi, (o - 1) * si + di * (ki - 1) + 1 - L - pi) for L, o, ki, si, pi, di in zip(sizes, outs, k, s, p, d)]
    return k, s, p, d, outs, pads


def _window_table(sizes, pos):
    """Flat indices (into the flattened spatial plane) and validity of every window element.

    pos[i]: (out_i, K_i) source positions along spatial dim i (may fall outside [0, size_i)). Returns
    (idx, valid), each of shape (*outs, prod K) with the window's elements in row-major kernel order."""
    n = len(sizes)
    idx = np.zeros((), np.int64)
    valid = np.ones((), bool)
    for i, (L, p) in enumerate(zip(sizes, pos)):
        ok = (p >= 0) & (p < L)
        pc = np.clip(p, 0, L - 1)
        # dims laid out (o_0..o_{n-1}, k_0..k_{n-1})
        shp = [1] * (2 * n)
        shp[i], shp[n + i] = p.shape
        idx = idx * L + pc.reshape(shp)
        valid = valid & ok.reshape(shp)
    outs = tuple(p.shape[0] for p in pos)
    K = math.prod(p.shape[1] for p in pos)
    idx = np.broadcast_to(idx, outs + tuple(p.shape[1] for p in pos)).reshape(outs + (K,))
    valid = np.broadcast_to(valid, idx.shape[:-1] + tuple(p.shape[1] for p in pos)).reshape(outs + (K,))
    return np.ascontiguousarray(idx), np.ascontiguousarray(valid)


def _max_with_indices(name, input, n, idx, valid, values=True):
    """Window maxima and their flat per-plane indices (first maximum, NaN wins) by patch gather + argmax;
    values=False: only the indices, computed without recording anything."""
    dt = _np_dtype(input)
    low = -np.inf if dt.kind == "f" else np.iinfo(dt).min
    all_valid = bool(valid.all())
    idx_b = _jnp.asarray(idx)

    def fn(a):
        lead = tuple(a.shape[:-n])
        flat = _jnp.reshape(a, lead + (-1,))
        patches = _jnp.reshape(_jnp.take(flat, idx.reshape(-1), axis=-1), lead + idx.shape)
        if not all_valid:
            patches = _jnp.where(valid, patches, _jnp.asarray(np.asarray(low, dt)))
        if dt.kind == "f":  # NaN propagates (as in torch): make it the argmax
            key = _jnp.where(_jnp.isnan(patches), _jnp.asarray(np.asarray(np.inf, dt)), patches)
        else:
            key = patches
        am = _jnp.argmax(key, axis=-1, keepdims=True)
        vals = _jnp.take_along_axis(patches, am, axis=-1)[..., 0]
        where = _jnp.take_along_axis(_jnp.broadcast_to(idx_b, lead + idx.shape), am, axis=-1)[..., 0]
        return vals, _jnp.asarray(where, dtype=np.int64)
    if not values:
        return _apply_nograd(lambda a: fn(a)[1], (input,))
    vals, ind = _apply(name, fn, (input,))
    return vals, ind


def _max_pool(op, name, n, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    k, s, p, d, outs, pads = _pool_setup(op, input, n, kernel_size, stride, padding, dilation, ceil_mode)
    lead = input.dim() - n
    win, strides = (1,) * lead + k, (1,) * lead + s
    wpads, dil = [(0, 0)] * lead + pads, (1,) * lead + d
    # reduce_window's derivative goes to the first maximum of each window, as torch's does
    out = _apply(name, lambda a: _rw_max(a, win, strides, wpads, window_dilation=dil), (input,))
    if not return_indices:
        return out
    pos = [np.arange(o)[:, None] * si - pi + np.arange(ki)[None, :] * di for o, si, pi, ki, di in zip(outs, s, p, k, d)]
    idx, valid = _window_table(tuple(input.shape[-n:]), pos)
    return out, _max_with_indices(name, input, n, idx, valid, values=False)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """1-D max pooling over (N, C, L) or (C, L); with return_indices also the flat index of each maximum."""
    return _max_pool("max_pool1d", "MaxPool1DWithIndices", 1, input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """2-D max pooling over (N, C, H, W) or (C, H, W); indices are flat per (H, W) plane as in torch."""
    return _max_pool("max_pool2d", "MaxPool2DWithIndices", 2, input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W)."""
    return _max_pool("max_pool3d", "MaxPool3DWithIndices", 3, input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _avg_divisor(size, o, k, s, p, count_include_pad):
    """torch's per-window divisor along one dim (windows clipped to the padded input; pads counted or not)."""
    start = np.arange(o) * s - p
    end = np.minimum(start + k, size + p)
    if count_include_pad:
        return end - start
    return np.minimum(end, size) - np.maximum(start, 0)


def _avg_pool(op, name, n, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"{op}: Expected {n + 1}D or {n + 2}D (batch mode) tensor for input, but got "
                           f"input of size {_shape(input)}")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    k, s, p, _, outs, pads = _pool_setup(op, input, n, kernel_size, stride, padding, 1, ceil_mode)
    lead = input.dim() - n
    win, strides, wpads = (1,) * lead + k, (1,) * lead + s, [(0, 0)] * lead + pads
    if divisor_override is not None:
        div = np.asarray(divisor_override)
    else:
        div = np.ones((), np.int64)
        for i, (L, o, ki, si, pi) in enumerate(zip(input.shape[-n:], outs, k, s, p)):
            shp = [1] * n
            shp[i] = o
            div = div * _avg_divisor(L, o, ki, si, pi, count_include_pad).reshape(shp)
    div = div.astype(_np_dtype(input))
    return _apply(name, lambda a: _rw_sum(a, win, strides, wpads) / _jnp.asarray(div), (input,))


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-D average pooling over (N, C, L) or (C, L)."""
    return _avg_pool("avg_pool1d", "AvgPool1D", 1, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """2-D average pooling over (N, C, H, W) or (C, H, W)."""
    return _avg_pool("avg_pool2d", "AvgPool2D", 2, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """3-D average pooling over (N, C, D, H, W) or (C, D, H, W)."""
    return _avg_pool("avg_pool3d", "AvgPool3D", 3, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def _adaptive_sizes(op, input, n, output_size):
    if n == 1:
        if input.dim() not in (2, 3):
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for "
                               f"argument #1 'self' (while checking arguments for {op})")
        if isinstance(output_size, (list, tuple)):
            if len(output_size) != 1:
                raise RuntimeError(f"{op}() argument 'output_size' should contain one int (got "
                                   f"{len(output_size)})")
            output_size = output_size[0]
        outs = (int(output_size),)
    else:
        if input.dim() not in (n + 1, n + 2):
            raise RuntimeError(f"{op}(): Expected {n + 1}D or {n + 2}D tensor, but got {_shape(input)}")
        if isinstance(output_size, (list, tuple)):
            if len(output_size) != n:
                raise RuntimeError(f"{op}: output_size must be {n}, got {len(output_size)}")
            outs = tuple(int(input.shape[-n + i]) if v is None else int(v) for i, v in enumerate(output_size))
        else:
            outs = (int(output_size),) * n
    if any(o < 0 for o in outs):
        raise RuntimeError(f"{op}: elements of output_size must be greater than or equal to 0 but received "
                           f"{list(outs)}")
    for i, L in enumerate(input.shape[-n:]):
        if L == 0 and outs[i] > 0:
            raise RuntimeError(f"{op}(): Expected input to have non-zero size for non-batch dimensions, but "
                               f"input has sizes {_shape(input)} with dimension {input.dim() - n + i} being empty")
    return outs


def _adaptive_bins(L, o):
    i = np.arange(o)
    return (i * L) // o, -((-(i + 1) * L) // o)


def _adaptive_avg(op, name, n, input, output_size):
    outs = _adaptive_sizes(op, input, n, output_size)
    dt = _np_dtype(input)
    mats = []
    for L, o in zip(input.shape[-n:], outs):
        start, end = _adaptive_bins(L, o)
        j = np.arange(L)
        m = ((j[None, :] >= start[:, None]) & (j[None, :] < end[:, None])) / (end - start)[:, None]
        mats.append(np.ascontiguousarray(m.T.astype(dt)))  # (L, o)

    def fn(a):
        for i, m in enumerate(mats):
            ax = a.ndim - n + i
            a = _jnp.swapaxes(_jnp.matmul(_jnp.swapaxes(a, ax, -1), _jnp.asarray(m)), ax, -1)
        return a
    return _apply(name, fn, (input,))


def adaptive_avg_pool1d(input, output_size):
    """Average pooling to a fixed output length (bins [floor(iL/o), ceil((i+1)L/o)) as in torch)."""
    return _adaptive_avg("adaptive_avg_pool1d", "AdaptiveAvgPool1D", 1, input, output_size)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed (H_out, W_out); None keeps that input size."""
    return _adaptive_avg("adaptive_avg_pool2d", "AdaptiveAvgPool2D", 2, input, output_size)


def _adaptive_max(op, name, n, input, output_size, return_indices):
    outs = _adaptive_sizes(op, input, n, output_size)
    sizes = tuple(input.shape[-n:])
    pos = []
    for L, o in zip(sizes, outs):
        start, end = _adaptive_bins(L, o)
        kmax = int((end - start).max()) if o else 1
        # a bin shorter than kmax repeats its last element (which never changes the first maximum)
        pos.append(np.minimum(start[:, None] + np.arange(kmax)[None, :], (end - 1)[:, None]))
    idx, valid = _window_table(sizes, pos)
    vals, ind = _max_with_indices(name, input, n, idx, valid)
    return (vals, ind) if return_indices else vals


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling to a fixed output length; with return_indices also the flat index of each maximum."""
    return _adaptive_max("adaptive_max_pool1d", "AdaptiveMaxPool1D", 1, input, output_size, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to a fixed (H_out, W_out); indices are flat per (H, W) plane."""
    return _adaptive_max("adaptive_max_pool2d", "AdaptiveMaxPool2D", 2, input, output_size, return_indices)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool2d(input, output_size, True)


def _max_unpool(op, name, n, input, indices, kernel_size, stride, padding, output_size):
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"{op}: Expected {n + 1}D or {n + 2}D tensor for input, but got {_shape(input)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({_shape(input)}) but got indices tensor with shape: {_shape(indices)}")
    if indices.dtype != _fg.int64:
        raise RuntimeError(f"{op}: elements in indices should be type int64 but got: {_dt_name(indices)}")
    k = _ntuple(op, "kernel_size", kernel_size, n)
    s = k if stride is None else _ntuple(op, "stride", stride, n)
    p = _ntuple(op, "padding", padding, n)
    sizes = tuple(input.shape[-n:])
    default = [(L - 1) * si - 2 * pi + ki for L, si, pi, ki in zip(sizes, s, p, k)]
    if output_size is None:
        outs = tuple(default)
    else:
        output_size = [int(v) for v in output_size]
        if len(output_size) == n + 2:
            output_size = output_size[-n:]
        if len(output_size) != n:
            raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has "
                             f"a length of '{len(output_size)}'")
        for i, (v, dflt, si) in enumerate(zip(output_size, default, s)):
            lo, hi = dflt - si, dflt + si
            if not lo < v < hi:
                raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {i} must be between {lo} and '
                                 f'{hi})')
        outs = tuple(output_size)
    plane = math.prod(outs)
    ind = np.asarray(indices.detach().cpu().numpy(), dtype=np.int64)
    if ind.size and (ind.max() >= plane or ind.min() < 0):
        bad = ind.max() if ind.max() >= plane else ind.min()
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, outs))}")
    lead = tuple(input.shape[:-n])
    rows = math.prod(lead)
    dest = (ind.reshape(rows, -1) + np.arange(rows, dtype=np.int64)[:, None] * plane).reshape(-1)
    counts = np.bincount(dest, minlength=rows * plane)
    shared = counts > 1  # overlapping windows can send one maximum to a cell twice
    dt = _np_dtype(input)

    def fn(a):
        v = _jnp.reshape(a, (-1,))
        zeros = _jnp.zeros((rows * plane,), dtype=dt)
        out = zeros.at[dest].add(v)  # its vjp gathers the output gradient at each index, as torch's
        if shared.any():  # a shared cell holds the value once; the gradient still reaches every source
            once = zeros.at[dest].set(_lax.stop_gradient(v))
            out = _jnp.where(shared, once + (out - _lax.stop_gradient(out)), out)
        return _jnp.reshape(out, lead + outs)
    return _apply(name, fn, (input,))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool1d: each value placed at its index, zeros elsewhere."""
    return _max_unpool("max_unpool1d", "MaxUnpool1D", 1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool2d (indices flat per (H, W) plane)."""
    return _max_unpool("max_unpool2d", "MaxUnpool2D", 2, input, indices, kernel_size, stride, padding, output_size)


# --- resampling -------------------------------------------------------------------------------------
_INTERP_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_LINEAR_DIMS = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}


def _nearest_index(L, o, scale, exact):
    """torch's nearest source index (float32 arithmetic, as its CPU kernel)."""
    dst = np.arange(o, dtype=np.float32)
    sc = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(L) / np.float32(o)
    if exact:
        src = np.floor((dst + np.float32(0.5)) * sc).astype(np.int64)
    elif o == L:
        return np.arange(o)
    elif o == 2 * L:
        return np.arange(o) >> 1
    else:
        src = np.floor(dst * sc).astype(np.int64)
    return np.minimum(src, L - 1)


def _source_coords(L, o, scale, align_corners, cubic, ct):
    """Fractional source coordinate of each output element (torch's area_pixel_compute_source_index)."""
    dst = np.arange(o, dtype=ct)
    if align_corners:
        sc = ct(L - 1) / ct(o - 1) if o > 1 else ct(0)
        return dst * sc
    sc = ct(1.0 / scale) if scale is not None and scale > 0 else ct(L) / ct(o)
    src = sc * (dst + ct(0.5)) - ct(0.5)
    return src if cubic else np.maximum(src, ct(0))


def _cubic_weights(t, A=-0.75):
    def c1(x):
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def c2(x):
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    return [c2(t + 1), c1(t), c1(1 - t), c2(2 - t)]


def _interp_taps(mode, L, o, scale, align_corners, dt):
    """(list of (index array, weight array or None)) whose weighted sum resamples one axis."""
    if mode in ("nearest", "nearest-exact"):
        return [(_nearest_index(L, o, scale, mode == "nearest-exact"), None)]
    ct = np.float64 if dt == np.float64 else np.float32
    src = _source_coords(L, o, scale, align_corners, mode == "bicubic", ct)
    i0 = np.floor(src).astype(np.int64)
    t = (src - i0).astype(ct)
    if mode == "bicubic":
        ws = _cubic_weights(t)
        return [(np.clip(i0 - 1 + j, 0, L - 1), np.asarray(w, dt)) for j, w in enumerate(ws)]
    i1 = np.minimum(i0 + 1, L - 1)
    return [(i0, np.asarray(1 - t, dt)), (i1, np.asarray(t, dt))]


def _as_list(v, n, what, spatial, label):
    if isinstance(v, (list, tuple)):
        if len(v) != n:
            of = "shape " if what != "output size" else ""
            raise ValueError(f"Input and {what} must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {spatial} and {what} of {of}{tuple(v)}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                             f"{what} in ({label}1, {label}2, ...,{label}K) format.")
        return list(v)
    return [v] * n


def interpolate(input, size=None, scale_factor=None, mode: str = "nearest", align_corners: Optional[bool] = None,
                recompute_scale_factor: Optional[bool] = None, antialias: bool = False):
    """Resizes (N, C, *spatial) input to size or by scale_factor; modes nearest, nearest-exact, linear,
    bilinear, bicubic, trilinear (separable, one gather per tap and axis) and area (adaptive average)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    n = input.dim() - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        outs = [int(v) for v in _as_list(size, n, "output size", spatial, "o")]
        scales = None
    elif scale_factor is not None:
        scales = [float(v) for v in _as_list(scale_factor, n, "scale_factor", spatial, "s")]
        outs = None
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and outs is None:
        recompute_scale_factor = True
    if outs is None:
        outs = [int(math.floor(float(L) * sc)) for L, sc in zip(spatial, scales)]
        if recompute_scale_factor:
            scales = None
    if antialias:
        if not (mode in ("bilinear", "bicubic") and input.dim() == 4):
            raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and "
                             "requires a 4-D tensor as input")
        raise NotImplementedError("interpolate: antialias=True is not supported")
    known = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area")
    if mode in _LINEAR_DIMS and input.dim() != _LINEAR_DIMS[mode] + 2 and input.dim() in (3, 4, 5):
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {_LINEAR_DIMS[mode] + 2}D input")
    if input.dim() not in (3, 4, 5) or mode not in known:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) "
                                  f"for the modes: {_INTERP_MODES} (got {mode})")
    if any(o <= 0 for o in outs):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({', '.join(map(str, spatial))}) and output ({', '.join(map(str, outs))})")
    if mode == "area":
        return _adaptive_avg("adaptive_avg_pool", f"AdaptiveAvgPool{n}D", n, input, tuple(outs))
    dt = _np_dtype(input)
    axes = []
    for i, (L, o) in enumerate(zip(spatial, outs)):
        sc = scales[i] if scales is not None else None
        taps = _interp_taps(mode, L, o, sc, align_corners, dt)
        shp = [1] * (n + 2)
        shp[2 + i] = o
        axes.append((2 + i, [(idx, None if w is None else w.reshape(shp)) for idx, w in taps]))

    def fn(a):
        for ax, taps in axes:
            acc = None
            for idx, w in taps:
                v = _jnp.take(a, idx, axis=ax)
                if w is not None:
                    v = v * _jnp.asarray(w)
                acc = v if acc is None else acc + v
            a = acc
        return a
    kind = {"nearest": "Nearest", "nearest-exact": "NearestExact", "linear": "Linear", "bilinear": "Bilinear",
            "bicubic": "Bicubic", "trilinear": "Trilinear"}[mode]
    return _apply(f"Upsample{kind}{n}D", fn, (input,))


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of interpolate."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='nearest')."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='bilinear', align_corners=True)."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def pixel_shuffle(input, upscale_factor: int):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r)."""
    r = int(upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c, h, w = input.shape[-3:]
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
                           f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    lead = tuple(input.shape[:-3])
    m = len(lead)
    perm = tuple(range(m)) + (m, m + 3, m + 1, m + 4, m + 2)

    def fn(a):
        a = _jnp.reshape(a, lead + (c // (r * r), r, r, h, w))
        return _jnp.reshape(_jnp.transpose(a, perm), lead + (c // (r * r), h * r, w * r))
    return _apply("PixelShuffle", fn, (input,))


def pixel_unshuffle(input, downscale_factor: int):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W), the inverse of pixel_shuffle."""
    r = int(downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    c, h, w = input.shape[-3:]
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but "
                           f"input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but "
                           f"input.size(-1)={w} is not divisible by {r}")
    lead = tuple(input.shape[:-3])
    m = len(lead)
    perm = tuple(range(m)) + (m, m + 2, m + 4, m + 1, m + 3)

    def fn(a):
        a = _jnp.reshape(a, lead + (c, h // r, r, w // r, r))
        return _jnp.reshape(_jnp.transpose(a, perm), lead + (c * r * r, h // r, w // r))
    return _apply("PixelUnshuffle", fn, (input,))


def _im2col_table(sizes, k, d, p, s):
    """Flat plane index and validity of each (kernel offset, block) pair, kernel-major: shape (K, L)."""
    outs = [(L + 2 * pi - di * (ki - 1) - 1) // si + 1 for L, ki, di, pi, si in zip(sizes, k, d, p, s)]
    if any(o < 1 for o in outs):
        return outs, None, None
    pos = [np.arange(o)[:, None] * si - pi + np.arange(ki)[None, :] * di
           for o, si, pi, ki, di in zip(outs, s, p, k, d)]
    idx, valid = _window_table(sizes, pos)  # (oh, ow, K)
    L = math.prod(outs)
    return outs, np.ascontiguousarray(idx.reshape(L, -1).T), np.ascontiguousarray(valid.reshape(L, -1).T)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding local blocks of (N, C, H, W) (or (C, H, W)) as columns: (N, C*kH*kW, L)."""
    if input.dim() not in (3, 4):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {_shape(input)}")
    k, d = _ntuple("unfold", "kernel_size", kernel_size, 2), _ntuple("unfold", "dilation", dilation, 2)
    p, s = _ntuple("unfold", "padding", padding, 2), _ntuple("unfold", "stride", stride, 2)
    if any(v <= 0 for v in k + d + s) or any(v < 0 for v in p):
        raise RuntimeError(f"unfold: kernel_size, dilation and stride must be positive and padding non-negative, "
                           f"but got kernel_size={k}, dilation={d}, padding={p}, stride={s}")
    sizes = tuple(input.shape[-2:])
    outs, idx, valid = _im2col_table(sizes, k, d, p, s)
    if any(o < 1 for o in outs):
        raise RuntimeError(f"Given input with spatial size {sizes}, kernel_size={k}, dilation={d}, padding={p}, "
                           f"calculated shape of the array of sliding blocks as {tuple(outs)}, but its components "
                           "must be at least one.")
    lead = tuple(input.shape[:-3])
    c = input.shape[-3]
    K, L = idx.shape
    all_valid = bool(valid.all())
    dt = _np_dtype(input)

    def fn(a):
        flat = _jnp.reshape(a, lead + (c, -1))
        cols = _jnp.reshape(_jnp.take(flat, idx.reshape(-1), axis=-1), lead + (c, K, L))
        if not all_valid:
            cols = _jnp.where(valid, cols, _jnp.asarray(np.zeros((), dt)))
        return _jnp.reshape(cols, lead + (c * K, L))
    return _apply("Im2Col", fn, (input,))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sums columns (N, C*kH*kW, L) of sliding blocks back into (N, C, H, W): the adjoint of unfold."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
                           f"non-zero dimensions for input, but got: {_shape(input)}")
    osz = _ntuple("fold", "output_size", output_size, 2)
    k, d = _ntuple("fold", "kernel_size", kernel_size, 2), _ntuple("fold", "dilation", dilation, 2)
    p, s = _ntuple("fold", "padding", padding, 2), _ntuple("fold", "stride", stride, 2)
    if any(v <= 0 for v in k + d + s + osz) or any(v < 0 for v in p):
        raise RuntimeError(f"fold: output_size, kernel_size, dilation and stride must be positive and padding "
                           f"non-negative, but got output_size={osz}, kernel_size={k}, dilation={d}, padding={p}, "
                           f"stride={s}")
    K = k[0] * k[1]
    ck, nb = input.shape[-2], input.shape[-1]
    if ck % K:
        raise RuntimeError(f"Expected size of input's dimension {input.dim() - 2} to be divisible by the product "
                           f"of kernel_size, but got input.size({input.dim() - 2})={ck} and kernel_size={k}.")
    outs, idx, valid = _im2col_table(osz, k, d, p, s)
    if any(o < 1 for o in outs):
        raise RuntimeError(f"Given output_size={osz}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, "
                           f"calculated shape of the array of sliding blocks as {tuple(outs)}, but its "
                           "components must be at least one.")
    if outs[0] * outs[1] != nb:
        raise RuntimeError(f"Given output_size={osz}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, "
                           f"expected size of input's dimension {input.dim() - 1} to match the calculated number of "
                           f"sliding blocks {outs[0]} * {outs[1]} = {outs[0] * outs[1]}, but got "
                           f"input.size({input.dim() - 1})={nb}.")
    lead = tuple(input.shape[:-2])
    c = ck // K
    sel = np.flatnonzero(valid.reshape(-1))
    dest = idx.reshape(-1)[sel]
    dt = _np_dtype(input)
    nd = len(lead) + 1

    def fn(a):
        cols = _jnp.reshape(a, lead + (c, K * nb))
        if sel.size != K * nb:
            cols = _jnp.take(cols, sel, axis=-1)
        out = _jnp.zeros(lead + (c, osz[0] * osz[1]), dtype=dt)
        out = out.at[(slice(None),) * nd + (dest,)].add(cols)
        return _jnp.reshape(out, lead + (c,) + osz)
    return _apply("Col2Im", fn, (input,))
