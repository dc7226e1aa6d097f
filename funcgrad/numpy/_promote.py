"""Turning NumPy-style arguments into primitive operands: conversion, dtype promotion, broadcasting."""
from __future__ import annotations

from ..core import dtypes
from ..core.array import ArrayBase, to_array
from ..core.errors import user_location
from ..primitives.elementwise import convert_element_type
from ..primitives.shape import broadcast_in_dim


def asarray_any(x):
    """An Array or tracer for x; Python scalars become weakly typed arrays."""
    if isinstance(x, ArrayBase):
        return x
    return to_array(x, copy=False)


def broadcast_shapes(*shapes, op: str = "broadcast_shapes") -> tuple:
    """NumPy's broadcasting of shapes; ValueError naming the operation and the shapes otherwise."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        size = 1
        for s in shapes:
            d = s[i - ndim + len(s)] if i - ndim + len(s) >= 0 else 1
            if d != 1:
                if size != 1 and size != d:
                    raise ValueError(f"{op}: operands could not be broadcast together with shapes "
                                     + " ".join(str(tuple(s)) for s in shapes) + f" (at {user_location(2)})")
                size = d
        out.append(size)
    return tuple(out)


def broadcast_to(x, shape):
    shape = tuple(shape)
    if tuple(x.shape) == shape:
        return x
    nd = len(shape)
    if x.ndim > nd:
        raise ValueError(f"broadcast_to: cannot broadcast array of shape {x.shape} to shape {shape}")
    for a, b in zip(x.shape[::-1], shape[::-1]):
        if a != 1 and a != b:
            raise ValueError(f"broadcast_to: cannot broadcast array of shape {x.shape} to shape {shape} "
                             f"(at {user_location(2)})")
    return broadcast_in_dim(x, shape, tuple(range(nd - x.ndim, nd)))


def promote_dtypes(*xs):
    """Convert operands to their common dtype under NEP 50 (weak Python scalars)."""
    dt, weak = dtypes.result_type(*[(x.dtype, x.weak_type) for x in xs])
    return [convert_element_type(x, dt, weak) for x in xs]


def promote_and_broadcast(op: str, *args):
    """Operands of an elementwise NumPy function: converted, promoted to one dtype and one shape."""
    xs = [asarray_any(a) for a in args]
    x0 = xs[0]
    if all(x.dtype == x0.dtype and x.weak_type == x0.weak_type for x in xs[1:]):
        pass
    else:
        xs = promote_dtypes(*xs)
    shape = xs[0].shape
    if any(x.shape != shape for x in xs[1:]):
        shape = broadcast_shapes(*[x.shape for x in xs], op=op)
        xs = [broadcast_to(x, shape) for x in xs]
    return xs
