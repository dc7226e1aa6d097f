"""HIPS's autograd.misc: flatten (funcgrad.flatten_util.ravel_pytree) and const_graph (funcgrad.jit)."""
import functools

import funcgrad
from funcgrad.flatten_util import ravel_pytree


def flatten(value):
    """(1-D vector of all the leaves, unflatten)."""
    return ravel_pytree(value)


def const_graph(fun, *args, **kwargs):
    """fun with args/kwargs bound, traced once and replayed (funcgrad.jit caches the trace)."""
    return funcgrad.jit(functools.partial(fun, *args, **kwargs))
