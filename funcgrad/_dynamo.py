"""funcgrad._dynamo (torch._dynamo): the calls tutorials make around torch.compile. funcgrad's compile traces
through funcgrad.jit (no bytecode capture): reset() has no global cache to clear, the marking decorators
return what they are given, and config settings are kept but change nothing."""
from __future__ import annotations

import types

from .compiler import allow_in_graph, compile as _compile, disable, is_compiling, reset  # noqa: F401

__all__ = ["reset", "config", "disable", "allow_in_graph", "is_compiling", "mark_dynamic", "mark_static",
           "maybe_mark_dynamic", "mark_static_address", "optimize"]

config = types.SimpleNamespace(suppress_errors=False, cache_size_limit=8, recompile_limit=8,
                               accumulated_cache_size_limit=256, capture_scalar_outputs=False,
                               capture_dynamic_output_shape_ops=False, verbose=False, automatic_dynamic_shapes=True,
                               assume_static_by_default=True, optimize_ddp=True, inline_inbuilt_nn_modules=True)


def mark_dynamic(t, index, *, min=None, max=None):  # noqa: A002
    return None


def maybe_mark_dynamic(t, index):
    return None


def mark_static(t, index=None):
    return None


def mark_static_address(t, guard=True):
    return None


def optimize(backend="inductor", *, nopython=False, guard_export_fn=None, guard_fail_fn=None, disable=False,
             dynamic=None):
    """The decorator torch.compile is built on: compiles the function as torch.compile(fn, backend=...)."""
    if disable:
        return lambda fn: fn
    return lambda fn: _compile(fn, backend=backend, dynamic=dynamic, fullgraph=nopython)
