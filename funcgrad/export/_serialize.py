"""torch.export.save / load in torch's .pt2 format (torch 2.13's archive: `archive_format` "pt2",
`models/model.json` the serialized program of schema version 8.20 with ATen operators, raw tensor payloads under
`data/weights` and `data/constants` described by their `*_config.json`, `data/sample_inputs/model.pt` a torch.save
pickle), so that torch.export.load reads what funcgrad writes and funcgrad reads what torch writes, for programs
of the ATen operators listed in _aten.py.

Dynamic sizes are written as torch writes them: `range_constraints` per symbol (`s0`, `s1`, ...) and per derived
Dim (`2*s0 + 1`), tensor sizes and strides as sympy expressions of the symbols (`as_expr`, with the example value as
hint; FloorDiv, Mod and Max(1, .) as torch's, see _expr.py and _sizes.py), `aten.sym_size.int` nodes and int
arithmetic (`_operator.floordiv`, ...) with SymInt outputs, SymInt arguments (`as_sym_int`, `as_sym_ints`), and
the guards of related input sizes (`guards_code`). torch.cond is the higher-order operator
`torch.ops.higher_order.cond`, its two branches serialized inline as graphs (`as_graph`) and its outputs the
getitem nodes that read them. Anything else (another higher-order operator, a size funcgrad finds no expression
for, non-tensor inputs or outputs) raises UnsupportedOp naming it."""
from __future__ import annotations

import io
import json
import operator
import os
import re
import zipfile

import numpy as np

from .._torch import serialization as _serialization
from .._torch._tensor import Tensor
from ..fx.graph import Graph
from ..fx.graph_module import GraphModule
from ..fx.node import Node, torch_namespace
from ..nn.parameter import Parameter
from . import _aten, _trace
from ._aten import UnsupportedOp
from ._expr import Poly, max1, parse_affine, smul
from ._sizes import annotate, program_sizes, symbols_of
from .dynamic_shapes import int_oo
from .exported_program import ExportedProgram, range_constraints_of
from .graph_signature import (ExportGraphSignature, InputKind, InputSpec, OutputKind, OutputSpec,
                              TensorArgument)

__all__ = ["save", "load"]


def _tensors_bytes(obj) -> bytes:
    buf = io.BytesIO()
    _serialization.save(obj, buf)
    return buf.getvalue()


_SCHEMA_VERSION = {"major": 8, "minor": 20}
_DTYPES = {"uint8": 1, "int8": 2, "int16": 3, "int32": 4, "int64": 5, "float16": 6, "float32": 7, "float64": 8,
           "complex64": 10, "complex128": 11, "bool": 12, "bfloat16": 13, "uint16": 28, "uint32": 34, "uint64": 35}
_CODES = {v: k for k, v in _DTYPES.items()}


def _dtype_code(dtype) -> int:
    name = str(dtype).rsplit(".", 1)[-1]
    if name not in _DTYPES:
        raise UnsupportedOp(f"torch.export.save: dtype {dtype} has no ScalarType in torch's .pt2 schema")
    return _DTYPES[name]


def _code_dtype(code: int):
    if code not in _CODES:
        raise UnsupportedOp(f"torch.export.load: ScalarType {code} is not a dtype funcgrad supports")
    return getattr(torch_namespace(), _CODES[code])


def _spec_to_json(spec) -> str:
    def node(s):
        if s == "*":
            return {"type": None, "context": None, "children_spec": []}
        kind, items = s
        if kind == "dict":
            return {"type": "builtins.dict", "context": json.dumps([k for k, _ in items]),
                    "children_spec": [node(v) for _, v in items]}
        return {"type": f"builtins.{kind}", "context": "null", "children_spec": [node(x) for x in items]}
    return json.dumps([1, node(spec)])


def _spec_from_json(text: str):
    version, root = json.loads(text)

    def node(d):
        if d["type"] is None:
            return "*"
        kind = d["type"].rsplit(".", 1)[-1]
        kids = [node(c) for c in d["children_spec"]]
        if kind == "dict":
            return ("dict", tuple(zip(json.loads(d["context"]), kids)))
        if kind not in ("tuple", "list"):
            raise UnsupportedOp(f"torch.export.load: inputs/outputs of pytree type {d['type']} are not supported")
        return (kind, tuple(kids))
    return node(root)


# --- writing ------------------------------------------------------------------------------------------------

