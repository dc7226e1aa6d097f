"""torch.export.ExportedProgram: the traced graph (state lifted to inputs), its signature, the state it was
traced with, and the input checks (`module()` gives a callable Module that applies them)."""
from __future__ import annotations

import copy
import re
from fractions import Fraction
from typing import Iterator

from .._torch._tensor import Tensor
from ..fx import tracer as _fx_tracer
from ..fx.graph_module import GraphModule
from ..fx.node import map_arg, torch_namespace
from ..nn import functional as F
from ..nn.parameter import Parameter
from ._trace import Derived, ExportProxy, ExportTracer, flatten, spec_str, unflatten_spec
from .dynamic_shapes import ValueRanges, int_oo
from .graph_signature import ExportGraphSignature, InputKind

__all__ = ["ExportedProgram", "default_decompositions", "CustomDecompTable"]

_ABBREV = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16", "int64": "i64", "int32": "i32",
           "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "b8", "complex64": "c64", "complex128": "c128"}


def _annotation(node) -> str | None:
    val = node.meta.get("val")
    if isinstance(val, Tensor):
        dyn = node.meta.get("sizes") or [getattr(s, "name", None) for s in node.meta.get("dyn") or [None] * val.ndim]
        dims = ", ".join(str(s) if s is not None else str(n) for n, s in zip(val.shape, dyn))
        dt = str(val.dtype).replace("torch.", "").replace("funcgrad.", "")
        return f'"{_ABBREV.get(dt, dt)}[{dims}]"'
    return None


def _readable(gm: GraphModule, indent: str, name: str = "GraphModule") -> str:
    """torch's print_readable of gm: the forward with each value's dtype and shape, then its submodules."""
    lines = gm.code.strip("\n ").splitlines()
    ann = {n.name: _annotation(n) for n in gm.graph.nodes}
    out = [f"{indent}class {name}(torch.nn.Module):"]
    for line in lines:
        m = re.match(r"def forward\(self, (.*)\):$", line)
        if m:
            params = [p.strip() for p in m.group(1).split(",") if p.strip()]
            params = [f"{p}: {ann[p]}" if ann.get(p) else p for p in params]
            line = f"def forward(self, {', '.join(params)}):"
        else:
            m = re.match(r"(\s*)(\w+) = (.*)$", line)
            if m and ann.get(m.group(2)):
                line = f"{m.group(1)}{m.group(2)}: {ann[m.group(2)]} = {m.group(3)}"
        out.append(indent + "    " + line)
    for sub_name, sub in gm.named_children():
        if isinstance(sub, GraphModule):
            out.append("")
            out.append(_readable(sub, indent + "    ", sub_name))
    return "\n".join(out)


class CustomDecompTable(dict):
    """The table run_decompositions uses: torch function -> a function of the same arguments written with
    simpler torch functions."""


def _linear(x, weight, bias=None):
    T = torch_namespace()  # the facade, whose functions the trace records  # noqa: N806
    if x.ndim == 2 and bias is not None:
        return T.addmm(bias, x, T.permute(weight, [1, 0]))
    out = T.matmul(x, T.permute(weight, [1, 0]))
    return out if bias is None else T.add(out, bias)


def default_decompositions() -> CustomDecompTable:
    """torch.export.default_decompositions: the decompositions run_decompositions applies by default."""
    return CustomDecompTable({F.linear: _linear})


