"""HIPS's autograd.misc.flatten: a nested container of arrays as one 1-D vector (ravel_pytree's order)."""
from funcgrad.flatten_util import ravel_pytree


def flatten(value):
    """(1-D vector of all the leaves, unflatten)."""
    return ravel_pytree(value)