_SYM_OPS = frozenset({"add", "sub", "mul", "floordiv", "mod", "neg", "pos", "pow", "truediv", "eq", "ne", "le", "ge",
                      "lt", "gt", "and_", "or_"})
_SYM_BOOL = {"gt": "StrictGreaterThan", "ge": "GreaterThan", "lt": "StrictLessThan", "le": "LessThan",
             "eq": "Equality", "ne": "Unequality"}
_COND = "torch.ops.higher_order.cond"
_SYM_SIZE = "torch.ops.aten.sym_size.int"


def _is_sym_op(target) -> bool:
    name = getattr(target, "__name__", "")
    return name in _SYM_OPS and getattr(operator, name, None) is target


def _strides(dims: list) -> list:
    """The contiguous strides of sizes dims (ints or Polys), as torch's make_contiguous_strides_for: each stride the
    product of max(1, size) of the later sizes."""
    out, acc = [], Poly.of(1)
    for n in reversed(dims):
        out.append(acc)
        acc = smul(acc, max1(n))
    return out[::-1]


def _tensor_meta(t: Tensor, requires_grad: bool | None = None, dims: list | None = None, hints=None) -> dict:
    """torch's TensorMeta of t; dims gives its sizes as ints or Polys of the dynamic sizes (hints: their values)."""
    dims = list(t.shape) if dims is None else dims

    def size(n):
        if not isinstance(n, Poly) or n.constant() is not None:
            return {"as_int": int(n if not isinstance(n, Poly) else n.constant())}
        return {"as_expr": {"expr_str": n.srepr(), "hint": {"as_int": n.value(hints)}}}
    return {"dtype": _dtype_code(t.dtype), "sizes": [size(n) for n in dims],
            "requires_grad": bool(t.requires_grad if requires_grad is None else requires_grad),
            "device": {"type": "cpu", "index": None}, "strides": [size(n) for n in _strides(dims)],
            "storage_offset": {"as_int": 0}, "layout": 7}


