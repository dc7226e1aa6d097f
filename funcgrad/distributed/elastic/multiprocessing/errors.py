"""torch.distributed.elastic.multiprocessing.errors: `record` marks a launcher entry point so an elastic agent
can report its exception. Without an agent (funcgrad runs in one process) it calls the function unchanged."""
from __future__ import annotations

import functools

__all__ = ["record", "ChildFailedError"]


class ChildFailedError(Exception):
    def __init__(self, name: str, failures=None):
        self.name, self.failures = name, dict(failures or {})
        super().__init__(f"{name} failed")


def record(fn=None, error_handler=None):
    """`@record` or `@record(error_handler=...)`: returns a wrapper that calls fn and re-raises its errors."""
    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            return f(*args, **kwargs)
        return wrapper
    return decorate if fn is None else decorate(fn)
