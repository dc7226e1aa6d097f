"""funcgrad.accelerator (torch.accelerator): the current accelerator, CUDA through CuPy where present."""
from __future__ import annotations

from ._torch import _dtype as _D
from ._torch import cuda as _cuda

_NONE = "Cannot access accelerator device when none is available."


def is_available() -> bool:
    return _cuda.is_available()


def current_accelerator(check_available: bool = False):
    """device('cuda') when a GPU is reachable, else None."""
    return _D.device("cuda") if _cuda.is_available() else None


def device_count() -> int:
    return _cuda.device_count()


def _require():
    if not _cuda.is_available():
        raise RuntimeError(_NONE)


def current_device_index() -> int:
    _require()
    return _cuda.current_device()


current_device_idx = current_device_index


def set_device_index(device) -> None:
    _require()
    _cuda.set_device(device)


set_device_idx = set_device_index


def synchronize(device=None) -> None:
    _require()
    _cuda.synchronize(device)


def current_stream(device=None):
    _require()
    return _cuda.current_stream(device)


__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index", "set_device_index",
           "synchronize", "current_stream"]