class _Writer:
    """The serialized graphs of one program: `vals` every node's value at the example sizes (branches
    included), `polys` its sizes as Polys of the dynamic sizes, `hints` the symbols' example values."""

    def __init__(self, vals: dict, polys: dict, hints: dict) -> None:
        self.vals, self.polys, self.hints = vals, polys, hints

    def kind(self, node: Node) -> str:
        v = self.vals.get(node)
        if isinstance(v, Tensor):
            return "tensor"
        if isinstance(v, bool):
            return "sym_bool"
        if isinstance(v, int):
            return "sym_int"
        return "other"

    def dims(self, node: Node) -> list:
        """node's value's sizes (or its int value) as ints and Polys; UnsupportedOp where one is not polynomial."""
        polys = self.polys.get(node) or []
        for i, p in enumerate(polys):
            if p is None:
                v = self.vals[node]
                what = (f"size {i} ({v.shape[i]}) of {node.name}" if isinstance(v, Tensor)
                        else f"the int {node.name} = {v}")
                raise UnsupportedOp(f"torch.export.save: {what} is not an expression funcgrad finds of the dynamic "
                                    f"sizes {sorted(self.hints)} (a polynomial of degree <= 2, a floor division or "
                                    "remainder of one, a product of an operand's sizes, a pooling's or strided "
                                    "convolution's output size), so it cannot be written in torch's .pt2 format")
        return polys

    def sym_int(self, node: Node) -> dict:
        p, = self.dims(node)
        if p.constant() is not None:
            return {"as_int": p.constant()}
        return {"as_expr": {"expr_str": p.srepr(), "hint": {"as_int": p.value(self.hints)}}}

    def sym_expr(self, a) -> str:
        if isinstance(a, Node):
            p, = self.dims(a)
            return p.srepr()
        return Poly.of(int(a)).srepr()

    def ref(self, node: Node) -> dict:
        kind = self.kind(node)
        if kind == "tensor":
            return {"as_tensor": {"name": node.name}}
        if kind in ("sym_int", "sym_bool"):
            return {f"as_{kind}": {"as_name": node.name}}
        raise UnsupportedOp(f"torch.export.save: {node.name} ({type(self.vals.get(node)).__name__}) is not a tensor, "
                            "SymInt or SymBool, which torch's .pt2 format cannot pass")

    def arg(self, v, typ: str) -> dict:
        """One argument as torch's serialized Argument union, by its schema type."""
        if v is None:
            return {"as_none": True}
        if isinstance(v, Node):
            return self.ref(v)
        if typ.startswith("Tensor[]"):
            return {"as_tensors": [{"name": x.name} for x in v]}
        if typ.startswith("ScalarType"):
            return {"as_scalar_type": _dtype_code(v)}
        if typ.startswith("MemoryFormat"):
            return {"as_memory_format": 0}
        if "[" in typ:  # int[], int[2], SymInt[1]? ...: a list (an int repeated to the fixed length)
            if isinstance(v, (tuple, list)):
                if any(isinstance(x, Node) for x in v):
                    return {"as_sym_ints": [{"as_name": x.name} if isinstance(x, Node) else {"as_int": int(x)}
                                            for x in v]}
                return {"as_ints": [int(x) for x in v]}
            n = typ[typ.index("[") + 1:typ.index("]")]
            return {"as_ints": [int(v)] * (int(n) if n else 1)}
        if isinstance(v, bool):
            return {"as_bool": v}
        if isinstance(v, int):
            return {"as_int": v}
        if isinstance(v, float):
            return {"as_float": v}
        if isinstance(v, str):
            return {"as_string": v}
        raise UnsupportedOp(f"torch.export.save: cannot write the argument {v!r} (schema type {typ}) in torch's "
                            ".pt2 format")

    def graph(self, gm: GraphModule, params: frozenset = frozenset()) -> dict:
        """The serialized Graph of gm (params: placeholders that are parameters, requires_grad in the meta)."""
        g = {"inputs": [], "outputs": [], "nodes": [], "tensor_values": {}, "sym_int_values": {},
             "sym_bool_values": {}, "is_single_tensor_return": False, "custom_obj_values": {},
             "sym_float_values": {}}
        tv = g["tensor_values"]
        is_tensor = lambda a: isinstance(a, Node) and self.kind(a) == "tensor"  # noqa: E731
        for n in gm.graph.nodes:
            kind = self.kind(n)
            if n.op == "placeholder":
                if kind != "tensor":
                    raise UnsupportedOp(f"torch.export.save: the non-tensor input {n.name}={self.vals.get(n)!r} is "
                                        "not supported in torch's .pt2 format")
                tv[n.name] = _tensor_meta(self.vals[n], n.name in params, self.dims(n), self.hints)
                g["inputs"].append({"as_tensor": {"name": n.name}})
            elif n.op == "get_attr":
                continue  # a torch.cond branch, serialized inline in the cond node
            elif n.op == "output":
                outs = n.args[0] if isinstance(n.args[0], (tuple, list)) else (n.args[0],)
                if not all(isinstance(o, Node) for o in outs):
                    raise UnsupportedOp("torch.export.save: constant outputs "
                                        f"{[o for o in outs if not isinstance(o, Node)]} are not supported in "
                                        "torch's .pt2 format")
                g["outputs"] = [self.ref(o) for o in outs]
            elif n.op != "call_function":
                raise UnsupportedOp(f"torch.export.save: graph node {n.name} ({n.op}) cannot be written in torch's "
                                    ".pt2 format")
            elif n.target is operator.getitem and isinstance(n.args[0], Node) and n.args[0].target is _trace.cond:
                continue  # an output of its cond node
            elif n.target is _trace.cond:
                g["nodes"].append(self.cond(gm, n, tv))
            elif n.target is _trace.sym_size_int or _is_sym_op(n.target) and kind in ("sym_int", "sym_bool"):
                if n.target is _trace.sym_size_int:
                    target, names = _SYM_SIZE, ("self", "dim")
                else:
                    target, names = f"_operator.{n.target.__name__}", ("a", "b")
                inputs = [{"name": name, "arg": self.ref(a) if isinstance(a, Node) else self.arg(a, "int"),
                           "kind": 1} for name, a in zip(names, n.args)]
                if kind == "sym_int":
                    g["sym_int_values"][n.name] = self.sym_int(n)
                else:
                    op = _SYM_BOOL.get(n.target.__name__)
                    if op is None or not all(isinstance(a, int) or self.kind(a) == "sym_int" for a in n.args):
                        raise UnsupportedOp(f"torch.export.save: the SymBool {n.name} = {n.target.__name__}"
                                            f"{n.args} is not a comparison of sizes")
                    expr = f"{op}({', '.join(self.sym_expr(a) for a in n.args)})"
                    g["sym_bool_values"][n.name] = {"as_expr": {"expr_str": expr, "hint": None}}
                g["nodes"].append(self.node(n, target, inputs, [self.ref(n)]))
            else:
                schema, named = _aten.to_aten(n.target, n.args, n.kwargs, is_tensor)
                if kind != "tensor":
                    raise UnsupportedOp(f"torch.export.save: {schema.qualname} ({n.name}) does not return one tensor")
                tv[n.name] = _tensor_meta(self.vals[n], False, self.dims(n), self.hints)
                inputs = [{"name": name, "arg": self.arg(v, typ), "kind": kind}
                          for name, typ, v, kind in named]
                g["nodes"].append(self.node(n, "torch.ops." + schema.qualname, inputs, [self.ref(n)]))
        return g

    @staticmethod
    def node(n: Node, target: str, inputs: list, outputs: list, hop_single: bool | None = None) -> dict:
        return {"target": target, "inputs": inputs, "outputs": outputs, "metadata": {},
                "is_hop_single_tensor_return": hop_single, "name": n.name}

    def cond(self, gm: GraphModule, n: Node, tv: dict) -> dict:
        """torch.ops.higher_order.cond(pred, true_graph, false_graph, operands): the branches inline, the outputs
        the getitem nodes that read the result (`<name>_unused_<i>` for one nothing reads)."""
        pred, true_g, false_g, operands = n.args
        inputs = [{"name": "", "arg": self.ref(pred), "kind": 1}]
        for getter in (true_g, false_g):
            inputs.append({"name": "", "arg": {"as_graph": {"name": getter.target,
                                                            "graph": self.graph(getattr(gm, getter.target))}},
                           "kind": 1})
        inputs.append({"name": "", "arg": {"as_tensors": [{"name": o.name} for o in operands]}, "kind": 1})
        readers = {u.args[1]: u for u in n.users if u.target is operator.getitem}
        outputs = []
        for i, v in enumerate(self.vals[n]):
            user = readers.get(i)
            name = user.name if user is not None else f"{n.name}_unused_{i}"
            if not isinstance(v, Tensor):
                raise UnsupportedOp(f"torch.export.save: torch.cond output {i} of {n.name} is not a tensor")
            tv[name] = _tensor_meta(v, False, self.dims(user) if user is not None else None, self.hints)
            outputs.append({"as_tensor": {"name": name}})
        return self.node(n, _COND, inputs, outputs, False)


