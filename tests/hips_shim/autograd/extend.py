"""HIPS's autograd.extend: define derivatives of primitives (see tracer.py for how they bind)."""
from .core import vspace  # noqa: F401
from .tracer import Primitive, getval, isbox, primitive  # noqa: F401


def defvjp(prim, *makers, argnums=None):
    for i, m in zip(range(len(makers)) if argnums is None else argnums, makers):
        if m is not None:
            prim.vjps[i] = m


def defvjp_argnum(prim, maker):
    """maker(argnum, ans, args, kwargs) -> (g -> cotangent of that argument)."""
    prim.vjp_argnums = lambda argnums, ans, args, kwargs: (
        lambda g: tuple(maker(i, ans, args, kwargs)(g) for i in argnums))


def defvjp_argnums(prim, maker):
    """maker(argnums, ans, args, kwargs) -> (g -> tuple of cotangents)."""
    prim.vjp_argnums = maker


def defjvp(prim, *makers, argnums=None):
    for i, m in zip(range(len(makers)) if argnums is None else argnums, makers):
        if m is not None:
            prim.jvps[i] = m
