"""torch.Stream and torch.Event: the device-generic stream and event of torch 2.13, on the CPU.

CPU work is synchronous, so the one CPU stream (stream_id 0) is always idle and an event is always complete:
`query()` is True and `synchronize()` / `wait_event()` return at once. As in torch, the CPU backend has no events
to record: `Event.record`, `Stream.record_event` and `Stream.wait_stream` raise RuntimeError, and `elapsed_time`
raises ValueError (both events need enable_timing=True and a record). Any other device raises as torch does
without it (funcgrad has no CUDA backend behind these classes; torch.cuda.Stream/Event live in funcgrad.cuda)."""
from __future__ import annotations

from ._dtype import device as _device

__all__ = ["Stream", "Event"]

_NO_EVENTS = "cpu backend doesn't support events."


def _cpu_device(device, what: str):
    """The CPU device, checking `device` (None, 'cpu', a device, or an accelerator index)."""
    if device is None:
        return _device("cpu")
    if isinstance(device, int) and not isinstance(device, bool):
        raise RuntimeError("Cannot access accelerator device when none is available.")
    dev = device if isinstance(device, _device) else _device(device)
    if dev.type != "cpu":
        raise RuntimeError(f"PyTorch is not linked with support for {dev.type} devices")
    return dev


class Stream:
    """torch.Stream(device=None, *, priority=0): an ordered queue of work on a device; on the CPU the queue is
    always empty (work runs when called). A context manager that makes itself current (a no-op here).

    >>> s = torch.Stream()
    >>> s.query()
    True"""

    def __init__(self, device=None, *, priority: int = 0) -> None:
        self.device = _cpu_device(device, "Stream")
        self.device_type = self.device.type
        self.device_index = -1
        self.stream_id = 0

    def query(self) -> bool:
        """Whether all work queued on the stream has completed (always, on the CPU)."""
        return True

    def synchronize(self) -> None:
        """Wait for the stream's work: nothing is pending on the CPU."""

    def wait_event(self, event: "Event") -> None:
        """Make later work wait for `event`: CPU events are always complete."""

    def wait_stream(self, stream: "Stream") -> None:
        """Make later work wait for `stream`'s current work; needs an event, which the CPU backend lacks."""
        raise RuntimeError(_NO_EVENTS)

    def record_event(self, event: "Event | None" = None) -> "Event":
        """Record an event on the stream; the CPU backend has none."""
        raise RuntimeError(_NO_EVENTS)

    def is_capturing(self) -> bool:
        return False

    @property
    def native_handle(self) -> int:
        return 0

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc) -> None:
        return None

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and (self.device, self.stream_id) == (other.device, other.stream_id)

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_index, self.stream_id))

    def __repr__(self) -> str:
        return (f"torch.Stream device_type={self.device_type}, device_index={self.device_index}, "
                f"stream_id={self.stream_id}")


class Event:
    """torch.Event(device=None, *, enable_timing=False, blocking=False, interprocess=False): a marker in a
    stream's work. A CPU event is always complete (query() is True); recording one raises as torch's CPU
    backend does."""

    def __init__(self, device=None, *, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:
        self.device = _cpu_device(device, "Event")
        self._flag = int(bool(enable_timing))
        self._enable_timing = bool(enable_timing)
        self.event_id = 0

    def record(self, stream: Stream | None = None) -> None:
        """Record the event on `stream` (the current one by default); the CPU backend has no events."""
        raise RuntimeError(_NO_EVENTS)

    def query(self) -> bool:
        """Whether the work before the event has completed (always, on the CPU)."""
        return True

    def synchronize(self) -> None:
        """Wait for the event: it is always complete on the CPU."""

    def wait(self, stream: Stream | None = None) -> None:
        """Make `stream`'s later work wait for the event: nothing to wait for on the CPU."""

    def elapsed_time(self, end_event: "Event") -> float:
        """Milliseconds between this event and end_event; both need enable_timing=True and a record."""
        if not (self._enable_timing and getattr(end_event, "_enable_timing", False)):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise ValueError("Both events must be recorded before calculating elapsed time.")

    def ipc_handle(self):
        raise RuntimeError(_NO_EVENTS)

    @classmethod
    def from_ipc_handle(cls, device, ipc_handle):
        raise RuntimeError(_NO_EVENTS)

    def __repr__(self) -> str:
        return (f"torch.Event device_type={self.device.type}, device_index=-1, event_flag={self._flag}, "
                f"event_id={self.event_id}")
