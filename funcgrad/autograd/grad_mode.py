"""Grad modes (thread-local): no_grad, enable_grad, set_grad_enabled, inference_mode."""
from __future__ import annotations

import functools
import inspect
import threading


class _GradState(threading.local):
    def __init__(self):
        self.enabled = True
        self.inference = False
        self.anomaly = False
        self.anomaly_check_nan = True
        self.saved_hooks = []  # the (pack, unpack) pairs of the active saved_tensors_hooks, innermost last


state = _GradState()


def is_grad_enabled() -> bool:
    """Whether operations on tensors that require grad are recorded for backward (this thread)."""
    return state.enabled


def is_inference_mode_enabled() -> bool:
    """Whether an inference_mode region is active."""
    return state.inference


class _DecoratorContextManager:
    """A context manager that also decorates functions (with or without parentheses)."""

    def __call__(self, func):
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                with self.clone():
                    resp = gen.send(None)
                while True:
                    try:
                        with self.clone():
                            req = yield resp
                            resp = gen.send(req)
                    except StopIteration as e:
                        return e.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class _Switch:
    """Sets the grad mode to `_mode` on entry and restores the previous one on exit."""
    __slots__ = ()

    def __enter__(self):
        self.prev = state.enabled
        state.enabled = self._mode

    def __exit__(self, *exc):
        state.enabled = self.prev
        return False


class _FixedMode(_Switch, _DecoratorContextManager):
    """A context manager / decorator that sets grad mode to `_mode` and restores it on exit."""
    _mode = False

    def __new__(cls, orig_func=None):
        self = super().__new__(cls)
        if orig_func is not None and callable(orig_func):  # used bare as a decorator
            self.__init__()
            return self(orig_func)
        return self

    def __init__(self, orig_func=None):
        self.prev = None


class no_grad(_FixedMode):
    """Disable gradient recording: results of operations inside do not require grad.

    A context manager and a decorator, as torch's.

    Examples:
        >>> import funcgrad as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> with torch.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """
    _mode = False


class enable_grad(_FixedMode):
    """Enable gradient recording inside a no_grad region."""
    _mode = True


class set_grad_enabled(_DecoratorContextManager):
    """set_grad_enabled(mode): takes effect at once when called; as a context manager it restores the
    previous mode on exit."""

    def __init__(self, mode: bool):
        self.prev = state.enabled
        self.mode = bool(mode)
        state.enabled = self.mode

    def __enter__(self):
        state.enabled = self.mode

    def __exit__(self, *exc):
        state.enabled = self.prev
        return False

    def __call__(self, func):
        state.enabled = self.prev  # used as a decorator: the mode applies inside calls only
        return super().__call__(func)

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """inference_mode(mode=True): no_grad, and tensors made inside are inference tensors (is_inference()):
    they may not be saved for backward nor updated in place outside inference mode."""

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode) and not isinstance(mode, bool):
            self.__init__(True)
            return self(mode)
        return self

    def __init__(self, mode=True):
        self.mode = bool(mode)
        self.prev = None
        self.prev_inf = None

    def __enter__(self):
        self.prev, self.prev_inf = state.enabled, state.inference
        state.inference = self.mode  # inference_mode(False) inside inference_mode makes normal tensors again
        if self.mode:
            state.enabled = False

    def __exit__(self, *exc):
        state.enabled, state.inference = self.prev, self.prev_inf
        return False

    def clone(self):
        return self.__class__(self.mode)


class _force_grad(_Switch):
    """Internal: set the grad mode for the backward pass."""
    __slots__ = ("_mode", "prev")

    def __init__(self, mode: bool):
        self._mode = mode
