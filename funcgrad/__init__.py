"""funcgrad: JAX-style function transformations (grad, vmap, jit) on NumPy and CuPy.

    import funcgrad.numpy as jnp
    from funcgrad import grad, vmap, jit
"""
from ._src import core, prims  # noqa: F401  (registers the first-order primitive cards)
from ._src import control  # noqa: F401,E402  (registers the higher-order cards)

core.errors.ignore_fp_warnings()
from . import numpy  # noqa: F401  (installs Array operators and methods)
from . import lax, random, tree_util  # noqa: F401
from ._jax import image, ops  # noqa: F401  (jax.image, jax.ops)
from ._src.core.config import config  # noqa: F401
from ._src.core import Array, ConcretizationError, UnexpectedTracerError  # noqa: F401
from ._src.core.backend import devices  # noqa: F401
from .numpy import asarray as _asarray
from ._src.prims import stop_gradient  # noqa: F401
from ._src.interpreters import (checkpoint, custom_jvp, custom_vjp, grad, hessian, jacfwd, jacrev, jit,  # noqa: F401
                         jvp, linearize, make_jaxpr, pmap, remat, value_and_grad, vjp, vmap)

__version__ = "0.1.0"

jacobian = jacrev  # jax.jacobian is jax.jacrev

# --- more of JAX's top level: pytrees, debugging, shapes, devices, jit controls ---------------------------
import contextlib as _contextlib  # noqa: E402
from . import checkpoint_policies, debug, experimental, tree  # noqa: E402,F401
from ._jax import dtypes  # noqa: E402,F401  (jax.dtypes)
from . import errors, flatten_util, profiler  # noqa: E402,F401
from ._jax import sharding  # noqa: E402,F401  (jax.sharding)
from ._jax.api import (Device, ShapeDtypeStruct, clear_caches, closure_convert, default_backend,  # noqa: E402,F401
                       device_count, device_get, device_put_replicated, device_put_sharded, disable_jit,
                       ensure_compile_time_eval, eval_shape,
                       linear_transpose, local_device_count, local_devices, named_call, named_scope,
                       print_environment_info, process_count, process_index, pure_callback, typeof)
from ._jax.api import (checking_leaks, custom_gradient, debug_infs, debug_nans,  # noqa: E402,F401
                       default_matmul_precision, default_prng_impl, effects_barrier, enable_checks, enable_x64,
                       host_count, host_id, host_ids, log_compiles, numpy_dtype_promotion, numpy_rank_promotion,
                       process_indices, transfer_guard)
from ._src.core.dtypes import float0  # noqa: E402,F401
from ._jax.sharding import make_mesh, shard_map  # noqa: E402,F401
from . import custom_derivatives, dlpack, stages, typing  # noqa: E402,F401
from ._jax import custom_batching  # noqa: E402,F401  (jax.custom_batching)
from ._jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402,F401


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Place x (a pytree) on a device as Arrays: `device` is a Device, a Sharding of one device, or None
    (the array's own device, else the default one)."""
    if device is not None and not isinstance(device, core.backend.Device):
        if not isinstance(device, sharding.Sharding):
            raise TypeError(f"device_put: device must be a Device or a Sharding, got {type(device).__name__}")
        device = device.single_device("device_put")
    if device is None:
        device = _default_device.value
    return tree_util.tree_map(lambda v: _asarray(v, device=device), x)


class _DefaultDevice:
    value = None


_default_device = _DefaultDevice()


@_contextlib.contextmanager
def default_device(device):
    """Inside this context, device_put without a device places arrays on `device` (a Device or None)."""
    if device is not None and not isinstance(device, core.backend.Device):
        raise TypeError(f"default_device: expected a Device or None, got {type(device).__name__}")
    prev = _default_device.value
    _default_device.value = device
    try:
        yield
    finally:
        _default_device.value = prev


def block_until_ready(x):
    return tree_util.tree_map(lambda v: v.block_until_ready() if hasattr(v, "block_until_ready") else v, x)


# --- the PyTorch-style face: Tensor, torch functions and dtypes, autograd, func --------------------------
# (`funcgrad.tensor` is the function torch.tensor; the face's package is funcgrad._torch, also reachable as
# funcgrad.tensor in sys.modules for pickles that name its old path. The functional `grad`, `vmap`, `jit`,
# `jvp`, `vjp`, `hessian`, ... above keep their names.)
from . import autograd  # noqa: E402,F401
from .autograd import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,  # noqa: E402,F401
                       no_grad, set_grad_enabled)
from ._torch import *  # noqa: E402,F401,F403
from ._torch import (Generator, Size, Tensor, bfloat16, bool, cdouble, cfloat, complex64, complex128,  # noqa: E402,F401,A004
                     cuda, default_generator, device, double, dtype, finfo, float, float16, float32, float64,
                     get_default_dtype, get_rng_state, half, iinfo, initial_seed, int, int8, int16, int32, int64,
                     is_tensor, long, manual_seed, numel, return_types, seed, set_default_dtype, set_printoptions,
                     set_rng_state, short, uint8, uint16, uint32, uint64)
