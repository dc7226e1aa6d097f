"""funcgrad.masked (torch.masked): MaskedTensor and the masked reductions.

    mt = torch.masked.masked_tensor(data, mask)        # mask: bool, data's shape; False = not specified
    mt.sum(1), mt.amax(), (mt * 2).exp(), mt.to_tensor(0.0)
    torch.masked.softmax(x, 1, mask=mask)              # functional forms on plain tensors

A MaskedTensor pairs a data Tensor with a bool mask; operations act on the data, reductions ignore the masked-out
elements (each reduction's result is masked where no element was specified), and autograd runs through the data
Tensor, so `mt.grad` is a MaskedTensor of the data's gradient under the same mask. A MaskedTensor is a
torch.Tensor (a WrapperTensor: no buffer of its own); torch's functions reach it through `__torch_function__`
(nn.functional's relu, gelu, silu, softmax, log_softmax, dropout have rules here; any other torch function runs
the MaskedTensor method of its name, torch.sum(mt, 1) is mt.sum(1), or raises NotImplementedError), and a Tensor
method it does not implement raises NotImplementedError naming it.
"""
from __future__ import annotations

import math
import operator

from .. import _torch as _fg
from .._torch import _subclass
from .._torch._subclass import WrapperTensor
from ..nn import functional as F

__all__ = ["MaskedTensor", "masked_tensor", "as_masked_tensor", "is_masked_tensor", "sum", "mean", "amax", "amin",
           "argmax", "argmin", "prod", "logsumexp", "softmax", "log_softmax", "softmin", "normalize", "var", "std",
           "norm"]

def _check(data, mask) -> None:
    if not isinstance(data, _fg.Tensor) or not isinstance(mask, _fg.Tensor):
        raise TypeError("data and mask must be Tensors")
    if mask.dtype != _fg.bool:
        raise TypeError("mask must have dtype bool.")
    if data.dim() != mask.dim():
        raise ValueError("data.dim() must equal mask.dim()")
    if tuple(data.shape) != tuple(mask.shape):
        raise ValueError("data.size() must equal mask.size()")


def _fmt(x: float, dtype) -> str:
    return f"{x:8.4f}" if dtype.is_floating_point else f"{x}"


