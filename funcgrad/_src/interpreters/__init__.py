"""The transforms: interpreters of traced jaxprs (ad, batching, jit) and user-defined rules."""
from .ad import grad, linearize, value_and_grad, vjp  # noqa: F401
from .ad import public_jvp as jvp  # noqa: F401
from .batching import vmap  # noqa: F401
from .custom import checkpoint, custom_jvp, custom_vjp, remat  # noqa: F401
from .jacobians import hessian, jacfwd, jacrev  # noqa: F401
from .jit import jit, make_jaxpr, pmap  # noqa: F401
