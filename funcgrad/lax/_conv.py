"""lax's convolutions: the convolution cards under their lax names, conv_transpose, the patches a
convolution sees (conv_general_dilated_patches), and the output-shape rules (conv_*_shape_tuple).

conv_transpose is the transposed ("deconvolution") convolution, as jax.lax.conv_transpose. The input is dilated by `strides` and convolved with stride 1. Padding 'VALID' gives spatial size
n * s + max(k - s, 0) and 'SAME' gives n * s (k the dilated kernel size, s the stride); explicit
(lo, hi) pairs are used as they are. With transpose_kernel=True the kernel's spatial axes are flipped
and its input/output feature axes swapped, which makes the result the gradient of the forward
convolution with that kernel (Keras' Conv2DTranspose, torch's conv_transpose).
"""
from __future__ import annotations

import math

import numpy as np

from .._src.core.array import ArrayBase, canonical_array, to_array
from .._src.core.aval import ShapedArray
from .._src.prims.conv import (conv, conv_dimension_numbers, conv_general_dilated, conv_with_general_padding,
                               padtype_to_pads)
from .._src.prims.shape import rev, transpose
from .._src.interpreters.batching import trace_to_jaxpr

__all__ = ["conv", "conv_dimension_numbers", "conv_general_dilated", "conv_general_dilated_patches",
           "conv_general_shape_tuple", "conv_shape_tuple", "conv_transpose", "conv_transpose_shape_tuple",
           "conv_with_general_padding", "padtype_to_pads"]


def _pads(k: int, s: int, padding: str):
    kind = padding.upper()
    if kind == "VALID":
        return (k - 1, k - 1 + max(s - k, 0))
    if kind == "SAME":
        total = k + s - 2
        before = k - 1 if s > k - 1 else int(math.ceil(total / 2))
        return (before, total - before)
    raise ValueError(f"conv_transpose: padding must be 'SAME', 'VALID' or (low, high) pairs, got {padding!r}")


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel: bool = False, precision=None, preferred_element_type=None):
    """Transposed convolution of lhs with kernel rhs (layouts as conv_general_dilated's
    dimension_numbers; default NC..., OI...)."""
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    nsp = len(lhs.shape) - 2
    strides = tuple(strides)
    rhs_dilation = (1,) * nsp if rhs_dilation is None else tuple(rhs_dilation)
    if len(strides) != nsp or len(rhs_dilation) != nsp:
        raise ValueError(f"conv_transpose: strides {strides} and rhs_dilation {rhs_dilation} need one entry per "
                         f"spatial dimension ({nsp})")
    k_sizes = [rhs.shape[d] for d in dn.rhs_spec[2:]]
    k_eff = [(k - 1) * r + 1 for k, r in zip(k_sizes, rhs_dilation)]
    if isinstance(padding, str):
        pads = [_pads(k, s, padding) for k, s in zip(k_eff, strides)]
    else:
        pads = [tuple(p) for p in padding]
    if transpose_kernel:
        rhs = rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(len(rhs.shape)))
        o, i = dn.rhs_spec[0], dn.rhs_spec[1]
        perm[o], perm[i] = perm[i], perm[o]
        rhs = transpose(rhs, tuple(perm))
    return conv_general_dilated(lhs, rhs, (1,) * nsp, pads, lhs_dilation=strides, rhs_dilation=rhs_dilation,
                                dimension_numbers=dimension_numbers, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches a convolution with a kernel of spatial shape `filter_shape` sees, as features: the
    output has C * prod(filter_shape) features, channel-major (feature c * prod(filter_shape) + k holds
    channel c at flat kernel position k), laid out as the output spec of dimension_numbers says."""
    lhs = lhs if isinstance(lhs, ArrayBase) else canonical_array(lhs)
    filter_shape = tuple(int(k) for k in filter_shape)
    n = lhs.ndim - 2
    if len(filter_shape) != n:
        raise ValueError(f"conv_general_dilated_patches: filter_shape {filter_shape} needs {n} entries")
    dn = conv_dimension_numbers(lhs.shape, lhs.shape, dimension_numbers)
    lhs_nc = transpose(lhs, tuple(dn.lhs_spec))  # N, C, spatial (in the rhs spec's spatial order)
    c = lhs_nc.shape[1]
    k = int(np.prod(filter_shape))
    eye = np.eye(k, dtype=np.dtype(lhs.dtype)).reshape((k, 1) + filter_shape)
    kernel = np.tile(eye, (c,) + (1,) * (n + 1))  # (C*k, 1, *filter): group c picks channel c
    out = conv_general_dilated(lhs_nc, to_array(kernel, dtype=lhs.dtype), window_strides, padding,
                               lhs_dilation, rhs_dilation, None, feature_group_count=c,
                               precision=precision, preferred_element_type=preferred_element_type)
    return transpose(out, tuple(int(i) for i in np.argsort(dn.out_spec)))


def _shape_of(fn, *shapes) -> tuple:
    """The output shape of fn on float32 operands of `shapes`, found by tracing abstractly."""
    jaxpr = trace_to_jaxpr(lambda *xs: [fn(*xs)], [ShapedArray(tuple(s), np.dtype(np.float32)) for s in shapes],
                           "shape_tuple")
    return tuple(jaxpr.outvars[0].aval.shape)


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1) -> tuple:
    """conv_general_dilated's output shape for NC.../OI... operands (pads: a string or (lo, hi) pairs)."""
    return _shape_of(lambda a, b: conv_general_dilated(a, b, strides, pads, batch_group_count=batch_group_count),
                     lhs_shape, rhs_shape)


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers) -> tuple:
    """conv_general_dilated's output shape for the given dimension_numbers."""
    return _shape_of(lambda a, b: conv_general_dilated(a, b, window_strides, padding,
                                                       dimension_numbers=dimension_numbers),
                     lhs_shape, rhs_shape)


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers) -> tuple:
    """lax.conv_transpose's output shape."""
    return _shape_of(lambda a, b: conv_transpose(a, b, window_strides, padding,
                                                 dimension_numbers=dimension_numbers),
                     lhs_shape, rhs_shape)