class MaskedTensor(WrapperTensor):
    """data with a bool mask of its shape (True: specified); torch.masked.MaskedTensor."""
    __slots__ = ("_data", "_mask")

    def __init__(self, data, mask, requires_grad: bool = False):
        _check(data, mask)
        self._data = data
        self._mask = mask
        if requires_grad:
            data.requires_grad_(True)

    # --- access ---------------------------------------------------------------------------------------
    def get_data(self):
        return self._data

    def get_mask(self):
        return self._mask

    def to_tensor(self, value):
        """The data with the masked-out elements replaced by value."""
        return self._data.masked_fill(self._mask.logical_not(), value)

    def size(self, dim: int | None = None):
        return self._data.size() if dim is None else self._data.size(dim)

    is_nested = False

    # --- autograd -------------------------------------------------------------------------------------------
    @property
    def grad(self):
        g = self._data.grad
        return None if g is None else MaskedTensor(g, self._mask)

    def requires_grad_(self, requires_grad: bool = True):
        self._data.requires_grad_(requires_grad)
        return self

    def detach(self):
        return MaskedTensor(self._data.detach(), self._mask)

    def backward(self, gradient=None, retain_graph=None, create_graph: bool = False):
        g = gradient.get_data() if isinstance(gradient, MaskedTensor) else gradient
        self._data.backward(g, retain_graph=retain_graph, create_graph=create_graph)

    def __repr__(self) -> str:
        d, m = self._data.detach().tolist(), self._mask.tolist()
        if self._data.dim() == 0:
            return f"MaskedTensor({_fmt(d, self.dtype)}, {m})"

        def row(dv, mv, depth):
            pad = "  " * depth
            if not isinstance(dv, list) or (dv and not isinstance(dv[0], list)):
                cells = [f"{float(x):8.4f}" if k else "      --" for x, k in zip(dv, mv)]  # (as torch: floats)
                return pad + "[" + ", ".join(cells) + "]"
            inner = ",\n".join(row(a, b, depth + 1) for a, b in zip(dv, mv))
            return pad + "[\n" + inner + "\n" + pad + "]"
        return "MaskedTensor(\n" + row(d, m, 1) + "\n)"

    # --- elementwise ---------------------------------------------------------------------------------------
    def _like(self, data):
        return MaskedTensor(data, self._mask)

    def _binary(self, other, op, reverse: bool = False):
        if isinstance(other, MaskedTensor):
            if not _fg.equal(self._mask, other._mask):
                raise ValueError("Input masks must match. If you need support for this, please open an issue on "
                                 "Github.")
            other = other._data
        return self._like(op(other, self._data) if reverse else op(self._data, other))

    def to(self, *args, **kwargs):
        return self._like(self._data.to(*args, **kwargs))

    def clone(self):
        return MaskedTensor(self._data.clone(), self._mask.clone())

    def where(self, condition, other):
        return self._like(self._data.where(condition, other))

    # --- reductions -----------------------------------------------------------------------------------------
    def _reduce(self, name: str, dim=None, keepdim: bool = False, dtype=None):
        fn = _REDUCTIONS[name]
        data = fn(self._data, dim, keepdim=keepdim, dtype=dtype, mask=self._mask)
        if dim is None:
            return MaskedTensor(data, self._mask.any())
        return MaskedTensor(data, self._mask.any(dim, keepdim=keepdim) if isinstance(dim, int)
                            else _any_dims(self._mask, dim, keepdim))

    def sum(self, dim=None, keepdim: bool = False, dtype=None):
        return self._reduce("sum", dim, keepdim, dtype)

    def mean(self, dim=None, keepdim: bool = False, dtype=None):
        return self._reduce("mean", dim, keepdim, dtype)

    def prod(self, dim=None, keepdim: bool = False, dtype=None):
        return self._reduce("prod", dim, keepdim, dtype)

    def amax(self, dim=None, keepdim: bool = False):
        return self._reduce("amax", dim, keepdim)

    def amin(self, dim=None, keepdim: bool = False):
        return self._reduce("amin", dim, keepdim)

    def argmax(self, dim=None, keepdim: bool = False):
        return self._reduce("argmax", dim, keepdim)

    def argmin(self, dim=None, keepdim: bool = False):
        return self._reduce("argmin", dim, keepdim)

    def softmax(self, dim: int, dtype=None):
        return self._like(softmax(self._data, dim, dtype=dtype, mask=self._mask))

    def log_softmax(self, dim: int, dtype=None):
        return self._like(log_softmax(self._data, dim, dtype=dtype, mask=self._mask))

    def __bool__(self):
        raise RuntimeError("Boolean value of a MaskedTensor is ambiguous")

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is F.softmax or func is F.log_softmax:
            x, dim = args[0], args[1] if len(args) > 1 else kwargs["dim"]
            return x.softmax(dim) if func is F.softmax else x.log_softmax(dim)
        if func in (F.relu, F.gelu, F.silu, F.dropout):
            x = args[0]
            return x._like(func(x._data, *args[1:], **kwargs))
        return _subclass.torch_function(cls, func, types, args, kwargs)

    def _no_kernel(self, name: str) -> str:
        return f"{name} is not implemented for MaskedTensor; apply it to get_data() and get_mask()"


_UNARY = ("abs", "neg", "exp", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "sigmoid", "relu", "sqrt",
          "rsqrt", "square", "sign", "floor", "ceil", "round", "trunc", "reciprocal", "erf", "float", "double",
          "half", "long", "int", "bool", "clamp", "clamp_min", "clamp_max", "isnan", "logical_not", "nan_to_num",
          "transpose", "t", "permute", "reshape", "view", "flatten", "unsqueeze", "squeeze", "contiguous")
