"""funcgrad.cuda.amp (torch.cuda.amp): the deprecated CUDA spellings of funcgrad.amp's autocast and
GradScaler. Each warns FutureWarning as torch does, then behaves as the 'cuda' form, which on a machine
without CUDA warns again and disables itself."""
from __future__ import annotations

from . import _dtype as _D
from . import amp as _amp

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(_amp.autocast):
    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
        _amp._warn_deprecated_spelling("cuda", "autocast")
        super().__init__("cuda", dtype=_D.float16 if dtype is None else dtype, enabled=enabled,
                         cache_enabled=cache_enabled)


class GradScaler(_amp._DeviceGradScaler):
    device_type = "cuda"


def custom_fwd(fwd=None, *, cast_inputs=None):
    return _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    return _amp.custom_bwd(bwd, device_type="cuda")
