"""torch.ops: operators by namespace, as torch's `torch.ops.<namespace>.<op>[.<overload>]`.

- `torch.ops.mylib.foo` is the operator `torch.library.custom_op("mylib::foo", ...)` registered (and each
  `torch.utils.cpp_extension` function, "<extension>::<function>"), with its `.default` overload.
- `torch.ops.aten.<op>.<overload>` maps ATen's operators (the ~160 below: arithmetic, reductions, views,
  indexing, creation, nn's convolutions, pooling, normalisation, activations and dropout, as torch.export /
  torch.fx graphs and the tutorials call them) to funcgrad's functions, with ATen's argument order and its
  multi-output forms (native_layer_norm, native_batch_norm, max_pool2d_with_indices, ...).
- `torch.ops.quantized.<op>` are torch's QuantizedCPU kernels (funcgrad/_torch/_quantized.py): add, add_relu,
  mul, cat, relu6, hardswish, sigmoid, batch_norm2d, max_pool2d, ...; and the packed-weight ones
  (_quantized_packed.py): linear / conv{1,2,3}d with their _prepack / _unpack, linear_dynamic, the embedding
  bags (embedding_bag_{byte,4bit,2bit}_prepack / _unpack / _rowwise_offsets, embedding_bag_4bit, ...)

funcgrad.ops is one module for both faces (funcgrad/_claims.py): JAX's segment_* functions are its own
attributes, every other name is looked up here (`attach`).
"""
from __future__ import annotations

import ctypes
import types
from typing import Callable, Optional

from . import _quantized as _Q, _quantized_packed as _QP
from . import library as _library
from . import top as _top
from ..nn import functional as F

__all__ = ["OpOverload", "OpOverloadPacket", "attach"]


class OpOverload:
    """One overload of an operator (`torch.ops.aten.add.Tensor`): call it as the function."""

    def __init__(self, packet: "OpOverloadPacket", overload: str, fn: Callable, schema: Optional[str] = None):
        self.overloadpacket, self._overloadname, self._fn = packet, overload, fn
        self.__name__ = f"{packet.__name__}.{overload}"
        self._schema = schema
        self.__doc__ = getattr(fn, "__doc__", None)

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def name(self) -> str:
        """"ns::op.overload" ("ns::op" for the default overload), as torch."""
        base = self.overloadpacket._qualified_op_name
        return base if self._overloadname == "default" else f"{base}.{self._overloadname}"

    @property
    def namespace(self) -> str:
        return self.overloadpacket._namespace

    def __repr__(self) -> str:
        return f"<OpOverload(op='{self.overloadpacket}', overload='{self._overloadname}')>"

    def __str__(self) -> str:
        return f"{self.overloadpacket}.{self._overloadname}"

    def __hash__(self) -> int:
        return hash((self.overloadpacket._qualified_op_name, self._overloadname))

    def __eq__(self, other) -> bool:
        return isinstance(other, OpOverload) and (other.name(), other._overloadname) == (self.name(),
                                                                                         self._overloadname)


class OpOverloadPacket:
    """An operator with its overloads (`torch.ops.aten.add`): calling it calls the function that serves them
    all (funcgrad's functions take every overload's arguments); `.Tensor`, `.default`, ... are the overloads."""

    def __init__(self, namespace: str, name: str, overloads: dict, default: Callable, schemas=None):
        self._namespace, self.__name__ = namespace, name
        self._qualified_op_name = f"{namespace}::{name}"
        self._table, self._fn, self._schemas, self._cache = overloads, default, schemas or {}, {}
        self.__doc__ = getattr(default, "__doc__", None)

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def overloads(self) -> list:
        return list(self._table)

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__"):
            raise AttributeError(overload)
        cache = self.__dict__["_cache"]
        if overload not in cache:
            if overload not in self._table:
                raise AttributeError(f"The underlying op of '{self}' has no overload name '{overload}'")
            cache[overload] = OpOverload(self, overload, self._table[overload], self._schemas.get(overload))
        return cache[overload]

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self}')>"

    def __str__(self) -> str:
        return f"{self._namespace}.{self.__name__}"


class _OpNamespace(types.ModuleType):
    """`torch.ops.<namespace>`: its operators as attributes (AttributeError with torch's message otherwise)."""

    def __init__(self, name: str, resolve: Callable):
        super().__init__("torch.ops." + name)
        self.name, self._resolve = name, resolve

    def __getattr__(self, op: str) -> OpOverloadPacket:
        if op.startswith("__"):
            raise AttributeError(op)
        packet = self._resolve(op)
        if packet is None:
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op}'")
        return packet

    def __repr__(self) -> str:
        return f"<module 'torch.ops.{self.name}' from 'torch.ops'>"