class ExportedProgram:
    """A program captured by torch.export.export: `graph_module` computes the outputs from the lifted state
    (parameters, buffers, constants) and the user inputs, in `graph_signature`'s order. Call `module()` to run
    it; the program itself is not callable (as torch's)."""

    def __init__(self, root, graph, graph_signature: ExportGraphSignature, state_dict: dict,
                 range_constraints: dict, *, constants: dict | None = None, example_inputs=None,
                 in_spec=None, out_spec=None, guards=None, dialect: str = "TRAINING") -> None:
        self._graph_module = root if isinstance(root, GraphModule) else GraphModule(root, graph, "GraphModule")
        self._graph_signature = graph_signature
        self._state_dict = state_dict
        self._constants = constants or {}
        self._range_constraints = range_constraints
        self._example_inputs = example_inputs
        self._in_spec, self._out_spec = in_spec, out_spec
        self._guards = guards or []
        self.dialect = dialect

    graph_module = property(lambda self: self._graph_module)
    graph = property(lambda self: self._graph_module.graph)
    graph_signature = property(lambda self: self._graph_signature)
    state_dict = property(lambda self: self._state_dict)
    constants = property(lambda self: self._constants)
    tensor_constants = constants
    range_constraints = property(lambda self: self._range_constraints)
    example_inputs = property(lambda self: self._example_inputs)
    module_call_graph = property(lambda self: [])
    verifiers = property(lambda self: [])

    @property
    def call_spec(self):
        return (self._in_spec, self._out_spec)

    def parameters(self) -> Iterator[Parameter]:
        for _, p in self.named_parameters():
            yield p

    def named_parameters(self) -> Iterator[tuple]:
        for name in self._graph_signature.parameters:
            yield name, self._state_dict[name]

    def buffers(self) -> Iterator[Tensor]:
        for _, b in self.named_buffers():
            yield b

    def named_buffers(self) -> Iterator[tuple]:
        non_persistent = set(self._graph_signature.non_persistent_buffers)
        for name in self._graph_signature.buffers:
            yield name, self._constants[name] if name in non_persistent else self._state_dict[name]

    def _lifted_values(self) -> list:
        out = []
        for spec in self._graph_signature.input_specs:
            if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
                out.append(self._state_dict[spec.target] if spec.target in self._state_dict
                           else self._constants[spec.target])
            elif spec.kind == InputKind.CONSTANT_TENSOR:
                out.append(self._constants[spec.target])
        return out

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Unable to call ExportedProgram directly. You should use `exported_program.module()` "
                           "instead.")

    def module(self, check_guards: bool = True) -> GraphModule:
        """A GraphModule of the user inputs alone: the lifted state becomes its parameters, buffers and
        attributes again (the same tensors as state_dict), and each call checks the inputs against the
        exported shapes (AssertionError "Guard failed: ...", as torch's) and restores the output structure."""
        graph = copy.deepcopy(self.graph)
        root: dict = {n: m for n, m in self._graph_module.named_children()}
        lifted = {s.arg.name: s for s in self._graph_signature.input_specs if s.kind != InputKind.USER_INPUT}
        for node in list(graph.nodes):
            if node.op != "placeholder" or node.name not in lifted:
                continue
            spec = lifted[node.name]
            with graph.inserting_before(node):
                getter = graph.create_node("get_attr", spec.target, (), {}, name=spec.target.replace(".", "_"))
            getter.meta = dict(node.meta)
            node.replace_all_uses_with(getter)
            graph.erase_node(node)
            value = self._state_dict.get(spec.target, self._constants.get(spec.target))
            if spec.kind == InputKind.PARAMETER and not isinstance(value, Parameter):
                value = Parameter(value)
            root[spec.target] = value
        gm = GraphModule(root, graph, "GraphModule")
        guards, in_spec, out_spec = self._guards, self._in_spec, self._out_spec
        gm.meta["in_spec"], gm.meta["out_spec"] = in_spec, out_spec

        def pre_hook(module, args, kwargs):
            leaves, spec = flatten((tuple(args), dict(kwargs)))
            if spec != in_spec:
                raise ValueError("Trying to flatten user inputs with exported input tree spec: \n"
                                 f"{spec_str(in_spec)}\nbut actually got inputs with tree spec of: \n"
                                 f"{spec_str(spec)}.\nPlease check that the inputs have the same number and type "
                                 "of args and kwargs as the ones you used when tracing.")
            if check_guards:
                _check_guards(guards, leaves)
            return tuple(leaves), {}

        def post_hook(module, args, output):
            return unflatten_spec(list(output), out_spec)
        gm.register_forward_pre_hook(pre_hook, with_kwargs=True)
        gm.register_forward_hook(post_hook)
        return gm

    def run_decompositions(self, decomp_table: dict | None = None, decompose_custom_triton_ops: bool = False
                           ) -> "ExportedProgram":
        """A new program whose calls of the functions in decomp_table (default_decompositions() by default)
        are replaced by the functions they decompose into."""
        table = default_decompositions() if decomp_table is None else decomp_table
        tracer = ExportTracer(self._graph_module)
        env: dict = {}
        with _fx_tracer._Patched(tracer, None):
            for node in self.graph.nodes:
                if node.op == "placeholder":
                    new = tracer.graph.placeholder(node.name)
                    new.meta = dict(node.meta)
                    env[node] = ExportProxy(new, tracer, node.meta.get("val"))
                elif node.op == "get_attr":
                    new = tracer.graph.get_attr(node.target)
                    new.meta = dict(node.meta)
                    env[node] = ExportProxy(new, tracer, getattr(self._graph_module, node.target))
                elif node.op == "output":
                    tracer.graph.output(tracer.create_arg(map_arg(node.args[0], lambda n: env[n])))
                else:
                    args = map_arg(node.args, lambda n: env[n])
                    kwargs = map_arg(node.kwargs, lambda n: env[n])
                    fn = table.get(node.target)
                    if fn is not None:
                        env[node] = fn(*args, **kwargs)
                    else:
                        env[node] = tracer.create_proxy("call_function", node.target, args, kwargs)
                        env[node].node.meta.update({k: v for k, v in node.meta.items() if k != "val"})
        root = {n: m for n, m in self._graph_module.named_children()}
        return ExportedProgram(root, tracer.graph, copy.deepcopy(self._graph_signature), self._state_dict,
                               self._range_constraints, constants=self._constants,
                               example_inputs=self._example_inputs, in_spec=self._in_spec, out_spec=self._out_spec,
                               guards=self._guards, dialect="ATEN")

    def validate(self) -> None:
        """Check the graph is well formed."""
        self.graph.lint()

    def __str__(self) -> str:
        body = _readable(self._graph_module, "    ")
        rc = "{" + ", ".join(f"{k}: {v!r}" for k, v in self._range_constraints.items()) + "}"
        sig = str(self._graph_signature).replace("\n", "\n    ")
        return f"ExportedProgram:\n{body}\n\nGraph signature: {sig}\nRange constraints: {rc}\n"

    __repr__ = __str__


