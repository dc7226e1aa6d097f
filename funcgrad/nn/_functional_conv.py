"""nn.functional convolution, pooling and resampling: funcgrad.lax primitives applied to Tensors through the
recorded-op mechanism of funcgrad.tensor (`_apply`), so autograd comes from the primitives' own rules."""
from __future__ import annotations

import funcgrad as _fg
from ..primitives.conv import conv_general_dilated as _conv
from ..primitives.windowed import reduce_window_max as _rw_max, reduce_window_sum as _rw_sum
from ..tensor._tensor import _apply


def _pair(v, n=2):
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return tuple(int(v[0]) for _ in range(n))
        return tuple(int(x) for x in v)
    return tuple(int(v) for _ in range(n))


__all__ = ["conv2d", "max_pool2d", "avg_pool2d"]


# --- convolution / pooling ----------------------------------------------------------------------------
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    batched = input.dim() == 4
    if not batched:
        if input.dim() != 3:
            raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of "
                               f"size: {list(input.shape)}")
        input = input.unsqueeze(0)
    stride, dilation = _pair(stride), _pair(dilation)
    if isinstance(padding, str):
        if padding == "valid":
            pads = [(0, 0), (0, 0)]
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            pads = []
            for d, k in zip(dilation, weight.shape[2:]):
                total = d * (k - 1)
                pads.append((total // 2, total - total // 2))
        else:
            raise ValueError(f"Invalid padding string '{padding}'")
    else:
        pads = [(p, p) for p in _pair(padding)]
    if input.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {weight.shape[1] * groups} channels, but got "
                           f"{input.shape[1]} channels instead")
    out = _apply("Convolution", lambda a, w: _conv(a, w, stride, pads, rhs_dilation=dilation,
                                                   feature_group_count=groups), (input, weight))
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1)
    return out if batched else out.squeeze(0)


def _pool_args(input, kernel_size, stride, padding, dilation=1):
    k = _pair(kernel_size)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else _pair(stride)
    p = _pair(padding)
    d = _pair(dilation)
    for pi, ki in zip(p, k):
        if pi > ki // 2:
            raise RuntimeError("pad should be at most half of effective kernel size, but got pad="
                               f"{pi}, kernel_size={ki} and dilation=1")
    lead = input.dim() - 2
    win = (1,) * lead + k
    strides = (1,) * lead + s
    pads = [(0, 0)] * lead + [(pi, pi) for pi in p]
    dil = (1,) * lead + d
    return win, strides, pads, dil


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if ceil_mode or return_indices:
        raise NotImplementedError("max_pool2d: ceil_mode and return_indices are not supported yet")
    win, strides, pads, dil = _pool_args(input, kernel_size, stride, padding, dilation)
    return _apply("MaxPool2DWithIndices",
                  lambda a: _rw_max(a, win, strides, pads, window_dilation=dil), (input,))


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if ceil_mode:
        raise NotImplementedError("avg_pool2d: ceil_mode is not supported yet")
    win, strides, pads, _ = _pool_args(input, kernel_size, stride, padding)
    if divisor_override is not None or count_include_pad or all(p == (0, 0) for p in pads):
        div = divisor_override if divisor_override is not None else win[-1] * win[-2]
        return _apply("AvgPool2D", lambda a: _rw_sum(a, win, strides, pads) / div, (input,))
    total = _apply("AvgPool2D", lambda a: _rw_sum(a, win, strides, pads), (input,))
    ones = _fg.ones(tuple(input.shape[-2:]), dtype=input.dtype)
    counts = _apply("AvgPoolCount", lambda a: _rw_sum(a, win[-2:], strides[-2:], pads[-2:]), (ones,))
    return total / counts
