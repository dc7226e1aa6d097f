"""funcgrad.nested (torch.nested): nested tensors, a batch of tensors whose sizes differ along some dimensions.

    nt = torch.nested.nested_tensor([torch.randn(2, 6), torch.randn(3, 6)], layout=torch.jagged)
    nt.shape                       # torch.Size([2, j1, 6])
    y = F.linear(nt, w)            # per sequence; F.scaled_dot_product_attention(q, k, v) likewise
    torch.nested.to_padded_tensor(y, 0.0)

A NestedTensor holds its components as funcgrad Tensors (torch keeps one packed buffer); every operation maps over
them, so autograd reaches the components (and, through `as_nested_tensor` / `nested_tensor_from_jagged`, the
tensors they came from) with no rule of its own. Both of torch's layouts: `torch.strided` (any dimension may be
irregular; `size()` refuses) and `torch.jagged` (one ragged dimension, shown as a symbol `j1`; `values()`,
`offsets()`, `lengths()`). A NestedTensor is a torch.Tensor (a WrapperTensor: no buffer of its own); what differs
from torch: torch's functions reach it through `__torch_function__`: nn.functional's linear,
scaled_dot_product_attention, layer_norm, dropout, relu, gelu, silu, softmax, log_softmax (hence nn.Linear,
nn.LayerNorm, nn.Dropout, ...), torch.cat and torch.where have rules here; any other torch function runs the
NestedTensor method of its name (torch.matmul(nt, w) is nt.matmul(w)) or raises torch's NotImplementedError; a
Tensor method it does not implement raises NotImplementedError naming it.
"""
from __future__ import annotations

import itertools
import operator

from .. import _torch as _fg
from .._torch._dtype import Size
from .._torch._formats import jagged, strided
from .._torch import _subclass
from .._torch._subclass import WrapperTensor
from ..nn import functional as F

__all__ = ["NestedTensor", "nested_tensor", "as_nested_tensor", "to_padded_tensor", "nested_tensor_from_jagged",
           "narrow", "masked_select"]

_counter = itertools.count(1)


class RaggedInt(int):
    """The size of a jagged dimension (torch's SymInt `j1`): equal only to itself; its int value is the longest
    component's length."""

    def __new__(cls, longest: int):
        self = super().__new__(cls, longest)
        self.name = f"j{next(_counter)}"
        return self

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        return self is other

    def __ne__(self, other) -> bool:
        return self is not other

    def __hash__(self) -> int:
        return id(self)


def _norm_dim(d: int, ndim: int) -> int:
    if not -ndim <= d < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")
    return d % ndim


