"""Activation modules: thin stateful wrappers over nn.functional (PReLU holds its slope as a parameter)."""
from __future__ import annotations

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from .. import functional as F
from .. import init as _init
from ..parameter import Parameter
from .module import Module
from .transformer import MultiheadAttention  # noqa: F401  (torch.nn.modules.activation's path for it)

__all__ = ['Threshold', 'ReLU', 'RReLU', 'Hardtanh', 'ReLU6', 'Sigmoid', 'Hardsigmoid', 'Tanh', 'SiLU', 'Mish',
           'Hardswish', 'ELU', 'CELU', 'SELU', 'GLU', 'GELU', 'Hardshrink', 'LeakyReLU', 'LogSigmoid', 'Softplus',
           'Softshrink', 'PReLU', 'Softsign', 'Tanhshrink', 'Softmin', 'Softmax', 'Softmax2d', 'LogSoftmax']


class _Inplace(Module):
    """An elementwise activation with only an `inplace` flag."""
    _fn = None

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class _Plain(Module):
    """A parameterless elementwise activation."""
    _fn = None

    def forward(self, input):
        return type(self)._fn(input)


class Threshold(Module):
    """Elementwise x if x > threshold else value."""
    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class ReLU(_Inplace):
    """Elementwise max(0, x)."""
    _fn = staticmethod(F.relu)


class SiLU(_Inplace):
    """Elementwise x * sigmoid(x) (swish)."""
    _fn = staticmethod(F.silu)


class Mish(_Inplace):
    """Elementwise x * tanh(softplus(x))."""
    _fn = staticmethod(F.mish)


class SELU(_Inplace):
    """Scaled exponential linear unit (self-normalising)."""
    _fn = staticmethod(F.selu)


class Hardsigmoid(_Inplace):
    """Elementwise relu6(x + 3) / 6."""
    _fn = staticmethod(F.hardsigmoid)

    def extra_repr(self):
        return ""


class Hardswish(_Inplace):
    """Elementwise x * relu6(x + 3) / 6."""
    _fn = staticmethod(F.hardswish)

    def extra_repr(self):
        return ""


class RReLU(Module):
    """Randomised leaky ReLU: slope drawn from U(lower, upper) in training, their mean in eval."""
    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class Hardtanh(Module):
    """Elementwise clamp to [min_val, max_val]."""
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False, min_value=None,
                 max_value=None):
        super().__init__()
        if min_value is not None:
            import warnings
            warnings.warn("keyword argument `min_value` is deprecated and rename to `min_val`", FutureWarning,
                          stacklevel=2)
            min_val = min_value
        if max_value is not None:
            import warnings
            warnings.warn("keyword argument `max_value` is deprecated and rename to `max_val`", FutureWarning,
                          stacklevel=2)
            max_val = max_value
        if max_val <= min_val:
            raise AssertionError
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    """Elementwise min(max(0, x), 6)."""
    def __init__(self, inplace: bool = False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Sigmoid(_Plain):
    """Elementwise 1 / (1 + exp(-x))."""
    _fn = staticmethod(F.sigmoid)


class Tanh(_Plain):
    """Elementwise hyperbolic tangent."""
    _fn = staticmethod(F.tanh)


class LogSigmoid(_Plain):
    """Elementwise log(sigmoid(x)), computed stably."""
    _fn = staticmethod(F.logsigmoid)


class Softsign(_Plain):
    """Elementwise x / (1 + |x|)."""
    _fn = staticmethod(F.softsign)


class Tanhshrink(_Plain):
    """Elementwise x - tanh(x)."""
    _fn = staticmethod(F.tanhshrink)


class ELU(Module):
    """Elementwise x if x > 0 else alpha * (exp(x) - 1)."""
    _fn = staticmethod(F.elu)

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return type(self)._fn(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    """Elementwise max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    _fn = staticmethod(F.celu)


class GLU(Module):
    """Gated linear unit a * sigmoid(b), the input halved along dim."""
    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GELU(Module):
    """Gaussian error linear unit x * Phi(x) (approximate="tanh" for the tanh form)."""
    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Hardshrink(Module):
    """Elementwise x where |x| > lambd, else 0."""
    _fn = staticmethod(F.hardshrink)

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return type(self)._fn(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """Elementwise x - lambd above lambd, x + lambd below -lambd, else 0."""
    _fn = staticmethod(F.softshrink)


class LeakyReLU(Module):
    """Elementwise x if x >= 0 else negative_slope * x."""
    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class Softplus(Module):
    """Elementwise log(1 + exp(beta * x)) / beta (linear above threshold)."""
    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class PReLU(Module):
    """Leaky ReLU with a learnt negative slope: one shared, or one per channel (dim 1)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(_fg.empty(num_parameters, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        _init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class Softmax(Module):
    """exp(x) / sum(exp(x)) along dim."""
    _fn = staticmethod(F.softmax)

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return type(self)._fn(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(Softmax):
    """softmax(-x) along dim."""
    _fn = staticmethod(F.softmin)


class LogSoftmax(Softmax):
    """log(softmax(x)) along dim, computed stably."""
    _fn = staticmethod(F.log_softmax)


class Softmax2d(Module):
    """Softmax over the channel dimension of (N, C, H, W) or (C, H, W) inputs."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)
