"""The legacy typed tensor constructors of PyTorch 0.4-era code: torch.FloatTensor(2, 3),
torch.LongTensor([1, 2]), isinstance(x, torch.DoubleTensor), x.type() == 'torch.FloatTensor'.

Each is a class whose metaclass makes calling it build an ordinary Tensor of its dtype and makes
isinstance() test a tensor's dtype (as torch's tensortype classes do); none is a subclass of Tensor.
"""
from __future__ import annotations

import numpy as np

from .._src.core.props import fixed_property
from . import _dtype as D
from ._tensor import Tensor, _make

_SEQ_TYPES = (list, tuple, np.ndarray)


def _is_size_arg(a) -> bool:
    return isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))


def legacy_new(name: str, np_dt, args, kwargs) -> Tensor:
    """torch.<Type>Tensor(*args): empty, uninitialised of a shape, a copy of data, or an alias of a tensor of
    the same dtype."""
    device = kwargs.pop("device", None)
    if kwargs:
        got = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
        raise TypeError(f"new() received an invalid combination of arguments - got ({got}), but expected one of: "
                        f"(*, torch.device device), (torch.Storage storage), (Tensor other), "
                        f"(tuple of ints size, *, torch.device device), (object data, *, torch.device device)")
    if device is not None:
        D.check_device(device)
    if not args:
        return _make(np.zeros((0,), np_dt))
    if len(args) == 1 and isinstance(args[0], D.Size):
        args = tuple(args[0])
    if all(_is_size_arg(a) for a in args):
        shape = [int(a) for a in args]
        for s in shape:
            if s < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {shape}")
        return _make(np.zeros(shape, np_dt))  # torch leaves it uninitialised; zeros are one valid filling
    if len(args) != 1:
        got = ", ".join(type(a).__name__ for a in args)
        raise TypeError(f"new() received an invalid combination of arguments - got ({got}), but expected one of: "
                        f"(*, torch.device device), (torch.Storage storage), (Tensor other), "
                        f"(tuple of ints size, *, torch.device device), (object data, *, torch.device device)")
    data = args[0]
    if isinstance(data, Tensor):
        if data._np_dtype() != np_dt:
            raise TypeError(f"expected {name} (dtype {D.from_np(np.dtype(np_dt))}) but got a tensor of dtype "
                            f"{data.dtype}")
        return data.detach()
    if isinstance(data, str):
        raise TypeError("new(): invalid data type 'str'")
    if not isinstance(data, _SEQ_TYPES) and not hasattr(data, "__len__"):
        t = type(data)
        tn = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"
        raise TypeError(f"new(): data must be a sequence (got {tn})")
    from ._creation import tensor
    return tensor(data, dtype=D.from_np(np.dtype(np_dt)))


class _TensorType(type):
    """Metaclass of the legacy tensor types: calling constructs, isinstance checks the dtype."""

    def __call__(cls, *args, **kwargs):
        return legacy_new(cls.__name__, cls.dtype.dtype, args, kwargs)

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj._np_dtype() == cls.dtype.dtype

    def __subclasscheck__(cls, sub) -> bool:
        return sub is cls

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"

    is_cuda = is_sparse = fixed_property(False)


def _make_type(name: str, dt) -> type:
    return _TensorType(name, (), {"dtype": dt, "__module__": "funcgrad", "__slots__": (),
                                  "__doc__": f"torch.{name}: legacy constructor and isinstance test for {dt} tensors."})


FloatTensor = _make_type("FloatTensor", D.float32)
DoubleTensor = _make_type("DoubleTensor", D.float64)
HalfTensor = _make_type("HalfTensor", D.float16)
LongTensor = _make_type("LongTensor", D.int64)
IntTensor = _make_type("IntTensor", D.int32)
ShortTensor = _make_type("ShortTensor", D.int16)
CharTensor = _make_type("CharTensor", D.int8)
ByteTensor = _make_type("ByteTensor", D.uint8)
BoolTensor = _make_type("BoolTensor", D.bool_)
ComplexFloatTensor = _make_type("ComplexFloatTensor", D.complex64)
ComplexDoubleTensor = _make_type("ComplexDoubleTensor", D.complex128)
BFloat16Tensor = _make_type("BFloat16Tensor", D.bfloat16) if D.bfloat16 is not None else None

TYPES = {t.__name__: t for t in (FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor,
                                 CharTensor, ByteTensor, BoolTensor, ComplexFloatTensor, ComplexDoubleTensor,
                                 BFloat16Tensor) if t is not None}

__all__ = list(TYPES)
