"""torch.nn.functional's dropout family (dropout, dropout1d/2d/3d, alpha and feature-alpha dropout)."""
from __future__ import annotations

import warnings

import numpy as np

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from .common import _maybe_inplace, _unbatched

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]



# --- dropout ----------------------------------------------------------------------------------------
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(shape, p, dtype):
    return _fg.empty(tuple(shape), dtype=dtype).bernoulli_(1.0 - p)


def _keep_scale(shape, p, dtype):
    """The kept elements' scale 1/(1-p) (0 where dropped), as torch's noise.bernoulli_(1-p).div_(1-p): ATen divides
    by a scalar as a product with its reciprocal in the op math type (float for float16/bfloat16/float32), so
    the scale is rounded from float's 1/(1-p), not computed in the tensor's dtype."""
    mask = _keep_mask(shape, p, dtype)
    op = np.float64 if mask._np_dtype() == np.float64 else np.float32
    return mask * float(op(1.0) / op(1.0 - p))


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability p and scales the rest by 1/(1-p) (training only)."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _maybe_inplace(input, inplace, lambda x: x * 0.0, "Mul")  # (torch's in-place node: input.mul_)
    scaled = _keep_scale(input.shape, p, input.dtype)
    return _maybe_inplace(input, inplace, lambda x: x * scaled, "Mul")


def _feature_dropout(input, p, training, inplace, alpha=False):
    """Dropout of whole channels: one draw per (N, C), broadcast over the remaining dimensions."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    if alpha:
        return _alpha_dropout_with_mask(input, p, shape, inplace)
    if p == 1.0:
        return _maybe_inplace(input, inplace, lambda x: x * 0.0, "FeatureDropout")
    scaled = _keep_scale(shape, p, input.dtype)
    return _maybe_inplace(input, inplace, lambda x: x * scaled, "FeatureDropout")


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, L) input with probability p when training."""
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    if input.dim() == 2 and inplace:  # torch unsqueeze_s in place: the input itself comes back
        _feature_dropout(input.unsqueeze(0), p, training, True)
        return input
    return _unbatched(input, input.dim() == 3, lambda x: _feature_dropout(x, p, training, inplace))


def _warn_unusual_rank(nd: int, spatial: int) -> None:
    """torch's deprecation warning when dropout{spatial}d gets other than spatial dims, a channel dim and an
    optional batch dim (it then still drops along dim 1 as for a batch)."""
    if nd not in (spatial + 1, spatial + 2):
        name = f"dropout{spatial}d"
        warnings.warn(f"{name}: Received a {nd}-D input to {name}, which is deprecated and will result in an "
                      "error in a future release. To retain the behavior and silence this warning, please use "
                      f"dropout instead. Note that {name} exists to provide channel-wise dropout on inputs with "
                      f"{spatial} spatial dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      f"{spatial + 1}D or {spatial + 2}D inputs).", stacklevel=3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, H, W) input with probability p when training."""
    _check_p(p)
    nd = input.dim()
    _warn_unusual_rank(nd, 2)
    if nd == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a "
                      "batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, "
                      "please switch to using dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, D, H, W) input with probability p when training."""
    _check_p(p)
    nd = input.dim()
    _warn_unusual_rank(nd, 3)
    if nd != 5 and inplace:
        _feature_dropout(input.unsqueeze(0), p, training, True)
        return input
    return _unbatched(input, nd == 5, lambda x: _feature_dropout(x, p, training, inplace))


_ALPHA_PRIME = -1.7580993408473766  # -scale * alpha of SELU: the value SELU saturates to


def _alpha_dropout_with_mask(input, p, mask_shape, inplace):
    if p == 1.0:
        return _maybe_inplace(input, inplace, lambda x: x * 0.0, "Mul")  # (torch's in-place nodes: mul_, add_)
    keep = _keep_mask(mask_shape, p, input.dtype)
    a = ((1 - p) * (1 + p * _ALPHA_PRIME ** 2)) ** -0.5
    b = (1 - keep) * (a * _ALPHA_PRIME) - a * _ALPHA_PRIME * p  # dropped units sit at SELU's floor
    scale = keep * a
    return _maybe_inplace(input, inplace, lambda x: x * scale + b, "Add")


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps the self-normalising (SELU) mean and variance: dropped units take SELU's floor."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    return _alpha_dropout_with_mask(input, p, tuple(input.shape), inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels when training."""
    return _feature_dropout(input, p, training, inplace, alpha=True)
