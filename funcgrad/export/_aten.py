"""The ATen operators of torch's .pt2 format that funcgrad writes and reads: each operator's schema (as torch 2.13
prints it, so argument names, order, kinds and defaults are torch's), the funcgrad function that runs it when a
torch-written program is loaded, and the funcgrad calls (torch functions, operators, Tensor methods) a
funcgrad-exported graph records that it stands for when saving.

A schema line is parsed once into (name, overload, arguments); `to_aten` turns a recorded funcgrad call into an
operator and its arguments by schema name, `ATEN_FNS` maps an operator to the funcgrad function of its schema."""
from __future__ import annotations

import ast
import inspect
import operator
from typing import Any, Callable

from .. import _torch as _T
from .._torch._tensor import Tensor
from ..fx.node import torch_path
from ..nn import functional as F

__all__ = ["Schema", "SCHEMAS", "ATEN_FNS", "to_aten", "UnsupportedOp"]

_SCHEMA_LINES = """
aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor
aten::conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], SymInt[1] padding=[0], SymInt[1] dilation=[1], SymInt groups=1) -> Tensor
aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], SymInt[2] dilation=[1, 1], SymInt groups=1) -> Tensor
aten::gelu(Tensor self, *, str approximate="none") -> Tensor
aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
aten::mul.Tensor(Tensor self, Tensor other) -> Tensor
aten::div.Tensor(Tensor self, Tensor other) -> Tensor
aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor
aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor
aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
aten::matmul(Tensor self, Tensor other) -> Tensor
aten::mm(Tensor self, Tensor mat2) -> Tensor
aten::bmm(Tensor self, Tensor mat2) -> Tensor
aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
aten::t(Tensor(a) self) -> Tensor(a)
aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)
aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)
aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)
aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)
aten::flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)
aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)
aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)
aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)
aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)
aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor
aten::cat(Tensor[] tensors, int dim=0) -> Tensor
aten::stack(Tensor[] tensors, int dim=0) -> Tensor
aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
aten::log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor
aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor
aten::dropout(Tensor input, float p, bool train) -> Tensor
aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor
aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor
aten::adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor
aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor
aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor
aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor
aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor
aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor
aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor
aten::gt.Scalar(Tensor self, Scalar other) -> Tensor
aten::gt.Tensor(Tensor self, Tensor other) -> Tensor
aten::ge.Scalar(Tensor self, Scalar other) -> Tensor
aten::ge.Tensor(Tensor self, Tensor other) -> Tensor
aten::lt.Scalar(Tensor self, Scalar other) -> Tensor
aten::lt.Tensor(Tensor self, Tensor other) -> Tensor
aten::le.Scalar(Tensor self, Scalar other) -> Tensor
aten::le.Tensor(Tensor self, Tensor other) -> Tensor
aten::eq.Scalar(Tensor self, Scalar other) -> Tensor
aten::eq.Tensor(Tensor self, Tensor other) -> Tensor
aten::ne.Scalar(Tensor self, Scalar other) -> Tensor
aten::ne.Tensor(Tensor self, Tensor other) -> Tensor
"""


class UnsupportedOp(RuntimeError):
    """A call that torch's .pt2 schema (as funcgrad knows it) cannot express, or an operator funcgrad cannot run."""


class Schema:
    """One operator's schema: `qualname` ('aten.linear.default'), arguments as (type, name, has_default,
    default, kwarg_only)."""

    def __init__(self, line: str) -> None:
        head, _, rest = line.partition("(")
        self.name, _, ov = head[len("aten::"):].partition(".")
        self.overload = ov or "default"
        self.qualname = f"aten.{self.name}.{self.overload}"
        body = rest[:rest.rindex(") ->")]
        self.args: list = []
        kwarg_only = False
        for part in _split_args(body):
            if part == "*":
                kwarg_only = True
                continue
            decl, eq, default = part.partition("=")
            typ, name = decl.rsplit(" ", 1)
            self.args.append((typ.split("(")[0], name, bool(eq), _default(default) if eq else None, kwarg_only))

    def names(self) -> list:
        return [a[1] for a in self.args]


def _split_args(body: str) -> list:
    out, depth, cur = [], 0, ""
    for ch in body:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + ([cur.strip()] if cur.strip() else [])


def _default(text: str):
    text = text.strip()
    if text in ("None", "True", "False") or text[:1] in "-0123456789[\"'":
        return ast.literal_eval(text.replace("0.,", "0.0,") if text != "0." else "0.0")
    return text


_UNARY = ("relu", "silu", "sigmoid", "tanh", "exp", "log", "neg", "abs", "sqrt", "rsqrt", "erf", "sin", "cos")
SCHEMAS: dict = {}
for _line in _SCHEMA_LINES.strip().splitlines() + [f"aten::{n}(Tensor self) -> Tensor" for n in _UNARY]:
    _s = Schema(_line)
    SCHEMAS[_s.qualname] = _s


# --- loading: the funcgrad function of each operator (called with the schema's arguments by name) --------------

def _m(name: str) -> Callable:
    return lambda self, *a, **k: getattr(self, name)(*a, **k)


