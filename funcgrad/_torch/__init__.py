"""funcgrad.tensor: the PyTorch-style Tensor and torch functions (exported at funcgrad's top level).

    import funcgrad as torch
    w = torch.randn(3, requires_grad=True)
    loss = (w * w).sum(); loss.backward(); w.grad
"""
from __future__ import annotations

import builtins as _builtins

import numpy as _np

from . import _dtype, _methods  # noqa: F401
from . import cuda  # noqa: F401
from ._creation import (Generator, arange, as_tensor, asarray, bernoulli, complex, default_generator, empty,  # noqa: F401,A004
                        empty_like, eye, from_numpy, full, full_like, get_rng_state, initial_seed, linspace,
                        logspace, manual_seed, multinomial, normal, ones, ones_like, poisson, rand, rand_like,
                        randint, randint_like, randn, randn_like, randperm, range, scalar_tensor, seed,
                        set_rng_state, tensor, tril_indices, triu_indices, zeros, zeros_like)
from ._dtype import (Size, bfloat16, bool_, complex64, complex128, device, dtype, float16, float32,  # noqa: F401
                     float64, get_default_dtype, int8, int16, int32, int64, set_default_dtype, uint8, uint16,
                     uint32, uint64)
for _m in _methods.CORE:  # torch's core functions (funcgrad/_torch/ops/: unary, arithmetic, ...)
    globals().update({_n: getattr(_m, _n) for _n in _m.__all__})
from . import return_types  # noqa: F401
from ._tensor import Tensor  # noqa: F401
from ._printing import set_printoptions
from .ops._common import _promote
from .._src.core.threads import get_num_threads, set_num_threads  # noqa: F401  (the BLAS threads' ceiling)
from . import _argcheck, _linalg_decomp, _linalg_lu, _special_ops  # noqa: E402
from . import _methods_ops  # noqa: E402
# the op families beyond the core (funcgrad/_torch/ops/ and the LU / decomposition modules), exported at the top level
_FAMILIES = _methods_ops.FAMILIES
for _m in _FAMILIES + (_special_ops,):  # torch's TypeError for non-tensor arguments
    _argcheck.wrap_module(_m, [n for n in dir(_m) if not n.startswith("_")])
for _m in _FAMILIES:
    globals().update({_n: getattr(_m, _n) for _n in _m.__all__})
from ._creation import binomial  # noqa: E402,F401
from ._formats import (channels_last, channels_last_3d, contiguous_format, layout,  # noqa: E402,F401
                       legacy_contiguous_format, memory_format, preserve_format, sparse_coo, sparse_csr, strided)
from ._nn_aliases import *  # noqa: F401,F403,E402
from ._special_ops import i0, igamma, igammac, polygamma  # noqa: F401,E402
from . import _methods_storage, _quantized, _sparse  # noqa: E402
# Tensor's methods, installed once from the tables that declare them (each name in one table; the families' method
# forms are their checked functions, so this follows the _argcheck wrapping above)
_methods.install(_methods.methods(), _methods_storage.methods(), _methods_ops.methods(), _sparse.methods(),
                 _quantized.methods())
globals().update(_methods_ops.torch_inplace_fns())  # torch.relu_, torch.zero_, ... (x.relu_(), ...)
from ._sparse import sparse_coo_tensor, spmm  # noqa: E402,F401
_quantized.seal()  # (quantized tensors: torch.quint8, quantize_per_tensor, ...)
from ._quantized import *  # noqa: E402,F401,F403

# torch's dtype aliases
float = float32  # noqa: A001
double = float64
half = float16
cfloat = complex64
cdouble = complex128
long = int64
int = int32  # noqa: A001
short = int16
bool = bool_  # noqa: A001
chalf = None


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def is_storage(obj) -> bool:
    return isinstance(obj, (_Storage, TypedStorage, UntypedStorage))


def is_floating_point(input) -> bool:
    return input.is_floating_point()


def is_complex(input) -> bool:
    return input.is_complex()


def is_nonzero(input) -> bool:
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return _builtins.bool(input.item())


def numel(input) -> int:
    return input.numel()


def result_type(tensor1, tensor2):
    return _dtype.from_np(_promote(tensor1, tensor2))


