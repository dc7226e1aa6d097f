"""funcgrad.overrides (torch.overrides): the `__torch_function__` protocol helpers that libraries call in their
own functions. funcgrad's own operations do not dispatch on `__torch_function__`; these helpers let a
library's functions dispatch on objects that define it, and for plain funcgrad Tensors
`has_torch_function` is False, so such code takes its ordinary path.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Iterable

from . import Tensor as _Tensor

__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "handle_torch_function", "is_tensor_like", "get_ignored_functions", "get_overridable_functions",
           "get_testing_overrides", "wrap_torch_function", "is_tensor_method_or_property", "resolve_name"]


def _tensor_type():
    return _Tensor


def _overrides(obj) -> bool:
    t = type(obj)
    return t is not _tensor_type() and getattr(t, "__torch_function__", None) is not None


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """True when some argument's type (other than plain Tensor) defines `__torch_function__`."""
    return any(_overrides(a) for a in relevant_args)


def has_torch_function_unary(obj) -> bool:
    return _overrides(obj)


def has_torch_function_variadic(*args) -> bool:
    return has_torch_function(args)


def _overloaded_args(relevant_args):
    """Arguments whose types override `__torch_function__`, one per type, subclasses before their bases."""
    types, args = [], []
    T = _tensor_type()
    for a in relevant_args:
        t = type(a)
        if t in types or not (_overrides(a) or t is T):
            continue
        pos = len(args)
        for i, other in enumerate(args):
            if issubclass(t, type(other)):
                pos = i
                break
        types.insert(pos, t)
        args.insert(pos, a)
    return args


def handle_torch_function(public_api: Callable, relevant_args: Iterable[Any], *args, **kwargs):
    """Call the first `__torch_function__` among relevant_args' types that does not return NotImplemented
    (TypeError if all do); with none defined, call `public_api(*args, **kwargs)`."""
    overloaded = _overloaded_args(relevant_args)
    T = _tensor_type()
    if not any(type(a) is not T for a in overloaded):
        return public_api(*args, **kwargs)
    types = tuple(type(a) for a in overloaded)
    for a in overloaded:
        if type(a) is T:  # plain Tensors take no part in dispatch (torch's default handler declines here)
            continue
        result = type(a).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement __torch_function__: "
                    f"{[t for t in types if t is not T]}")


def is_tensor_like(inp) -> bool:
    """A funcgrad Tensor, or anything whose type defines `__torch_function__`."""
    return isinstance(inp, _tensor_type()) or getattr(inp, "__torch_function__", None) is not None


def wrap_torch_function(dispatcher: Callable):
    """Decorator: the wrapped function dispatches on the arguments that `dispatcher(*args, **kwargs)` returns."""
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


def get_ignored_functions() -> set:
    return set()


def get_overridable_functions() -> dict:
    return {}


def get_testing_overrides() -> dict:
    return {}


def is_tensor_method_or_property(func: Callable) -> bool:
    T = _tensor_type()
    name = getattr(func, "__name__", None)
    return name is not None and getattr(T, name, None) is func


def resolve_name(f):
    return f"{getattr(f, '__module__', '')}.{getattr(f, '__qualname__', getattr(f, '__name__', repr(f)))}"