from ._torch import (are_deterministic_algorithms_enabled, can_cast, compile, get_default_device,  # noqa: E402,F401,A004
                     get_num_threads, is_complex, is_floating_point, is_nonzero, is_storage, promote_types,
                     result_type, set_default_device, set_num_threads, use_deterministic_algorithms)
from . import nn  # noqa: E402,F401
from ._torch import func  # noqa: E402,F401  (torch.func: after nn, whose modules it names)
from . import optim, utils  # noqa: E402,F401
from ._torch import serialization  # noqa: E402,F401
from ._torch.serialization import load, save  # noqa: E402,F401
from . import accelerator, backends, testing  # noqa: E402,F401
from . import distributions, multiprocessing  # noqa: E402,F401
from ._torch import linalg  # noqa: E402,F401  (torch.linalg on tensors)
vmap = func._top_level_vmap(vmap)  # jax.vmap, and torch.vmap when called with Tensors
from ._torch import _jit as _torch_jit  # noqa: E402
from ._torch._formats import (channels_last, channels_last_3d, contiguous_format, jagged, layout,  # noqa: E402,F401
                              memory_format, preserve_format, sparse_bsc, sparse_bsr, sparse_coo, sparse_csc,
                              sparse_csr, strided)
_torch_jit.attach(jit)  # torch.jit.script / trace / ignore ... on the same name
from .backends.cuda import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: E402,F401
from ._torch import BFloat16Tensor, ComplexDoubleTensor, ComplexFloatTensor  # noqa: E402,F401
from ._torch import amp, fft  # noqa: E402,F401  (torch.amp, torch.fft)
from . import onnx, sparse, special  # noqa: E402,F401  (torch.onnx, .sparse, .special)
from . import compiler, distributed  # noqa: E402,F401  (torch.compiler, torch.distributed)
from ._torch import hub, overrides  # noqa: E402,F401  (torch.hub, torch.overrides)
from ._torch._cond import cond  # noqa: E402,F401  (torch.cond, eager)
from ._torch import _cuda_amp  # noqa: E402
from ._torch import cpu  # noqa: E402  (torch.cpu)
from ._torch._absent_device import mps, xpu  # noqa: E402  (torch.mps, torch.xpu: never available)
from ._torch.amp import (autocast, autocast_decrement_nesting, autocast_increment_nesting, clear_autocast_cache,  # noqa: E402,F401,E501
                  get_autocast_cpu_dtype, get_autocast_dtype, get_autocast_gpu_dtype, is_autocast_cache_enabled,
                  is_autocast_cpu_enabled, is_autocast_enabled, set_autocast_cache_enabled, set_autocast_cpu_dtype,
                  set_autocast_cpu_enabled, set_autocast_dtype, set_autocast_enabled, set_autocast_gpu_dtype)
from ._torch._storage import Storage, TypedStorage, UntypedStorage  # noqa: E402,F401
import sys as _sys  # noqa: E402

# pickles written before the torch face moved to funcgrad._torch name funcgrad.tensor.<module>.<class>
for _name, _mod in list(_sys.modules.items()):
    if _name == __name__ + "._torch" or _name.startswith(__name__ + "._torch."):
        _sys.modules[__name__ + ".tensor" + _name[len(__name__ + "._torch"):]] = _mod

# Public modules whose code lives in a face's package: `import funcgrad.serialization`, `from funcgrad.func import
# vmap` and pickles naming funcgrad.amp.GradScaler find the implementing module under its public name (the same
# module object, so private names and monkeypatching behave as before the move).
_MOVED = {"config": "_src.core.config", "_jax_api": "_jax.api", "sharding": "_jax.sharding", "image": "_jax.image",
          "custom_batching": "_jax.custom_batching", "ops": "_jax.ops", "dtypes": "_jax.dtypes",
          "serialization": "_torch.serialization", "_weights_unpickler": "_torch._weights_unpickler",
          "amp": "_torch.amp", "hub": "_torch.hub", "overrides": "_torch.overrides", "func": "_torch.func",
          "fft": "_torch.fft", "_cpu": "_torch.cpu", "_torch_jit": "_torch._jit", "_cuda_amp": "_torch._cuda_amp",
          "_absent_device": "_torch._absent_device", "_torch_cond": "_torch._cond"}
for _public, _home in _MOVED.items():
    _sys.modules[__name__ + "." + _public] = _sys.modules[__name__ + "." + _home]
    globals().setdefault(_public, _sys.modules[__name__ + "." + _home])  # (as importing the submodule bound it)

# torch.linalg and torch.cuda are importable modules (`import torch.linalg as LA` through a torch -> funcgrad
# module-name shim), as are cuda.amp's deprecated spellings
cuda.amp = _cuda_amp
cuda.__path__ = []  # a package, as torch.cuda is, so that the import system looks up funcgrad.cuda.amp
_sys.modules[__name__ + ".linalg"] = linalg
_sys.modules[__name__ + ".cuda"] = cuda
_sys.modules[__name__ + ".cuda.amp"] = _cuda_amp
cpu.__path__ = []
_sys.modules[__name__ + ".cpu"] = cpu
_sys.modules[__name__ + ".cpu.amp"] = cpu.amp
_sys.modules[__name__ + ".xpu"] = xpu
_sys.modules[__name__ + ".mps"] = mps