def _torch_program(ep: ExportedProgram) -> dict:
    """The serialized_exported_program JSON of ep (raises UnsupportedOp naming what torch's format cannot hold)."""
    sig = ep.graph_signature
    leaves, _ = _trace.flatten(ep.example_inputs) if ep.example_inputs is not None else (None, None)
    if leaves is None:
        leaves = [n.meta.get("val") for n, s in zip((n for n in ep.graph.nodes if n.op == "placeholder"),
                                                     sig.input_specs) if s.kind == InputKind.USER_INPUT]
    vals, polys = program_sizes(ep, leaves)
    writer = _Writer(vals, polys, {s.name: s.hint for s in symbols_of(ep._guards)})
    params = frozenset(s.arg.name for s in sig.input_specs if s.kind == InputKind.PARAMETER)
    graph = writer.graph(ep.graph_module, params)
    kinds = {InputKind.PARAMETER: ("parameter", "parameter_name"), InputKind.BUFFER: ("buffer", "buffer_name"),
             InputKind.CONSTANT_TENSOR: ("tensor_constant", "tensor_constant_name")}
    input_specs = []
    for s in sig.input_specs:
        if s.kind == InputKind.USER_INPUT:
            input_specs.append({"user_input": {"arg": {"as_tensor": {"name": s.arg.name}}}})
            continue
        key, field = kinds[s.kind]
        d = {"arg": {"name": s.arg.name}, field: s.target}
        if s.kind == InputKind.BUFFER:
            d["persistent"] = bool(s.persistent)
        input_specs.append({key: d})
    for s in sig.output_specs:
        if s.kind != OutputKind.USER_OUTPUT:
            raise UnsupportedOp(f"torch.export.save: {s.kind.name} outputs are not supported in torch's .pt2 format")
    output_specs = [{"user_output": {"arg": o}} for o in graph["outputs"]]
    call = {"inputs": [], "outputs": [], "in_spec": _spec_to_json(ep._in_spec), "out_spec": _spec_to_json(ep._out_spec),
            "forward_arg_names": list(sig.user_inputs)}
    ranges = {name: {"min_val": r.lower, "max_val": None if r.upper is int_oo else r.upper}
              for name, r in ep.range_constraints.items()}
    return {"graph_module": {"graph": graph, "signature": {"input_specs": input_specs, "output_specs": output_specs},
                             "module_call_graph": [{"fqn": "", "signature": call}], "metadata": {},
                             "treespec_namedtuple_fields": {}},
            "opset_version": {"aten": 10}, "range_constraints": ranges, "schema_version": _SCHEMA_VERSION,
            "verifiers": [ep.dialect] if ep.dialect != "ATEN" else [], "torch_version": "2.13.0",
            "guards_code": _guards_code(ep._guards)}