# --- custom ops (torch.library.custom_op, cpp_extension) ----------------------------------------------------
def _custom(namespace: str):
    def resolve(op: str):
        opdef = _library._OPS.get(f"{namespace}::{op}")
        if opdef is None:
            return None
        # (built per lookup: re-registering the name replaces the operator, as in torch's Library)
        return OpOverloadPacket(namespace, op, {"default": opdef}, opdef, {"default": f"{namespace}::{op}"
                                                                          f"{opdef._schema}"})
    return resolve


# --- aten: ATen operator -> funcgrad function ----------------------------------------------------------------
# op: overloads (those with tensor results and no out= argument, from torch 2.13's schemas); each is served by
# the adapter below for "op.overload", else for "op", else by torch.<op> / torch.nn.functional.<op> /
# Tensor.<op>, which take ATen's arguments in ATen's order.
_ATEN = """abs acos acosh asin asinh atan atanh bitwise_not ceil clone cos cosh detach erf exp expm1 floor isinf
isnan log log10 log1p log2 logical_not neg reciprocal relu rsqrt sigmoid sign sin sinh sqrt square t tan tanh trunc
relu_ zero_ alias lift_fresh_copy dot mv outer matmul maximum minimum atan2 logical_and logical_or logical_xor
cumsum cumprod gather index_select logsumexp tril triu flip permute reshape repeat roll unsqueeze expand expand_as
_unsafe_view amax amin argmax argmin chunk cat stack linear embedding hardsigmoid hardswish hardtanh leaky_relu silu
mish softplus gelu elu constant_pad_nd contiguous dropout native_dropout topk scatter_add _local_scalar_dense
layer_norm native_layer_norm group_norm batch_norm native_batch_norm _native_batch_norm_legit_no_training
convolution conv_transpose1d avg_pool1d avg_pool2d avg_pool3d adaptive_avg_pool1d adaptive_avg_pool2d
_adaptive_avg_pool2d adaptive_max_pool2d max_pool1d max_pool2d max_pool3d max_pool2d_with_indices _softmax
_log_softmax linalg_vector_norm empty_like ones_like zeros_like full_like rand randn ones zeros full scalar_tensor
new_empty new_full new_ones new_zeros sym_numel _to_copy copy_ clamp_min clamp_max
add:Tensor,Scalar add_:Tensor,Scalar sub:Tensor,Scalar sub_:Tensor,Scalar mul:Tensor,Scalar mul_:Tensor,Scalar
div:Tensor,Scalar,Tensor_mode,Scalar_mode div_:Tensor,Tensor_mode,Scalar,Scalar_mode rsub:Tensor,Scalar
pow:Tensor_Tensor,Tensor_Scalar,Scalar fmod:Tensor,Scalar remainder:Tensor,Scalar,Scalar_Tensor
floor_divide:default,Scalar eq:Tensor,Scalar ne:Tensor,Scalar lt:Tensor,Scalar le:Tensor,Scalar gt:Tensor,Scalar
ge:Tensor,Scalar bitwise_and:Tensor,Scalar,Scalar_Tensor bitwise_or:Tensor,Scalar,Scalar_Tensor
bitwise_xor:Tensor,Scalar,Scalar_Tensor clamp:default,Tensor masked_fill:Scalar,Tensor fill:Scalar,Tensor
fill_:Scalar,Tensor where:self,ScalarOther,ScalarSelf,Scalar,default all:default,dim,dims any:default,dim,dims
sum:dim_IntList,default mean:default,dim prod:default,dim_int max:other,default,dim min:other,default,dim
var:default,dim,correction std:default,dim,correction round:default,decimals sort:default,stable
split:Tensor,sizes,default split_with_sizes squeeze:default,dim,dims select:int slice:Tensor transpose:int
unbind:int view:default,dtype flatten:using_ints index:Tensor index_put:default scatter:value,src,reduce,value_reduce
mm:default bmm:default addmm:default baddbmm:default einsum:default conv1d:default,padding conv2d:default,padding
conv3d:default,padding conv_transpose2d:input softmax:int log_softmax:int arange:default,start,start_step
empty:memory_format sym_size:int,default sym_stride:int,default to:dtype,device,other
upsample_nearest2d:default,vec"""

_FACTORY_DROP = ("layout", "pin_memory", "memory_format", "non_blocking")


def _factory(fn):
    """A creation function given ATen's keywords: layout / pin_memory / memory_format have no funcgrad
    counterpart and are dropped."""
    def call(*args, **kwargs):
        return fn(*args, **{k: v for k, v in kwargs.items() if k not in _FACTORY_DROP})
    return call


