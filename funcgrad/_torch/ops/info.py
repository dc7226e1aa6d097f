"""Queries and global settings: the constants e, pi, inf, nan, newaxis; is_same_size, is_inference,
is_signed, get_device, typename; the warn-always and anomaly flags, interop threads, set_flush_denormal and
set_default_tensor_type."""
from __future__ import annotations

import math
import warnings

from ...autograd.grad_mode import state
from .. import _dtype as D
from .._tensor import Tensor


e, pi, inf, nan = math.e, math.pi, math.inf, math.nan
newaxis = None


def is_same_size(input, other) -> bool:
    return tuple(input.shape) == tuple(other.shape)


def is_inference(input) -> bool:
    return input.is_inference()


def get_device(input) -> int:
    return input.get_device()


def typename(obj) -> str:
    """torch.typename: 'torch.FloatTensor' for a float32 tensor, the qualified class name otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(type(obj), "__module__", "") or ""
    q = type(obj).__qualname__
    return q if module in ("", "builtins") else f"{module}.{q}"


_WARN_ALWAYS = [False]


def set_warn_always(b: bool) -> None:
    _WARN_ALWAYS[0] = bool(b)


def is_warn_always_enabled() -> bool:
    return _WARN_ALWAYS[0]


def is_anomaly_enabled() -> bool:
    return bool(state.anomaly)


def is_anomaly_check_nan_enabled() -> bool:
    return bool(state.anomaly_check_nan)


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    state.anomaly = bool(enabled)
    state.anomaly_check_nan = bool(check_nan)


def is_signed(input) -> bool:
    return input.is_signed()


_INTEROP = [1]


def get_num_interop_threads() -> int:
    return _INTEROP[0]


def set_num_interop_threads(n: int) -> None:
    _INTEROP[0] = int(n)


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



# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods_ops
METHODS = ("is_same_size",)
INPLACE = ()

__all__ = ["e", "pi", "inf", "nan", "newaxis", "is_same_size", "is_inference", "is_signed", "get_device", "typename",
           "set_warn_always", "is_warn_always_enabled", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "set_anomaly_enabled", "get_num_interop_threads", "set_num_interop_threads", "set_flush_denormal",
           "set_default_tensor_type"]
