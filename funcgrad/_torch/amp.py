"""funcgrad.amp (torch.amp): `autocast` and `GradScaler`, as a CPU-only PyTorch build has them.

autocast validates its arguments as torch does: an unknown device type raises RuntimeError; 'cuda' (no GPU
here) warns "CUDA is not available ... Disabling autocast." and disables itself; on the CPU a dtype other
than bfloat16/float16 warns and disables. An enabled CPU autocast region is recorded (is_autocast_enabled,
get_autocast_dtype report it, nesting is restored on exit) but does NOT cast operations: torch's CPU
autocast computes matmul/conv/linear in bfloat16, which needs the optional ml_dtypes package; without
reduced-precision arithmetic the region runs in the tensors' own dtypes (results as fp32 torch would give
outside autocast).

GradScaler is torch's dynamic loss scaler: enabled for device 'cpu', disabled with a warning for 'cuda'
(then scale() returns its input, step() just steps, update() does nothing, get_scale() is 1.0).
"""
from __future__ import annotations

import functools
import math
import warnings
from typing import Any, Optional

from . import _dtype as _D
from . import cuda as _cuda
from ._tensor import Tensor as _Tensor
from ..autograd import no_grad as _no_grad

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_available"]

_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                 "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")

# per device type: [enabled, dtype]; torch's defaults
_STATE = {"cpu": [False, "bfloat16"], "cuda": [False, "float16"]}
_CACHE = [True]


def _dtype_name(dt) -> str:
    return getattr(dt, "name", None) or str(dt).replace("torch.", "")


def _check_device(device_type) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    base = device_type.split(":")[0]
    if base not in _DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: "
                           f"{device_type}")
    return base


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast can run on device_type ('cpu' here; 'cuda' needs a GPU build)."""
    return _check_device(device_type) == "cpu"


class autocast:
    """Context manager / decorator for mixed precision regions (see the module docstring: validated, recorded,
    not casting)."""

    def __init__(self, device_type: str, dtype: Optional[Any] = None, enabled: bool = True,
                 cache_enabled: Optional[bool] = None):
        self.device = _check_device(device_type)
        if not isinstance(enabled, bool):
            raise ValueError("Expected `enabled` to be of type `bool`")
        self._enabled = enabled
        self.fast_dtype = dtype if dtype is not None else getattr(_D, _STATE.get(self.device, ["", "bfloat16"])[1],
                                                                  None)
        self._cache_enabled = _CACHE[0] if cache_enabled is None else cache_enabled
        if self.device == "cuda" and enabled:
            if not _cuda.is_available():
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", UserWarning,
                              stacklevel=2)
                self._enabled = False
        elif self.device == "cpu" and enabled and dtype is not None:
            if _dtype_name(dtype) not in ("bfloat16", "float16"):
                warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                              "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.",
                              UserWarning, stacklevel=2)
                self._enabled = False
        elif self.device not in ("cpu", "cuda") and enabled:
            warnings.warn(f"User provided device_type of '{self.device}', but the device is not available. "
                          "Disabling", UserWarning, stacklevel=2)
            self._enabled = False
        self._prev = None

    def __enter__(self):
        st = _STATE.setdefault(self.device, [False, None])
        self._prev = (st[0], st[1], _CACHE[0])
        st[0] = self._enabled
        if self.fast_dtype is not None:
            st[1] = _dtype_name(self.fast_dtype)
        _CACHE[0] = self._cache_enabled
        return self

    def __exit__(self, *exc) -> bool:
        st = _STATE[self.device]
        st[0], st[1], _CACHE[0] = self._prev
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)
        return wrapper


def is_autocast_enabled(device_type: Optional[str] = None) -> bool:
    """Whether an enabled autocast region is active for device_type (CUDA when not given, as in torch)."""
    return bool(_STATE.get(_check_device(device_type or "cuda"), [False])[0])


def set_autocast_enabled(device_type, enabled=None) -> None:
    """Turn autocast on or off for device_type (the one-argument form is CUDA's, as torch's older spelling)."""
    if enabled is None:  # torch's old one-argument form: CUDA
        device_type, enabled = "cuda", device_type
    _STATE.setdefault(_check_device(device_type), [False, None])[0] = bool(enabled)


def get_autocast_dtype(device_type: str):
    """The dtype autocast regions of device_type cast to (float32 when none was set)."""
    return getattr(_D, _STATE.get(_check_device(device_type), [False, "float32"])[1] or "float32", None)


def set_autocast_dtype(device_type: str, dtype) -> None:
    """Set the dtype autocast regions of device_type cast to."""
    _STATE.setdefault(_check_device(device_type), [False, None])[1] = _dtype_name(dtype)


def is_autocast_cache_enabled() -> bool:
    """Whether autocast's cast cache is on (funcgrad makes no cached casts; the flag is kept)."""
    return _CACHE[0]


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Turn autocast's cast cache on or off (a flag only: funcgrad caches no casts)."""
    _CACHE[0] = bool(enabled)


def clear_autocast_cache() -> None:
    """Nothing is cached (no casts are made)."""


