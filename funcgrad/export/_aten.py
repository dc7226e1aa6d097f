"""The ATen operators of torch's .pt2 format that funcgrad writes and reads. The operators, their schemas (as torch
2.13 prints them) and the funcgrad function of each are funcgrad's one ATen table (funcgrad/_torch/_aten.py, which
torch.ops.aten serves too); this module maps the other way: `to_aten` turns a call a funcgrad-exported graph
recorded (a torch function, an operator, a Tensor method) into an operator and its arguments by schema name.
`SCHEMAS` maps "aten.op.overload" to its parsed schema, `ATEN_FNS` to the function a loaded program calls."""
from __future__ import annotations

import functools
import inspect
import operator
from typing import Any, Callable

from .._torch import _aten as _table
from .._torch._aten import Schema
from .._torch._tensor import Tensor
from ..fx.node import torch_path

__all__ = ["Schema", "to_aten", "UnsupportedOp"]  # (and SCHEMAS, ATEN_FNS: module attributes built on first use)


class UnsupportedOp(RuntimeError):
    """A call that torch's .pt2 schema (as funcgrad knows it) cannot express, or an operator funcgrad cannot run."""


@functools.lru_cache(maxsize=None)
def _lazy(name: str) -> dict:
    if name == "SCHEMAS":
        return {q: _table.schema(q) for q in _table.qualnames()}
    return {q: _table.overload_fn(q) for q in _lazy("SCHEMAS")}


def __getattr__(name: str):
    """SCHEMAS and ATEN_FNS, built on first use (parsing the table's 500-odd schemas is not paid on import)."""
    if name in ("SCHEMAS", "ATEN_FNS"):
        return _lazy(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
        schema = _table.schema(aten)
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
    cands = _CANDIDATES.get(name) or (("rsub.Scalar",) if name == "rsub" else
                                      tuple(f"{name}.{ov}" for ov in _table.table().get(name, ())))
    # first an overload whose Tensor arguments are all graph values (gt.Scalar for x > 0), then one taking a number
    # for a Tensor as torch's own export writes (mul.Tensor for x * 2.0)
    for strict in (True, False):
        for cand in cands:
            op, _, ov = cand.partition(".")
            if (ov or "default") not in _table.table().get(op, {}):
                continue
            schema = _table.schema(f"aten.{op}.{ov or 'default'}")
            fit = _fit(schema, named, renames, is_node, strict)
            if fit is not None:
                return schema, _emit(schema, fit)
    raise UnsupportedOp(f"torch.export.save: the graph calls {name} ({getattr(target, '__qualname__', target)}) "
                        f"with arguments {sorted(named)}, which no ATen operator funcgrad writes to torch's .pt2 "
                        f"format expresses (the operators of funcgrad's ATen table are listed in docs/aten-coverage.md)")


def _fit(schema: Schema, named: dict, renames: dict, is_node, strict: bool = False) -> dict | None:
    """named's arguments under the schema's names, or None when they do not fit it (strict: nor when a Tensor
    argument is a number)."""
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
        elif typ == "Scalar" and is_node(out[n]) or typ == "Tensor" and (n == "exponent" or strict) \
                and not is_node(out[n]):
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
