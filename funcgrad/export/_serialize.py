"""torch.export.save / load: an ExportedProgram in a .pt2 zip of funcgrad's own layout (torch cannot read it,
nor funcgrad torch's): `archive/program.pkl` holds the graphs, with each node's target named (a torch function by
its public path, an operator, a Tensor method, ...) rather than pickled, the signature and the input checks;
`archive/data/weights.pt`, `constants.pt` and `sample_inputs.pt` hold the tensors (funcgrad.save)."""
from __future__ import annotations

import builtins
import io
import operator
import os
import pickle
import zipfile

from .._torch import serialization as _serialization
from ..fx.graph import Graph
from ..fx.graph_module import GraphModule
from ..fx.node import Node, map_aggregate, torch_namespace, torch_path
from . import _trace
from .exported_program import ExportedProgram
from .graph_signature import ExportGraphSignature

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


def save(ep: ExportedProgram, f, *, extra_files: dict | None = None, opset_version=None,
         pickle_protocol: int = 2) -> None:
    """Write ep to f (a path or a writable binary file) as a .pt2 archive that `load` reads back."""
    if not isinstance(ep, ExportedProgram):
        raise TypeError(f"The 'ep' parameter must be an instance of 'ExportedProgram', got '{type(ep).__name__}' "
                        "instead.")
    program = {"graph": _encode_graph(ep.graph_module), "signature": ep.graph_signature,
               "range_constraints": ep.range_constraints, "in_spec": ep._in_spec, "out_spec": ep._out_spec,
               "guards": ep._guards, "dialect": ep.dialect}
    if isinstance(f, (str, os.PathLike)):
        f = os.fspath(f)
    with zipfile.ZipFile(f, "w") as z:
        z.writestr("archive/archive_format", _FORMAT)
        z.writestr("archive/archive_version", _VERSION)
        z.writestr("archive/program.pkl", pickle.dumps(program, protocol=max(pickle_protocol, 2)))
        z.writestr("archive/data/weights.pt", _tensors_bytes(dict(ep.state_dict)))
        z.writestr("archive/data/constants.pt", _tensors_bytes(dict(ep.constants)))
        z.writestr("archive/data/sample_inputs.pt", _tensors_bytes(ep.example_inputs))
        for name, content in (extra_files or {}).items():
            z.writestr(f"archive/extra/{name}", content)


def load(f, *, extra_files: dict | None = None, expected_opset_version=None) -> ExportedProgram:
    """Read an ExportedProgram written by `save`; extra_files' keys are filled with the saved extra files."""
    if isinstance(f, (str, os.PathLike)):
        f = os.fspath(f)
    with zipfile.ZipFile(f) as z:
        names = set(z.namelist())
        if "archive/archive_format" not in names or z.read("archive/archive_format").decode() != _FORMAT:
            raise RuntimeError("torch.export.load: not a funcgrad .pt2 archive (funcgrad reads only the archives "
                               "funcgrad.export.save writes)")
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
