"""nn.utils odds: skip_init and the deprecated clip_grad_norm."""
from __future__ import annotations

import inspect
import warnings

from .clip_grad import clip_grad_norm_

__all__ = ["skip_init", "clip_grad_norm"]


def skip_init(module_cls, *args, **kwargs):
    """An instance of module_cls (its parameters are initialised anyway: there is no meta device here)."""
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    return module_cls(*args, **kwargs)


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated alias of clip_grad_norm_."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def convert_conv2d_weight_memory_format(module, memory_format):
    """Tensors here are always contiguous: returns module unchanged."""
    return module


def convert_conv3d_weight_memory_format(module, memory_format):
    return module
