"""torch.nn.functional's convolutions (1-3d, transposed) and im2col (unfold / fold), over the
conv_general_dilated card."""
from __future__ import annotations

import math
import numpy as np
from typing import Union

from ..._torch import _jnp  # funcgrad.numpy with torch's dtypes (see tensor/_jnp.py)
from ..._src.prims.conv import conv_general_dilated as _conv
from ..._torch._argcheck import dtype_error as _dtype_error
from ..._torch._dispatch import _apply
from .common import _IntOrTuple, _np_dtype, _ntuple, _shape
from .pooling import _window_table

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "unfold",
           "fold"]



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
    # torch: the bias (of a plain convolution; a transposed one casts it) checked first, the weight's dtype
    # after the shapes (_check_weight_dtype)
    if not transposed and bias is not None and bias._np_dtype() != input._np_dtype():
        raise _dtype_error("Input type ({0:c}) and bias type ({1:c}) should be the same", input, bias)
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
                               f"0, but got weight of size [{_shape(weight)}] instead")  # (torch's doubled brackets)
        cout = weight.shape[0]
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != cout):
        raise RuntimeError(f"Given weight of size {_shape(weight)}, expected bias to be 1-dimensional with "
                           f"{cout} elements, but got bias of size {_shape(bias)} instead")
    return input, batched, stride, dilation


def _check_weight_dtype(input, weight):
    """torch's error for a weight of another dtype than the input's, raised after its shape checks."""
    if input._np_dtype() != weight._np_dtype():
        raise _dtype_error("expected scalar type {0} but found {1}", input, weight)


def _with_bias(fn, input, weight, bias, n):
    """One recorded 'Convolution' op (as torch's ConvolutionBackward0), the bias added inside it."""
    if bias is None:
        out = _apply("Convolution", fn, (input, weight))
        if out.grad_fn is not None:
            out.grad_fn.absent_slots = (2,)  # (torch's next_functions: (None, 0) for the bias)
        return out
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
    _check_weight_dtype(input, weight)
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
    _check_weight_dtype(input, weight)
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
