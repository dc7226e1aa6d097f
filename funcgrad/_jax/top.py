"""JAX's top-level names (`import funcgrad as jax`): the transformations, the JAX face's packages, devices,
shapes, jit controls and config context managers. funcgrad/__init__.py re-exports `__all__`; the names the
torch face claims too (vmap, jit, random) are settled in funcgrad/_claims.py."""
from .. import lax, numpy, random, tree_util  # noqa: F401
from .. import checkpoint_policies, custom_derivatives, debug, dlpack, errors, experimental  # noqa: F401
from .. import flatten_util, stages, tree, typing  # noqa: F401
from .._src.core import Array, ConcretizationError, UnexpectedTracerError  # noqa: F401
from .._src.core.backend import devices  # noqa: F401
from .._src.core.config import config  # noqa: F401
from .._src.core.dtypes import float0  # noqa: F401
from .._src.interpreters import (checkpoint, custom_jvp, custom_vjp, grad, hessian, jacfwd, jacrev, jit,  # noqa: F401
                                 jvp, linearize, make_jaxpr, pmap, remat, value_and_grad, vjp, vmap)
from .._src.prims import stop_gradient  # noqa: F401
from . import custom_batching, dtypes, image, ops, sharding  # noqa: F401
from .api import *  # noqa: F401,F403
from .api import __all__ as _api_names
from .sharding import NamedSharding, PartitionSpec as P, make_mesh, set_mesh, shard_map  # noqa: F401

jacobian = jacrev  # jax.jacobian is jax.jacrev

__all__ = sorted({"lax", "numpy", "random", "tree_util", "checkpoint_policies", "custom_derivatives", "debug",
                  "dlpack", "errors", "experimental", "flatten_util", "stages", "tree", "typing", "Array",
                  "ConcretizationError", "UnexpectedTracerError", "devices", "config", "float0", "checkpoint",
                  "custom_jvp", "custom_vjp", "grad", "hessian", "jacfwd", "jacrev", "jacobian", "jit", "jvp",
                  "linearize", "make_jaxpr", "pmap", "remat", "value_and_grad", "vjp", "vmap", "stop_gradient",
                  "custom_batching", "dtypes", "image", "ops", "sharding", "NamedSharding", "P", "make_mesh", "set_mesh",
                  "shard_map"} | set(_api_names))