def _stride_or_none(stride):
    return None if stride is None or (isinstance(stride, (list, tuple)) and not stride) else stride


def _pool(f, indices=False):
    def call(x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        return f(x, kernel_size, _stride_or_none(stride), padding, dilation, ceil_mode, return_indices=indices) \
            if indices else f(x, kernel_size, _stride_or_none(stride), padding, dilation, ceil_mode)
    return call


def _avg_pool(f):
    def call(x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True, *rest):
        return f(x, kernel_size, _stride_or_none(stride), padding, ceil_mode, count_include_pad, *rest)
    return call


def _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    n = weight.ndim - 2
    if transposed:
        return getattr(F, f"conv_transpose{n}d")(input, weight, bias, stride, padding, output_padding, groups,
                                                 dilation)
    return getattr(F, f"conv{n}d")(input, weight, bias, stride, padding, dilation, groups)


def _native_layer_norm(input, normalized_shape, weight, bias, eps):
    dims = tuple(range(-len(normalized_shape), 0))
    mean = input.mean(dims, keepdim=True)
    rstd = (input.var(dims, unbiased=False, keepdim=True) + eps).rsqrt()
    return F.layer_norm(input, normalized_shape, weight, bias, eps), mean, rstd


def _native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        return out, input.new_empty(0), input.new_empty(0)
    dims = (0,) + tuple(range(2, input.ndim))
    mean = input.detach().mean(dims)
    return out, mean, (input.detach().var(dims, unbiased=False) + eps).rsqrt()


def _native_dropout(input, p, train):
    if not train or p == 0:
        return input.clone(), _top.ones_like(input, dtype=_top.bool)
    mask = _top.empty_like(input).bernoulli_(1 - p).to(_top.bool)
    return input * mask * (1.0 / (1 - p)), mask


def _elu(x, alpha=1.0, scale=1.0, input_scale=1.0):
    if scale == 1 and input_scale == 1:
        return F.elu(x, alpha)
    return _top.where(x > 0, x * scale, (x * input_scale).expm1() * (alpha * scale))


def _index(x, indices):
    return x[tuple(slice(None) if i is None else i for i in indices)]


def _slice(x, dim=0, start=None, end=None, step=1):
    return x[(slice(None),) * (dim % x.ndim) + (slice(start, end, step),)]


def _upsample_nearest2d(input, output_size, scales_h=None, scales_w=None):
    if output_size is None:   # (the .vec overload: output_size, scale_factors)
        return F.interpolate(input, scale_factor=scales_h, mode="nearest")
    return F.interpolate(input, size=list(output_size), mode="nearest")


_ADAPT: dict = {
    "alias": lambda x: x.view_as(x), "lift_fresh_copy": lambda x: x.clone(),
    "clamp_min": lambda x, min: _top.clamp(x, min=min), "clamp_max": lambda x, max: _top.clamp(x, max=max),
    "expand": lambda x, size, *, implicit=False: x.expand(size), "expand_as": lambda x, o: x.expand_as(o),
    "view": lambda x, size: x.view(size), "_unsafe_view": lambda x, size: x.reshape(size),
    "repeat": lambda x, repeats: x.repeat(repeats), "roll": lambda x, shifts, dims=(): _top.roll(x, shifts, dims or None),
    "contiguous": lambda x, memory_format=None: x.contiguous(),
    "copy_": lambda x, src, non_blocking=False: x.copy_(src), "zero_": lambda x: x.zero_(),
    "fill_": lambda x, v: x.fill_(v), "add_": lambda x, o, alpha=1: x.add_(o, alpha=alpha),
    "sub_": lambda x, o, alpha=1: x.sub_(o, alpha=alpha), "mul_": lambda x, o: x.mul_(o),
    "div_": lambda x, o, rounding_mode=None: x.div_(o, rounding_mode=rounding_mode), "relu_": lambda x: x.relu_(),
    "embedding": lambda weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False:
        F.embedding(indices, weight, None if padding_idx == -1 else padding_idx, None, 2.0, scale_grad_by_freq,
                    sparse),
    "dropout": lambda x, p, train: F.dropout(x, p, train), "native_dropout": _native_dropout,
    "elu": _elu, "constant_pad_nd": lambda x, pad, value=0: F.pad(x, list(pad), value=value),
    "layer_norm": lambda x, shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True:
        F.layer_norm(x, shape, weight, bias, eps),
    "group_norm": lambda x, groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True:
        F.group_norm(x, groups, weight, bias, eps),
    "batch_norm": lambda x, weight, bias, mean, var, training, momentum, eps, cudnn_enabled=True:
        F.batch_norm(x, mean, var, weight, bias, training, momentum, eps),
    "native_layer_norm": _native_layer_norm, "native_batch_norm": _native_batch_norm,
    "_native_batch_norm_legit_no_training": lambda x, weight, bias, mean, var, momentum, eps:
        _native_batch_norm(x, weight, bias, mean, var, False, momentum, eps),
    "convolution": _convolution,
    "conv_transpose1d": F.conv_transpose1d, "conv_transpose2d": F.conv_transpose2d,
    "max_pool1d": _pool(F.max_pool1d), "max_pool2d": _pool(F.max_pool2d), "max_pool3d": _pool(F.max_pool3d),
    "max_pool2d_with_indices": _pool(F.max_pool2d, True),
    "avg_pool1d": _avg_pool(F.avg_pool1d), "avg_pool2d": _avg_pool(F.avg_pool2d), "avg_pool3d": _avg_pool(F.avg_pool3d),
    "_adaptive_avg_pool2d": F.adaptive_avg_pool2d,
    "adaptive_max_pool2d": lambda x, size: F.adaptive_max_pool2d(x, size, return_indices=True),
    "_softmax": lambda x, dim, half_to_float: _top.softmax(x, dim),
    "_log_softmax": lambda x, dim, half_to_float: _top.log_softmax(x, dim),
    "linalg_vector_norm": lambda x, ord=2, dim=None, keepdim=False, *, dtype=None:
        _top.linalg.vector_norm(x, ord, dim, keepdim, dtype=dtype),
    "index": _index, "slice": _slice,
    "index_put": lambda x, indices, values, accumulate=False: x.index_put(tuple(indices), values, accumulate),
    "einsum": lambda equation, tensors, *, path=None: _top.einsum(equation, *tensors),
    "sym_size": lambda x, dim=None: x.size() if dim is None else x.size(dim),
    "sym_stride": lambda x, dim=None: x.stride() if dim is None else x.stride(dim),
    "sym_numel": lambda x: x.numel(), "_local_scalar_dense": lambda x: x.item(),
    "_to_copy": lambda x, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
        memory_format=None: x.to(dtype=dtype if dtype is not None else x.dtype, copy=True),
    "to.dtype": lambda x, dtype, non_blocking=False, copy=False, memory_format=None: x.to(dtype, copy=copy),
    "to.device": lambda x, device, dtype, non_blocking=False, copy=False, memory_format=None:
        x.to(device, dtype, copy=copy),
    "to.other": lambda x, other, non_blocking=False, copy=False, memory_format=None: x.to(other, copy=copy),
    "upsample_nearest2d": _upsample_nearest2d,
    "upsample_nearest2d.vec": lambda x, output_size, scale_factors: _upsample_nearest2d(
        x, output_size, scale_factors),
}
for _name in ("empty_like", "ones_like", "zeros_like", "full_like", "rand", "randn", "ones", "zeros", "full",
              "scalar_tensor", "arange", "empty"):
    _ADAPT[_name] = _factory(getattr(_top, _name))
for _name in ("new_empty", "new_full", "new_ones", "new_zeros"):
    _ADAPT[_name] = _factory(getattr(_top.Tensor, _name))


def _aten_table() -> dict:
    table = {}
    for item in _ATEN.split():
        op, _, ovs = item.partition(":")
        table[op] = ovs.split(",") if ovs else ["default"]
    return table


_ATEN_OPS = _aten_table()


def _aten_fn(op: str) -> Callable:
    fn = _ADAPT.get(op)
    if fn is None:
        fn = getattr(_top, op, None) or getattr(F, op, None) or getattr(_top.Tensor, op)
    return fn


def _aten(op: str):
    overloads = _ATEN_OPS.get(op)
    if overloads is None:
        return None
    fn = _aten_fn(op)
    return OpOverloadPacket("aten", op, {ov: _ADAPT.get(f"{op}.{ov}", fn) for ov in overloads}, fn)


# --- quantized: torch's QuantizedCPU operators ----------------------------------------------------------------
def _q_binary(tensor_fn, scalar_fn):
    """quantized::add / mul (+ _relu): (qa, qb, scale, zero_point), or a quantized tensor and a number (the
    .Scalar / .Scalar2 overloads)."""
    def call(a, b, scale=None, zero_point=None):
        if isinstance(a, _Q.QTensor) and isinstance(b, _Q.QTensor):
            return tensor_fn(a, b, scale, zero_point)
        return scalar_fn(b, a) if isinstance(b, _Q.QTensor) else scalar_fn(a, b)
    return call


def _q_relu(fn):
    return lambda qa, b: fn(qa, b).relu()


def _q_pool(n):
    def call(qx, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        return _Q.q_max_pool(qx, n, kernel_size, _stride_or_none(stride), padding, dilation, ceil_mode)
    return call


def _q_batch_norm(relu=False):
    def call(qx, weight, bias, mean, var, eps, output_scale, output_zero_point):
        return _Q.q_batch_norm(qx, weight, bias, mean, var, eps, output_scale, output_zero_point, relu)
    return call


_QUANTIZED: dict = {
    "add": (_q_binary(_Q.q_add, _Q.q_add_scalar), ["default", "Scalar", "Scalar2"]),
    "add_relu": (_q_binary(_Q.q_add_relu, _q_relu(_Q.q_add_scalar)), ["default", "Scalar", "Scalar2"]),
    "mul": (_q_binary(_Q.q_mul, _Q.q_mul_scalar), ["default", "Scalar", "Scalar2"]),
    "mul_relu": (_q_binary(_Q.q_mul_relu, _q_relu(_Q.q_mul_scalar)), ["default", "Scalar", "Scalar2"]),
    "add_scalar": (_Q.q_add_scalar, ["default", "Tensor"]),
    "add_scalar_relu": (_q_relu(_Q.q_add_scalar), ["default", "Tensor"]),
    "mul_scalar": (_Q.q_mul_scalar, ["default", "Tensor"]),
    "mul_scalar_relu": (_q_relu(_Q.q_mul_scalar), ["default", "Tensor"]),
    "cat": (lambda qx, dim, scale=None, zero_point=None: _Q.q_cat(qx, dim, scale, zero_point), ["default"]),
    "cat_relu": (lambda qx, dim, scale=None, zero_point=None: _Q.q_cat(qx, dim, scale, zero_point).relu(),
                 ["default"]),
    "relu6": (_Q.q_relu6, ["default"]),
    "hardswish": (_Q.q_hardswish, ["default"]),
    "sigmoid": (_Q.q_sigmoid, ["default"]),
    "leaky_relu": (lambda qx, negative_slope, inplace, output_scale, output_zero_point: _Q.q_leaky_relu(
        qx, negative_slope, inplace, output_scale, output_zero_point), ["default"]),
    "batch_norm": (_q_batch_norm(), ["default"]), "batch_norm_relu": (_q_batch_norm(True), ["default"]),
    "max_pool1d": (_q_pool(1), ["default"]), "max_pool2d": (_q_pool(2), ["default"]),
}
_QUANTIZED.update(_QP.OPS)   # (packed-weight linear / conv and the row-wise embedding bags)
for _n in (1, 2, 3):
    _QUANTIZED[f"batch_norm{_n}d"] = (_q_batch_norm(), ["default"])
    _QUANTIZED[f"batch_norm{_n}d_relu"] = (_q_batch_norm(True), ["default"])


def _quantized(op: str):
    entry = _QUANTIZED.get(op)
    if entry is None:
        return None
    fn, overloads = entry
    return OpOverloadPacket("quantized", op, dict.fromkeys(overloads, fn), fn)


def _cached(resolve):
    cache: dict = {}

    def lookup(op):
        if op not in cache:
            cache[op] = resolve(op)
        return cache[op]
    return lookup


_NAMESPACES: dict = {"aten": _OpNamespace("aten", _cached(_aten)),
                     "quantized": _OpNamespace("quantized", _cached(_quantized))}

loaded_libraries: set = set()


def load_library(path: str) -> None:
    """Loads the shared library at `path` into the process (torch.ops.load_library): its static initialisers
    run (RTLD_GLOBAL, so later libraries see its symbols) and the path is added to `loaded_libraries`."""
    ctypes.CDLL(path, mode=getattr(ctypes, "RTLD_GLOBAL", 0))
    loaded_libraries.add(path)


def namespace(name: str) -> _OpNamespace:
    """`torch.ops.<name>`: the aten and quantized namespaces, or the one of custom ops registered under
    `name` (any name gives a namespace, as torch's; its ops resolve when looked up)."""
    if name.startswith("__"):
        raise AttributeError(name)
    ns = _NAMESPACES.get(name)
    if ns is None:
        ns = _NAMESPACES[name] = _OpNamespace(name, _custom(name))
    return ns


def attach(module: types.ModuleType) -> None:
    """Makes `module` (funcgrad.ops, JAX's segment reductions) torch.ops too: load_library,
    loaded_libraries, and every other attribute a namespace."""
    module.load_library = load_library
    module.loaded_libraries = loaded_libraries
    module.__getattr__ = namespace
