"""funcgrad.cpu (torch.cpu): the CPU device module, and cpu.amp's deprecated autocast / GradScaler spellings."""
from __future__ import annotations

import types

from . import amp as _amp

__all__ = ["is_available", "is_initialized", "device_count", "current_device", "set_device", "synchronize",
           "current_stream", "stream", "Stream", "Event", "StreamContext", "amp"]


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def set_device(device) -> None:
    """Only 'cpu' exists: anything is accepted and ignored, as in torch."""


def synchronize(device=None) -> None:
    """CPU work is synchronous."""


class Stream:
    """The (only) CPU stream: its operations complete immediately."""

    def __init__(self, priority: int = -1) -> None:
        self.priority = priority

    def wait_stream(self, stream) -> None:
        pass

    def wait_event(self, event) -> None:
        pass

    def record_event(self, event=None) -> None:
        pass

    def synchronize(self) -> None:
        pass


class Event:
    def query(self) -> bool:
        return True

    def record(self, stream=None) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def wait(self, stream=None) -> None:
        pass


_STREAM = Stream()


def current_stream(device=None) -> Stream:
    return _STREAM


class StreamContext:
    def __init__(self, stream) -> None:
        self.stream = stream

    def __enter__(self):
        return self.stream

    def __exit__(self, *exc) -> bool:
        return False


def stream(stream) -> StreamContext:
    return StreamContext(stream)


class _CpuAutocast(_amp.autocast):
    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
        _amp._warn_deprecated_spelling("cpu", "autocast")
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class _CpuGradScaler(_amp._DeviceGradScaler):
    device_type = "cpu"


_CpuAutocast.__name__ = "autocast"
_CpuGradScaler.__name__ = "GradScaler"
amp = types.ModuleType("funcgrad.cpu.amp", "torch.cpu.amp: deprecated spellings of funcgrad.amp for the CPU.")
amp.autocast = _CpuAutocast
amp.GradScaler = _CpuGradScaler