def _guards_code(guards: list) -> list:
    """The input guards torch writes (and its module() checks) for sizes that are related: each further input
    dimension of one Dim equals the one before, a derived Dim's size is a*root + b of the input its root sizes
    directly (one whose root sizes no input directly has no guard, as torch's)."""
    first: dict = {}
    for name, kind, expect in guards:
        for i, e in enumerate(expect if kind == "tensor" else ()):
            if isinstance(e, _trace.Symbol):
                first.setdefault(e.name, f"L['{name}'].size()[{i}]")
    out, last = [], dict(first)
    for name, kind, expect in guards:
        for i, e in enumerate(expect if kind == "tensor" else ()):
            where = f"L['{name}'].size()[{i}]"  # (a nested input's path is not kept: named by its placeholder)
            if isinstance(e, _trace.Symbol) and first[e.name] != where:
                out.append(f"{where} == {last[e.name]}")  # each size of a Dim equals the one before, as torch's
                last[e.name] = where
            elif isinstance(e, _trace.Derived) and e.root.name in first:
                src = first[e.root.name]
                body = src if e.a == 1 else f"{e.a}*{src}"
                rhs = f"({body})" if not e.b else f"({e.b} + {body})" if e.b > 0 else f"(({e.b}) + {body})"
                out.append(f"{where} == {rhs}")
    return sorted(out)


def _payload(tensors: dict, prefix: str, files: dict, is_param=lambda name: False) -> dict:
    """{fqn: payload meta} of tensors stored raw (C order, little-endian) as files[prefix + i]."""
    config = {}
    for i, (fqn, t) in enumerate(tensors.items()):
        path = f"{prefix}{i}"
        arr = np.ascontiguousarray(t.detach().numpy())
        files[path] = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
        config[fqn] = {"path_name": path, "is_param": bool(is_param(fqn)), "use_pickle": False,
                       "tensor_meta": _tensor_meta(t)}
    return {"config": config}


def save(ep: ExportedProgram, f, *, extra_files: dict | None = None, opset_version=None,
         pickle_protocol: int = 2) -> None:
    """Write ep to f (a path or a writable binary file) as a .pt2 archive in torch's format, which
    torch.export.load reads (dynamic sizes and torch.cond included); UnsupportedOp names what it cannot hold."""
    if not isinstance(ep, ExportedProgram):
        raise TypeError(f"The 'ep' parameter must be an instance of 'ExportedProgram', got '{type(ep).__name__}' "
                        "instead.")
    if isinstance(f, (str, os.PathLike)):
        f = os.fspath(f)
    program = _torch_program(ep)
    files = {"archive_format": b"pt2", "archive_version": b"0", ".data/version": b"6\n", "byteorder": b"little",
             ".data/serialization_id": b"0" * 40}
    params = set(ep.graph_signature.parameters)
    files["data/weights/model_weights_config.json"] = json.dumps(
        _payload(dict(ep.state_dict), "weight_", _Prefixed(files, "data/weights/"), params.__contains__)).encode()
    files["data/constants/model_constants_config.json"] = json.dumps(
        _payload(dict(ep.constants), "tensor_constant_", _Prefixed(files, "data/constants/"))).encode()
    files["models/model.json"] = json.dumps(program).encode()
    files["data/sample_inputs/model.pt"] = _tensors_bytes(ep.example_inputs)
    for name, content in (extra_files or {}).items():
        files[f"extra/{name}"] = content.encode() if isinstance(content, str) else content
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as z:
        for name, data in files.items():
            z.writestr(f"archive/{name}", data)


