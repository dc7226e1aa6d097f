"""onnx.load's counterpart: an ONNX model as a funcgrad function.

`load(f)` reads a model (a path, a binary file, or an onnx.ModelProto) and returns a callable that evaluates its
graph node by node with funcgrad.numpy / lax operations, so the result is differentiable, jit-able and
vmap-able like any funcgrad function. It covers the operators funcgrad's exporter writes (so an exported model
round-trips) and the common ones of other exporters (Flatten, BatchNormalization, Softmax, LogSoftmax, Gelu,
ConstantOfShape, Tile, ...); any other operator raises an error naming it. Loops run as Python loops over their
(concrete) trip count; If becomes lax.cond when its condition is traced.
"""
from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..numpy import _softmax
from ..numpy._statistics import logsumexp as _logsumexp
from .._src.core.array import ArrayBase
from .._torch._tensor import Tensor
from ..nn.utils.stateless import _to_array, _to_tensor

OPS: dict[str, Callable] = {}


def _op(*names: str):
    def deco(fn):
        for n in names:
            OPS[n] = fn
        return fn
    return deco


def _concrete(x) -> np.ndarray:
    """An operand that sets a shape, an axis or a count: it must be known while tracing."""
    try:
        return np.asarray(x)
    except Exception as e:  # a tracer: the value is only known at run time
        raise ValueError("funcgrad.onnx.load: an operand that sets a shape, axes or a count depends on the "
                         "inputs' values; call the model eagerly (outside jit/vmap)") from e


# --- elementwise ----------------------------------------------------------------------------------------
_UNARY = {"Abs": jnp.abs, "Neg": jnp.negative, "Exp": jnp.exp, "Log": jnp.log, "Sqrt": jnp.sqrt,
          "Reciprocal": jnp.reciprocal, "Floor": jnp.floor, "Ceil": jnp.ceil, "Sign": jnp.sign, "Sin": jnp.sin,
          "Cos": jnp.cos, "Tan": jnp.tan, "Asin": jnp.arcsin, "Acos": jnp.arccos, "Atan": jnp.arctan,
          "Sinh": jnp.sinh, "Cosh": jnp.cosh, "Tanh": jnp.tanh, "Asinh": jnp.arcsinh, "Acosh": jnp.arccosh,
          "Atanh": jnp.arctanh, "Erf": lax.erf, "Not": jnp.logical_not, "IsNaN": jnp.isnan, "Round": jnp.round,
          "Sigmoid": lambda x: 1 / (1 + jnp.exp(-x)), "Relu": lambda x: jnp.maximum(x, jnp.zeros((), x.dtype)),
          "Identity": lambda x: x, "BitwiseNot": jnp.invert}
_BINARY = {"Add": jnp.add, "Sub": jnp.subtract, "Mul": jnp.multiply, "Pow": jnp.power, "Equal": jnp.equal,
           "Less": jnp.less, "LessOrEqual": jnp.less_equal, "Greater": jnp.greater,
           "GreaterOrEqual": jnp.greater_equal, "And": jnp.logical_and, "Or": jnp.logical_or,
           "Xor": jnp.logical_xor, "MatMul": jnp.matmul, "BitwiseAnd": jnp.bitwise_and,
           "BitwiseOr": jnp.bitwise_or, "BitwiseXor": jnp.bitwise_xor}


for _name, _fn in _UNARY.items():
    OPS[_name] = (lambda f: lambda ins, a: [f(ins[0])])(_fn)
for _name, _fn in _BINARY.items():
    OPS[_name] = (lambda f: lambda ins, a: [f(ins[0], ins[1])])(_fn)


@_op("Div")
def _div(ins, a):
    x, y = ins
    return [lax.div(x, y) if jnp.issubdtype(x.dtype, jnp.integer) else x / y]  # integers truncate, as ONNX


@_op("Mod")
def _mod(ins, a):
    return [jnp.fmod(*ins) if a.get("fmod", 0) else jnp.remainder(*ins)]


def _variadic_for(kind):
    def f(ins, a):
        out = ins[0]
        for x in ins[1:]:
            out = {"Max": jnp.maximum, "Min": jnp.minimum, "Sum": jnp.add, "Mean": jnp.add}[kind](out, x)
        return [out / len(ins) if kind == "Mean" else out]
    return f