def _pool_stride(stride):
    return None if stride is None or list(stride) == [] else stride


_IMPLS: dict = {
    "aten.linear.default": F.linear, "aten.conv1d.default": F.conv1d, "aten.conv2d.default": F.conv2d,
    "aten.gelu.default": F.gelu, "aten.silu.default": F.silu,
    "aten.rsub.Scalar": lambda self, other, alpha=1: other - alpha * self if alpha != 1 else other - self,
    "aten.view.default": lambda self, size: self.view(list(size)),
    "aten.reshape.default": lambda self, shape: self.reshape(list(shape)),
    "aten.expand.default": lambda self, size, implicit=False: self.expand(list(size)),
    "aten.permute.default": lambda self, dims: self.permute(list(dims)),
    "aten.contiguous.default": lambda self, memory_format=0: self.contiguous(),
    "aten.clone.default": lambda self, memory_format=None: self.clone(),
    "aten.t.default": _m("t"),
    "aten.layer_norm.default": lambda input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True:
        F.layer_norm(input, list(normalized_shape), weight, bias, eps),
    "aten.batch_norm.default": lambda input, weight, bias, running_mean, running_var, training, momentum, eps,
        cudnn_enabled: F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps),
    "aten.dropout.default": lambda input, p, train: F.dropout(input, p, train),
    "aten.max_pool2d.default": lambda self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False:
        F.max_pool2d(self, kernel_size, _pool_stride(stride), padding, dilation, ceil_mode=ceil_mode),
    "aten.avg_pool2d.default": lambda self, kernel_size, stride=(), padding=0, ceil_mode=False,
        count_include_pad=True, divisor_override=None: F.avg_pool2d(self, kernel_size, _pool_stride(stride), padding,
                                                                    ceil_mode, count_include_pad, divisor_override),
    "aten.adaptive_avg_pool2d.default": F.adaptive_avg_pool2d,
    "aten.amax.default": lambda self, dim=(), keepdim=False: _T.amax(self, list(dim) or list(range(self.ndim)),
                                                                     keepdim),
    "aten.hardtanh.default": F.hardtanh, "aten.leaky_relu.default": F.leaky_relu,
    "aten.embedding.default": lambda weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False:
        F.embedding(indices, weight, None if padding_idx == -1 else padding_idx, None, 2.0, scale_grad_by_freq, sparse),
    "aten.scaled_dot_product_attention.default": F.scaled_dot_product_attention,
    "aten.mean.dim": lambda self, dim, keepdim=False, dtype=None: _T.mean(self, dim, keepdim, dtype=dtype),
    "aten.sum.dim_IntList": lambda self, dim, keepdim=False, dtype=None: _T.sum(self, dim, keepdim, dtype=dtype),
}


def _aten_fn(schema: Schema) -> Callable:
    """A function of the operator's arguments (positional in schema order or by name) that runs it in funcgrad;
    its `__aten__` is the operator, so a loaded program saves back to the same operators."""
    impl = _IMPLS.get(schema.qualname) or getattr(_T, schema.name)
    names = schema.names()
    kwonly = {a[1] for a in schema.args if a[4]}

    def run(*args, **kwargs):
        pos = list(args) + [kwargs.pop(n) for n in names[len(args):] if n in kwargs and n not in kwonly]
        return impl(*pos, **kwargs)
    run.__name__ = run.__qualname__ = schema.qualname.replace(".", "_")
    run.__module__ = __name__
    run.__aten__ = schema.qualname
    return run


ATEN_FNS: dict = {q: _aten_fn(s) for q, s in SCHEMAS.items()}


# --- saving: a recorded funcgrad call as an operator and its arguments by schema name -------------------------

_OPERATORS = {operator.add: "add", operator.sub: "sub", operator.mul: "mul", operator.truediv: "div",
              operator.matmul: "matmul", operator.neg: "neg", operator.pow: "pow", operator.abs: "abs"}
# canonical funcgrad name -> the operators it may be, tried in order (the first whose arguments fit)
_CANDIDATES = {"sum": ("sum.dim_IntList", "sum.default"), "mean": ("mean.dim", "mean.default"),
               "pow": ("pow.Tensor_Tensor", "pow.Tensor_Scalar"), "flatten": ("flatten.using_ints",),
               "squeeze": ("squeeze.dim",), "transpose": ("transpose.int",), "swapaxes": ("transpose.int",),
               "softmax": ("softmax.int",), "log_softmax": ("log_softmax.int",), "add": ("add.Tensor",),
               "sub": ("sub.Tensor",), "mul": ("mul.Tensor",), "div": ("div.Tensor",), "multiply": ("mul.Tensor",),
               "subtract": ("sub.Tensor",), "divide": ("div.Tensor",), "true_divide": ("div.Tensor",),
               **{c: (f"{c}.Scalar", f"{c}.Tensor") for c in ("gt", "ge", "lt", "le", "eq", "ne")}}