def get_autocast_cpu_dtype():
    """get_autocast_dtype('cpu') (torch's deprecated spelling)."""
    return get_autocast_dtype("cpu")


def get_autocast_gpu_dtype():
    """get_autocast_dtype('cuda') (torch's deprecated spelling)."""
    return get_autocast_dtype("cuda")


def is_autocast_cpu_enabled() -> bool:
    """is_autocast_enabled('cpu') (torch's deprecated spelling)."""
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """set_autocast_enabled('cpu', enabled) (torch's deprecated spelling)."""
    set_autocast_enabled("cpu", enabled)


def set_autocast_cpu_dtype(dtype) -> None:
    """set_autocast_dtype('cpu', dtype) (torch's deprecated spelling)."""
    set_autocast_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype) -> None:
    """set_autocast_dtype('cuda', dtype) (torch's deprecated spelling)."""
    set_autocast_dtype("cuda", dtype)


_NESTING = [0]


def autocast_increment_nesting() -> int:
    """Enter one more autocast level; returns the nesting depth."""
    _NESTING[0] += 1
    return _NESTING[0]


def autocast_decrement_nesting() -> int:
    """Leave one autocast level; returns the nesting depth (at 0 torch clears its cast cache)."""
    _NESTING[0] -= 1
    return _NESTING[0]


def custom_fwd(fwd=None, *, device_type: str = "cuda", cast_inputs=None):
    """Decorator for a custom Function's forward (inputs are never cast here)."""
    _check_device(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd=None, *, device_type: str = "cuda"):
    """Decorator for a custom autograd.Function's backward: runs it under the autocast state its forward ran with."""
    _check_device(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd


class GradScaler:
    """Dynamic loss scaling (torch.amp.GradScaler): scale the loss, unscale the gradients before the step,
    skip steps whose gradients hold inf/NaN and shrink the scale then; grow it after growth_interval clean
    steps."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        self._device = _check_device(device)
        self._enabled = enabled
        if enabled and self._device == "cuda":
            if not _cuda.is_available():
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                              UserWarning, stacklevel=2)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = float(init_scale)
        self._scale = None
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._growth_tracker = 0
        self._per_optimizer: dict = {}

    # --- scaling ------------------------------------------------------------------------------------
    def _lazy_scale(self):
        if self._scale is None:
            self._scale = self._init_scale

    def scale(self, outputs):
        """outputs (a tensor or nested iterables of tensors) times the current scale."""
        if not self._enabled:
            return outputs
        self._lazy_scale()
        if isinstance(outputs, _Tensor):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        if isinstance(outputs, dict):
            return {k: self.scale(v) for k, v in outputs.items()}
        if hasattr(outputs, "__iter__"):
            return map(self.scale, outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _state(self, optimizer) -> dict:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": "ready", "found_inf": False})

    def unscale_(self, optimizer) -> None:
        """Divide optimizer's gradients by the scale (in place), noting whether any is inf or NaN."""
        if not self._enabled:
            return
        self._lazy_scale()
        st = self._state(optimizer)
        if st["stage"] == "unscaled":
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if st["stage"] == "stepped":
            raise RuntimeError("unscale_() is being called after step().")
        inv = 1.0 / self._scale
        found = False
        with _no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    g.mul_(inv)
                    if not bool(g.isfinite().all()):
                        found = True
        st["found_inf"] = found
        st["stage"] = "unscaled"

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step() unless the (unscaled) gradients hold inf/NaN; returns step's value or None."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        st = self._state(optimizer)
        if st["stage"] == "stepped":
            raise RuntimeError("step() has already been called since the last update().")
        if st["stage"] == "ready":
            self.unscale_(optimizer)
        ret = None if st["found_inf"] else optimizer.step(*args, **kwargs)
        st["stage"] = "stepped"
        return ret

    def update(self, new_scale=None) -> None:
        """Back off the scale if any step this iteration saw inf/NaN, else count toward growth."""
        if not self._enabled:
            return
        self._lazy_scale()
        if new_scale is not None:
            self._scale = float(new_scale.item() if hasattr(new_scale, "item") else new_scale)
        else:
            if not self._per_optimizer:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(st["found_inf"] for st in self._per_optimizer.values()):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
        self._per_optimizer = {}

    # --- queries and state ------------------------------------------------------------------------------
    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        self._scale = self._init_scale
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])


def _warn_deprecated_spelling(device: str, name: str) -> None:
    """The FutureWarning of torch.cuda.amp's and torch.cpu.amp's spellings of amp.autocast/amp.GradScaler,
    pointing at the caller of the deprecated constructor."""
    warnings.warn(f"`torch.{device}.amp.{name}(args...)` is deprecated. Please use `torch.amp.{name}('{device}', "
                  "args...)` instead.", FutureWarning, stacklevel=3)


class _DeviceGradScaler(GradScaler):
    """torch.cuda.amp.GradScaler / torch.cpu.amp.GradScaler: GradScaler on the class's `device_type`, which
    warns that the spelling is deprecated."""
    device_type: str

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        _warn_deprecated_spelling(self.device_type, "GradScaler")
        super().__init__(self.device_type, init_scale, growth_factor, backoff_factor, growth_interval, enabled)


_ = math
