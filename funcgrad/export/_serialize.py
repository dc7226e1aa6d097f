"""torch.export.save / load in torch's .pt2 format (torch 2.13's archive: `archive_format` "pt2",
`models/model.json` the serialized program of schema version 8.20 with ATen operators, raw tensor payloads under
`data/weights` and `data/constants` described by their `*_config.json`, `data/sample_inputs/model.pt` a torch.save
pickle), so that torch.export.load reads what funcgrad writes and funcgrad reads what torch writes, for programs
of the ATen operators listed in _aten.py. A call no listed operator expresses raises UnsupportedOp naming it.

Programs with dynamic sizes or torch.cond (which funcgrad does not yet write in torch's format) are saved in
funcgrad's own layout instead, with a warning that torch cannot read the file: `archive/program.pkl` holds the
graphs (each node's target named, not pickled), the signature and the input checks, and `archive/data/*.pt`
the tensors."""
from __future__ import annotations

import builtins
import io
import json
import operator
import os
import pickle
import warnings
import zipfile

import numpy as np

from .._torch import serialization as _serialization
from .._torch._tensor import Tensor
from ..fx.graph import Graph
from ..fx.graph_module import GraphModule
from ..fx.node import Node, map_aggregate, torch_namespace, torch_path
from ..nn.parameter import Parameter
from . import _aten, _trace
from ._aten import UnsupportedOp
from .exported_program import ExportedProgram
from .graph_signature import (ExportGraphSignature, InputKind, InputSpec, OutputKind, OutputSpec,
                              TensorArgument)

__all__ = ["save", "load"]

_FORMAT = "funcgrad-pt2"
_VERSION = "1"


class _Ref:
    """A node argument, by the node's name."""

    def __init__(self, name: str) -> None:
        self.name = name


def _target(t):
    if isinstance(t, str):
        return ("str", t)
    if getattr(t, "__fx_method__", None):
        return ("method", t.__fx_method__)
    if t is _trace.sym_size_int or t is _trace.cond:
        return ("export", t.__name__)
    path = torch_path(t)
    if path is not None:
        return ("torch", path)
    name = getattr(t, "__name__", None)
    if getattr(operator, name or "", None) is t:
        return ("operator", name)
    if getattr(builtins, name or "", None) is t:
        return ("builtins", name)
    raise RuntimeError(f"torch.export.save: cannot serialize the graph's call of {t!r}: only funcgrad's torch "
                       "functions, operators, builtins and Tensor methods can be saved (a fused kernel such as "
                       "nn.LSTM's is not)")


def _resolve(enc):
    kind, name = enc
    if kind == "str":
        return name
    if kind == "method":
        return _trace.tensor_method(name)
    if kind == "export":
        return getattr(_trace, name)
    if kind == "torch":
        obj = torch_namespace()
        for part in name.split(".")[1:]:
            obj = getattr(obj, part)
        return obj
    return getattr(operator if kind == "operator" else builtins, name)


def _encode_graph(gm: GraphModule) -> dict:
    nodes = []
    for n in gm.graph.nodes:
        args = map_aggregate(n.args, lambda a: _Ref(a.name) if isinstance(a, Node) else a)
        kwargs = map_aggregate(n.kwargs, lambda a: _Ref(a.name) if isinstance(a, Node) else a)
        nodes.append((n.op, n.name, _target(n.target), args, kwargs, n.meta.get("dyn")))
    subs = {name: _encode_graph(m) for name, m in gm.named_children() if isinstance(m, GraphModule)}
    return {"nodes": nodes, "submodules": subs}


def _decode_graph(enc: dict) -> GraphModule:
    graph = Graph()
    env: dict = {}
    for op, name, target, args, kwargs, dyn in enc["nodes"]:
        args = map_aggregate(args, lambda a: env[a.name] if isinstance(a, _Ref) else a)
        kwargs = map_aggregate(kwargs, lambda a: env[a.name] if isinstance(a, _Ref) else a)
        node = graph.create_node(op, _resolve(target), args, kwargs, name)
        if node.name != name:
            raise RuntimeError(f"torch.export.load: node {name!r} was renamed {node.name!r}: the archive is damaged")
        if dyn is not None:
            node.meta["dyn"] = dyn
        env[name] = node
    subs = {name: _decode_graph(s) for name, s in enc["submodules"].items()}
    return GraphModule(subs, graph, "GraphModule")


def _tensors_bytes(obj) -> bytes:
    buf = io.BytesIO()
    _serialization.save(obj, buf)
    return buf.getvalue()


