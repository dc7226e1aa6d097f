"""funcgrad: JAX-style function transformations (grad, vmap, jit) on NumPy and CuPy, with a PyTorch face.

    import funcgrad.numpy as jnp
    from funcgrad import grad, vmap, jit
    import funcgrad as torch

The facade: JAX's top-level names (funcgrad/_jax/top.py), torch's (funcgrad/_torch/top.py), then the names
both claim, settled in funcgrad/_claims.py; and the module aliases that keep public paths importable.
"""
import sys as _sys
from importlib import machinery as _machinery

from ._src import core, prims  # noqa: F401  (registers the first-order primitive cards)
from ._src import control  # noqa: F401  (registers the higher-order cards)

core.errors.ignore_fp_warnings()
from ._jax.top import *  # noqa: E402,F401,F403
from ._torch import *  # noqa: E402,F401,F403  (Tensor, torch's functions and dtypes; torch's packages read them
#                                                from funcgrad._torch, never from this facade)
from ._torch.top import *  # noqa: E402,F401,F403
from ._claims import *  # noqa: E402,F401,F403

from .version import __version__  # noqa: E402  (one place: funcgrad/version.py, also torch.version)

# Public modules whose code lives in a face's package: `import funcgrad.serialization`, `from funcgrad.func import
# vmap` and pickles naming funcgrad.amp.GradScaler find the implementing module under its public name (the same
# module object, so private names and monkeypatching behave as before the move).
_MOVED = {"config": "_src.core.config", "_jax_api": "_jax.api", "sharding": "_jax.sharding", "image": "_jax.image",
          "custom_batching": "_jax.custom_batching", "ops": "_jax.ops", "dtypes": "_jax.dtypes",
          "serialization": "_torch.serialization", "_weights_unpickler": "_torch._weights_unpickler",
          "amp": "_torch.amp", "futures": "_torch.futures", "hub": "_torch.hub", "overrides": "_torch.overrides",
          "func": "_torch.func", "library": "_torch.library", "storage": "_torch._storage", "_C": "_torch._C",
          "fft": "_torch.fft", "_cpu": "_torch.cpu", "_torch_jit": "_torch._jit", "_cuda_amp": "_torch._cuda_amp",
          "_absent_device": "_torch._absent_device", "_torch_cond": "_torch._cond"}
for _public, _home in _MOVED.items():
    _sys.modules[__name__ + "." + _public] = _sys.modules[__name__ + "." + _home]
    globals().setdefault(_public, _sys.modules[__name__ + "." + _home])  # (as importing the submodule bound it)

# torch.linalg, torch.cuda (with cuda.amp), torch.cpu (with cpu.amp), torch.xpu and torch.mps are importable
# modules (`import torch.linalg as LA` through a torch -> funcgrad module-name shim)
for _public, _mod in {"linalg": linalg, "cuda": cuda, "cuda.amp": cuda.amp, "cpu": cpu,  # noqa: F405
                      "cpu.amp": cpu.amp, "xpu": xpu, "mps": mps}.items():  # noqa: F405
    _sys.modules[__name__ + "." + _public] = _mod

# `import torch.jit` / `from torch.jit import script`: torch.jit's names hang on funcgrad.jit, JAX's jit function
# (funcgrad/_claims.py), which stands for the module path too
jit.__spec__ = _machinery.ModuleSpec(__name__ + ".jit", None)  # noqa: F405
_sys.modules[__name__ + ".jit"] = jit  # noqa: F405

# torch.nn.quantized, .intrinsic and .qat: torch's older paths of torch.ao.nn's packages (the same classes)
for _sub in ("quantized", "intrinsic", "qat"):
    _sys.modules[__name__ + ".nn." + _sub] = getattr(ao.nn, _sub)  # noqa: F405
    setattr(nn, _sub, getattr(ao.nn, _sub))  # noqa: F405

# pickles written before the torch face moved to funcgrad._torch name funcgrad.tensor.<module>.<class>
for _name, _mod in list(_sys.modules.items()):
    if _name == __name__ + "._torch" or _name.startswith(__name__ + "._torch."):
        _sys.modules[__name__ + ".tensor" + _name[len(__name__ + "._torch"):]] = _mod

# JAX_ENABLE_X64=1, JAX_PLATFORMS=cpu, ...: options' starting values from the environment, as JAX reads them
# (after every module has registered its options)
config.apply_environment()