for _name in _UNARY:
    def _method(self, *args, _n=_name, **kwargs):
        d = getattr(self._data, _n)(*args, **kwargs)
        m = self._mask if d.shape == self._mask.shape and _n not in ("transpose", "t", "permute") else \
            getattr(self._mask, _n)(*args, **kwargs)
        return MaskedTensor(d, m)
    _method.__name__ = _name
    setattr(MaskedTensor, _name, _method)
for _name, _op in {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
                   "pow": operator.pow, "floordiv": operator.floordiv, "mod": operator.mod, "eq": operator.eq,
                   "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
                   "and": operator.and_, "or": operator.or_}.items():
    setattr(MaskedTensor, f"__{_name}__", lambda self, o, _op=_op: self._binary(o, _op))
    if _name not in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(MaskedTensor, f"__r{_name}__", lambda self, o, _op=_op: self._binary(o, _op, reverse=True))
# the data's metadata and autograd attributes, read through
for _name in ("shape", "ndim", "dtype", "device", "layout", "requires_grad", "is_leaf", "grad_fn"):
    setattr(MaskedTensor, _name, property(lambda self, _n=_name: getattr(self._data, _n)))
for _name in ("dim", "numel"):
    setattr(MaskedTensor, _name, lambda self, _n=_name: getattr(self._data, _n)())
MaskedTensor.__hash__ = object.__hash__
MaskedTensor.__neg__ = MaskedTensor.neg
MaskedTensor.__abs__ = MaskedTensor.abs
MaskedTensor.add, MaskedTensor.sub, MaskedTensor.mul = (MaskedTensor.__add__, MaskedTensor.__sub__,
                                                        MaskedTensor.__mul__)
MaskedTensor.div = MaskedTensor.__truediv__


def masked_tensor(data, mask, requires_grad: bool = False) -> MaskedTensor:
    """A MaskedTensor of a copy of data (a leaf, no autograd history)."""
    _check(data, mask)
    return MaskedTensor(data.detach().clone(), mask.clone(), requires_grad)


def as_masked_tensor(data, mask) -> MaskedTensor:
    """A MaskedTensor over data itself, keeping its autograd history (gradients reach data)."""
    return MaskedTensor(data, mask)


def is_masked_tensor(obj) -> bool:
    return isinstance(obj, MaskedTensor)


# --- the masked reductions on plain tensors (torch.masked.sum(input, dim, mask=...)) --------------------------
def _full_mask(input, mask):
    if mask is None:
        return _fg.ones_like(input, dtype=_fg.bool)
    if mask.dtype != _fg.bool:
        mask = mask.to(_fg.bool)
    return mask.broadcast_to(input.shape) if tuple(mask.shape) != tuple(input.shape) else mask


def _dims(input, dim):
    if dim is None:
        return tuple(range(input.dim()))
    return tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)


def _any_dims(mask, dim, keepdim):
    return mask.sum(_dims(mask, dim), keepdim=keepdim) > 0


def _filled(input, mask, value, dtype):
    x = input if dtype is None else input.to(dtype)
    return x.masked_fill(_full_mask(input, mask).logical_not(), value)


def sum(input, dim=None, *, keepdim: bool = False, dtype=None, mask=None):  # noqa: A001
    """The sum of the elements where mask is True (0 where none is)."""
    return _filled(input, mask, 0, dtype).sum(_dims(input, dim), keepdim=keepdim)


def prod(input, dim=None, *, keepdim: bool = False, dtype=None, mask=None):
    """The product of the elements where mask is True (1 where none is)."""
    x = _filled(input, mask, 1, dtype)
    for d in sorted((d % max(input.dim(), 1) for d in _dims(input, dim)), reverse=True):
        x = x.prod(d, keepdim=keepdim)
    return x


def mean(input, dim=None, *, keepdim: bool = False, dtype=None, mask=None):
    """The mean of the elements where mask is True (nan where none is)."""
    count = _full_mask(input, mask).sum(_dims(input, dim), keepdim=keepdim)
    return sum(input, dim, keepdim=keepdim, dtype=dtype, mask=mask) / count


def _lowest(input) -> float:
    return -math.inf if input.is_floating_point() else _fg.iinfo(input.dtype).min