for _k in ("Max", "Min", "Sum", "Mean"):
    OPS[_k] = _variadic_for(_k)


@_op("BitShift")
def _bit_shift(ins, a):
    return [(jnp.left_shift if a["direction"] == "LEFT" else jnp.right_shift)(*ins)]


@_op("IsInf")
def _isinf(ins, a):
    x = ins[0]
    pos, neg = a.get("detect_positive", 1), a.get("detect_negative", 1)
    return [(jnp.isposinf(x) if pos else False) | (jnp.isneginf(x) if neg else False)]


@_op("Where")
def _where(ins, a):
    return [jnp.where(*ins)]


@_op("Clip")
def _clip(ins, a):
    x = ins[0]
    lo = ins[1] if len(ins) > 1 and ins[1] is not None else a.get("min")
    hi = ins[2] if len(ins) > 2 and ins[2] is not None else a.get("max")
    return [jnp.clip(x, lo, hi)]


@_op("Gelu")
def _gelu(ins, a):
    x = ins[0]
    if a.get("approximate", "none") == "tanh":
        return [0.5 * x * (1 + jnp.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))]
    return [0.5 * x * (1 + lax.erf(x / np.sqrt(2)))]


@_op("LeakyRelu")
def _leaky_relu(ins, a):
    return [jnp.where(ins[0] >= 0, ins[0], ins[0] * a.get("alpha", 0.01))]


# --- linear algebra -------------------------------------------------------------------------------------
@_op("Gemm")
def _gemm(ins, a):
    x, w = ins[0], ins[1]
    x = x.T if a.get("transA", 0) else x
    w = w.T if a.get("transB", 0) else w
    out = a.get("alpha", 1.0) * (x @ w) if a.get("alpha", 1.0) != 1.0 else x @ w
    if len(ins) > 2 and ins[2] is not None:
        out = out + (a.get("beta", 1.0) * ins[2] if a.get("beta", 1.0) != 1.0 else ins[2])
    return [out]


@_op("Einsum")
def _einsum(ins, a):
    return [jnp.einsum(a["equation"], *ins)]


# --- shapes and indexing --------------------------------------------------------------------------------
@_op("Shape")
def _shape(ins, a):
    s = list(ins[0].shape)
    start, end = a.get("start", 0), a.get("end", len(s))
    return [jnp.asarray(np.asarray(s[start:end], np.int64))]


@_op("Reshape")
def _reshape(ins, a):
    x, shape = ins[0], [int(d) for d in _concrete(ins[1])]
    if not a.get("allowzero", 0):
        shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return [jnp.reshape(x, shape)]


@_op("Flatten")
def _flatten(ins, a):
    x = ins[0]
    axis = a.get("axis", 1) % (x.ndim or 1) if x.ndim else 0
    return [jnp.reshape(x, (int(np.prod(x.shape[:axis], dtype=np.int64)), -1))]


@_op("Transpose")
def _transpose(ins, a):
    return [jnp.transpose(ins[0], a.get("perm"))]


def _axes(ins, a, i=1):
    if len(ins) > i and ins[i] is not None:
        return [int(v) for v in _concrete(ins[i]).reshape(-1)]
    return list(a["axes"]) if "axes" in a else None


@_op("Squeeze")
def _squeeze(ins, a):
    axes = _axes(ins, a)
    return [jnp.squeeze(ins[0], None if axes is None else tuple(axes))]


@_op("Unsqueeze")
def _unsqueeze(ins, a):
    x = ins[0]
    axes = sorted(ax % (x.ndim + len(_axes(ins, a))) for ax in _axes(ins, a))
    for ax in axes:
        x = jnp.expand_dims(x, ax)
    return [x]


@_op("Expand")
def _expand(ins, a):
    x, shape = ins[0], tuple(int(d) for d in _concrete(ins[1]))
    return [jnp.broadcast_to(x, np.broadcast_shapes(x.shape, shape))]


@_op("Tile")
def _tile(ins, a):
    return [jnp.tile(ins[0], tuple(int(r) for r in _concrete(ins[1])))]


@_op("Concat")
def _concat(ins, a):
    return [jnp.concatenate(ins, axis=a["axis"])]