class _Prefixed:
    """A dict view that stores its items into `files` under `prefix`."""

    def __init__(self, files: dict, prefix: str) -> None:
        self.files, self.prefix = files, prefix

    def __setitem__(self, k, v) -> None:
        self.files[self.prefix + k] = v




# --- reading ------------------------------------------------------------------------------------------------

def _unpayload(config: dict, read) -> dict:
    out = {}
    for fqn, meta in config["config"].items():
        raw = read(meta["path_name"])
        if meta.get("use_pickle"):
            out[fqn] = _serialization.load(io.BytesIO(raw), weights_only=False)
            continue
        tm = meta["tensor_meta"]
        dtype = _code_dtype(tm["dtype"])
        np_dtype = torch_namespace().empty(0, dtype=dtype).numpy().dtype
        flat = np.frombuffer(raw, dtype=np.dtype(np_dtype).newbyteorder("<"))
        shape = [s["as_int"] for s in tm["sizes"]]
        strides = [s["as_int"] * flat.itemsize for s in tm["strides"]]
        off = tm["storage_offset"]["as_int"]
        arr = np.lib.stride_tricks.as_strided(flat[off:], shape, strides).astype(np_dtype, copy=True)
        t = torch_namespace().from_numpy(arr)
        out[fqn] = Parameter(t, requires_grad=tm["requires_grad"]) if meta["is_param"] else t
    return out


def load(f, *, extra_files: dict | None = None, expected_opset_version=None) -> ExportedProgram:
    """Read an ExportedProgram from a .pt2 archive written by torch's or funcgrad's `save`; extra_files' keys are
    filled with the saved extra files."""
    if isinstance(f, (str, os.PathLike)):
        f = os.fspath(f)
    with zipfile.ZipFile(f) as z:
        names = z.namelist()
        root = names[0].split("/", 1)[0] + "/" if names and "/" in names[0] else ""
        fmt = z.read(root + "archive_format").decode() if root + "archive_format" in names else None
        if fmt != "pt2":
            raise RuntimeError("torch.export.load: not a .pt2 archive (no archive_format 'pt2' record)")
        read = lambda name: z.read(root + name)  # noqa: E731
        models = [n[len(root) + len("models/"):-len(".json")] for n in names
                  if n.startswith(root + "models/") and n.endswith(".json")]
        if len(models) != 1:
            raise RuntimeError(f"torch.export.load: expected one program in the archive, found {models}")
        model = models[0]
        program = json.loads(read(f"models/{model}.json"))
        state = _unpayload(json.loads(read(f"data/weights/{model}_weights_config.json")),
                           lambda p: read("data/weights/" + p))
        constants = _unpayload(json.loads(read(f"data/constants/{model}_constants_config.json")),
                               lambda p: read("data/constants/" + p))
        example = _serialization.load(io.BytesIO(read(f"data/sample_inputs/{model}.pt")), weights_only=False)
        for name in extra_files or {}:
            if f"{root}extra/{name}" in names:
                extra_files[name] = read(f"extra/{name}").decode()
    return _from_torch_program(program, state, constants, example)


def _deserialize_arg(a: dict, env: dict):
    (kind, v), = a.items()
    if kind == "as_none":
        return None
    if kind == "as_tensor":
        return env[v["name"]]
    if kind == "as_tensors":
        return [env[x["name"]] for x in v]
    if kind == "as_optional_tensors":
        return [None if "as_none" in x else env[x["as_tensor"]["name"]] for x in v]
    if kind == "as_scalar_type":
        return _code_dtype(v)
    if kind in ("as_int", "as_float", "as_bool", "as_string", "as_ints", "as_floats", "as_bools", "as_strings"):
        return v
    if kind in ("as_sym_int", "as_sym_bool"):
        return env[v["as_name"]] if "as_name" in v else next(iter(v.values()))
    if kind == "as_sym_ints":
        return [env[x["as_name"]] if "as_name" in x else x["as_int"] for x in v]
    if kind == "as_memory_format":
        return None
    raise UnsupportedOp(f"torch.export.load: arguments of kind {kind!r} ({v!r}) are not supported")


def _output_name(out: dict, target: str) -> str:
    (kind, v), = out.items()
    if kind == "as_tensor":
        return v["name"]
    if kind in ("as_sym_int", "as_sym_bool") and "as_name" in v:
        return v["as_name"]
    raise UnsupportedOp(f"torch.export.load: {target} returning {out} (not a tensor, SymInt or SymBool) is not "
                        "supported")