# --- torch's .pt2 format ------------------------------------------------------------------------------------

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


def _ints(xs) -> list:
    return [{"as_int": int(n)} for n in xs]


def _contiguous_strides(shape) -> list:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(int(n), 1)
    return out[::-1]


def _tensor_meta(t: Tensor, requires_grad: bool | None = None) -> dict:
    shape = list(t.shape)
    return {"dtype": _dtype_code(t.dtype), "sizes": _ints(shape),
            "requires_grad": bool(t.requires_grad if requires_grad is None else requires_grad),
            "device": {"type": "cpu", "index": None}, "strides": _ints(_contiguous_strides(shape)),
            "storage_offset": {"as_int": 0}, "layout": 7}


def _serialize_arg(v, typ: str):
    """One argument as torch's serialized Argument union, by its schema type."""
    if v is None:
        return {"as_none": True}
    if isinstance(v, Node):
        return {"as_tensor": {"name": v.name}}
    if typ.startswith("Tensor[]"):
        return {"as_tensors": [{"name": x.name} for x in v]}
    if typ.startswith("ScalarType"):
        return {"as_scalar_type": _dtype_code(v)}
    if typ.startswith("MemoryFormat"):
        return {"as_memory_format": 0}
    if "[" in typ:  # int[], int[2], SymInt[1]? ...: a list (an int repeated to the fixed length)
        if isinstance(v, (tuple, list)):
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
    if kind == "as_memory_format":
        return None
    raise UnsupportedOp(f"torch.export.load: arguments of kind {kind!r} ({v!r}) are not supported")


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


def _torch_program(ep: ExportedProgram) -> dict:
    """The serialized_exported_program JSON of ep (raises UnsupportedOp naming a call torch cannot express)."""
    tensor_values: dict = {}
    nodes = []
    is_node = lambda a: isinstance(a, Node)  # noqa: E731
    inputs = []
    for n in ep.graph.nodes:
        val = n.meta.get("val")
        if n.op == "placeholder":
            if not isinstance(val, Tensor):
                raise UnsupportedOp(f"torch.export.save: the non-tensor input {n.name}={val!r} is not supported in "
                                    "torch's .pt2 format")
            tensor_values[n.name] = _tensor_meta(val)
            inputs.append({"as_tensor": {"name": n.name}})
        elif n.op == "call_function":
            schema, named = _aten.to_aten(n.target, n.args, n.kwargs, is_node)
            if not isinstance(val, Tensor):
                raise UnsupportedOp(f"torch.export.save: {schema.qualname} ({n.name}) does not return one tensor")
            tensor_values[n.name] = _tensor_meta(val, False)
            nodes.append({"target": "torch.ops." + schema.qualname,
                          "inputs": [{"name": name, "arg": _serialize_arg(v, typ), "kind": kind}
                                     for name, typ, v, kind in named],
                          "outputs": [{"as_tensor": {"name": n.name}}], "metadata": {},
                          "is_hop_single_tensor_return": None, "name": n.name})
        elif n.op == "output":
            outs = n.args[0] if isinstance(n.args[0], (tuple, list)) else (n.args[0],)
            if not all(isinstance(o, Node) for o in outs):
                raise UnsupportedOp("torch.export.save: non-tensor outputs are not supported in torch's .pt2 format")
            outputs = [{"as_tensor": {"name": o.name}} for o in outs]
        else:
            raise UnsupportedOp(f"torch.export.save: graph node {n.name} ({n.op}) cannot be written in torch's .pt2 "
                                "format")
    sig = ep.graph_signature
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
    output_specs = [{"user_output": {"arg": o}} for o in outputs]
    call = {"inputs": [], "outputs": [], "in_spec": _spec_to_json(ep._in_spec), "out_spec": _spec_to_json(ep._out_spec),
            "forward_arg_names": list(sig.user_inputs)}
    graph = {"inputs": inputs, "outputs": outputs, "nodes": nodes, "tensor_values": tensor_values,
             "sym_int_values": {}, "sym_bool_values": {}, "is_single_tensor_return": False, "custom_obj_values": {},
             "sym_float_values": {}}
    return {"graph_module": {"graph": graph, "signature": {"input_specs": input_specs, "output_specs": output_specs},
                             "module_call_graph": [{"fqn": "", "signature": call}], "metadata": {},
                             "treespec_namedtuple_fields": {}},
            "opset_version": {"aten": 10}, "range_constraints": {}, "schema_version": _SCHEMA_VERSION,
            "verifiers": [ep.dialect] if ep.dialect != "ATEN" else [], "torch_version": "2.13.0", "guards_code": []}


