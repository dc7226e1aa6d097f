"""torch.onnx: `export` writes an ONNX model of an nn.Module or of a function of Arrays; `load` reads one back as
a funcgrad function (_load.py).

The program is traced to a jaxpr (funcgrad's own tracing: `make_jaxpr` over `functional_call` for a
Module) and each equation is translated by its primitive's ONNX rule (`_graph.RULES`, or the op name on
the card, `Primitive.onnx`). onnx is needed only when exporting (the `onnx` extra).
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from .._src.core import trace as _trace
from .._src.core.array import Array, ArrayBase, to_array
from .._src.interpreters.jit import make_jaxpr
from .._torch._tensor import Tensor
from ..nn.modules.module import Module
from ..nn.utils.stateless import _to_array, _to_tensor, functional_call
from ..tree_util import tree_flatten, tree_leaves, tree_unflatten
from . import (rules_complex, rules_control, rules_conv, rules_elementwise, rules_reduction, rules_shape,  # noqa: F401,E501 (register)
               rules_sorting)
from ._graph import RULES, Exporter, UnsupportedError, pair_jaxprs  # noqa: F401 (RULES: the registry)
from ._load import OnnxFunction, load  # noqa: F401

__all__ = ["export", "load", "OnnxFunction", "is_in_onnx_export", "OperatorExportTypes", "TrainingMode",
           "UnsupportedError"]

DEFAULT_OPSET = 18
MIN_OPSET = 13


class _State:
    exporting = False


def is_in_onnx_export() -> bool:
    """Whether an export is tracing the model now (torch.onnx.is_in_onnx_export)."""
    return _State.exporting


class OperatorExportTypes:
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


class TrainingMode:
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


def _leaf_array(x) -> Array:
    if isinstance(x, Tensor):
        return to_array(np.asarray(_to_array(x.detach())))
    if isinstance(x, ArrayBase):
        return x
    return to_array(np.asarray(x))


def _dynamic_spec(dynamic_axes, names) -> dict:
    """{onnx name: {axis: symbol name}} from torch's dynamic_axes (dicts or lists of axes)."""
    out = {}
    for name, axes in (dynamic_axes or {}).items():
        if name not in names:
            raise ValueError(f"funcgrad.onnx.export: dynamic_axes names {name!r}, which is not an input or "
                             f"output name; the names are {sorted(names)}")
        if isinstance(axes, dict):
            out[name] = {int(a): str(s) for a, s in axes.items()}
        else:
            out[name] = {int(a): f"{name}_dynamic_axes_{i + 1}" for i, a in enumerate(axes)}
    return out


def _resize(arr: np.ndarray, axes_sizes: dict) -> np.ndarray:
    """arr with each axis in axes_sizes cycled to its new size (values stay in the input's domain)."""
    for axis, size in axes_sizes.items():
        arr = np.take(arr, np.arange(size) % arr.shape[axis], axis=axis)
    return arr


def _resized(arrays, names, dyn, base: int) -> list:
    """The example arrays with each dynamic axis grown by base + 2k (k: the axis's symbol's number), so that
    different symbols get different sizes."""
    symbols: dict = {}
    out = []
    for name, a in zip(names, arrays):
        sizes = {}
        for axis, sym in dyn.get(name, {}).items():
            k = symbols.setdefault(sym, len(symbols))
            sizes[axis] = a.shape[axis] + base + 2 * k
        out.append(to_array(_resize(np.asarray(a), sizes)) if sizes else a)
    return out


