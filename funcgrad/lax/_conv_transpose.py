"""lax.conv_transpose: the transposed ("deconvolution") convolution, as jax.lax.conv_transpose.

The input is dilated by `strides` and convolved with stride 1. Padding 'VALID' gives spatial size
n * s + max(k - s, 0) and 'SAME' gives n * s (k the dilated kernel size, s the stride); explicit
(lo, hi) pairs are used as they are. With transpose_kernel=True the kernel's spatial axes are flipped
and its input/output feature axes swapped, which makes the result the gradient of the forward
convolution with that kernel (Keras' Conv2DTranspose, torch's conv_transpose).
"""
from __future__ import annotations

import math

from ..primitives.conv import conv_dimension_numbers, conv_general_dilated
from ..primitives.shape import rev, transpose

__all__ = ["conv_transpose"]


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
