"""torch's top-level names (`import funcgrad as torch`): Tensor and the torch functions and dtypes (the
package funcgrad._torch), autograd's switches, torch's packages (nn, optim, utils, ...) and modules (amp,
fft, func, hub, ...). funcgrad/__init__.py re-exports `__all__`; the names JAX claims too (vmap, jit,
random, nn) are settled in funcgrad/_claims.py."""
from .. import autograd  # noqa: F401
from ..autograd import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,  # noqa: F401
                        no_grad, set_grad_enabled)
from . import *  # noqa: F401,F403
from . import __all__ as _torch_names
from . import BFloat16Tensor, bfloat16, cuda, linalg, return_types  # noqa: F401
from .. import nn  # noqa: F401
from . import func  # noqa: F401  (torch.func: after nn, whose modules it names)
from .. import optim, utils  # noqa: F401
from . import serialization  # noqa: F401
from .serialization import load, save  # noqa: F401
from .. import accelerator, backends, testing  # noqa: F401
from .. import distributions, multiprocessing  # noqa: F401
from . import _jit as jit  # noqa: F401  (torch.jit's names; hung on JAX's jit in funcgrad/_claims.py)
from ._formats import (channels_last, channels_last_3d, contiguous_format, jagged, layout,  # noqa: F401
                       memory_format, preserve_format, sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr,
                       strided)
from ..backends.cuda import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: F401
from . import amp, fft, futures, hub, overrides  # noqa: F401  (torch.amp, .fft, .futures, .hub, .overrides)
from . import _C  # noqa: F401  (torch._C: the __torch_function__ switches)
from . import library  # noqa: F401  (torch.library: custom_op)
from .. import compiler, distributed, onnx, sparse, special  # noqa: F401
from .. import fx  # noqa: F401  (torch.fx)
from .. import functional, signal, types, version  # noqa: F401  (torch.functional, .signal, .types, .version)
from ..signal import windows  # noqa: F401  (torch.windows: torch's own alias of torch.signal.windows)
from .. import export  # noqa: F401  (torch.export)
from .. import masked, nested, package  # noqa: F401  (torch.masked, torch.nested, torch.package)
from ._jit import Future, _fork as fork, _wait as wait  # noqa: F401  (torch.fork / torch.wait: TorchScript's async calls, eager)
from ._stream import Event, Stream  # noqa: F401  (torch.Stream / torch.Event: device-generic, CPU)
from .. import ao, quantization  # noqa: F401  (torch.ao.quantization, and its older name torch.quantization)
from ._compile import compile  # noqa: F401  (torch.compile, through funcgrad.jit)
from ._cond import cond  # noqa: F401  (torch.cond, eager)
from . import _cuda_amp
from . import cpu  # noqa: F401  (torch.cpu)
from ._absent_device import mps, xpu  # noqa: F401  (torch.mps, torch.xpu: never available)
from .amp import (autocast, autocast_decrement_nesting, autocast_increment_nesting, clear_autocast_cache,  # noqa: F401
                  get_autocast_cpu_dtype, get_autocast_dtype, get_autocast_gpu_dtype, is_autocast_cache_enabled,
                  is_autocast_cpu_enabled, is_autocast_enabled, set_autocast_cache_enabled, set_autocast_cpu_dtype,
                  set_autocast_cpu_enabled, set_autocast_dtype, set_autocast_enabled, set_autocast_gpu_dtype)
from ._storage import Storage, TypedStorage, UntypedStorage, LEGACY_STORAGES as _LEGACY_STORAGES  # noqa: F401
from .func import vmap  # noqa: F401  (torch.vmap is torch.func.vmap)
from .. import random  # noqa: F401  (torch.random: seed, manual_seed, get_rng_state, ...)

# torch.cuda and torch.cpu are packages with an amp submodule (cuda.amp's and cpu.amp's deprecated spellings)
globals().update(_LEGACY_STORAGES)  # FloatStorage, DoubleStorage, ... (torch's legacy typed storages)
cuda.amp = _cuda_amp
cuda.__path__ = []  # a package, as torch.cuda is, so that the import system looks up funcgrad.cuda.amp
cpu.__path__ = []
from ._dtype import FLOAT8 as _FLOAT8  # noqa: E402  (torch.float8_e4m3fn, ...: where ml_dtypes is installed)
globals().update(_FLOAT8)
from ._creation import _sample_dirichlet, _standard_gamma  # noqa: E402  (torch's private samplers)

__all__ = sorted(set(_torch_names) | {
    "BFloat16Tensor", "bfloat16", "autograd", "enable_grad", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled", "no_grad",
    "set_grad_enabled", "cuda", "linalg", "return_types", "nn", "func", "optim", "utils", "serialization", "load",
    "save", "futures", "accelerator", "backends", "testing", "distributions", "multiprocessing", "jit", "channels_last",
    "channels_last_3d", "contiguous_format", "jagged", "layout", "memory_format", "preserve_format", "sparse_bsc",
    "sparse_bsr", "sparse_coo", "sparse_csc", "sparse_csr", "strided", "get_float32_matmul_precision",
    "set_float32_matmul_precision", "amp", "fft", "hub", "overrides", "compiler", "distributed", "onnx", "sparse",
    "special", "cond", "cpu", "mps", "xpu", "autocast", "autocast_decrement_nesting", "autocast_increment_nesting",
    "clear_autocast_cache", "get_autocast_cpu_dtype", "get_autocast_dtype", "get_autocast_gpu_dtype",
    "is_autocast_cache_enabled", "is_autocast_cpu_enabled", "is_autocast_enabled", "set_autocast_cache_enabled",
    "set_autocast_cpu_dtype", "set_autocast_cpu_enabled", "set_autocast_dtype", "set_autocast_enabled",
    "set_autocast_gpu_dtype", "Storage", "TypedStorage", "UntypedStorage", "vmap", "random", "fx", "compile",
    "library", "export", "masked", "nested", "package", "functional", "signal", "types", "version", "windows",
    "Future", "fork", "wait", "Event", "Stream", "ao", "quantization",
    "_sample_dirichlet", "_standard_gamma", "_C", *_LEGACY_STORAGES} | set(_FLOAT8))