def _decode_graph(g: dict) -> GraphModule:
    """The GraphModule of a serialized Graph: ATen operators, sym_size.int and int arithmetic on sizes, and
    torch.cond with its branches as submodules."""
    graph = Graph()
    subs: dict = {}
    env: dict = {}
    for a in g["inputs"]:
        if "as_tensor" not in a:
            raise UnsupportedOp(f"torch.export.load: graph input {a} is not a tensor")
        name = a["as_tensor"]["name"]
        env[name] = graph.placeholder(name)
    for n in g["nodes"]:
        target = n["target"]
        if target == _COND:
            args = []
            for inp in n["inputs"]:
                if "as_graph" in inp["arg"]:
                    ga = inp["arg"]["as_graph"]
                    subs[ga["name"]] = _decode_graph(ga["graph"])
                    args.append(graph.create_node("get_attr", ga["name"], (), {}, ga["name"]))
                else:
                    args.append(_deserialize_arg(inp["arg"], env))
            if len(args) != 4:
                raise UnsupportedOp(f"torch.export.load: {target} with {len(args)} arguments (expected pred, "
                                    "true_fn, false_fn, operands)")
            args[3] = tuple(args[3])
            node = graph.create_node("call_function", _trace.cond, tuple(args), {}, n.get("name") or "cond")
            for i, out in enumerate(n["outputs"]):
                name = _output_name(out, target)
                env[name] = graph.create_node("call_function", operator.getitem, (node, i), {}, name)
            continue
        if target == _SYM_SIZE:
            fn = _trace.sym_size_int
        elif target.startswith("_operator.") and target[len("_operator."):] in _SYM_OPS:
            fn = getattr(operator, target[len("_operator."):])
        elif target.startswith("torch.ops.") and target[len("torch.ops."):] in _aten.ATEN_FNS:
            fn = _aten.ATEN_FNS[target[len("torch.ops."):]]
        elif target.startswith("torch.ops.higher_order."):
            raise UnsupportedOp(f"torch.export.load: the higher-order operator {target} is not supported by funcgrad "
                                f"(supported: {_COND})")
        else:
            raise UnsupportedOp(f"torch.export.load: operator {target} is not supported by funcgrad (supported: "
                                f"{sorted(_aten.ATEN_FNS)}, {_SYM_SIZE}, int arithmetic on sizes and {_COND})")
        outs = n["outputs"]
        if len(outs) != 1:
            raise UnsupportedOp(f"torch.export.load: {target} returning {outs} (not one value) is not supported")
        args, kwargs = [], {}
        for inp in n["inputs"]:
            v = _deserialize_arg(inp["arg"], env)
            if inp.get("kind") == 2:
                kwargs[inp["name"]] = v
            else:
                args.append(v)
        name = _output_name(outs[0], target)
        env[name] = graph.create_node("call_function", fn, tuple(args), kwargs, name)
    outs = []
    for o in g["outputs"]:
        (kind, v), = o.items()
        outs.append(env[_output_name(o, "the graph")] if kind != "as_int" else v)
    graph.output(tuple(outs))
    return GraphModule(subs, graph, "GraphModule")


_SYMBOL = re.compile(r"Symbol\('(\w+)'(?:, \w+=\w+)*\)")


