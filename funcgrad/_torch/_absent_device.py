"""torch.xpu and torch.mps for a library that has neither device: `is_available()` is False and
`device_count()` 0, the seeding calls do nothing, and whatever needs the device raises torch's error."""
from __future__ import annotations

import importlib.machinery
import types


def make(name: str, error: str) -> types.ModuleType:
    mod = types.ModuleType(f"funcgrad.{name}", f"torch.{name}: funcgrad has no {name.upper()} device.")
    mod.__spec__ = importlib.machinery.ModuleSpec(mod.__name__, None)  # importable through sys.modules

    def _absent(*args, **kwargs):
        raise AssertionError(error)

    def _noop(*args, **kwargs):
        return None

    mod.is_available = lambda: False
    mod.device_count = lambda: 0
    mod.is_initialized = lambda: False
    mod.is_bf16_supported = lambda *a, **k: False
    for n in ("manual_seed", "manual_seed_all", "seed", "seed_all", "empty_cache"):
        setattr(mod, n, _noop)
    for n in ("synchronize", "current_device", "set_device", "get_device_name", "get_device_properties",
              "get_device_capability", "current_stream", "init", "memory_allocated", "max_memory_allocated",
              "memory_reserved", "get_rng_state", "set_rng_state", "device", "stream", "Stream", "Event",
              "recommended_max_memory", "current_allocated_memory", "driver_allocated_memory"):
        setattr(mod, n, _absent)
    return mod


xpu = make("xpu", "Torch not compiled with XPU enabled")
mps = make("mps", "Torch not compiled with MPS enabled")
