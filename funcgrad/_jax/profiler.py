"""jax.profiler's annotations (funcgrad.profiler re-exports them with torch.profiler's names), which mark regions for a trace viewer.

funcgrad has no device trace to write: annotations (`TraceAnnotation`, `StepTraceAnnotation`,
`annotate_function`) do nothing, and `trace` / `start_trace` warn once that no trace is written (profile
funcgrad code with cProfile: it is Python calling NumPy).
"""
from __future__ import annotations

import contextlib
import functools
import warnings

__all__ = ["TraceAnnotation", "StepTraceAnnotation", "annotate_function", "trace", "start_trace", "stop_trace"]


class TraceAnnotation:
    """A named region (a context manager); no trace is recorded."""

    def __init__(self, name: str, **kwargs):
        self.name, self.kwargs = name, kwargs

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class StepTraceAnnotation(TraceAnnotation):
    def __init__(self, name: str, **kwargs):
        super().__init__(name, **kwargs)


def annotate_function(func=None, name: str | None = None, **kwargs):
    if func is None:
        return functools.partial(annotate_function, name=name, **kwargs)
    return func


_warned = False


def start_trace(log_dir, create_perfetto_link: bool = False, create_perfetto_trace: bool = False) -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(f"funcgrad.profiler.start_trace: funcgrad writes no device trace (nothing goes to "
                      f"{log_dir!r}); profile with cProfile instead", UserWarning, stacklevel=2)


def stop_trace() -> None:
    return None


@contextlib.contextmanager
def trace(log_dir, create_perfetto_link: bool = False, create_perfetto_trace: bool = False):
    start_trace(log_dir)
    try:
        yield
    finally:
        stop_trace()
