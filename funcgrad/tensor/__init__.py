"""funcgrad.tensor: the PyTorch-style Tensor and torch functions (exported at funcgrad's top level).

    import funcgrad as torch
    w = torch.randn(3, requires_grad=True)
    loss = (w * w).sum(); loss.backward(); w.grad
"""
from __future__ import annotations

import builtins as _builtins

import numpy as _np

from . import _dtype, _methods  # noqa: F401  (installs the Tensor methods)
from . import cuda  # noqa: F401
from ._creation import (Generator, arange, as_tensor, asarray, bernoulli, complex, default_generator, empty,  # noqa: F401,A004
                        empty_like, eye, from_numpy, full, full_like, get_rng_state, initial_seed, linspace,
                        logspace, manual_seed, multinomial, normal, ones, ones_like, poisson, rand, rand_like,
                        randint, randint_like, randn, randn_like, randperm, range, scalar_tensor, seed,
                        set_rng_state, tensor, tril_indices, triu_indices, zeros, zeros_like)
from ._dtype import (Size, bfloat16, bool_, complex64, complex128, device, dtype, float16, float32,  # noqa: F401
                     float64, get_default_dtype, int8, int16, int32, int64, set_default_dtype, uint8, uint16,
                     uint32, uint64)
from ._ops import *  # noqa: F401,F403
from ._ops import return_types  # noqa: F401
from ._tensor import Tensor, set_printoptions  # noqa: F401

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


def _legacy_ctor(name, dt):
    def ctor(*args):
        if len(args) == 1 and not isinstance(args[0], (_builtins.int, Size)):
            return tensor(args[0], dtype=dt)
        shape = tuple(args[0]) if len(args) == 1 and isinstance(args[0], Size) else args
        return zeros(*shape, dtype=dt)
    ctor.__name__ = name
    ctor.__doc__ = f"torch.{name}(data) or torch.{name}(*sizes) (legacy constructor)."
    return ctor


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def is_storage(obj) -> bool:
    from ._tensor import _Storage
    return isinstance(obj, _Storage)


def is_floating_point(input) -> bool:
    return input.is_floating_point()


def is_complex(input) -> bool:
    return input.is_complex()


def is_nonzero(input) -> bool:
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def numel(input) -> int:
    return input.numel()


def result_type(tensor1, tensor2):
    from ._ops import _promote
    return _dtype.from_np(_promote(tensor1, tensor2))


def promote_types(type1, type2):
    return _dtype.from_np(_dtype.promote_types(_dtype.to_np(type1), _dtype.to_np(type2)))


def can_cast(from_, to):
    return _dtype.can_cast(_dtype.to_np(from_), _dtype.to_np(to))


class finfo:
    """Machine limits of a floating dtype (torch.finfo)."""

    def __init__(self, type=None):  # noqa: A002
        dt = _dtype.to_np(type if type is not None else get_default_dtype())
        fi = _np.finfo(dt)
        self.bits = fi.bits
        self.eps = builtins_float(fi.eps)
        self.max = builtins_float(fi.max)
        self.min = builtins_float(fi.min)
        self.tiny = self.smallest_normal = builtins_float(fi.tiny)
        self.resolution = builtins_float(fi.resolution)
        self.dtype = str(dt)


class iinfo:
    """Machine limits of an integer dtype (torch.iinfo)."""

    def __init__(self, type):  # noqa: A002
        dt = _dtype.to_np(type)
        ii = _np.iinfo(dt)
        self.bits = ii.bits
        self.max = builtins_int(ii.max)
        self.min = builtins_int(ii.min)
        self.dtype = str(dt)


builtins_float = _builtins.float
builtins_int = _builtins.int


FloatTensor = _legacy_ctor("FloatTensor", float32)
DoubleTensor = _legacy_ctor("DoubleTensor", float64)
HalfTensor = _legacy_ctor("HalfTensor", float16)
LongTensor = _legacy_ctor("LongTensor", int64)
IntTensor = _legacy_ctor("IntTensor", int32)
ShortTensor = _legacy_ctor("ShortTensor", int16)
CharTensor = _legacy_ctor("CharTensor", int8)
ByteTensor = _legacy_ctor("ByteTensor", uint8)
BoolTensor = _legacy_ctor("BoolTensor", bool_)


def get_default_device():
    return device("cpu")


def set_default_device(dev) -> None:
    if dev is not None and device(dev).type != "cpu":
        raise RuntimeError("funcgrad tensors live on the CPU")


def use_deterministic_algorithms(mode, *, warn_only=False) -> None:
    pass


def are_deterministic_algorithms_enabled() -> _builtins.bool:
    return True


def set_num_threads(n) -> None:
    pass


def get_num_threads() -> _builtins.int:
    return 1


def compile(model=None, **kwargs):  # noqa: A001
    """No compilation for the tensor face yet: returns the model (or a decorator returning it)."""
    if model is None:
        return lambda m: m
    return model


from . import _ops as _ops_mod  # noqa: E402

__all__ = sorted(set(_ops_mod.__all__) | {
    "Generator", "arange", "as_tensor", "asarray", "bernoulli", "complex", "default_generator", "empty",
    "empty_like", "eye", "from_numpy", "full", "full_like", "get_rng_state", "initial_seed", "linspace",
    "logspace", "manual_seed", "multinomial", "normal", "ones", "ones_like", "poisson", "rand", "rand_like",
    "randint", "randint_like", "randn", "randn_like", "randperm", "range", "scalar_tensor", "seed",
    "set_rng_state", "tensor", "tril_indices", "triu_indices", "zeros", "zeros_like",
    "Size", "bfloat16", "complex64", "complex128", "device", "dtype", "float16", "float32", "float64",
    "get_default_dtype", "int8", "int16", "int32", "int64", "set_default_dtype", "uint8", "uint16", "uint32",
    "uint64", "return_types", "Tensor", "set_printoptions", "float", "double", "half", "cfloat", "cdouble",
    "long", "int", "short", "bool", "is_tensor", "is_storage", "is_floating_point", "is_complex", "is_nonzero",
    "numel", "result_type", "promote_types", "can_cast", "finfo", "iinfo", "get_default_device",
    "set_default_device", "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "set_num_threads", "get_num_threads", "compile", "cuda", "FloatTensor", "DoubleTensor", "HalfTensor",
    "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"} - {"bfloat16"} | (
    {"bfloat16"} if bfloat16 is not None else set()))
