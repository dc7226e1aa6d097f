"""jax.api, the module older JAX programs import the transforms from (`from jax.api import jit, grad`):
funcgrad's top level."""
import sys

from . import __name__ as _top

sys.modules[__name__] = sys.modules[_top]
