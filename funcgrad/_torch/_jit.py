"""torch.jit's names on `funcgrad.jit`: TorchScript compiles a Module or function to a program with the
same results as eager execution, and funcgrad runs the eager code itself, so `script` and `trace` hand
back the same object (as `funcgrad.compile` does). `funcgrad.jit` stays JAX's jit when called; these
are attributes of it, so `torch.jit.script(model)` and `jax.jit(f)` both work through one name."""
from __future__ import annotations

import warnings
from typing import Any, Callable

from ..nn.modules.module import Module as _Module
from .futures import Future
from .serialization import load as _load, save as _save

__all__ = ["script", "trace", "trace_module", "ignore", "unused", "export", "is_scripting", "is_tracing",
           "annotate", "Final", "ScriptModule", "ScriptFunction", "save", "load", "freeze",
           "optimize_for_inference", "fork", "wait", "Future", "interface", "Attribute"]


def script(obj, optimize=None, _frames_up: int = 0, _rcb=None, example_inputs=None):
    """Return `obj` unchanged: it runs eagerly with TorchScript's results."""
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect. Use `with torch.jit.optimized_execution()` "
                      "instead", FutureWarning, stacklevel=2)
    if not callable(obj) and not isinstance(obj, type):
        raise RuntimeError(f"Type '{type(obj).__name__}' cannot be compiled since it inherits from nn.Module "
                           "or is not callable")
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace: bool = True, check_inputs=None,
          check_tolerance: float = 1e-5, strict: bool = True, _force_outplace: bool = False,
          _module_class=None, _compilation_unit=None, example_kwarg_inputs=None, _store_inputs: bool = True):
    """Return `func` unchanged after checking it runs on the example inputs (a trace's one guarantee)."""
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("example_kwarg_inputs should be a dict (trace needs example_inputs or example_kwarg_inputs)")
    if check_trace:
        args = example_inputs if isinstance(example_inputs, tuple) else (
            () if example_inputs is None else (example_inputs,))
        func(*args, **(example_kwarg_inputs or {}))
    return func


def trace_module(mod, inputs: dict, **kwargs):
    """torch.jit.trace_module: runs each named method once on its example inputs and returns the module (funcgrad does not build TorchScript; funcgrad.jit / torch.compile compile)."""
    for name, args in inputs.items():
        getattr(mod, name)(*(args if isinstance(args, tuple) else (args,)))
    return mod


def ignore(drop=False, **kwargs):
    """Decorator leaving a function to Python in a scripted module: here every function stays Python, so it returns fn."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn: Callable) -> Callable:
    """Decorator marking a method TorchScript should not compile: returns fn unchanged."""
    return fn


def export(fn: Callable) -> Callable:
    """Decorator marking a method as a TorchScript entry point: returns fn unchanged."""
    return fn


def interface(obj):
    """Decorator declaring a TorchScript interface type: returns the class unchanged."""
    return obj


def is_scripting() -> bool:
    """False: funcgrad never runs code as TorchScript."""
    return False


def is_tracing() -> bool:
    """False: torch.jit.trace is not running (it runs the function eagerly here)."""
    return False


def annotate(the_type, the_value):
    """TorchScript's type hint for a value: returns the value."""
    return the_value


class _FinalMeta(type):
    def __getitem__(cls, item):
        return item


class Final(metaclass=_FinalMeta):
    """`Final[int]` in a TorchScript class annotation: the annotation is the inner type here."""


class Attribute:
    """TorchScript's attribute type declaration `torch.jit.Attribute(value, type)`: the value itself here."""

    def __new__(cls, value, type=None):  # noqa: A002
        return value


def freeze(mod, preserved_attrs=None, optimize_numerics: bool = True):
    """torch.jit.freeze: returns the module unchanged (nothing to inline outside TorchScript)."""
    return mod


def optimize_for_inference(mod, other_methods=None):
    """torch.jit.optimize_for_inference: returns the module unchanged."""
    return mod


def _fork(func: Callable, *args, **kwargs) -> Future:
    """Start `func(*args, **kwargs)` and return a Future of its result (torch.fork). Outside TorchScript torch
    runs func at once, and so does funcgrad (script'ed code is eager here): an exception raises from fork
    itself, and `wait` returns the value."""
    fut = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def _wait(future: Future) -> Any:
    """The value of a Future returned by `fork` (torch.wait)."""
    if not isinstance(future, Future):
        raise TypeError("wait(): incompatible function arguments. The following argument types are supported:\n"
                        f"    1. (arg0: torch._C.Future) -> object\n\nInvoked with: {future!r}")
    return future.wait()


def fork(func: Callable, *args, **kwargs) -> Future:
    """torch.jit.fork: `torch.fork` with torch 2.13's DeprecationWarning."""
    warnings.warn("`torch.jit.fork` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    return _fork(func, *args, **kwargs)


def wait(future: Future) -> Any:
    """torch.jit.wait: `torch.wait` with torch 2.13's DeprecationWarning."""
    warnings.warn("`torch.jit.wait` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    return _wait(future)


_fork.__name__, _wait.__name__ = "fork", "wait"


def save(m, f, _extra_files=None) -> None:
    """torch.jit.save: saves the module with torch.save (a pickle funcgrad's torch.jit.load reads back)."""
    _save(m, f)


def load(f, map_location=None, _extra_files=None, _restore_shapes: bool = False) -> Any:
    """torch.jit.load: loads what torch.jit.save wrote (the whole module, weights_only=False)."""
    return _load(f, map_location=map_location, weights_only=False)


ScriptModule, ScriptFunction = _Module, type(lambda: None)


def attach(jit_fn) -> None:
    """Hang torch.jit's names on the JAX-style jit function."""
    for name in __all__:
        setattr(jit_fn, name, globals()[name])
