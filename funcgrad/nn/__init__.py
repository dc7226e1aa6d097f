"""funcgrad.nn: PyTorch-style modules, layers, losses, initialisers and nn.functional (torch.nn semantics)."""
from .parameter import Parameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import Module  # noqa: F401
from . import functional, init, utils  # noqa: F401
from . import attention, common_types, grad, parallel  # noqa: F401,E402 (torch.nn.attention, .grad, ...)
functional.grad = grad  # (torch.nn.functional.grad is torch.nn.grad, as F imports it)
from .utils.stateless import value_and_grad  # noqa: F401
# jax.nn: lowercase functions on Arrays and the initializers (torch.nn's names are capitalised: no clash)
from .._jax.nn import *  # noqa: F401,F403,E402
from . import initializers  # noqa: F401,E402


def factory_kwargs(kwargs: dict | None) -> dict:
    """The factory arguments (device, dtype, memory_format) of a module's **kwargs, merged with an explicit
    `factory_kwargs` dict, as torch.nn.factory_kwargs: TypeError on any other key or on a key given twice."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    if not kwargs.keys() <= simple | {"factory_kwargs"}:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - simple - {'factory_kwargs'}}")
    r = dict(kwargs.get("factory_kwargs", {}))
    for k in simple & kwargs.keys():
        if k in r:
            raise TypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
        r[k] = kwargs[k]
    return r