def promote_types(type1, type2):
    return _dtype.from_np(_dtype.promote_types(_dtype.to_np(type1), _dtype.to_np(type2)))


def can_cast(from_, to):
    return _dtype.can_cast(_dtype.to_np(from_), _dtype.to_np(to))


def _g(x) -> str:
    """A number as torch's finfo/iinfo reprs print it (six significant digits)."""
    return f"{x:g}"


class finfo:
    """Machine limits of a floating dtype (torch.finfo); a complex dtype gives its real part's."""

    def __init__(self, type=None):  # noqa: A002 - torch's parameter name
        t = get_default_dtype() if type is None else type
        dt = _dtype.to_np(t)
        if dt.kind == "c":
            dt = _np.dtype(_np.float32 if dt == _np.complex64 else _np.float64)
        if not (dt.kind == "f" or (_dtype.bfloat16 is not None and dt == _dtype.bfloat16.dtype)):
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        fi = _ml_finfo(dt)
        self.bits = builtins_int(fi.bits)
        self.eps = builtins_float(fi.eps)
        self.max = builtins_float(fi.max)
        self.min = builtins_float(fi.min)
        self.tiny = self.smallest_normal = builtins_float(fi.tiny)
        self.resolution = builtins_float(10.0 ** -builtins_int(fi.precision))
        self.dtype = _dtype.from_np(dt).name

    def __eq__(self, other) -> bool:
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (f"finfo(resolution={_g(self.resolution)}, min={_g(self.min)}, max={_g(self.max)}, "
                f"eps={_g(self.eps)}, smallest_normal={_g(self.smallest_normal)}, tiny={_g(self.tiny)}, "
                f"dtype={self.dtype})")


def _ml_finfo(dt):
    if _np.dtype(dt).kind != "f":  # bfloat16 (ml_dtypes) has its own finfo
        import ml_dtypes
        return ml_dtypes.finfo(dt)
    return _np.finfo(dt)


class iinfo:
    """Machine limits of an integer dtype (torch.iinfo)."""

    def __init__(self, type):  # noqa: A002 - torch's parameter name
        dt = _dtype.to_np(type)
        if dt.kind == "b":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if dt.kind not in "iu":
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle "
                            "'torch.iinfo'")
        ii = _np.iinfo(dt)
        self.bits = builtins_int(ii.bits)
        self.max = builtins_int(ii.max)
        self.min = builtins_int(ii.min)
        self.dtype = str(dt)

    def __eq__(self, other) -> bool:
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={_g(self.min)}, max={_g(self.max)}, dtype={self.dtype})"


builtins_float = _builtins.float
builtins_int = _builtins.int


from ._legacy import (BoolTensor, ByteTensor, CharTensor, ComplexDoubleTensor, ComplexFloatTensor,  # noqa: E402
                      DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor, ShortTensor)
from ._legacy import BFloat16Tensor  # noqa: E402

from ._storage import TypedStorage, UntypedStorage

from ._tensor import _Storage
def get_default_device():
    return device("cpu")


def set_default_device(dev) -> None:
    """Only the CPU holds tensors: other devices raise the error placing a tensor there raises."""
    if dev is not None:
        _dtype.check_device(dev)


# torch.use_deterministic_algorithms' flags: funcgrad's kernels are deterministic whatever they say (NumPy on one
# host thread per op); the flags are kept so that programs reading them back see what they set, as in torch.
_DETERMINISTIC = {"mode": False, "warn_only": False}


def use_deterministic_algorithms(mode: _builtins.bool, *, warn_only: _builtins.bool = False) -> None:
    """Record the deterministic-algorithms flag (funcgrad's kernels are deterministic either way)."""
    for name, v in (("mode", mode), ("warn_only", warn_only)):
        if not isinstance(v, _builtins.bool):
            raise TypeError(f"_set_deterministic_algorithms(): argument '{name}' must be bool, not "
                            f"{type(v).__name__}")
    _DETERMINISTIC.update(mode=mode, warn_only=warn_only)


def are_deterministic_algorithms_enabled() -> _builtins.bool:
    """Whether use_deterministic_algorithms(True) is in effect (funcgrad's kernels are deterministic either way)."""
    return _DETERMINISTIC["mode"]