def _torch_expressible(ep: ExportedProgram) -> bool:
    """Whether ep is within what funcgrad writes in torch's format: no dynamic sizes, no torch.cond."""
    return not ep.range_constraints and not any(isinstance(m, GraphModule) for m in ep.graph_module.children())


def save(ep: ExportedProgram, f, *, extra_files: dict | None = None, opset_version=None,
         pickle_protocol: int = 2) -> None:
    """Write ep to f (a path or a writable binary file) as a .pt2 archive in torch's format (torch.export.load
    reads it); a program with dynamic sizes or torch.cond is written in funcgrad's own layout, with a warning."""
    if not isinstance(ep, ExportedProgram):
        raise TypeError(f"The 'ep' parameter must be an instance of 'ExportedProgram', got '{type(ep).__name__}' "
                        "instead.")
    if isinstance(f, (str, os.PathLike)):
        f = os.fspath(f)
    if not _torch_expressible(ep):
        warnings.warn("torch.export.save: funcgrad writes programs with dynamic sizes or torch.cond in its own .pt2 "
                      "layout, which torch.export.load cannot read (funcgrad's can)", stacklevel=2)
        return _save_own(ep, f, extra_files, pickle_protocol)
    program = _torch_program(ep)
    files = {"archive_format": b"pt2", "archive_version": b"0", ".data/version": b"6\n", "byteorder": b"little",
             ".data/serialization_id": b"0" * 40}
    params = set(ep.graph_signature.parameters)
    files["data/weights/model_weights_config.json"] = json.dumps(
        _payload(dict(ep.state_dict), "weight_", _Prefixed(files, "data/weights/"), params.__contains__)).encode()
    lifted = {k: v for k, v in ep.constants.items()}
    files["data/constants/model_constants_config.json"] = json.dumps(
        _payload(lifted, "tensor_constant_", _Prefixed(files, "data/constants/"))).encode()
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


def load(f, *, extra_files: dict | None = None, expected_opset_version=None) -> ExportedProgram:
    """Read an ExportedProgram from a .pt2 archive written by torch's or funcgrad's `save`; extra_files' keys are
    filled with the saved extra files."""
    if isinstance(f, (str, os.PathLike)):
        f = os.fspath(f)
    with zipfile.ZipFile(f) as z:
        names = z.namelist()
        root = names[0].split("/", 1)[0] + "/" if names and "/" in names[0] else ""
        fmt = z.read(root + "archive_format").decode() if root + "archive_format" in names else None
        if fmt == _FORMAT:
            return _load_own(z, extra_files)
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


def _from_torch_program(program: dict, state: dict, constants: dict, example) -> ExportedProgram:
    major = program["schema_version"]["major"]
    if major != _SCHEMA_VERSION["major"]:
        raise RuntimeError(f"torch.export.load: serialized schema version {program['schema_version']} does not "
                           f"match funcgrad's {_SCHEMA_VERSION}")
    if program.get("range_constraints"):
        raise UnsupportedOp("torch.export.load: programs with dynamic sizes (range_constraints "
                            f"{sorted(program['range_constraints'])}) are not supported yet")
    gm_json = program["graph_module"]
    g = gm_json["graph"]
    graph = Graph()
    env: dict = {}
    for a in g["inputs"]:
        if "as_tensor" not in a:
            raise UnsupportedOp(f"torch.export.load: graph input {a} is not a tensor")
        name = a["as_tensor"]["name"]
        env[name] = graph.placeholder(name)
    for n in g["nodes"]:
        target = n["target"]
        fn = _aten.ATEN_FNS.get(target[len("torch.ops."):]) if target.startswith("torch.ops.") else None
        if fn is None:
            raise UnsupportedOp(f"torch.export.load: operator {target} is not supported by funcgrad (supported: "
                                f"{sorted(_aten.ATEN_FNS)})")
        outs = n["outputs"]
        if len(outs) != 1 or "as_tensor" not in outs[0]:
            raise UnsupportedOp(f"torch.export.load: {target} returning {outs} (not one tensor) is not supported")
        args, kwargs = [], {}
        for inp in n["inputs"]:
            v = _deserialize_arg(inp["arg"], env)
            if inp.get("kind") == 2:
                kwargs[inp["name"]] = v
            else:
                args.append(v)
        name = outs[0]["as_tensor"]["name"]
        env[name] = graph.create_node("call_function", fn, tuple(args), kwargs, name)
    outs = tuple(env[o["as_tensor"]["name"]] for o in g["outputs"])
    graph.output(outs)
    input_specs = []
    for spec in gm_json["signature"]["input_specs"]:
        (kind, d), = spec.items()
        if kind == "user_input":
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
        output_specs.append(OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(d["arg"]["as_tensor"]["name"]), None))
    call = next(c for c in gm_json["module_call_graph"] if c["fqn"] == "")["signature"]
    tv = g["tensor_values"]
    guards = [(s.arg.name, "tensor", [d["as_int"] for d in tv[s.arg.name]["sizes"]]) for s in input_specs
              if s.kind == InputKind.USER_INPUT]
    for name, param in list(state.items()):
        if not isinstance(param, Parameter) and name in {s.target for s in input_specs if s.kind == InputKind.PARAMETER}:
            state[name] = Parameter(param)
    gm = GraphModule({}, graph, "GraphModule")
    verifiers = program.get("verifiers") or []
    ep = ExportedProgram(gm, graph, ExportGraphSignature(input_specs, output_specs), state, {}, constants=constants,
                         example_inputs=example, in_spec=_spec_from_json(call["in_spec"]),
                         out_spec=_spec_from_json(call["out_spec"]), guards=guards,
                         dialect=verifiers[0] if verifiers else "ATEN")
    _propagate(ep)
    return ep


