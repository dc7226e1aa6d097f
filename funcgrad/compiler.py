"""funcgrad.compiler (torch.compiler): the decorators and queries programs use around `torch.compile`.

funcgrad's `compile` traces through funcgrad.jit (funcgrad/_torch/_compile.py); the user's Python is never
run by a bytecode tracer, so `is_compiling()` and `is_dynamo_compiling()` are False, `disable`,
`allow_in_graph`, `assume_constant_result` and `substitute_in_graph` return the function they are given, and
`reset()` leaves each compiled object's cache to it.
"""
from __future__ import annotations

import contextlib

from ._torch._compile import BACKENDS as _BACKENDS, compile as _compile

__all__ = ["compile", "disable", "is_compiling", "is_dynamo_compiling", "is_exporting", "reset",
           "allow_in_graph", "assume_constant_result", "substitute_in_graph", "list_backends",
           "cudagraph_mark_step_begin", "set_stance", "nested_compile_region"]


def compile(*args, **kwargs):  # noqa: A001
    """torch.compiler.compile: the same as `funcgrad.compile`."""
    return _compile(*args, **kwargs)


def disable(fn=None, recursive: bool = True, *, reason=None):
    """`@disable` or `@disable(recursive=False)`: keep fn out of compilation. Eager already: returns fn."""
    if fn is None:
        return lambda f: f
    return fn


def is_compiling() -> bool:
    return False


def is_dynamo_compiling() -> bool:
    return False


def is_exporting() -> bool:
    return False


def reset() -> None:
    """Clear compilation caches: funcgrad keeps none for the tensor face."""
    return None


def allow_in_graph(fn):
    return fn


def assume_constant_result(fn):
    return fn


def substitute_in_graph(original_fn, *, can_constant_fold_through=False, skip_signature_check=False):
    return lambda fn: fn


def nested_compile_region(fn=None, options=None):
    return (lambda f: f) if fn is None else fn


def list_backends(exclude_tags=("debug", "experimental")) -> list:
    """The backend names compile accepts (all compile through funcgrad.jit), less the debug ones, as torch's."""
    return sorted(b for b in _BACKENDS if b not in ("eager", "aot_eager"))


def cudagraph_mark_step_begin() -> None:
    return None


@contextlib.contextmanager
def _stance():
    yield


def set_stance(stance: str = "default", *, skip_guard_eval_unsafe=False, force_backend=None):
    """Usable as a call or as a context manager / decorator; has no effect here."""
    return _stance()
