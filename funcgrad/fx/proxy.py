"""torch.fx.Proxy: the stand-in for a value while a program is traced. Every operation on a Proxy records a
Node instead of computing: operators become call_function nodes of `operator.*`, attribute access then a call
becomes call_method (`x.relu()`), a plain attribute read becomes `getattr(x, "shape")`, indexing becomes
`operator.getitem`. What the trace cannot record raises as fx's does: using a Proxy as a condition
(TraceError), iterating it (TraceError, except the unpacking `a, b = proxy`), `len(proxy)` (RuntimeError)."""
from __future__ import annotations

import builtins
import dis
import inspect
import operator
from typing import Any, Callable

from .._torch.overrides import is_tensor_method_or_property
from .graph import Graph
from .node import Node, map_aggregate

__all__ = ["Proxy", "Attribute", "TraceError", "TracerBase", "GraphAppendingTracer", "ParameterProxy"]


class TraceError(ValueError):
    """A program did something a symbolic trace cannot record (control flow on a traced value, iteration)."""


class TracerBase:
    """What a Proxy needs of its tracer: making nodes and proxies, turning arguments into node arguments."""
    graph: Graph
    record_stack_traces = False
    check_mutable_operations = False
    trace_asserts = False
    proxy_buffer_attributes = False
    traced_func_name = "forward"

    def create_node(self, kind: str, target, args: tuple, kwargs: dict, name: str | None = None,
                    type_expr: Any = None) -> Node:
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node: Node) -> "Proxy":
        return Proxy(node, self)

    def create_proxy(self, kind: str, target, args: tuple, kwargs: dict, name: str | None = None,
                     type_expr: Any = None, proxy_factory_fn: Callable | None = None) -> "Proxy":
        """A node of `kind` calling `target` on args/kwargs (turned into node arguments by create_arg), and
        its Proxy (made by proxy_factory_fn(node) when given)."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a: Any) -> Any:
        """a as a node argument: Proxies become their nodes; containers are rebuilt; constants stay."""
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, Node):
            return a
        if isinstance(a, (tuple, list, dict, slice)):
            return map_aggregate(a, lambda x: self.create_arg(x) if isinstance(x, (Proxy, Node)) or not
                                 _is_constant(x) else x)
        if _is_constant(a):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj: "Proxy") -> bool:
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj: "Proxy"):
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop "
                         "or as a *args or **kwargs function argument. See the torch.fx docs on pytorch.org for a "
                         "more detailed explanation of what types of control flow can be traced, and check out the "
                         "Proxy docstring for help troubleshooting Proxy iteration errors")

    def keys(self, obj: "Proxy"):
        return Attribute(obj, "keys")()


def _is_constant(x) -> bool:
    """Values that go into a node's arguments as they are."""
    if x is None or x is Ellipsis or isinstance(x, (bool, int, float, complex, str, bytes, range)):
        return True
    t = type(x)
    return t.__module__.startswith("funcgrad") and t.__name__ in ("dtype", "device", "Size", "memory_format",
                                                                   "layout") or callable(x) and not hasattr(x, "forward")


class GraphAppendingTracer(TracerBase):
    """A tracer that only appends to an existing graph (for Proxies made by hand over a graph's nodes)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.scope = None
        self.module_stack: dict = {}
        self.node_name_to_scope: dict = {}


class Proxy:
    """The traced value of a Node (torch.fx.Proxy): operations on it append nodes to its tracer's graph."""

    def __init__(self, node: Node, tracer: TracerBase | None = None) -> None:
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> "Attribute":
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, d) -> None:
        self.__dict__ = d

    def __deepcopy__(self, memo):
        raise RuntimeError(f"deepcopy of the Proxy {self.node.name} during a symbolic trace: copy the module "
                           "before tracing it")

    def __call__(self, *args, **kwargs) -> "Proxy":
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    @classmethod
    def __torch_function__(cls, orig_method: Callable, types, args=None, kwargs=None) -> "Proxy":
        """A function that dispatches `__torch_function__` (a torch.ops operator, ...) called with a Proxy
        records its call: call_method for a Tensor method, call_function of orig_method otherwise."""
        args = args if args else ()
        kwargs = kwargs if kwargs else {}
        tracers: dict = {}

        def find_tracer(a):
            if isinstance(a, Proxy):
                tracers[a.tracer] = None
        map_aggregate(args, find_tracer)
        map_aggregate(kwargs, find_tracer)
        if len(tracers) > 1:
            raise RuntimeError(f"Found multiple different tracers {list(tracers)} while trying to trace "
                               f"operations {orig_method}")
        tracer = next(iter(tracers))
        if is_tensor_method_or_property(orig_method):
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs)

    def __iter__(self):
        frame = inspect.currentframe().f_back
        code = frame.f_code
        for inst in dis.get_instructions(code):
            if inst.offset == frame.f_lasti:
                if inst.opname == "UNPACK_SEQUENCE":
                    return (self[i] for i in range(inst.argval))
                break
        return self.tracer.iter(self)

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def __len__(self) -> int:
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           "recorded, please call torch.fx.wrap('len') at module scope")

    def __index__(self):
        raise TraceError(f"the traced value {self.node.name} cannot be used as an index (a Python int is needed)")

    def keys(self):
        return self.tracer.keys(self)

    def __getitem__(self, key) -> "Proxy":
        return self.tracer.create_proxy("call_function", operator.getitem, (self, key), {})


def _binary(fn: Callable, reflected: bool):
    def impl(self, other):
        args = (other, self) if reflected else (self, other)
        return self.tracer.create_proxy("call_function", fn, args, {})
    return impl


def _unary(fn: Callable):
    def impl(self):
        return self.tracer.create_proxy("call_function", fn, (self,), {})
    return impl


_REFLECTABLE = ("add", "sub", "mul", "floordiv", "truediv", "mod", "pow", "lshift", "rshift", "and_", "or_",
                "xor", "matmul")
for _name in _REFLECTABLE:
    _fn = getattr(operator, _name)
    _dunder = _name.rstrip("_")
    setattr(Proxy, f"__{_dunder}__", _binary(_fn, False))
    setattr(Proxy, f"__r{_dunder}__", _binary(_fn, True))
for _name in ("eq", "ne", "lt", "gt", "le", "ge"):
    setattr(Proxy, f"__{_name}__", _binary(getattr(operator, _name), False))
for _name in ("neg", "pos", "invert", "abs"):
    setattr(Proxy, f"__{_name}__", _unary(getattr(operator, _name)))
Proxy.__hash__ = object.__hash__  # (defining __eq__ drops it)


class Attribute(Proxy):
    """`proxy.attr`: a call_method node when called, else (when used as a value) a getattr node."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self) -> Node:
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", builtins.getattr, (self.root, self.attr),
                                                  {}).node
        return self._node

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


class ParameterProxy(Proxy):
    """The Proxy of a parameter read as a module attribute: its shape facts are the parameter's own."""

    def __init__(self, tracer, node: Node, name: str, param) -> None:
        super().__init__(node, tracer)
        self.param = param
        self.name = name

    def __repr__(self) -> str:
        return f"ParameterProxy({self.name})"

    @property
    def shape(self):
        return self.param.shape

    def size(self, dim=None):
        return self.param.size() if dim is None else self.param.size(dim)

    def dim(self):
        return self.param.dim()

    @property
    def ndim(self):
        return self.param.ndim

    def numel(self):
        return self.param.numel()

    def nelement(self):
        return self.param.nelement()