class NestedTensor(WrapperTensor):
    """A batch of tensors of one dimensionality and dtype (torch.nested's NestedTensor)."""
    __slots__ = ("_ts", "_layout", "_ragged_idx", "_sym", "_buf")
    is_nested = True
    is_sparse = False
    is_quantized = False
    is_meta = False
    is_cuda = False

    def __init__(self, components, layout=strided, ragged_idx: int = 1, sym=None, buf=None):
        self._ts = tuple(components)
        self._layout = layout
        self._ragged_idx = ragged_idx
        self._buf = buf  # (values, offsets, lengths) when built over a packed buffer (jagged only)
        if layout is jagged and sym is None:
            sym = RaggedInt(max((t.shape[ragged_idx - 1] for t in self._ts), default=0))
        self._sym = sym

    # --- derived nested tensors -------------------------------------------------------------------------
    def _like(self, comps, ragged_idx=None, keep_sym: bool = True):
        ri = self._ragged_idx if ragged_idx is None else ragged_idx
        return NestedTensor(comps, self._layout, ri, self._sym if keep_sym else None)

    def _map(self, fn, ragged_idx=None):
        return self._like([fn(t) for t in self._ts], ragged_idx)

    # --- metadata -----------------------------------------------------------------------------------------
    @property
    def layout(self):
        return self._layout

    @property
    def dtype(self):
        return self._ts[0].dtype if self._ts else _fg.get_default_dtype()

    @property
    def device(self):
        return _fg.device("cpu")

    def dim(self) -> int:
        return 1 + (self._ts[0].dim() if self._ts else 0)

    ndimension = dim

    @property
    def ndim(self) -> int:
        return self.dim()

    def __len__(self) -> int:
        return len(self._ts)

    def size(self, dim: int | None = None):
        """The size along dim (torch refuses an irregular dimension of a strided nested tensor, and size()
        without a dim for the strided layout)."""
        n = self.dim()
        if dim is None:
            if self._layout is strided:
                raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. Please file an issue.")
            return tuple.__new__(Size, [self.size(d) for d in range(n)])
        d = _norm_dim(dim, n)
        if d == 0:
            return len(self._ts)
        if self._layout is jagged and d == self._ragged_idx:
            return self._sym
        sizes = {t.shape[d - 1] for t in self._ts}
        if len(sizes) > 1:
            raise RuntimeError(f"Given dimension {d} is irregular and does not have a size.")
        return sizes.pop()

    @property
    def shape(self):
        return self.size()

    def numel(self) -> int:
        return sum(t.numel() for t in self._ts)

    def element_size(self) -> int:
        return self._ts[0].element_size() if self._ts else 4

    def is_contiguous(self, memory_format=None) -> bool:
        return self._buf is None or self._buf[2] is None

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    # --- autograd -----------------------------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return any(t.requires_grad for t in self._ts)

    @property
    def is_leaf(self) -> bool:
        return all(t.is_leaf for t in self._ts)

    @property
    def grad(self):
        gs = [t.grad for t in self._ts]
        if all(g is None for g in gs):
            return None
        return self._like([g if g is not None else _fg.zeros_like(t) for g, t in zip(gs, self._ts)])

    @property
    def grad_fn(self):
        return next((t.grad_fn for t in self._ts if t.grad_fn is not None), None)

    def requires_grad_(self, requires_grad: bool = True):
        for t in self._ts:
            t.requires_grad_(requires_grad)
        return self

    def detach(self):
        return self._map(lambda t: t.detach())

    def backward(self, gradient=None, retain_graph=None, create_graph: bool = False):
        """Backpropagate gradient (a NestedTensor of the same structure) to the components' leaves."""
        if not isinstance(gradient, NestedTensor):
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        _fg.autograd.backward(list(self._ts), list(gradient._ts), retain_graph=retain_graph,
                              create_graph=create_graph)

    # --- components -----------------------------------------------------------------------------------------
    def unbind(self, dim: int = 0):
        if _norm_dim(dim, self.dim()) != 0:
            raise RuntimeError("unbind(): only supported for NestedTensor on dim=0")
        return tuple(self._ts)

    def __getitem__(self, i):
        """nt[i] is component i; nt[i, ...] indexes component i with the rest (torch's; a slice of the batch
        dimension is refused, as torch does)."""
        if isinstance(i, tuple) and i and isinstance(i[0], int) and not isinstance(i[0], bool):
            rest = i[1:]
            return self._ts[i[0]][rest] if rest else self._ts[i[0]]
        if isinstance(i, int) and not isinstance(i, bool):
            return self._ts[i]
        if self._layout is jagged:
            raise RuntimeError("slice(): not supported for NestedTensor on dim=0")
        raise NotImplementedError("Could not run 'aten::slice.Tensor' with arguments from the 'NestedTensorCPU' "
                                  "backend: index the batch dimension of a NestedTensor with an int")

    def __iter__(self):
        return iter(self._ts)

    def _jagged_only(self, name: str) -> None:
        if self._layout is not jagged:
            raise RuntimeError(f"{name}(): only supported for nested tensors with the jagged layout "
                               "(layout=torch.jagged)")

    def values(self):
        """The components packed along the ragged dimension (jagged layout)."""
        self._jagged_only("values")
        if self._buf is not None:
            return self._buf[0]
        return _fg.cat(list(self._ts), self._ragged_idx - 1)

    def offsets(self):
        self._jagged_only("offsets")
        if self._buf is not None:
            return self._buf[1]
        lens = [t.shape[self._ragged_idx - 1] for t in self._ts]
        return _fg.tensor([0] + list(itertools.accumulate(lens)), dtype=_fg.int64)

    def lengths(self):
        self._jagged_only("lengths")
        return None if self._buf is None else self._buf[2]

    def to_padded_tensor(self, padding: float, output_size=None):
        return to_padded_tensor(self, padding, output_size)

    def __repr__(self) -> str:
        if self._layout is jagged:
            size = "(" + ", ".join(str(s) for s in self.size()) + ")"
            return f"NestedTensor(size={size}, offsets={self.offsets()!r}, contiguous={self.is_contiguous()})"
        body = ",\n".join("  " + repr(t).replace("\n", "\n  ") for t in self._ts)
        return "nested_tensor([\n" + (body if body else "") + "\n])"

    # --- conversions and elementwise maps -------------------------------------------------------------
    def to(self, *args, **kwargs):
        return self._map(lambda t: t.to(*args, **kwargs))

    def clone(self):
        return self._map(lambda t: t.clone())

    def contiguous(self, memory_format=None):
        return self._map(lambda t: t.contiguous()) if not self.is_contiguous() else self

    def _cdim(self, dim: int, name: str) -> int:
        """A dimension of the nested tensor as the components' dimension (the batch dimension refused)."""
        d = _norm_dim(dim, self.dim())
        if d == 0:
            raise RuntimeError(f"{name}(): not supported for NestedTensor on dim=0")
        return d - 1

    # --- shape ops --------------------------------------------------------------------------------------------
    def transpose(self, dim0: int, dim1: int):
        n = self.dim()
        d0, d1 = _norm_dim(dim0, n), _norm_dim(dim1, n)
        if 0 in (d0, d1) and d0 != d1:
            if self._layout is jagged:
                raise ValueError("Transpose is not supported on the batch dimension for jagged NT")
            raise RuntimeError("Nested tensor dimension 0 cannot be transposed")
        ri = self._ragged_idx
        ri = d1 if ri == d0 else d0 if ri == d1 else ri
        return self._map(lambda t: t.transpose(d0 - 1, d1 - 1), ri)

    def unflatten(self, dim: int, sizes):
        d = self._cdim(dim, "unflatten")
        if self._layout is jagged and d + 1 == self._ragged_idx:
            raise RuntimeError("unflatten(): the ragged dimension of a jagged NestedTensor cannot be unflattened")
        ri = self._ragged_idx + (len(sizes) - 1 if self._ragged_idx > d + 1 else 0)
        return self._map(lambda t: t.unflatten(d, sizes), ri)

    def flatten(self, start_dim: int = 0, end_dim: int = -1):
        n = self.dim()
        s, e = _norm_dim(start_dim, n), _norm_dim(end_dim, n)
        if s == 0:
            raise RuntimeError("flatten(): not supported for NestedTensor on dim=0")
        if self._layout is jagged and s <= self._ragged_idx <= e and s != e:
            raise RuntimeError("flatten(): the ragged dimension of a jagged NestedTensor cannot be flattened")
        ri = self._ragged_idx - (e - s if self._ragged_idx > e else 0)
        return self._map(lambda t: t.flatten(s - 1, e - 1), ri)

    def reshape(self, *shape):
        """Reshape each component to shape[1:] (shape[0] is the batch size or -1; -1 elsewhere is resolved per
        component, as torch does for the irregular dimension)."""
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        if shape[0] not in (-1, len(self._ts)):
            raise RuntimeError(f"reshape: For now nested reshaping cannot change or infer the implicit batch "
                               f"dimension, got shape {list(shape)} for a nested tensor of {len(self._ts)}")
        tail = [s if not isinstance(s, RaggedInt) else -1 for s in shape[1:]]
        ri = self._ragged_idx
        if self._layout is jagged:
            ri = next((i + 1 for i, s in enumerate(tail) if s == -1), ri)
        return self._map(lambda t: t.reshape(tail), ri)

    view = reshape

    def chunk(self, chunks: int, dim: int = 0):
        if _norm_dim(dim, self.dim()) == 0:
            k = -(-len(self._ts) // chunks)
            return tuple(NestedTensor(self._ts[i:i + k], self._layout, self._ragged_idx)
                         for i in range(0, len(self._ts), k))
        d = self._cdim(dim, "chunk")
        parts = [t.chunk(chunks, d) for t in self._ts]
        return tuple(self._like([p[j] for p in parts]) for j in range(len(parts[0])))

    def split(self, split_size, dim: int = 0):
        d = self._cdim(dim, "split")
        parts = [t.split(split_size, d) for t in self._ts]
        return tuple(self._like([p[j] for p in parts]) for j in range(len(parts[0])))

    # --- reductions --------------------------------------------------------------------------------------
    def _reduce(self, name: str, dim, keepdim: bool, **kw):
        if dim is None:
            if self._layout is strided:
                raise RuntimeError(f"{name}(): reducing a strided NestedTensor over all dimensions is not "
                                   "supported; reduce its components (unbind()) or use the jagged layout")
            return getattr(self.values(), name)(**kw)
        dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
        n = self.dim()
        ds = sorted({_norm_dim(d, n) for d in dims})
        if self._layout is strided:
            if 0 in ds:
                raise RuntimeError(f"{name}(): not supported for NestedTensor on dim=0")
            if not keepdim:
                raise RuntimeError("NestedTensor always requires keepdim=True for now.")
            return self._map(lambda t: getattr(t, name)(tuple(d - 1 for d in ds), keepdim=True, **kw))
        ragged = self._ragged_idx in ds
        if 0 in ds:
            if not ragged:
                raise RuntimeError(f"{name}(): reducing along the batch dimension but not the ragged dimension "
                                   "is not supported for nested tensors")
            rest = tuple(d - 1 for d in ds if d != 0)
            return getattr(self.values(), name)(rest, keepdim=keepdim, **kw)
        if ragged:
            if len(ds) > 1:
                raise RuntimeError(f"{name}(): reducing along a ragged and non-batch dimension is not supported "
                                   "for nested tensors")
            outs = [getattr(t, name)(ds[0] - 1, keepdim=keepdim, **kw) for t in self._ts]
            return _fg.stack(outs)
        ri = self._ragged_idx - sum(1 for d in ds if d < self._ragged_idx) * (not keepdim)
        return self._map(lambda t: getattr(t, name)(tuple(d - 1 for d in ds), keepdim=keepdim, **kw), ri)

    def sum(self, dim=None, keepdim: bool = False, dtype=None):
        return self._reduce("sum", dim, keepdim, **({} if dtype is None else {"dtype": dtype}))

    def mean(self, dim=None, keepdim: bool = False, dtype=None):
        return self._reduce("mean", dim, keepdim, **({} if dtype is None else {"dtype": dtype}))

    def amax(self, dim=None, keepdim: bool = False):
        return self._reduce("amax", dim, keepdim)

    def amin(self, dim=None, keepdim: bool = False):
        return self._reduce("amin", dim, keepdim)

    def _softmax(self, name: str, dim: int, dtype=None):
        d = _norm_dim(dim, self.dim())
        if d == 0:
            if self._layout is jagged:
                raise RuntimeError(f"{name}(): not supported when reducing across the batch dimension for "
                                   "NestedTensor")
            raise RuntimeError(f"Cannot apply {name} across nested dimension 0")
        return self._map(lambda t: getattr(t, name)(d - 1, dtype=dtype))

    def softmax(self, dim: int, dtype=None):
        return self._softmax("softmax", dim, dtype)

    def log_softmax(self, dim: int, dtype=None):
        return self._softmax("log_softmax", dim, dtype)

    # --- binary ops --------------------------------------------------------------------------------------
    def _binary(self, other, op, name: str, reverse: bool = False):
        if isinstance(other, NestedTensor):
            shapes = [(tuple(a.shape), tuple(b.shape)) for a, b in zip(self._ts, other._ts)]
            if len(self._ts) != len(other._ts) or any(sa != sb for sa, sb in shapes) or (
                    self._layout is jagged and self._ragged_idx != other._ragged_idx):
                if self._layout is jagged:
                    fmt = lambda x: "(" + ", ".join(str(s) for s in x.size()) + ")"  # noqa: E731
                    raise RuntimeError(f"cannot call binary pointwise function {name}.Tensor with inputs of "
                                       f"shapes {fmt(self)} and {fmt(other)}")
                raise RuntimeError(f"{name} does not support broadcasting when given a NestedTensor")
            pairs = zip(self._ts, other._ts)
        elif isinstance(other, _fg.Tensor) and other.dim() > 0:
            if self._layout is strided:
                raise RuntimeError("Expected both self and other to be nested, but got a nested self and "
                                   "non-nested other")
            if other.dim() == self.dim():
                if other.shape[0] != len(self._ts) or other.shape[self._ragged_idx] != 1:
                    raise RuntimeError(f"cannot call binary pointwise function {name}.Tensor with a dense "
                                       f"tensor of shape {list(other.shape)} that does not broadcast over the "
                                       f"batch and the ragged dimension")
                pairs = zip(self._ts, other.unbind(0))
            elif other.dim() < self.dim():
                pairs = ((t, other) for t in self._ts)
            else:
                raise RuntimeError(f"cannot call binary pointwise function {name}.Tensor: the dense operand has "
                                   f"more dimensions ({other.dim()}) than the nested tensor ({self.dim()})")
        else:
            pairs = ((t, other) for t in self._ts)
        if reverse:
            return self._like([op(b, a) for a, b in pairs])
        return self._like([op(a, b) for a, b in pairs])

    def __matmul__(self, other):
        return self.matmul(other)

    def matmul(self, other):
        if self._layout is strided and not isinstance(other, NestedTensor):
            raise RuntimeError("Expected both to be nested, but got a nested self and non-nested other")
        if isinstance(other, NestedTensor):
            if len(other._ts) != len(self._ts):
                raise RuntimeError(f"matmul(): expected the two nested tensors to have the same batch size, got "
                                   f"{len(self._ts)} and {len(other._ts)}")
            return self._like([a @ b for a, b in zip(self._ts, other._ts)], keep_sym=False)
        return self._like([a @ other for a in self._ts])

    bmm = matmul

    def masked_fill(self, mask, value):
        if isinstance(mask, NestedTensor):
            return self._like([t.masked_fill(m, value) for t, m in zip(self._ts, mask._ts)])
        return self._map(lambda t: t.masked_fill(mask, value))

    def __bool__(self):
        raise RuntimeError("Boolean value of a NestedTensor is ambiguous")

    # --- torch functions ---------------------------------------------------------------------------------
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        impl = _FUNCTIONS.get(func)
        if impl is None:
            return _subclass.torch_function(cls, func, types, args, kwargs)
        return impl(*args, **(kwargs or {}))

    def _no_kernel(self, name: str) -> str:
        """torch's error for an operator without a nested kernel (the jagged layout's, or the strided one's)."""
        if self._layout is jagged:
            return f"aten.{name}.default"
        return f"Could not run 'aten::{name}' with arguments from the 'NestedTensorCPU' backend"


# elementwise methods that map over the components unchanged
_UNARY = ("abs", "neg", "exp", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "sigmoid", "relu", "sqrt",
          "rsqrt", "square", "sign", "floor", "ceil", "round", "trunc", "reciprocal", "erf", "logical_not",
          "float", "double", "half", "bfloat16", "long", "int", "bool", "sgn", "isnan", "isinf", "clamp",
          "clamp_min", "clamp_max", "pow", "nan_to_num", "type_as", "silu", "gelu")
for _name in _UNARY:
    def _method(self, *args, _n=_name, **kwargs):
        return self._map(lambda t: getattr(t, _n)(*args, **kwargs))
    _method.__name__ = _name
    setattr(NestedTensor, _name, _method)

_BINARY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
           "pow": operator.pow, "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
           "gt": operator.gt, "ge": operator.ge, "floor_divide": operator.floordiv, "remainder": operator.mod}
