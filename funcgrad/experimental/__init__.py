"""funcgrad.experimental: io_callback, as jax.experimental; the older submodule names stax and
optimizers (now funcgrad.example_libraries) resolve to the same modules."""
from __future__ import annotations

from typing import Callable

__all__ = ["io_callback"]


def io_callback(callback: Callable, result_shape_dtypes, *args, sharding=None, ordered: bool = False,
                **kwargs):
    """Call `callback` (which may have side effects) on NumPy arrays at run time, also under jit (where
    it runs even if its results are unused) and vmap (once per element, in order). Results are
    described by `result_shape_dtypes` (ShapeDtypeStructs). Not differentiable."""
    from .._jax_api import _pure_like
    from ..primitives.callbacks import io_callback_p
    return _pure_like(io_callback_p, "io_callback", callback, result_shape_dtypes, args, kwargs, None)