def _check_guards(guards: list, leaves: list) -> None:
    """The checks of module(): each tensor input's static sizes, each dynamic size's range (and sizes of one
    Dim agreeing), each derived Dim's range and its relation to its root (stated through an input the root
    sizes directly, else through the first derived size), each non-tensor input's value."""
    bound: dict = {}
    direct: dict = {}  # root name -> (its size, where) at the first input it sizes directly
    first: dict = {}   # root name -> (size, where, Derived) of its first derived size
    for (name, kind, expect), leaf in zip(guards, leaves):
        if kind == "tensor" and isinstance(leaf, Tensor) and leaf.ndim == len(expect):
            for i, (n, e) in enumerate(zip(leaf.shape, expect)):
                if isinstance(e, Derived):
                    first.setdefault(e.root.name, (n, f"{name}.size()[{i}]", e))
                elif not isinstance(e, int):
                    direct.setdefault(e.name, (n, f"{name}.size()[{i}]"))
    for (name, kind, expect), leaf in zip(guards, leaves):
        if kind == "const":
            if not (leaf == expect if not isinstance(leaf, Tensor) else False):
                raise AssertionError(f"Guard failed: {name} == {expect!r}")
            continue
        if not isinstance(leaf, Tensor):
            raise AssertionError(f"Guard failed: {name} is a Tensor (got {type(leaf).__name__})")
        if leaf.ndim != len(expect):
            raise AssertionError(f"Guard failed: {name}.dim() == {len(expect)}")
        for i, (n, e) in enumerate(zip(leaf.shape, expect)):
            where = f"{name}.size()[{i}]"
            if isinstance(e, int):
                if n != e:
                    raise AssertionError(f"Guard failed: {where} == {e}")
                continue
            if isinstance(e, Derived):
                _check_range(n, e, where)
                _check_derived(n, e, where, direct.get(e.root.name), first[e.root.name])
                continue
            if e.name in bound:
                if n != bound[e.name][0]:
                    raise AssertionError(f"Guard failed: {where} == {bound[e.name][1]}")
                continue
            bound[e.name] = (n, where)
            _check_range(n, e, where)


def _check_range(n: int, e, where: str) -> None:
    if e.lo > 2 and n < e.lo:
        raise AssertionError(f"Guard failed: {where} >= {e.lo}")
    if e.hi is not int_oo and n > e.hi:
        raise AssertionError(f"Guard failed: {where} <= {e.hi}")


def _check_derived(n: int, e: Derived, where: str, direct, first) -> None:
    """n == a*root + b, root being the size of the input it sizes directly, else found from its first derived
    size (torch checks no divisibility there: 2*b + 1 accepts an even size)."""
    if direct is not None:
        if n != e.a * direct[0] + e.b:
            raise AssertionError(f"Guard failed: {where} == {_affine(direct[1], e.a, e.b)}")
        return
    n0, where0, e0 = first
    if where0 == where:
        return
    if e.a % e0.a == 0:
        k = e.a // e0.a
        want, text = k * n0 + e.b - k * e0.b, _affine(where0, k, e.b - k * e0.b)
    else:
        want = Fraction(e.a * (n0 - e0.b), e0.a) + e.b
        text = _affine(f"(({where0} - {e0.b}) // {e0.a})" if e0.b else f"({where0} // {e0.a})", e.a, e.b)
    if n != want:  # (two sizes of one derived Dim: `y.size()[0] == x.size()[0]`, as for one Dim)
        raise AssertionError(f"Guard failed: {where} == {text}" if text == where0 else
                             f"Guard failed: {text} == {where}")


def _affine(src: str, a: int, b: int) -> str:
    """a * src + b as torch's guards print it (`1 + 2 * y.size()[0]`, `-1 + x.size()[0]`)."""
    body = src if a == 1 else f"{a} * {src}"
    return body if b == 0 else f"{b} + {body}"


def range_constraints_of(symbols: list) -> dict:
    """{name: ValueRanges} of the dynamic sizes (Symbols, and Derived sizes keyed by their expression)."""
    return {s.name: ValueRanges(s.lo, s.hi) for s in symbols}

