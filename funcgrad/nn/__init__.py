"""funcgrad.nn: PyTorch-style modules, layers, losses, initialisers and nn.functional (torch.nn semantics)."""
from .parameter import Parameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import Module  # noqa: F401
from . import functional, init, utils  # noqa: F401
from . import attention, grad, parallel  # noqa: F401,E402 (torch.nn.attention, .grad, .parallel)
from .utils.stateless import value_and_grad  # noqa: F401
# jax.nn: lowercase functions on Arrays and the initializers (torch.nn's names are capitalised: no clash)
from .._jax.nn import *  # noqa: F401,F403,E402
from . import initializers  # noqa: F401,E402
