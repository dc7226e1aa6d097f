"""torch.nn's lazy modules (LazyLinear, LazyConv*d, LazyConvTranspose*d, LazyBatchNorm*d, LazyInstanceNorm*d):
the input size (in_features / in_channels / num_features) is read from the first input. Until then the
parameters are UninitializedParameter placeholders; the first forward materialises them in place (so an
optimizer built before it holds the real parameters) and the module becomes its ordinary class."""
from __future__ import annotations

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ...autograd import no_grad as _no_grad
from ..parameter import Parameter
from . import batchnorm as _batchnorm, conv as _conv, linear as _linear
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .linear import Linear
from .module import Module
from .normalization import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d

__all__ = ["UninitializedParameter", "UninitializedBuffer", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d",
           "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet (an empty placeholder until a lazy module materialises it)."""

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        return Parameter.__new__(cls, _fg.empty(0, dtype=dtype), requires_grad)

    def materialize(self, shape, device=None, dtype=None) -> None:
        with _no_grad():
            self.data = _fg.empty(*shape, dtype=dtype or self.dtype)
        self.__class__ = Parameter


class UninitializedBuffer(_fg.Tensor):
    """A buffer whose shape is not known yet."""


class _LazyMixin:
    """Builds `cls_to_become` on the first call with the size read from the input (dim `_size_dim`), keeping the
    identity of the placeholder parameters and buffers."""
    cls_to_become = None
    _size_dim = 1

    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        self._lazy_args, self._lazy_kwargs = args, kwargs
        probe = self.cls_to_become(1, *args, **kwargs)  # which parameters and buffers exist
        for name, p in probe._parameters.items():
            self.register_parameter(name, None if p is None else UninitializedParameter(p.requires_grad,
                                                                                         dtype=p.dtype))
        for name, b in probe._buffers.items():
            self.register_buffer(name, None if b is None else _fg.empty(0, dtype=b.dtype))
        self.training = probe.training

    def has_uninitialized_params(self) -> bool:
        return any(isinstance(p, UninitializedParameter) for p in self._parameters.values())

    def initialize_parameters(self, input) -> None:
        if input.dim() <= (0 if self._size_dim == -1 else self._size_dim):
            raise ValueError(f"{type(self).__name__}: cannot infer the input size from an input of shape "
                             f"{list(input.shape)}")
        real = self.cls_to_become(input.shape[self._size_dim], *self._lazy_args, **self._lazy_kwargs)
        with _no_grad():
            for name, p in real._parameters.items():
                mine = self._parameters.get(name)
                if mine is not None and p is not None:
                    mine.data = p.detach().clone()
                    mine.__class__ = Parameter
            for name, b in real._buffers.items():
                mine = self._buffers.get(name)
                if mine is not None and b is not None:
                    mine.data = b.clone()
        keep = {"_parameters", "_buffers", "training", "_lazy_args", "_lazy_kwargs"}
        for k, v in real.__dict__.items():  # the plain attributes (in_features, kernel_size, ...)
            if k not in keep and not k.startswith("_forward") and not k.startswith("_backward") \
                    and k not in ("_modules",) and not k.endswith("hooks"):
                self.__dict__[k] = v
        self.__dict__.pop("_lazy_args", None)
        self.__dict__.pop("_lazy_kwargs", None)
        self.__class__ = self.cls_to_become

    def __call__(self, *args, **kwargs):
        if self.has_uninitialized_params():
            self.initialize_parameters(args[0])
        return Module.__call__(self, *args, **kwargs)


def _lazy(name, base, size_dim=1):
    cls = type(name, (_LazyMixin, base), {"cls_to_become": base, "_size_dim": size_dim,
                                          "__doc__": f"{base.__name__} whose input size is read from the first "
                                                     f"input (dim {size_dim})."})
    cls.__init__ = _LazyMixin.__init__
    return cls


LazyLinear = _lazy("LazyLinear", Linear, -1)
LazyConv1d = _lazy("LazyConv1d", Conv1d)
LazyConv2d = _lazy("LazyConv2d", Conv2d)
LazyConv3d = _lazy("LazyConv3d", Conv3d)
LazyConvTranspose1d = _lazy("LazyConvTranspose1d", ConvTranspose1d)
LazyConvTranspose2d = _lazy("LazyConvTranspose2d", ConvTranspose2d)
LazyConvTranspose3d = _lazy("LazyConvTranspose3d", ConvTranspose3d)
LazyBatchNorm1d = _lazy("LazyBatchNorm1d", BatchNorm1d)
LazyBatchNorm2d = _lazy("LazyBatchNorm2d", BatchNorm2d)
LazyBatchNorm3d = _lazy("LazyBatchNorm3d", BatchNorm3d)
LazyInstanceNorm1d = _lazy("LazyInstanceNorm1d", InstanceNorm1d)
LazyInstanceNorm2d = _lazy("LazyInstanceNorm2d", InstanceNorm2d)
LazyInstanceNorm3d = _lazy("LazyInstanceNorm3d", InstanceNorm3d)


LazyModuleMixin = _LazyMixin  # torch.nn.modules.lazy's name for the lazy modules' base

# torch defines the lazy classes in torch.nn.modules.{linear,conv,batchnorm}, the paths its pickles name them by;
# here they subclass those modules' classes (so those modules cannot import them): publish them there.
for _name in __all__:
    for _mod in (_linear, _conv, _batchnorm):
        if _name.startswith("Lazy") and _name[4:] in vars(_mod):
            setattr(_mod, _name, globals()[_name])
