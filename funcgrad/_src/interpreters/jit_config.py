"""jit's options (log_compiles, jit_cache_size, jit_cache_max_bytes, disable_jit), registered with the config
registry: a module of their own below jit.py, so that the backward-tape cache (which ad imports) can read
disable_jit without importing jit, which imports ad."""
from __future__ import annotations

from ..core import options as _options


class _Config:
    log_compiles = False
    jit_cache_size = 4096
    jit_cache_max_bytes = 256 << 20  # None: no bound on the bytes of cached constants
    disable_jit = False


config = _Config()


def _check_option(name: str, value):
    """Validate a new value of one of jit's options (set through funcgrad.config)."""
    if name == "jit_cache_size":
        value = int(value)
        if value < 1:
            raise ValueError(f"jit_cache_size must be at least 1, got {value}")
        return value
    if name == "jit_cache_max_bytes":
        if value is not None:
            value = int(value)
            if value < 0:
                raise ValueError(f"jit_cache_max_bytes must be at least 0 (None: no bound), got {value}")
        return value
    return bool(value)


_options.register(config, ("log_compiles", "jit_cache_size", "jit_cache_max_bytes", "disable_jit"),
                  check=_check_option)