def _input_dims(name: str, meta: dict, ranges: dict, symbols: dict) -> list:
    """The guard of a user input: each size an int, the trace Symbol its `as_expr` names, or a Derived size a*s + b
    (a derived Dim); symbols collects them by name."""
    out = []
    for i, s in enumerate(meta["sizes"]):
        if "as_int" in s:
            out.append(s["as_int"])
            continue
        expr = s["as_expr"]["expr_str"]
        p = parse_affine(expr)
        if p is None:
            raise UnsupportedOp(f"torch.export.load: size {i} of input {name} is the expression {expr}; funcgrad "
                                "reads inputs whose dynamic sizes are a symbol or an affine function of one (a "
                                "derived Dim)")
        sym, = p.symbols()
        a, b = p.terms[(sym,)], p.terms.get((), 0)
        hint = (s["as_expr"].get("hint") or {}).get("as_int")
        where = f"L['{name}'].size()[{i}]"
        if sym not in symbols:
            lo, hi = ranges.get(sym, {}).get("min_val", 0), ranges.get(sym, {}).get("max_val")
            symbols[sym] = _trace.Symbol(sym, sym, lo, int_oo if hi is None else hi,
                                         None if hint is None else (hint - b) // a, where)
        root = symbols[sym]
        if (a, b) == (1, 0):
            out.append(root)
            continue
        key = str(p)
        if key not in symbols:
            lo, hi = ranges.get(key, {}).get("min_val"), ranges.get(key, {}).get("max_val")
            symbols[key] = _trace.Derived(root, a, b, key, a * root.lo + b if lo is None else lo,
                                          int_oo if hi is None and root.hi is int_oo else
                                          a * root.hi + b if hi is None else hi, where)
        out.append(symbols[key])
    return out


def _from_torch_program(program: dict, state: dict, constants: dict, example) -> ExportedProgram:
    major = program["schema_version"]["major"]
    if major != _SCHEMA_VERSION["major"]:
        raise RuntimeError(f"torch.export.load: serialized schema version {program['schema_version']} does not "
                           f"match funcgrad's {_SCHEMA_VERSION}")
    gm_json = program["graph_module"]
    g = gm_json["graph"]
    gm = _decode_graph(g)
    input_specs = []
    for spec in gm_json["signature"]["input_specs"]:
        (kind, d), = spec.items()
        if kind == "user_input":
            if "as_tensor" not in d["arg"]:
                raise UnsupportedOp(f"torch.export.load: the user input {d['arg']} is not a tensor")
            input_specs.append(InputSpec(InputKind.USER_INPUT, TensorArgument(d["arg"]["as_tensor"]["name"]), None))
        elif kind == "parameter":
            input_specs.append(InputSpec(InputKind.PARAMETER, TensorArgument(d["arg"]["name"]), d["parameter_name"]))
        elif kind == "buffer":
            input_specs.append(InputSpec(InputKind.BUFFER, TensorArgument(d["arg"]["name"]), d["buffer_name"],
                                         d["persistent"]))
        elif kind == "tensor_constant":
            input_specs.append(InputSpec(InputKind.CONSTANT_TENSOR, TensorArgument(d["arg"]["name"]),
                                         d["tensor_constant_name"]))
        else:
            raise UnsupportedOp(f"torch.export.load: {kind} inputs are not supported")
    output_specs = []
    for spec in gm_json["signature"]["output_specs"]:
        (kind, d), = spec.items()
        if kind != "user_output":
            raise UnsupportedOp(f"torch.export.load: {kind} outputs (in-place updates of state) are not supported")
        output_specs.append(OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(_output_name(d["arg"], "output")),
                                       None))
    call = next(c for c in gm_json["module_call_graph"] if c["fqn"] == "")["signature"]
    tv, ranges, symbols = g["tensor_values"], program.get("range_constraints") or {}, {}
    guards = [(s.arg.name, "tensor", _input_dims(s.arg.name, tv[s.arg.name], ranges, symbols)) for s in input_specs
              if s.kind == InputKind.USER_INPUT]
    order = {k: i for i, k in enumerate(ranges)}
    dyn = {name: [e if not isinstance(e, int) else None for e in expect] for name, _, expect in guards}
    for node in gm.graph.nodes:
        if node.op == "placeholder" and node.name in dyn and symbols:
            node.meta["dyn"] = dyn[node.name]
    for name, param in list(state.items()):
        if not isinstance(param, Parameter) and name in {s.target for s in input_specs if s.kind == InputKind.PARAMETER}:
            state[name] = Parameter(param)
    verifiers = program.get("verifiers") or []
    ep = ExportedProgram(gm, gm.graph, ExportGraphSignature(input_specs, output_specs), state,
                         range_constraints_of(sorted(symbols.values(), key=lambda v: order.get(v.name, len(order)))),
                         constants=constants, example_inputs=example,
                         in_spec=_spec_from_json(call["in_spec"]), out_spec=_spec_from_json(call["out_spec"]),
                         guards=guards, dialect=verifiers[0] if verifiers else "ATEN")
    _propagate(ep)
    return ep


def _propagate(ep: ExportedProgram) -> None:
    """node.meta['val'] and ['sizes'] again, by running the graph (both branches of each cond) on the example
    inputs and at moved sizes."""
    args, kwargs = ep.example_inputs
    annotate(ep, _trace.flatten((tuple(args), dict(kwargs)))[0])