def _highest(input) -> float:
    return math.inf if input.is_floating_point() else _fg.iinfo(input.dtype).max


def _extreme(name: str, fill, doc: str):
    """The masked amax/amin/argmax/argmin: the masked-out elements filled with the value that cannot win."""
    all_dims = name in ("amax", "amin")

    def reduce(input, dim=None, *, keepdim: bool = False, dtype=None, mask=None):
        x = _filled(input, mask, fill(input), dtype)
        return getattr(x, name)(_dims(input, dim) if all_dims else dim, keepdim=keepdim)
    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = doc
    return reduce


amax = _extreme("amax", _lowest, "The largest element where mask is True (the dtype's lowest value where none is).")
amin = _extreme("amin", _highest, "The smallest element where mask is True (the dtype's highest value where none "
                "is).")
argmax = _extreme("argmax", _lowest, "The index of the largest element where mask is True.")
argmin = _extreme("argmin", _highest, "The index of the smallest element where mask is True.")


def logsumexp(input, dim, *, keepdim: bool = False, dtype=None, mask=None):
    """log(sum(exp(x))) over the elements where mask is True (-inf where none is)."""
    return _filled(input, mask, -math.inf, dtype).logsumexp(_dims(input, dim), keepdim=keepdim)


def _normalised(name: str, input, dim, dtype, mask, out_fill):
    m = _full_mask(input, mask)
    x = _filled(input, m, -math.inf, dtype)
    live = m.any(dim, keepdim=True)
    out = getattr(x.masked_fill(live.logical_not(), 0.0), name)(dim)
    return out.masked_fill(m.logical_not(), out_fill)


def softmax(input, dim, *, dtype=None, mask=None):
    """softmax over dim of the elements where mask is True; 0 at the masked-out ones."""
    return _normalised("softmax", input, dim, dtype, mask, 0.0)


def log_softmax(input, dim, *, dtype=None, mask=None):
    """log_softmax over dim of the elements where mask is True; -inf at the masked-out ones."""
    return _normalised("log_softmax", input, dim, dtype, mask, -math.inf)


def softmin(input, dim, *, dtype=None, mask=None):
    """softmax of -input over the elements where mask is True."""
    return softmax(-input, dim, dtype=dtype, mask=mask)


def norm(input, ord=2.0, dim=None, *, keepdim: bool = False, dtype=None, mask=None):
    """The ord-norm of the elements where mask is True."""
    x = _filled(input, mask, 0, dtype).abs()
    dims = _dims(input, dim)
    if ord == math.inf:
        return x.amax(dims, keepdim=keepdim)
    if ord == 0:
        return (x != 0).to(x.dtype).sum(dims, keepdim=keepdim)
    return (x ** ord).sum(dims, keepdim=keepdim) ** (1.0 / ord)


def normalize(input, ord, dim, *, eps: float = 1e-12, dtype=None, mask=None):
    """input divided by its masked ord-norm over dim (at least eps); 0 at the masked-out elements."""
    n = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask).clamp_min(eps)
    return _filled(input, mask, 0, dtype) / n


def var(input, dim=None, unbiased=None, *, correction=None, keepdim: bool = False, dtype=None, mask=None):
    """The variance of the elements where mask is True (correction 1 unless unbiased=False / correction=0)."""
    c = correction if correction is not None else (0 if unbiased is False else 1)
    dims = _dims(input, dim)
    count = _full_mask(input, mask).sum(dims, keepdim=keepdim)
    mu = mean(input, dims, keepdim=True, dtype=dtype, mask=mask)
    dev = _filled(input - mu, mask, 0, dtype)
    return (dev * dev).sum(dims, keepdim=keepdim) / (count - c).clamp_min(0)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim: bool = False, dtype=None, mask=None):
    """The standard deviation of the elements where mask is True."""
    return var(input, dim, unbiased, correction=correction, keepdim=keepdim, dtype=dtype, mask=mask).sqrt()


_REDUCTIONS = {"sum": sum, "mean": mean, "prod": prod, "amax": amax, "amin": amin, "argmax": argmax,
               "argmin": argmin}