# --- funcgrad's own layout (dynamic sizes, torch.cond) --------------------------------------------------------

def _save_own(ep: ExportedProgram, f, extra_files, pickle_protocol: int) -> None:
    program = {"graph": _encode_graph(ep.graph_module), "signature": ep.graph_signature,
               "range_constraints": ep.range_constraints, "in_spec": ep._in_spec, "out_spec": ep._out_spec,
               "guards": ep._guards, "dialect": ep.dialect}
    with zipfile.ZipFile(f, "w") as z:
        z.writestr("archive/archive_format", _FORMAT)
        z.writestr("archive/archive_version", _VERSION)
        z.writestr("archive/program.pkl", pickle.dumps(program, protocol=max(pickle_protocol, 2)))
        z.writestr("archive/data/weights.pt", _tensors_bytes(dict(ep.state_dict)))
        z.writestr("archive/data/constants.pt", _tensors_bytes(dict(ep.constants)))
        z.writestr("archive/data/sample_inputs.pt", _tensors_bytes(ep.example_inputs))
        for name, content in (extra_files or {}).items():
            z.writestr(f"archive/extra/{name}", content)


def _load_own(z: zipfile.ZipFile, extra_files) -> ExportedProgram:
    names = set(z.namelist())
    program = pickle.loads(z.read("archive/program.pkl"))  # noqa: S301 (an archive the user chose to load)
    state = _serialization.load(io.BytesIO(z.read("archive/data/weights.pt")), weights_only=False)
    constants = _serialization.load(io.BytesIO(z.read("archive/data/constants.pt")), weights_only=False)
    example = _serialization.load(io.BytesIO(z.read("archive/data/sample_inputs.pt")), weights_only=False)
    for name in extra_files or {}:
        if f"archive/extra/{name}" in names:
            extra_files[name] = z.read(f"archive/extra/{name}").decode()
    gm = _decode_graph(program["graph"])
    sig: ExportGraphSignature = program["signature"]
    ep = ExportedProgram(gm, gm.graph, sig, state, program["range_constraints"], constants=constants,
                         example_inputs=example, in_spec=program["in_spec"], out_spec=program["out_spec"],
                         guards=program["guards"], dialect=program["dialect"])
    _propagate(ep)
    return ep
def _propagate(ep: ExportedProgram) -> None:
    """node.meta['val'] again, by running the graph on the example inputs."""
    args, kwargs = ep.example_inputs
    leaves, _ = _trace.flatten((tuple(args), dict(kwargs)))
    env: dict = {}
    inputs = iter(ep._lifted_values() + leaves)
    for node in ep.graph.nodes:
        if node.op == "placeholder":
            env[node] = next(inputs)
        elif node.op == "get_attr":
            env[node] = getattr(ep.graph_module, node.target)
        elif node.op == "call_function":
            a = map_aggregate(node.args, lambda x: env[x] if isinstance(x, Node) else x)
            k = map_aggregate(node.kwargs, lambda x: env[x] if isinstance(x, Node) else x)
            env[node] = node.target(*a, **k)
        else:
            continue
        node.meta["val"] = env[node]
