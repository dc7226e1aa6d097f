"""torch.ops: operators by namespace, as torch's `torch.ops.<namespace>.<op>[.<overload>]`.

- `torch.ops.mylib.foo` is the operator `torch.library.custom_op("mylib::foo", ...)` registered (and each
  `torch.utils.cpp_extension` function, "<extension>::<function>"), with its `.default` overload.
- `torch.ops.aten.<op>.<overload>` are the operators of funcgrad's one ATen table (_aten.py, shared with
  torch.export's .pt2 reader and writer; docs/aten-coverage.md lists them): arithmetic, reductions, views,
  indexing, creation, nn's convolutions, pooling, normalisation, activations, losses and dropout, as torch.export /
  torch.fx graphs and the tutorials call them, with ATen's argument order, names and multi-output forms
  (native_layer_norm, native_batch_norm, max_pool2d_with_indices, ...).
- `torch.ops.profiler._record_function_enter` / `_record_function_enter_new` / `_record_function_exit` open
  and close an autograd.profiler.record_function region (what fx tracers emit to keep profiler ranges).
- `torch.ops.quantized.<op>` are torch's QuantizedCPU kernels (funcgrad/_torch/_quantized.py): add, add_relu,
  mul, cat, relu6, hardswish, sigmoid, batch_norm2d, max_pool2d, ...; and the packed-weight ones
  (_quantized_packed.py): linear / conv{1,2,3}d / conv_transpose{1,2,3}d with their _prepack / _unpack,
  linear_dynamic, linear_dynamic_fp16; and the embedding bags (_quantized_embedding.py:
  embedding_bag_{byte,4bit,2bit}_prepack / _unpack / _rowwise_offsets, embedding_bag_4bit, ...)

funcgrad.ops is one module for both faces (funcgrad/_claims.py): JAX's segment_* functions are its own
attributes, every other name is looked up here (`attach`).
"""
from __future__ import annotations

import ctypes
import types
from typing import Callable, Optional

from . import _aten as _table
from . import _quantized as _Q, _quantized_embedding as _QE, _quantized_packed as _QP
from . import library as _library
from ..autograd.profiler import record_function as _record_function
from . import overrides as _overrides
from .overrides import handle_torch_function, has_torch_function

__all__ = ["OpOverload", "OpOverloadPacket", "attach"]


def _relevant(args: tuple, kwargs: dict) -> list:
    """The arguments an operator dispatches `__torch_function__` on: each argument, and the items of a list or
    tuple argument (aten::cat's tensors), as torch's operators."""
    out: list = []
    for a in (*args, *kwargs.values()):
        if a.__class__ is list or a.__class__ is tuple:
            out.extend(a)
        else:
            out.append(a)
    return out