for _name, _op in _BINARY.items():
    def _fwd(self, other, _op=_op, _n=_name):
        return self._binary(other, _op, _n)

    def _rev(self, other, _op=_op, _n=_name):
        return self._binary(other, _op, _n, reverse=True)
    dunder = {"div": "truediv", "remainder": "mod", "floor_divide": "floordiv"}.get(_name, _name)
    setattr(NestedTensor, f"__{dunder}__", _fwd)
    if _name not in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(NestedTensor, f"__r{dunder}__", _rev)
    if _name != "pow":
        setattr(NestedTensor, _name, _fwd)
NestedTensor.__hash__ = object.__hash__
NestedTensor.__neg__ = NestedTensor.neg
NestedTensor.__abs__ = NestedTensor.abs
NestedTensor.multiply, NestedTensor.subtract, NestedTensor.divide = (NestedTensor.mul, NestedTensor.sub,
                                                                     NestedTensor.div)


# --- the nn.functional calls a NestedTensor accepts --------------------------------------------------------
def _check_weight(x: NestedTensor, weight) -> None:
    if x._layout is jagged and x._ragged_idx == x.dim() - 1:
        raise RuntimeError("linear(): the last dimension of a jagged NestedTensor must not be its ragged one")


def _linear(input, weight, bias=None):
    _check_weight(input, weight)
    return input._map(lambda t: F.linear(t, weight, bias))


