"""funcgrad.experimental: io_callback and the enable_x64 / disable_x64 contexts, as jax.experimental; the
older submodule names stax and optimizers (now funcgrad.example_libraries) resolve to the same modules."""
from __future__ import annotations

import contextlib
from typing import Callable

from .._src.core.config import config
from .._jax.api import _pure_like
from .._src.prims.callbacks import io_callback_p

__all__ = ["io_callback", "enable_x64", "disable_x64"]


@contextlib.contextmanager
def enable_x64(new_val: bool = True):
    """Inside this context the default float (and complex) dtype is 64-bit (config "jax_enable_x64")."""
    prev = config.read("enable_x64")
    config.update("enable_x64", new_val)
    try:
        yield
    finally:
        config.update("enable_x64", prev)


def disable_x64():
    """Inside this context the default float (and complex) dtype is 32-bit."""
    return enable_x64(False)


def io_callback(callback: Callable, result_shape_dtypes, *args, sharding=None, ordered: bool = False,
                **kwargs):
    """Call `callback` (which may have side effects) on NumPy arrays at run time, also under jit (where
    it runs even if its results are unused) and vmap (once per element, in order). Results are
    described by `result_shape_dtypes` (ShapeDtypeStructs). Not differentiable."""
    return _pure_like(io_callback_p, "io_callback", callback, result_shape_dtypes, args, kwargs, None)
