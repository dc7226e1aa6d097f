"""torch.nn.functional's pooling: max/avg (1-3d), adaptive, unpooling, power-average (lp) and fractional
max pooling, over the reduce_window cards."""
from __future__ import annotations

import math
import numpy as np

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ..._torch import _jnp  # funcgrad.numpy with torch's dtypes (see tensor/_jnp.py)
from ... import lax as _lax
from ..._src.prims.windowed import reduce_window_max as _rw_max, reduce_window_sum as _rw_sum
from ..._torch import _quantized as _Q
from ..._torch._dispatch import _apply, _apply_nograd
from .common import _dt_name, _np_dtype, _ntuple, _shape

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d_with_indices", "max_unpool1d", "max_unpool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices", "max_pool3d_with_indices", "max_unpool3d",
           "lp_pool1d", "lp_pool2d", "lp_pool3d", "fractional_max_pool2d", "fractional_max_pool3d",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]



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


def _first_in_window(sizes, pos):
    """torch's starting index of each window (its kernel's maxindex before the scan): per dim the first
    position at or past 0 in steps of the dilation (past the input where the window lies in the padding),
    flattened row-major over the plane."""
    flat = np.zeros((), np.int64)
    n = len(sizes)
    for i, (L, p) in enumerate(zip(sizes, pos)):
        start = p[:, 0]
        d = p[0, 1] - p[0, 0] if p.shape[1] > 1 else 1
        first = np.where(start < 0, start + (-start + d - 1) // d * d, start)
        shp = [1] * n
        shp[i] = -1
        flat = flat * L + first.reshape(shp)
    return flat


def _torch_max_fn(n, idx, valid, init, dt):
    """fn(a) -> (window maxima, their flat per-plane indices) by patch gather, as torch's scan: the first
    maximum, the last NaN; a window with no value above -inf keeps torch's starting index (init, from
    _first_in_window; None: the window's first element)."""
    low = np.asarray(-np.inf if dt.kind == "f" else np.iinfo(dt).min, dt)
    all_valid = bool(valid.all())
    idx_b = _jnp.asarray(idx)
    init = idx[..., 0] if init is None else np.broadcast_to(init, idx.shape[:-1])
    K = idx.shape[-1]

    def fn(a):
        lead = tuple(a.shape[:-n])
        flat = _jnp.reshape(a, lead + (-1,))
        patches = _jnp.reshape(_jnp.take(flat, idx.reshape(-1), axis=-1), lead + idx.shape)
        if not all_valid:
            patches = _jnp.where(valid, patches, _jnp.asarray(low))
        am = _jnp.argmax(patches, axis=-1, keepdims=True)  # (the first maximum, or the first NaN)
        vals = _jnp.take_along_axis(patches, am, axis=-1)[..., 0]
        if dt.kind == "f":
            isnan = _jnp.isnan(patches)
            last_nan = (K - 1) - _jnp.argmax(_jnp.flip(isnan, axis=-1), axis=-1, keepdims=True)
            am = _jnp.where(_jnp.any(isnan, axis=-1, keepdims=True), last_nan, am)
        where = _jnp.take_along_axis(_jnp.broadcast_to(idx_b, lead + idx.shape), am, axis=-1)[..., 0]
        if dt.kind == "f":  # (vals is -inf only where no element beat torch's starting -inf)
            where = _jnp.where(vals == _jnp.asarray(low), _jnp.asarray(init), where)
        return vals, _jnp.asarray(where, dtype=np.int64)
    return fn


def _max_with_indices(name, input, n, idx, valid, values=True, init=None):
    """Window maxima and their indices (_torch_max_fn); values=False: only the indices, computed without
    recording anything."""
    fn = _torch_max_fn(n, idx, valid, init, _np_dtype(input))
    if not values:
        return _apply_nograd(lambda a: fn(a)[1], (input,))
    vals, ind = _apply(name, fn, (input,))
    return vals, ind


def _max_pool(op, name, n, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    if input.__class__ is _Q.QTensor and not return_indices:   # (torch's quantized kernel: the input's qparams)
        return _Q.q_max_pool(input, n, kernel_size, stride, padding, dilation, ceil_mode)
    k, s, p, d, outs, pads = _pool_setup(op, input, n, kernel_size, stride, padding, dilation, ceil_mode)
    lead = input.dim() - n
    win, strides = (1,) * lead + k, (1,) * lead + s
    wpads, dil = [(0, 0)] * lead + pads, (1,) * lead + d
    # the card with torch's convention: the gradient goes where torch's kernel puts the index (the last NaN,
    # else the first maximum; a window with nothing above -inf: torch's starting index, into the next plane)
    out = _apply(name, lambda a: _rw_max(a, win, strides, wpads, window_dilation=dil, kink="torch"), (input,))
    if not return_indices:
        return out
    sizes = tuple(input.shape[-n:])
    pos = [np.arange(o)[:, None] * si - pi + np.arange(ki)[None, :] * di for o, si, pi, ki, di in zip(outs, s, p, k, d)]
    idx, valid = _window_table(sizes, pos)
    return out, _max_with_indices(name, input, n, idx, valid, values=False, init=_first_in_window(sizes, pos))


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
    """1-D max pooling and the argmax indices."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """2-D max pooling and the argmax indices."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _avg_divisor(size, o, k, s, p, count_include_pad):
    """torch's per-window divisor along one dim (windows clipped to the padded input; pads counted or not)."""
    start = np.arange(o) * s - p
    end = np.minimum(start + k, size + p)
    if count_include_pad:
        return end - start
    return np.minimum(end, size) - np.maximum(start, 0)


def _avg_pool(op, name, n, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    if input.__class__ is _Q.QTensor and n > 1:   # (torch's quantized kernel: the input's qparams)
        return _Q.q_avg_pool(input, n, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
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
    if input.__class__ is _Q.QTensor and n > 1:   # (torch's quantized kernel: the input's qparams)
        return _Q.q_adaptive_avg_pool(input, n, output_size)
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
    """1-D adaptive max pooling and the argmax indices."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    """2-D adaptive max pooling and the argmax indices."""
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


# --- pooling -------------------------------------------------------------------------------------------

def adaptive_avg_pool3d(input, output_size):
    """Average pooling to a fixed (D_out, H_out, W_out); None keeps that input size."""
    return _adaptive_avg("adaptive_avg_pool3d", "AdaptiveAvgPool3D", 3, input, output_size)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling to a fixed (D_out, H_out, W_out); indices are flat per (D, H, W) volume."""
    return _adaptive_max("adaptive_max_pool3d", "AdaptiveMaxPool3D", 3, input, output_size, return_indices)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    """3-D adaptive max pooling and the argmax indices."""
    return adaptive_max_pool3d(input, output_size, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """3-D max pooling and the argmax indices."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool3d (indices flat per (D, H, W) volume)."""
    return _max_unpool("max_unpool3d", "MaxUnpool3D", 3, input, indices, kernel_size, stride, padding, output_size)


def _lp_pool(n, avg, input, norm_type, kernel_size, stride, ceil_mode):
    k = _ntuple(f"lp_pool{n}d", "kernel_size", kernel_size, n)
    if stride is not None:
        out = avg(input.pow(norm_type), k, stride, 0, ceil_mode)
    else:
        out = avg(input.pow(norm_type), k, padding=0, ceil_mode=ceil_mode)
    return (_fg.sign(out) * _fg.relu(_fg.abs(out))).mul(math.prod(k)).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x**p) ** (1/p)."""
    return _lp_pool(1, avg_pool1d, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-D power-average pooling."""
    return _lp_pool(2, avg_pool2d, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-D power-average pooling."""
    return _lp_pool(3, avg_pool3d, input, norm_type, kernel_size, stride, ceil_mode)


# --- fractional max pooling ------------------------------------------------------------------------------

def _fractional_starts(L, k, o, u):
    """Window starts along one dim for the pseudo-random sample u in [0, 1) (Graham's fractional pooling)."""
    if o == 1:
        return np.array([L - k])
    alpha = (L - k) / (o - 1)
    starts = [int((i + u) * alpha) - int(u * alpha) for i in range(o - 1)] + [L - k]
    return np.asarray(starts)


def _fractional_max_pool(n, input, kernel_size, output_size, output_ratio, return_indices, _random_samples):
    op = f"fractional_max_pool{n}d"
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"{op}(): Expected {n + 1}D or {n + 2}D tensor, but got: {list(input.shape)}")
    batched = input.dim() == n + 2
    x = input if batched else input.unsqueeze(0)
    N, C = x.shape[0], x.shape[1]
    sizes = tuple(x.shape[2:])
    k = _ntuple(op, "kernel_size", kernel_size, n)
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
        ratio = _ntuple(op, "output_ratio", output_ratio, n) if not isinstance(output_ratio, (tuple, list)) and \
            float(output_ratio).is_integer() else (tuple(output_ratio) if isinstance(output_ratio, (tuple, list))
                                                   else (output_ratio,) * n)
        outs = tuple(int(L * r_) for L, r_ in zip(sizes, ratio))
    else:
        outs = _ntuple(op, "output_size", output_size, n)
    for L, ki, oi in zip(sizes, k, outs):
        if oi + ki - 1 > L:
            raise RuntimeError(f"{op}(): pool size {ki} and output size {oi} are too large for input size {L}")
    if _random_samples is None:
        samples = _fg.rand(N, C, n, dtype=x.dtype)
    else:
        samples = _random_samples
    su = samples.detach().numpy().reshape(N, C, n).astype(np.float64)
    K = math.prod(k)
    P = math.prod(outs)
    idx = np.zeros((N, C, P, K), np.int64)
    for b in range(N):
        for c in range(C):
            # (torch's samples are ordered (W, H) in 2-d but (T, H, W) in 3-d)
            starts = [_fractional_starts(sizes[i], k[i], outs[i], su[b, c, n - 1 - i if n == 2 else i])
                      for i in range(n)]
            pos = [s_[:, None] + np.arange(ki)[None, :] for s_, ki in zip(starts, k)]  # (o_i, k_i)
            flat = np.zeros((), np.int64)
            for i in range(n):
                shp = [1] * (2 * n)
                shp[i], shp[n + i] = pos[i].shape
                flat = flat * sizes[i] + pos[i].reshape(shp)
            idx[b, c] = flat.reshape(P, K)
    vals = _fg.gather(x.reshape(N, C, -1), 2, _fg.tensor(idx.reshape(N, C, P * K))).reshape(N, C, P, K)
    best = vals.argmax(-1, keepdim=True)
    out = _fg.gather(vals, 3, best).reshape(N, C, *outs)
    ind = _fg.tensor(np.take_along_axis(idx, best.numpy(), 3).reshape(N, C, *outs))
    if not batched:
        out, ind = out.squeeze(0), ind.squeeze(0)
    return (out, ind) if return_indices else out


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Max pooling over pseudo-randomly placed windows reaching a fixed output size (Graham 2014)."""
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """3-D fractional max pooling with pseudo-random pooling regions."""
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=True, _random_samples=None):
    """2-D fractional max pooling and the argmax indices."""
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=True, _random_samples=None):
    """3-D fractional max pooling and the argmax indices."""
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True, _random_samples)
