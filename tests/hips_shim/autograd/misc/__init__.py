"""HIPS's autograd.misc: flatten (funcgrad.flatten_util.ravel_pytree), const_graph (funcgrad.jit) and the
optimizers module."""
import functools

import funcgrad

from .flatten import flatten  # noqa: F401


def const_graph(fun, *args, **kwargs):
    """fun with args/kwargs bound, traced once and replayed (funcgrad.jit caches the trace)."""
    return funcgrad.jit(functools.partial(fun, *args, **kwargs))
