"""torch.profiler: `profile` with a `schedule` and an `on_trace_ready` handler over the autograd profiler's
`record_function` regions (funcgrad.profiler re-exports these with jax.profiler's annotations)."""
from __future__ import annotations

import enum as _enum
import os as _os

from ..autograd import profiler as _autograd_profiler
from ..autograd.profiler import EventList, record_function

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
           "tensorboard_trace_handler", "supported_activities", "kineto_available"]


class ProfilerActivity(_enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(_enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities():
    return {ProfilerActivity.CPU}


def kineto_available() -> bool:
    return False


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0):
    """The step -> ProfilerAction function of torch.profiler.schedule: skip_first steps, then cycles of
    wait, warmup and active steps (the last active step of a cycle is RECORD_AND_SAVE), repeat cycles
    (0: without end)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")

    def fn(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        w = 0 if (skip_first_wait and step < wait + warmup + active) else wait
        cycle = w + warmup + active
        if repeat and step >= cycle * repeat:
            return ProfilerAction.NONE
        mod = step % cycle
        if mod < w:
            return ProfilerAction.NONE
        if mod < w + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return fn


def tensorboard_trace_handler(dir_name: str, worker_name=None, use_gzip: bool = False):
    """on_trace_ready callback writing each finished profile's Chrome trace under dir_name."""
    def handler(prof):
        _os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{_os.uname().nodename}_{_os.getpid()}"
        prof.export_chrome_trace(_os.path.join(dir_name, f"{name}.{prof.step_num}.pt.trace.json"))
    return handler


class profile(_autograd_profiler.profile):  # noqa: N801
    """torch.profiler.profile: records `record_function` regions (see funcgrad.autograd.profiler) during the
    steps its schedule marks RECORD / RECORD_AND_SAVE (all steps without a schedule); `on_trace_ready` is
    called with the profile at each RECORD_AND_SAVE step's end and on exit."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, **kwargs):
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory, with_stack=with_stack)
        self.activities = set(activities) if activities else supported_activities()
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self._recording = False

    def _action(self):
        return self.schedule(self.step_num) if self.schedule else ProfilerAction.RECORD

    def _sync(self):
        rec = self._action() in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if rec and not self._recording:
            _autograd_profiler._active.append(self)
        elif not rec and self._recording:
            _autograd_profiler._active.remove(self)
        self._recording = rec

    def start(self):
        self._sync()

    def stop(self):
        if self._recording:
            _autograd_profiler._active.remove(self)
            self._recording = False
        if self.on_trace_ready is not None and (self.schedule is None or len(self._events)):
            self.on_trace_ready(self)

    def step(self):
        if self._action() == ProfilerAction.RECORD_AND_SAVE and self.on_trace_ready is not None:
            self.on_trace_ready(self)
            self._events = EventList()
        self.step_num += 1
        self._sync()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def export_chrome_trace(self, path: str) -> None:
        self._events.export_chrome_trace(path)