class OpOverload:
    """One overload of an operator (`torch.ops.aten.add.Tensor`): call it as the function."""

    def __init__(self, packet: "OpOverloadPacket", overload: str, fn: Callable, schema: Optional[str] = None):
        self.overloadpacket, self._overloadname, self._fn = packet, overload, fn
        self.__name__ = f"{packet.__name__}.{overload}"
        self._schema = schema
        self.__doc__ = getattr(fn, "__doc__", None)

    def __call__(self, *args, **kwargs):
        if self.overloadpacket._dispatches and not _overrides._STATE.disabled:
            relevant = _relevant(args, kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(self, relevant, *args, **kwargs)
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
    all (funcgrad's functions take every overload's arguments); `.Tensor`, `.default`, ... are the overloads.
    A call (of the packet or an overload) with an argument whose type defines `__torch_function__` (an fx
    Proxy, a Tensor subclass) goes to that instead, with the packet / overload as the function, as torch's
    (not inside a `__torch_function__` that disabled dispatch, and not for the quantized namespace, whose
    QTensor arguments carry funcgrad's quantized kernels rather than a user's override)."""

    def __init__(self, namespace: str, name: str, overloads: dict, default: Callable, schemas=None):
        self._namespace, self.__name__ = namespace, name
        self._qualified_op_name = f"{namespace}::{name}"
        self._table, self._fn, self._schemas, self._cache = overloads, default, schemas or {}, {}
        self._dispatches = namespace != "quantized"
        self.__doc__ = getattr(default, "__doc__", None)

    def __call__(self, *args, **kwargs):
        if self._dispatches and not _overrides._STATE.disabled:
            relevant = _relevant(args, kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(self, relevant, *args, **kwargs)
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


# --- aten: the operators of the ATen table (_aten.py), each overload called as torch calls it ----------------
def _aten(op: str):
    overloads = _table.table().get(op)
    if overloads is None:
        return None
    return OpOverloadPacket("aten", op, {ov: _table.overload_fn(f"aten.{op}.{ov}") for ov in overloads},
                            _table.impl(op, next(iter(overloads))), overloads)


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
        return _Q.q_max_pool(qx, n, kernel_size, _table._stride_or_none(stride), padding, dilation, ceil_mode)
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
_QUANTIZED.update(_QP.OPS)   # (packed-weight linear / conv)
_QUANTIZED.update(_QE.OPS)   # (the row-wise embedding bags)
for _n in (1, 2, 3):
    _QUANTIZED[f"batch_norm{_n}d"] = (_q_batch_norm(), ["default"])
    _QUANTIZED[f"batch_norm{_n}d_relu"] = (_q_batch_norm(True), ["default"])


def _quantized(op: str):
    entry = _QUANTIZED.get(op)
    if entry is None:
        return None
    fn, overloads = entry
    return OpOverloadPacket("quantized", op, dict.fromkeys(overloads, fn), fn)


# --- profiler: the ops record_function's regions are made of (as torch.fx programs call them) -----------------
def _record_function_enter(name: str, args: Optional[str] = None) -> "_record_function":
    """Opens a record_function region named `name` and returns its handle, for _record_function_exit. (torch's
    handle is an opaque uint8 Tensor, or a _RecordFunction object for the _new op; funcgrad's is the
    record_function itself.)"""
    if not isinstance(name, str) or not (args is None or isinstance(args, str)):
        raise RuntimeError("profiler::_record_function_enter() expected (str name, str? args=None), got "
                           f"({type(name).__name__}, {type(args).__name__})")
    handle = _record_function(name, args)
    handle._begin()
    return handle


def _record_function_exit(handle: "_record_function") -> None:
    """Closes the region `handle` (from _record_function_enter / _record_function_enter_new): open profiles
    record it."""
    if not isinstance(handle, _record_function):
        raise RuntimeError("profiler::_record_function_exit() expected the handle returned by "
                           "torch.ops.profiler._record_function_enter / _record_function_enter_new, got "
                           f"{type(handle).__name__}")
    handle._end()


_PROFILER: dict = {
    "_record_function_enter": (_record_function_enter, {"default": "(str name, str? args=None) -> Tensor"}),
    "_record_function_enter_new": (_record_function_enter, {
        "default": "(str name, str? args=None) -> __torch__.torch.classes.profiler._RecordFunction"}),
    "_record_function_exit": (_record_function_exit, {
        "default": "(Tensor handle) -> ()",
        "_RecordFunction": "(__torch__.torch.classes.profiler._RecordFunction record) -> ()"}),
}


def _profiler(op: str):
    entry = _PROFILER.get(op)
    if entry is None:
        return None
    fn, schemas = entry
    return OpOverloadPacket("profiler", op, dict.fromkeys(schemas, fn), fn,
                            {ov: f"profiler::{op}{'' if ov == 'default' else '.' + ov}{sig}"
                             for ov, sig in schemas.items()})


def _cached(resolve):
    cache: dict = {}

    def lookup(op):
        if op not in cache:
            cache[op] = resolve(op)
        return cache[op]
    return lookup


_NAMESPACES: dict = {"aten": _OpNamespace("aten", _cached(_aten)),
                     "quantized": _OpNamespace("quantized", _cached(_quantized)),
                     "profiler": _OpNamespace("profiler", _cached(_profiler))}

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
