"""Global configuration: `funcgrad.config.update("enable_x64", True)` and friends."""
from __future__ import annotations

from .core import dtypes
from .transforms.jit import config as _jit_config


class Config:
    """Settings read by the library. Change them with `update(name, value)`."""

    _names = ("enable_x64", "log_compiles", "jit_cache_size", "disable_jit")

    def __init__(self):
        self.enable_x64 = False

    def update(self, name: str, value) -> None:
        if name == "enable_x64" or name == "jax_enable_x64":
            self.enable_x64 = bool(value)
            dtypes.set_x64(bool(value))
        elif name in ("log_compiles", "jit_cache_size", "disable_jit"):
            setattr(_jit_config, name, value)
        else:
            raise ValueError(f"unknown config option {name!r}; known: {', '.join(self._names)}")

    def read(self, name: str):
        if name == "enable_x64":
            return self.enable_x64
        return getattr(_jit_config, name)

    @property
    def log_compiles(self):
        return _jit_config.log_compiles


config = Config()
