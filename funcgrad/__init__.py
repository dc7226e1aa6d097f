"""funcgrad: JAX-style function transformations (grad, vmap, jit) on NumPy and CuPy.

    import funcgrad.numpy as jnp
    from funcgrad import grad, vmap, jit
"""
from . import core, primitives  # noqa: F401  (registers the primitive cards)
from . import numpy  # noqa: F401  (installs Array operators and methods)
from . import lax, random, tree_util  # noqa: F401
from .config import config  # noqa: F401
from .core import Array, ConcretizationError, UnexpectedTracerError  # noqa: F401
from .core.backend import devices  # noqa: F401
from .numpy import asarray as _asarray
from .primitives import stop_gradient  # noqa: F401
from .transforms import (checkpoint, custom_jvp, custom_vjp, grad, hessian, jacfwd, jacrev, jit,  # noqa: F401
                         jvp, linearize, make_jaxpr, remat, value_and_grad, vjp, vmap)

__version__ = "0.1.0"


def device_put(x, device=None):
    """Place x (a pytree) on a device as Arrays."""
    return tree_util.tree_map(lambda v: _asarray(v), x)


def block_until_ready(x):
    return tree_util.tree_map(lambda v: v.block_until_ready() if hasattr(v, "block_until_ready") else v, x)