def export(model, args=(), f=None, input_names=None, output_names=None, dynamic_axes=None,
           opset_version: int | None = None, do_constant_folding: bool = True, export_params: bool = True,
           verbose: bool = False, training=TrainingMode.EVAL, keep_initializers_as_inputs=None,
           operator_export_type=None, **kwargs) -> Any:
    """Export `model` (an nn.Module, in eval mode unless `training` says otherwise, or a function of
    Arrays/Tensors) applied to `args` as an ONNX model; write it to `f` (a path or a binary file) when
    given, and return the onnx.ModelProto.

    Parameters and buffers become initializers named by their state_dict keys (graph inputs of those names
    with export_params=False). `dynamic_axes` ({input or output name: {axis: symbol}} or {name: [axes]})
    makes those axes symbolic: the model is traced a second time at other sizes and every shape that
    follows them is computed at run time. Raises UnsupportedError naming the primitive, the line of the
    caller's code that used it and the opset when a primitive has no ONNX rule. do_constant_folding is
    accepted for torch's signature (funcgrad's jaxprs hold no foldable work on constants beyond what the
    trace already evaluated)."""
    try:
        import onnx
    except ImportError as e:  # pragma: no cover - the extra is missing
        raise ImportError("funcgrad.onnx.export needs the onnx package: pip install 'funcgrad[onnx]'") from e
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if not MIN_OPSET <= opset <= onnx.defs.onnx_opset_version():
        raise ValueError(f"funcgrad.onnx.export: opset_version {opset} is not supported; use "
                         f"{MIN_OPSET} to {onnx.defs.onnx_opset_version()}")
    if kwargs.pop("dynamo", False):
        raise NotImplementedError("funcgrad.onnx.export: dynamo=True is torch's other exporter; funcgrad "
                                  "exports from its own traces (leave dynamo unset)")
    if kwargs:
        raise TypeError(f"funcgrad.onnx.export got unexpected keyword arguments {sorted(kwargs)}")
    if not isinstance(args, tuple):
        args = (args,)
    call_kwargs = {}
    if args and isinstance(args[-1], dict):
        args, call_kwargs = args[:-1], args[-1]
    leaves, in_tree = tree_flatten(args)
    tensors_in = any(isinstance(x, Tensor) for x in leaves)
    arrays = [_leaf_array(x) for x in leaves]
    is_module = isinstance(model, Module)
    keys, state = [], []
    if is_module:
        for k, v in model.state_dict(keep_vars=False).items():
            keys.append(k)
            state.append(_leaf_array(v))
    n = len(keys)

    def traced(*flat):
        inputs = tree_unflatten(in_tree, list(flat[n:]))
        if is_module:
            out = functional_call(model, dict(zip(keys, flat[:n])), tuple(inputs), call_kwargs)
        else:
            if tensors_in:
                inputs = [_to_tensor(x) for x in inputs]
            out = model(*inputs, **call_kwargs)
        return tuple(_to_array(o) for o in tree_leaves(out))

    names = list(input_names or [])
    names += [f"input_{i}" if len(arrays) > 1 else "input" for i in range(len(names), len(arrays))]
    names = names[:len(arrays)]
    was_training = model.training if is_module else None
    _State.exporting = True
    sources = _trace.source_lines = {}  # each equation's user line, for the errors of the rules
    try:
        if is_module and training != TrainingMode.PRESERVE:
            model.train(training == TrainingMode.TRAINING)
        jaxpr = make_jaxpr(traced)(*state, *arrays)
        out_names = list(output_names or [])
        out_names += [f"output_{i}" if len(jaxpr.outvars) > 1 else "output"
                      for i in range(len(out_names), len(jaxpr.outvars))]
        dyn = _dynamic_spec(dynamic_axes, set(names) | set(out_names))
        twins: dict = {}
        if any(name in dyn for name in names):
            jaxpr2 = make_jaxpr(traced)(*state, *_resized(arrays, names, dyn, 3))
            small = any(a.shape[axis] <= 1 for name, a in zip(names, arrays) for axis in dyn.get(name, {}))
            try:
                if small:  # a size-1 axis broadcasts: its trace is not the program at other sizes
                    raise ValueError("a dynamic axis of size 0 or 1")
                pair_jaxprs(jaxpr, jaxpr2, twins)
            except ValueError:
                # Retrace at sizes above 1 (the example's sizes may also make a size-derived constant, a
                # mean's n, equal to a literal, so that the trace shares one constant for both).
                twins.clear()
                jaxpr = make_jaxpr(traced)(*state, *_resized(arrays, names, dyn, 5))
                pair_jaxprs(jaxpr, jaxpr2, twins)
    finally:
        _State.exporting = False
        _trace.source_lines = None
        if is_module:
            model.train(was_training)
    proto = _build(onnx, jaxpr, twins, keys, state, names, out_names, dyn, opset, export_params, sources)
    if verbose:
        print(onnx.helper.printable_graph(proto.graph))
    if f is not None:
        if isinstance(f, (str, os.PathLike)):
            onnx.save(proto, os.fspath(f))
        else:
            f.write(proto.SerializeToString())
    return proto


def _build(onnx, jaxpr, twins, keys, state, names, out_names, dyn, opset, export_params, sources):
    ctx = Exporter(onnx, opset, twins, sources)
    helper = onnx.helper
    n = len(keys)
    used = {v for e in jaxpr.eqns for v in e.invars} | set(jaxpr.outvars)
    params = [(k, v, a) for k, v, a in zip(keys, jaxpr.invars[:n], state) if v in used]
    inputs = jaxpr.invars[n:]
    graph_inputs = []
    for name, v in zip(names, inputs):
        graph_inputs.append(ctx.value_info(name, v, dyn.get(name)))
    if export_params:
        for k, v, a in params:
            ctx.initializers.append(onnx.numpy_helper.from_array(np.asarray(a), k))
    else:
        graph_inputs += [ctx.value_info(k, v) for k, v, _ in params]
    env_names = [k if v in used else "" for k, v in zip(keys, jaxpr.invars[:n])] + names
    outs = ctx.translate(jaxpr, env_names)
    nodes = ctx.scope.nodes
    for name, o in zip(out_names, outs):  # Identity gives every output its own name
        nodes.append(helper.make_node("Identity", [o], [name], name=ctx.fresh("n")))
    out_infos = [ctx.value_info(name, v, dyn.get(name)) for name, v in zip(out_names, jaxpr.outvars)]
    graph = helper.make_graph(nodes, "funcgrad", graph_inputs, out_infos, initializer=ctx.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="funcgrad")
    model.ir_version = min(model.ir_version, 10 if opset <= 21 else 11)
    return model

_export = export
