"""funcgrad.autograd.profiler (torch.autograd.profiler): `profile` and `record_function`.

funcgrad has no operator-level tracer: a profile records the wall-clock (CPU) time of the regions the program
marks with `record_function`, which `key_averages().table()` summarises and `export_chrome_trace` writes as a
Chrome trace. Operators funcgrad runs are not listed individually (profile them with cProfile).
"""
from __future__ import annotations

import functools
import json
import time
from collections import OrderedDict

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg", "emit_nvtx",
           "emit_itt", "kineto_available"]

_active: list = []  # the profiles recording now (innermost last)


def kineto_available() -> bool:
    return False


class FunctionEvent:
    def __init__(self, name: str, start_ns: int, end_ns: int):
        self.name, self.key = name, name
        self.time_range_start_ns, self.time_range_end_ns = start_ns, end_ns
        self.count = 1

    @property
    def cpu_time_total(self) -> float:
        """Microseconds, as torch reports."""
        return (self.time_range_end_ns - self.time_range_start_ns) / 1e3

    cpu_time = cpu_time_total
    self_cpu_time_total = cpu_time_total
    device_time_total = 0.0
    cuda_time_total = 0.0

    def __repr__(self):
        return f"<FunctionEvent name={self.name!r} cpu_time_total={self.cpu_time_total:.3f}us>"


class FunctionEventAvg:
    def __init__(self, key: str):
        self.key, self.count, self.cpu_time_total = key, 0, 0.0
        self.device_time_total = self.cuda_time_total = 0.0

    def add(self, ev):
        self.count += ev.count
        self.cpu_time_total += ev.cpu_time_total
        return self

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    self_cpu_time_total = property(lambda self: self.cpu_time_total)

    def __repr__(self):
        return f"<FunctionEventAvg key={self.key!r} count={self.count} cpu_time_total={self.cpu_time_total:.3f}us>"


class EventList(list):
    """A list of events with torch's summaries."""

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0, **kwargs):
        groups: "OrderedDict[str, FunctionEventAvg]" = OrderedDict()
        for ev in self:
            groups.setdefault(ev.key, FunctionEventAvg(ev.key)).add(ev)
        return EventList(groups.values())

    @property
    def self_cpu_time_total(self) -> float:
        return sum(ev.cpu_time_total for ev in self)

    def table(self, sort_by=None, row_limit: int = 100, max_name_column_width: int = 55, header=None,
              top_level_events_only: bool = False, **kwargs) -> str:
        rows = list(self)
        if sort_by:
            key = sort_by.replace("self_", "").replace("cuda", "device")
            rows.sort(key=lambda e: getattr(e, key, 0.0) or 0.0, reverse=True)
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        w = max([len("Name")] + [min(len(e.key), max_name_column_width) for e in rows])
        lines = [f"{'Name':<{w}}  {'CPU total (us)':>15}  {'CPU avg (us)':>13}  {'# of Calls':>10}"]
        lines.append("-" * len(lines[0]))
        for e in rows:
            avg = e.cpu_time_total / max(e.count, 1)
            lines.append(f"{e.key[:w]:<{w}}  {e.cpu_time_total:>15.3f}  {avg:>13.3f}  {e.count:>10}")
        return (header + "\n" if header else "") + "\n".join(lines)

    def export_chrome_trace(self, path: str) -> None:
        events = [{"name": e.name, "ph": "X", "ts": e.time_range_start_ns / 1e3, "dur": e.cpu_time_total,
                   "pid": 0, "tid": 0, "cat": "user_annotation"} for e in self if isinstance(e, FunctionEvent)]
        with open(path, "w") as f:
            json.dump({"traceEvents": events}, f)

    def total_average(self):
        avg = FunctionEventAvg("Total")
        for e in self:
            avg.add(e)
        return avg


class profile:  # noqa: N801 (torch's spelling)
    """Context manager recording the time spent in `record_function` regions while it is active."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device=None,
                 record_shapes: bool = False, with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False, use_kineto: bool = False,
                 use_cpu: bool = True, experimental_config=None, acc_events: bool = False, **kwargs):
        self.enabled = enabled
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self._events = EventList()
        self.entered = False

    def __enter__(self):
        if self.enabled:
            if self.entered:
                raise RuntimeError("Profiler context manager is not reentrant")
            self.entered = True
            _active.append(self)
        return self

    def __exit__(self, *exc):
        if self.enabled and self in _active:
            _active.remove(self)
        return False

    def _record(self, ev):
        self._events.append(ev)

    def events(self) -> EventList:
        return self._events

    function_events = property(events)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0, **kwargs):
        return self._events.key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, *args, **kwargs) -> str:
        return self._events.table(*args, **kwargs)

    def export_chrome_trace(self, path: str) -> None:
        self._events.export_chrome_trace(path)

    @property
    def self_cpu_time_total(self) -> float:
        return self._events.self_cpu_time_total

    def total_average(self):
        return self._events.total_average()

    def __str__(self):
        return self.table()


class record_function:  # noqa: N801
    """A named region (context manager or decorator): active profiles record its wall-clock time."""

    def __init__(self, name: str, args=None):
        self.name, self.args = name, args
        self._start = None

    def __enter__(self):
        self._begin()
        return self

    def __exit__(self, *exc):
        self._end()
        return False

    # (torch.ops.profiler._record_function_enter / _exit open and close the region through these, so a tracer
    # that patches __enter__ / __exit__ on the class does not change what the ops do)
    def _begin(self) -> None:
        self._start = time.perf_counter_ns()

    def _end(self) -> None:
        if self._start is None:
            raise RuntimeError(f"record_function {self.name!r}: the region was closed before it was opened")
        end = time.perf_counter_ns()
        for prof in _active:
            prof._record(FunctionEvent(self.name, self._start, end))
        self._start = None

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapper


class emit_nvtx:  # noqa: N801
    """No NVTX ranges without CUDA: a context manager that does nothing."""

    def __init__(self, enabled: bool = True, record_shapes: bool = False):
        self.enabled = enabled

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


emit_itt = emit_nvtx