def is_deterministic_algorithms_warn_only_enabled() -> _builtins.bool:
    """Whether use_deterministic_algorithms(True, warn_only=True) is in effect."""
    return _DETERMINISTIC["warn_only"]


def set_deterministic_debug_mode(debug_mode) -> None:
    """torch's other spelling of use_deterministic_algorithms: 0/"default" off, 1/"warn" on with warnings only,
    2/"error" on."""
    if not isinstance(debug_mode, (_builtins.int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        modes = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in modes:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = modes[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> _builtins.int:
    """The deterministic debug mode: 0 off, 1 warn only, 2 on (see set_deterministic_debug_mode)."""
    return 0 if not _DETERMINISTIC["mode"] else 1 if _DETERMINISTIC["warn_only"] else 2




from . import _linalg_ldl, _nn_aliases  # noqa: E402
# torch.linalg's functions beyond linalg.py (LU, eig, Householder, LDL), under their torch.linalg names
for _k, _f in {**_linalg_lu.LINALG, **_linalg_decomp.LINALG, "ldl_factor": _linalg_ldl.ldl_factor,
               "ldl_factor_ex": _linalg_ldl.ldl_factor_ex, "ldl_solve": _linalg_ldl.ldl_solve}.items():
    setattr(linalg, _k, _f)
    linalg.__all__.append(_k)
_argcheck.wrap_module(linalg, linalg.__all__, "linalg_")
# linalg.LinAlgError (defined in linalg.py) is what singular or non-definite input raises: a RuntimeError, as
# in torch, and NumPy's LinAlgError

from . import _complex_reject  # noqa: E402
_complex_reject.guard_namespace(globals())  # torch's errors for complex input without a complex kernel

__all__ = sorted(set().union(*(_m.__all__ for _m in _methods.CORE + _FAMILIES)) | set(_nn_aliases.__all__) | set(_quantized.__all__) |
                 set(_methods_ops.TORCH_INPLACE_FNS) & set(globals()) | {"i0", "igamma", "igammac", "polygamma"} | {
    "binomial", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format",
    "legacy_contiguous_format", "strided", "sparse_coo", "sparse_csr", "memory_format", "layout",
    "Generator", "arange", "as_tensor", "asarray", "bernoulli", "complex", "default_generator", "empty",
    "empty_like", "eye", "from_numpy", "full", "full_like", "get_rng_state", "initial_seed", "linspace",
    "logspace", "manual_seed", "multinomial", "normal", "ones", "ones_like", "poisson", "rand", "rand_like",
    "randint", "randint_like", "randn", "randn_like", "randperm", "range", "scalar_tensor", "seed",
    "set_rng_state", "sparse_coo_tensor", "spmm", "tensor", "tril_indices", "triu_indices", "zeros", "zeros_like",
    "Size", "bfloat16", "complex64", "complex128", "device", "dtype", "float16", "float32", "float64",
    "get_default_dtype", "int8", "int16", "int32", "int64", "set_default_dtype", "uint8", "uint16", "uint32",
    "uint64", "return_types", "Tensor", "set_printoptions", "float", "double", "half", "cfloat", "cdouble",
    "long", "int", "short", "bool", "is_tensor", "is_storage", "is_floating_point", "is_complex", "is_nonzero",
    "numel", "result_type", "promote_types", "can_cast", "finfo", "iinfo", "get_default_device",
    "set_default_device", "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode", "get_deterministic_debug_mode",
    "set_num_threads", "get_num_threads", "cuda", "FloatTensor", "DoubleTensor", "HalfTensor",
    "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor", "ComplexFloatTensor",
    "ComplexDoubleTensor"} - {"bfloat16"} | ({"bfloat16", "BFloat16Tensor"} if bfloat16 is not None else set()))

from . import _docs  # noqa: E402
_docs.attach(__name__, Tensor)  # (the one-line docstrings of the generated functions and methods)

from . import overrides as _overrides  # noqa: E402
# torch's functions dispatch on `__torch_function__` (NestedTensor, MaskedTensor, user Tensor-likes): one class
# test first in each function's own code, so plain tensors pay nothing more
_overrides.install(globals(), __all__)
_overrides.install(vars(linalg), linalg.__all__, "linalg", "funcgrad.linalg", distinct=True)
