"""Anomaly detection (torch.autograd.anomaly_mode): nodes remember their forward op's traceback, and a backward
that produces NaN raises."""
from __future__ import annotations

import functools
import warnings

from .grad_mode import state as _state

__all__ = ["detect_anomaly", "set_detect_anomaly"]


class detect_anomaly:
    """Inside, nodes remember the traceback of their forward op, and a backward that produces NaN raises
    RuntimeError (after warning with that traceback)."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        self.prev = None

    def __enter__(self):
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only "
                      "be enabled for debugging.", UserWarning, stacklevel=2)
        self.prev = (_state.anomaly, _state.anomaly_check_nan)
        _state.anomaly = True
        _state.anomaly_check_nan = self.check_nan
        return self

    def __exit__(self, *exc):
        _state.anomaly, _state.anomaly_check_nan = self.prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """set_detect_anomaly(mode, check_nan=True): switch anomaly mode now (or for a with-block)."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev = (_state.anomaly, _state.anomaly_check_nan)
        _state.anomaly = bool(mode)
        _state.anomaly_check_nan = check_nan

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _state.anomaly, _state.anomaly_check_nan = self.prev
        return False


def is_anomaly_enabled() -> bool:
    return _state.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    return _state.anomaly_check_nan