def _sdpa(query, key, value, attn_mask=None, dropout_p: float = 0.0, is_causal: bool = False, scale=None,
          enable_gqa: bool = False):
    nts = [t for t in (query, key, value) if isinstance(t, NestedTensor)]
    if len(nts) != 3:
        raise RuntimeError("scaled_dot_product_attention(): expected query, key and value to all be nested "
                           "tensors when one of them is")
    if attn_mask is not None:
        raise RuntimeError("scaled_dot_product_attention(): attn_mask is not supported with NestedTensor "
                           "inputs; the ragged lengths mask the padding (use is_causal for causal masking)")
    if not len(query._ts) == len(key._ts) == len(value._ts):
        raise RuntimeError(f"scaled_dot_product_attention(): query, key and value must have the same batch size, "
                           f"got {len(query._ts)}, {len(key._ts)} and {len(value._ts)}")
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise RuntimeError(f"scaled_dot_product_attention(): expected 4-D nested query, key and value "
                           f"(N, heads, L, E), got {query.dim()}-D, {key.dim()}-D and {value.dim()}-D")
    outs = [F.scaled_dot_product_attention(q, k, v, None, dropout_p, is_causal, scale, enable_gqa)
            for q, k, v in zip(query._ts, key._ts, value._ts)]
    return query._like(outs)