# funcgrad argument names that differ from the schema's, per canonical name (beyond input -> self)
_RENAMES = {"view": {"shape": "size", "size": "size"}, "expand": {"sizes": "size", "shape": "size"},
            "dropout": {"training": "train"}, "embedding": {"input": "indices"}, "softmax": {"_stacklevel": None},
            "log_softmax": {"_stacklevel": None}, "batch_norm": {}, "layer_norm": {},
            "pow": {"other": "exponent"}}
_NEUTRAL = {"inplace": False, "_stacklevel": None, "return_indices": False, "out": None}
_FILLED = {"cudnn_enabled": True}  # required schema arguments funcgrad's calls have no counterpart of


def _canonical(target) -> tuple:
    """(canonical name, the signature to bind the call with) of a recorded call target."""
    if target in _OPERATORS:
        return _OPERATORS[target], None
    method = getattr(target, "__fx_method__", None)
    if method is not None:
        fn = getattr(Tensor, method, None)
        return method, fn
    path = torch_path(target)
    if path is not None:
        return path.rsplit(".", 1)[1], target
    return getattr(target, "__name__", repr(target)), None


def _bind(name: str, sig_fn, args: tuple, kwargs: dict) -> dict:
    """The call's arguments by funcgrad's names."""
    if sig_fn is None:
        return dict(zip(("input", "other"), args), **kwargs)
    try:
        sig = inspect.signature(sig_fn)
        bound = sig.bind(*args, **kwargs)
    except (TypeError, ValueError) as e:
        raise UnsupportedOp(f"torch.export.save: cannot bind the call of {name} to its signature: {e}") from None
    out = dict(bound.arguments)
    for pname, p in sig.parameters.items():
        if p.kind is p.VAR_POSITIONAL and pname in out:
            v = out[pname]
            out[pname] = list(v[0]) if len(v) == 1 and isinstance(v[0], (tuple, list)) else list(v)
        elif p.kind is p.VAR_KEYWORD and pname in out:
            out.update(out.pop(pname))
    return out


def to_aten(target, args: tuple, kwargs: dict, is_node: Callable[[Any], bool]) -> tuple:
    """(Schema, [(name, schema type, value, kind)]) for a recorded call: kind 1 positional, 2 keyword (torch's
    ArgumentKind). Raises UnsupportedOp naming the call when no known operator fits."""
    aten = getattr(target, "__aten__", None)
    if aten is not None:
        schema = SCHEMAS[aten]
        named = dict(zip(schema.names(), args), **kwargs)
        return schema, _emit(schema, named)
    name, sig_fn = _canonical(target)
    named = _bind(name, sig_fn, args, kwargs)
    if "self" in named and "input" not in named:
        named["input"] = named.pop("self")
    if name in ("add", "mul", "sub") and len(args) >= 2 and not is_node(args[0]) and is_node(args[1]):
        named["input"], named["other"] = args[1], args[0]   # 2 + x, 2 * x as x + 2; 2 - x as rsub(x, 2)
        if name == "sub":
            name = "rsub"
    renames = _RENAMES.get(name, {})
    cands = _CANDIDATES.get(name) or (("rsub.Scalar",) if name == "rsub" else (name,))
    for cand in cands:
        schema = SCHEMAS.get("aten." + cand if "." in cand else f"aten.{cand}.default")
        if schema is None:
            continue
        fit = _fit(schema, named, renames, is_node)
        if fit is not None:
            return schema, _emit(schema, fit)
    raise UnsupportedOp(f"torch.export.save: the graph calls {name} ({getattr(target, '__qualname__', target)}) "
                        f"with arguments {sorted(named)}, which no ATen operator funcgrad writes to torch's .pt2 "
                        f"format expresses; supported operators: {sorted({s.name for s in SCHEMAS.values()})}")


def _fit(schema: Schema, named: dict, renames: dict, is_node) -> dict | None:
    """named's arguments under the schema's names, or None when they do not fit it."""
    names = schema.names()
    out = {}
    for k, v in named.items():
        k2 = renames.get(k, k)
        if k2 == "input" and "input" not in names:
            k2 = "self" if "self" in names else k2
        if k2 in names:
            out[k2] = v
        elif k2 is None or _NEUTRAL.get(k, ...) == v or v is None:
            continue
        else:
            return None
    for typ, n, has_default, default, _ in schema.args:
        if n not in out or out[n] is None and has_default and default is None:
            out.pop(n, None)
            if not has_default:
                if n in _FILLED:
                    out[n] = _FILLED[n]
                    continue
                if typ.endswith("?") and n in named:
                    out[n] = None
                    continue
                return None
        elif typ == "Scalar" and is_node(out[n]) or typ == "Tensor" and n == "exponent" and not is_node(out[n]):
            return None
    return out


def _emit(schema: Schema, named: dict) -> list:
    """[(name, schema type, value, kind)]: positional arguments up to the last one given (earlier defaults filled in), then
    the keyword-only ones given."""
    pos = [a for a in schema.args if not a[4]]
    last = max((i for i, a in enumerate(pos) if a[1] in named), default=-1)
    out = []
    for typ, n, _, default, _ in pos[:last + 1]:
        out.append((n, typ, named[n] if n in named else default, 1))
    out.extend((n, typ, named[n], 2) for typ, n, _, _, kw in schema.args if kw and n in named)
    return out