@_op("Split")
def _split(ins, a):
    x, axis = ins[0], a.get("axis", 0)
    if len(ins) > 1 and ins[1] is not None:
        sizes = [int(v) for v in _concrete(ins[1]).reshape(-1)]
    else:
        k = a.get("num_outputs")
        if k is None:
            raise NotImplementedError("funcgrad.onnx.load: Split without `split` sizes or num_outputs")
        n = x.shape[axis]
        sizes = [-(-n // k)] * (k - 1)
        sizes.append(n - sum(sizes))
    return jnp.split(x, np.cumsum(sizes)[:-1].tolist(), axis=axis)


@_op("CastLike")
def _cast_like(ins, a):
    return [ins[0].astype(ins[1].dtype)]


@_op("DFT")
def _dft(ins, a):
    """ONNX's DFT over real tensors with a trailing (real, imaginary) axis of 1 or 2: one axis, forward or
    inverse (scaled by 1/n), one-sided for real input."""
    x = ins[0]
    axis = int(_concrete(ins[2])) if len(ins) > 2 and ins[2] is not None else a.get("axis", 1)
    axis = axis % x.ndim
    n = int(_concrete(ins[1])) if len(ins) > 1 and ins[1] is not None else x.shape[axis]
    z = x[..., 0] if x.shape[-1] == 1 else lax.complex(x[..., 0], x[..., 1])
    if a.get("inverse", 0):
        out = jnp.fft.ifft(z, n=n, axis=axis)
    elif a.get("onesided", 0):
        out = jnp.fft.rfft(z, n=n, axis=axis)
    else:
        out = jnp.fft.fft(z, n=n, axis=axis)
    return [jnp.stack([jnp.real(out), jnp.imag(out)], axis=-1).astype(x.dtype)]


@_op("Slice")
def _slice(ins, a):
    x = ins[0]
    starts, ends = _concrete(ins[1]).reshape(-1), _concrete(ins[2]).reshape(-1)
    axes = _concrete(ins[3]).reshape(-1) if len(ins) > 3 and ins[3] is not None else range(len(starts))
    steps = _concrete(ins[4]).reshape(-1) if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
    idx = [slice(None)] * x.ndim
    for s, e, ax, st in zip(starts, ends, axes, steps):
        n = x.shape[int(ax)]
        s, e, st = int(s), int(e), int(st)
        if st > 0:  # ONNX clamps to [0, n] (negative indices count from the end first)
            s = min(max(s + n if s < 0 else s, 0), n)
            e = min(max(e + n if e < 0 else e, 0), n)
        else:       # ... and to [-1, n - 1] for a negative step (-1: before the first element)
            s = min(max(s + n if s < 0 else s, -1), n - 1)
            e = min(max(e + n if e < 0 else e, -1), n - 1)
            e = None if e < 0 else e
        idx[int(ax)] = slice(s, e, st)
    return [x[tuple(idx)]]


@_op("Pad")
def _pad(ins, a):
    x = ins[0]
    pads = [int(p) for p in _concrete(ins[1]).reshape(-1)] if len(ins) > 1 else list(a["pads"])
    value = ins[2] if len(ins) > 2 and ins[2] is not None else jnp.zeros((), x.dtype)
    n = x.ndim
    axes = _axes(ins, a, 3) or list(range(n))
    cfg = [(0, 0, 0)] * n
    for k, ax in enumerate(axes):
        cfg[ax % n] = (pads[k], pads[k + len(axes)], 0)
    if a.get("mode", "constant") not in ("constant", b"constant"):
        raise NotImplementedError(f"funcgrad.onnx.load: Pad mode {a.get('mode')!r} is not supported")
    return [lax.pad(x, jnp.asarray(value, x.dtype), cfg)]


@_op("Gather")
def _gather(ins, a):
    x, idx = ins
    axis = a.get("axis", 0) % x.ndim
    idx = jnp.where(idx < 0, idx + x.shape[axis], idx)
    return [jnp.take(x, idx, axis=axis)]


@_op("GatherElements")
def _gather_elements(ins, a):
    x, idx = ins
    axis = a.get("axis", 0) % x.ndim
    return [jnp.take_along_axis(x, jnp.where(idx < 0, idx + x.shape[axis], idx), axis=axis)]


@_op("GatherND")
def _gather_nd(ins, a):
    if a.get("batch_dims", 0):
        raise NotImplementedError("funcgrad.onnx.load: GatherND with batch_dims is not supported")
    x, idx = ins
    k = idx.shape[-1]
    return [x[tuple(idx[..., j] for j in range(k))]]


@_op("ScatterND")
def _scatter_nd(ins, a):
    x, idx, upd = ins
    k = idx.shape[-1]
    at = x.at[tuple(idx[..., j] for j in range(k))]
    red = a.get("reduction", "none")
    red = red.decode() if isinstance(red, bytes) else red
    return [{"none": at.set, "add": at.add, "mul": at.multiply, "max": at.max, "min": at.min}[red](upd)]


@_op("Range")
def _range(ins, a):
    start, limit, delta = (_concrete(v) for v in ins)
    return [jnp.asarray(np.arange(start, limit, delta, dtype=start.dtype))]


@_op("ConstantOfShape")
def _constant_of_shape(ins, a):
    value = a.get("value", np.zeros(1, np.float32))
    return [jnp.full(tuple(int(d) for d in _concrete(ins[0])), value.reshape(()), dtype=value.dtype)]


# --- reductions, scans, sorting -------------------------------------------------------------------------
def _reduction(fn):
    def f(ins, a):
        axes = _axes(ins, a)
        if axes is None and a.get("noop_with_empty_axes", 0):
            return [ins[0]]
        return [fn(ins[0], axis=None if axes is None else tuple(axes), keepdims=bool(a.get("keepdims", 1)))]
    return f


for _name, _fn in {"ReduceSum": jnp.sum, "ReduceMax": jnp.max, "ReduceMin": jnp.min, "ReduceProd": jnp.prod,
                   "ReduceMean": jnp.mean, "ReduceL2": lambda x, axis, keepdims: jnp.sqrt(
                       jnp.sum(x * x, axis=axis, keepdims=keepdims)),
                   "ReduceLogSumExp": _logsumexp}.items():   # (-inf where every term is: not max - max = NaN)
    OPS[_name] = _reduction(_fn)


def _arg_for(fn):
    def f(ins, a):
        x, axis = ins[0], a.get("axis", 0)
        if a.get("select_last_index", 0):
            n = x.shape[axis]
            out = n - 1 - fn(jnp.flip(x, axis), axis=axis)
        else:
            out = fn(x, axis=axis)
        out = out.astype(jnp.int64) if out.dtype != np.int64 else out
        return [jnp.expand_dims(out, axis) if a.get("keepdims", 1) else out]
    return f


OPS["ArgMax"], OPS["ArgMin"] = _arg_for(jnp.argmax), _arg_for(jnp.argmin)


@_op("CumSum")
def _cumsum(ins, a):
    x, axis = ins[0], int(_concrete(ins[1]))
    if a.get("reverse", 0):
        x = jnp.flip(x, axis)
    out = jnp.cumsum(x, axis=axis)
    if a.get("exclusive", 0):
        out = out - x
    return [jnp.flip(out, axis) if a.get("reverse", 0) else out]


@_op("TopK")
def _topk(ins, a):
    x, k = ins[0], int(_concrete(ins[1]).reshape(-1)[0])
    axis = a.get("axis", -1) % x.ndim
    xt = jnp.moveaxis(x, axis, -1)
    if a.get("largest", 1):
        values, order = lax.top_k(xt, k)
    else:  # the k smallest, ties in index order (a stable ascending sort)
        order = jnp.argsort(xt, axis=-1, stable=True)[..., :k]
        values = jnp.take_along_axis(xt, order, axis=-1)
    return [jnp.moveaxis(values, -1, axis), jnp.moveaxis(order.astype(jnp.int64), -1, axis)]


def _softmax_for(log):
    fn = _softmax.log_softmax if log else _softmax.softmax

    def f(ins, a):
        return [fn(ins[0], axis=a.get("axis", -1))]
    return f


OPS["Softmax"], OPS["LogSoftmax"] = _softmax_for(False), _softmax_for(True)


# --- convolution, pooling, normalisation ----------------------------------------------------------------
def _pads(a, n):
    if a.get("auto_pad", "NOTSET") not in ("NOTSET", b"NOTSET"):
        raise NotImplementedError(f"funcgrad.onnx.load: auto_pad={a['auto_pad']!r} is not supported")
    p = list(a.get("pads", [0] * (2 * n)))
    return [(p[i], p[i + n]) for i in range(n)]


@_op("Conv")
def _conv(ins, a):
    x, w = ins[0], ins[1]
    n = x.ndim - 2
    out = lax.conv_general_dilated(x, w, tuple(a.get("strides", [1] * n)), _pads(a, n),
                                   rhs_dilation=tuple(a.get("dilations", [1] * n)),
                                   feature_group_count=a.get("group", 1))
    if len(ins) > 2 and ins[2] is not None:
        out = out + jnp.reshape(ins[2], (1, -1) + (1,) * n)
    return [out]


def _pool(kind):
    def f(ins, a):
        x = ins[0]
        n = x.ndim - 2
        if a.get("ceil_mode", 0):
            raise NotImplementedError("funcgrad.onnx.load: pooling with ceil_mode=1 is not supported")
        win = (1, 1) + tuple(a["kernel_shape"])
        strides = (1, 1) + tuple(a.get("strides", [1] * n))
        pads = [(0, 0), (0, 0)] + _pads(a, n)
        dil = (1, 1) + tuple(a.get("dilations", [1] * n))
        if kind == "max":
            init = jnp.asarray(-np.inf if jnp.issubdtype(x.dtype, jnp.floating) else np.iinfo(x.dtype).min, x.dtype)
            return [lax.reduce_window(x, init, lax.max, win, strides, pads, window_dilation=dil)]
        total = lax.reduce_window(x, jnp.zeros((), x.dtype), lax.add, win, strides, pads, window_dilation=dil)
        if a.get("count_include_pad", 0):
            return [total / np.prod(a["kernel_shape"])]
        ones = jnp.ones(x.shape[2:], x.dtype)
        count = lax.reduce_window(ones, jnp.zeros((), x.dtype), lax.add, win[2:], strides[2:], pads[2:],
                                  window_dilation=dil[2:])
        return [total / count]
    return f


OPS["MaxPool"], OPS["AveragePool"] = _pool("max"), _pool("avg")


@_op("GlobalAveragePool")
def _global_avg_pool(ins, a):
    return [jnp.mean(ins[0], axis=tuple(range(2, ins[0].ndim)), keepdims=True)]


@_op("BatchNormalization")
def _batch_norm(ins, a):
    x, scale, bias, mean, var = ins[:5]
    shape = (1, -1) + (1,) * (x.ndim - 2)
    inv = scale / jnp.sqrt(var + a.get("epsilon", 1e-5))
    return [(x - jnp.reshape(mean, shape)) * jnp.reshape(inv, shape) + jnp.reshape(bias, shape)]


@_op("LayerNormalization")
def _layer_norm(ins, a):
    x, scale = ins[0], ins[1]
    axes = tuple(range(a.get("axis", -1) % x.ndim, x.ndim))
    mu = jnp.mean(x, axis=axes, keepdims=True)
    var = jnp.mean(jnp.square(x - mu), axis=axes, keepdims=True)
    out = (x - mu) / jnp.sqrt(var + a.get("epsilon", 1e-5)) * scale
    return [out + ins[2] if len(ins) > 2 and ins[2] is not None else out]


# --- the interpreter ------------------------------------------------------------------------------------
class _Graph:
    """Evaluates one ONNX graph (the model's, or an If branch / Loop body) over an outer environment."""

    def __init__(self, onnx, graph):
        self.onnx, self.graph = onnx, graph
        self.consts = {t.name: jnp.asarray(onnx.numpy_helper.to_array(t)) for t in graph.initializer}

    def run(self, inputs: dict, outer: dict | None = None) -> list:
        env = dict(outer or {})
        env.update(self.consts)
        env.update(inputs)
        for node in self.graph.node:
            attrs = {a.name: self.onnx.helper.get_attribute_value(a) for a in node.attribute}
            attrs = {k: v.decode() if isinstance(v, bytes) else v for k, v in attrs.items()}
            ins = [env[n] if n else None for n in node.input]
            outs = self._node(node, ins, attrs, env)
            for name, v in zip(node.output, outs):
                if name:
                    env[name] = v
        return [env[o.name] for o in self.graph.output]

    def _node(self, node, ins, attrs, env):
        if node.domain not in ("", "ai.onnx"):
            raise NotImplementedError(f"funcgrad.onnx.load: operator {node.domain}.{node.op_type} (a custom "
                                      "domain) is not supported")
        if node.op_type == "Constant":
            return [jnp.asarray(next(v for v in attrs.values()))]
        if node.op_type == "Cast":
            return [ins[0].astype(self.onnx.helper.tensor_dtype_to_np_dtype(attrs["to"]))]
        if node.op_type == "If":
            then_g, else_g = _Graph(self.onnx, attrs["then_branch"]), _Graph(self.onnx, attrs["else_branch"])
            cond = ins[0]
            try:
                taken = bool(np.asarray(cond).reshape(()))
            except Exception:  # a traced condition
                return lax.cond(jnp.reshape(cond, ()), lambda: tuple(then_g.run({}, env)),
                                lambda: tuple(else_g.run({}, env)))
            return (then_g if taken else else_g).run({}, env)
        if node.op_type == "Loop":
            return self._loop(attrs["body"], ins, env)
        fn = OPS.get(node.op_type)
        if fn is None:
            raise NotImplementedError(f"funcgrad.onnx.load: ONNX operator {node.op_type!r} (node "
                                      f"{node.name or node.output[0]!r}) is not supported")
        return fn(ins, attrs)

    def _loop(self, body, ins, env):
        body_g = _Graph(self.onnx, body)
        trip = int(_concrete(ins[0])) if ins[0] is not None else None
        cond = bool(_concrete(ins[1])) if len(ins) > 1 and ins[1] is not None else True
        carried = list(ins[2:])
        names = [i.name for i in body.input]
        n_carried = len(carried)
        scans: list = []
        i = 0
        while cond and (trip is None or i < trip):
            outs = body_g.run(dict(zip(names, [jnp.asarray(np.int64(i)), jnp.asarray(cond)] + carried)), env)
            cond = bool(_concrete(outs[0]))
            carried = outs[1:1 + n_carried]
            scans.append(outs[1 + n_carried:])
            i += 1
        n_scan = len(body.output) - 1 - n_carried
        stacked = [jnp.stack([s[k] for s in scans]) if scans else jnp.zeros((0,)) for k in range(n_scan)]
        return carried + stacked


class OnnxFunction:
    """A loaded ONNX model: call it with one array per graph input (positionally, or by input name); it returns
    the outputs (one value, or a tuple when the graph has several). Tensors in give Tensors out."""

    def __init__(self, model):
        import onnx
        self.model = model
        self._graph = _Graph(onnx, model.graph)
        init = {t.name for t in model.graph.initializer}
        self.input_names = [i.name for i in model.graph.input if i.name not in init]
        self.output_names = [o.name for o in model.graph.output]

    def __call__(self, *args, **kwargs) -> Any:
        if len(args) + len(kwargs) != len(self.input_names):
            raise TypeError(f"funcgrad.onnx.load: the model takes {len(self.input_names)} inputs "
                            f"{self.input_names}, got {len(args)} positional and {sorted(kwargs)} by name")
        values = dict(zip(self.input_names, args))
        values.update(kwargs)
        tensors = any(isinstance(v, Tensor) for v in values.values())
        feeds = {k: (_to_array(v) if isinstance(v, Tensor) else v if isinstance(v, ArrayBase) else jnp.asarray(v))
                 for k, v in values.items()}
        outs = self._graph.run(feeds)
        if tensors:
            outs = [_to_tensor(o) for o in outs]
        return outs[0] if len(outs) == 1 else tuple(outs)

    def __repr__(self) -> str:
        return f"OnnxFunction(inputs={self.input_names}, outputs={self.output_names})"


def load(f) -> OnnxFunction:
    """An ONNX model (a path, a binary file object or an onnx.ModelProto) as a funcgrad function."""
    try:
        import onnx
    except ImportError as e:  # pragma: no cover - the extra is missing
        raise ImportError("funcgrad.onnx.load needs the onnx package: pip install 'funcgrad[onnx]'") from e
    if isinstance(f, onnx.ModelProto):
        model = f
    elif isinstance(f, (str, os.PathLike)):
        model = onnx.load(os.fspath(f))
    else:
        model = onnx.load_model_from_string(f.read())
    return OnnxFunction(model)