def _layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    k = len(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else 1
    if input._layout is jagged and input._ragged_idx >= input.dim() - k:
        raise RuntimeError("layer_norm(): normalizing over the ragged dimension of a NestedTensor is not "
                           "supported")
    return input._map(lambda t: F.layer_norm(t, normalized_shape, weight, bias, eps))


def _elementwise(fn):
    def impl(input, *args, **kwargs):
        return input._map(lambda t: fn(t, *args, **kwargs))
    return impl


def _softmax_fn(name):
    def impl(input, dim=None, _stacklevel=3, dtype=None):
        return input._softmax(name, dim, dtype)
    return impl


def _cat(tensors, dim: int = 0, *, out=None):
    """torch.cat of nested tensors: along the batch dimension (strided layout) or componentwise."""
    nts = list(tensors)
    first = nts[0]
    if not all(isinstance(t, NestedTensor) for t in nts):
        raise RuntimeError("cat(): expected all inputs to be nested tensors when one of them is")
    d = _norm_dim(dim, first.dim())
    if d == 0:
        if first._layout is jagged:
            raise RuntimeError("cat(): not supported for NestedTensor on dim=0")
        return NestedTensor([c for t in nts for c in t._ts], strided)
    if len({len(t._ts) for t in nts}) > 1:
        raise RuntimeError("cat(): expected all nested tensors to have the same batch size")
    return first._like([_fg.cat(list(cs), d - 1) for cs in zip(*(t._ts for t in nts))],
                       keep_sym=first._layout is not jagged or d != first._ragged_idx)


def _where(condition, input, other):
    """torch.where with a nested condition and input (jagged layout; other nested or a scalar)."""
    nt = next(t for t in (condition, input, other) if isinstance(t, NestedTensor))
    if nt._layout is strided:
        raise RuntimeError("other must be nested" if not isinstance(other, NestedTensor) else
                           "self must not be nested")
    parts = [t._ts if isinstance(t, NestedTensor) else [t] * len(nt._ts) for t in (condition, input, other)]
    return nt._like([_fg.where(c, a, b) for c, a, b in zip(*parts)])


def _alpha(name: str):
    def impl(input, other, *, alpha=1, out=None):
        return getattr(input, name)(other if alpha == 1 else other * alpha)
    return impl


_FUNCTIONS = {F.linear: _linear, F.scaled_dot_product_attention: _sdpa, F.layer_norm: _layer_norm,
              F.dropout: _elementwise(F.dropout), F.relu: _elementwise(F.relu), F.gelu: _elementwise(F.gelu),
              F.silu: _elementwise(F.silu), F.softmax: _softmax_fn("softmax"),
              F.log_softmax: _softmax_fn("log_softmax"), _fg.cat: _cat, _fg.concat: _cat, _fg.concatenate: _cat,
              _fg.where: _where, _fg.add: _alpha("add"), _fg.sub: _alpha("sub"), _fg.softmax: _softmax_fn("softmax"), _fg.log_softmax: _softmax_fn("log_softmax")}


# --- construction -----------------------------------------------------------------------------------------
def _ragged_dim(comps) -> int:
    """The jagged layout's ragged dimension for components of one rank: the one dimension whose sizes differ
    (1 when none does)."""
    if any(t.dim() == 0 for t in comps):
        raise RuntimeError("Cannot construct a nested tensor from a list of zero-dim tensors")
    differ = [d for d in range(comps[0].dim()) if len({t.shape[d] for t in comps}) > 1] if comps else []
    if len(differ) > 1:
        raise RuntimeError("Cannot represent given tensor list as a nested tensor with the jagged layout since "
                           "the tensors have more than one ragged dimension; use layout=torch.strided")
    return differ[0] + 1 if differ else 1


def _check_ranks(comps) -> None:
    for i, t in enumerate(comps[1:], 1):
        if t.dim() != comps[0].dim():
            raise RuntimeError(f"All Tensors given to nested_tensor must have the same dimension. Found dimension "
                               f"{t.dim()} for Tensor at index {i} and dimension {comps[0].dim()} for Tensor at "
                               f"index 0.")


def _build(comps, layout) -> NestedTensor:
    layout = strided if layout is None else layout
    if layout not in (strided, jagged):
        raise RuntimeError(f"Specified layout is unsupported for nested tensors: {layout}")
    _check_ranks(comps)
    if layout is jagged:
        return NestedTensor(comps, jagged, _ragged_dim(comps))
    return NestedTensor(comps, strided)


def nested_tensor(tensor_list, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
                  pin_memory: bool = False) -> NestedTensor:
    """A nested tensor of copies of tensor_list's tensors (or nested lists of numbers): a leaf, with no
    autograd history, requiring grad when requires_grad is set."""
    if isinstance(tensor_list, _fg.Tensor):
        tensor_list = list(tensor_list.unbind(0))
    comps = []
    for t in tensor_list:
        t = t.detach().clone() if isinstance(t, _fg.Tensor) else _fg.tensor(t)
        comps.append(t.to(dtype) if dtype is not None else t)
    nt = _build(comps, layout)
    if requires_grad:
        nt.requires_grad_(True)
    return nt


def as_nested_tensor(ts, dtype=None, device=None, layout=None) -> NestedTensor:
    """A nested tensor of ts (a list of tensors, or a tensor unbound along dim 0) keeping their autograd
    history: gradients reach the tensors given."""
    if isinstance(ts, NestedTensor):
        if layout is not None and layout is not ts._layout:
            return _build([t.to(dtype) if dtype is not None else t for t in ts._ts], layout)
        return ts if dtype is None else ts.to(dtype)
    if isinstance(ts, _fg.Tensor):
        ts = ts.unbind(0)
    elif not isinstance(ts, (list, tuple)) or not all(isinstance(t, _fg.Tensor) for t in ts):
        raise TypeError("as_nested_tensor(): Expected first argument to be a tensor or a list / tuple of tensors ")
    return _build([t.to(dtype) if dtype is not None else t for t in ts], layout)


def to_padded_tensor(input: NestedTensor, padding: float, output_size=None):
    """A dense tensor holding input's components, each padded with `padding` up to the largest size of every
    dimension (or to output_size)."""
    if not isinstance(input, NestedTensor):
        raise RuntimeError("to_padded_tensor(): expected a nested tensor as input")
    ts = input._ts
    n = input.dim() - 1
    longest = [max((t.shape[d] for t in ts), default=0) for d in range(n)]
    if output_size is not None:
        output_size = list(output_size)
        if len(output_size) != n + 1:
            raise RuntimeError("Length of output_size does not match NestedTensor dims. Broadcasting is not "
                               "supported.")
        for d in range(n):
            if output_size[d + 1] < longest[d]:
                raise RuntimeError("Value in output_size is less than NestedTensor padded size. Truncation is "
                                   "not supported.")
        longest = output_size[1:]
    padded = []
    for t in ts:
        pads = []
        for d in reversed(range(n)):
            pads += [0, longest[d] - t.shape[d]]
        padded.append(F.pad(t, pads, value=padding))
    if not padded:
        return _fg.zeros((0,), dtype=input.dtype)
    return _fg.stack(padded)


def _as_index_list(x, n: int, name: str) -> list:
    if isinstance(x, _fg.Tensor):
        return [int(v) for v in x.tolist()] if x.dim() else [int(x.item())] * n
    return [int(x)] * n


def nested_tensor_from_jagged(values, offsets=None, lengths=None, jagged_dim: int | None = None,
                              min_seqlen: int | None = None, max_seqlen: int | None = None) -> NestedTensor:
    """A jagged nested tensor over values (sum of lengths, ...) split at offsets (B + 1 positions), or at
    lengths' running sums; its components are views of values, so gradients reach values."""
    if offsets is None:
        if lengths is None:
            raise RuntimeError("nested_tensor_from_jagged(): At least one of offsets or lengths is required.")
        offsets = _fg.cat([_fg.zeros(1, dtype=lengths.dtype), lengths.cumsum(0)])
        lengths = None
    jd = 1 if jagged_dim is None else jagged_dim
    if jd < 1 or jd > values.dim():
        raise ValueError(f"nested_tensor_from_jagged(): jagged_dim must be in [1, {values.dim()}], got {jd}")
    off = [int(v) for v in offsets.tolist()]
    lens = [int(v) for v in lengths.tolist()] if lengths is not None else [b - a for a, b in zip(off, off[1:])]
    comps = [values.narrow(jd - 1, o, n) for o, n in zip(off, lens)]
    nt = NestedTensor(comps, jagged, jd, buf=(values, offsets, lengths))
    return nt


def narrow(tensor, dim: int, start, length, layout=strided) -> NestedTensor:
    """A nested tensor of tensor's rows, row i narrowed along dim to [start_i, start_i + length_i) (start and
    length ints or 1-D tensors; the jagged layout keeps tensor as its buffer)."""
    if layout is jagged:
        if dim != 1:
            raise RuntimeError("jagged layout only supports dim=1")
        b, n = tensor.shape[0], tensor.shape[1]
        starts, lens = _as_index_list(start, b, "start"), _as_index_list(length, b, "length")
        values = tensor.flatten(0, 1)
        offs = [i * n + s for i, s in enumerate(starts)]
        offsets = _fg.tensor(offs + [offs[-1] + lens[-1]] if offs else [0], dtype=_fg.int64)
        comps = [tensor[i].narrow(0, s, ln) for i, (s, ln) in enumerate(zip(starts, lens))]
        return NestedTensor(comps, jagged, 1, buf=(values, offsets, _fg.tensor(lens, dtype=_fg.int64)))
    if layout is not strided:
        raise RuntimeError(f"Specified layout is unsupported for nested tensors: {layout}")
    if isinstance(start, _fg.Tensor) or isinstance(length, _fg.Tensor):
        raise RuntimeError("start and length must be integers for the strided layout NT impl")
    if dim != 0:
        raise RuntimeError(f"narrow(): only dim=0 supported for nested tensors, but got: {dim}")
    return NestedTensor(tensor.unbind(0)[start:start + length], strided)


def masked_select(tensor, mask) -> NestedTensor:
    """A jagged nested tensor of each row's elements where mask (tensor's shape, bool) is True."""
    if tensor.shape != mask.shape:
        raise RuntimeError(f"Mask with shape {list(mask.shape)} is not compatible with input's shape "
                           f"{list(tensor.shape)}")
    comps = [t.masked_select(m) for t, m in zip(tensor.unbind(0), mask.unbind(0))]
    return NestedTensor(comps, jagged, 1)
