"""torch.fx.Interpreter runs a GraphModule node by node (override `run_node` or one of `placeholder`,
`get_attr`, `call_function`, `call_method`, `call_module`, `output` to observe or change what happens);
torch.fx.Transformer runs it on Proxies to build a new GraphModule (override the same methods to rewrite)."""
from __future__ import annotations

import inspect
from typing import Any

from .graph import Graph
from .graph_module import GraphModule
from .node import Node, map_aggregate, map_arg
from .proxy import Proxy
from .tracer import Tracer, _transforming

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Interpreter(module, garbage_collect_values=True, graph=None): `run(*args)` evaluates module's graph (or
    `graph`) on args. Values are dropped after their last use unless garbage_collect_values is False."""

    def __init__(self, module, garbage_collect_values: bool = True, graph: Graph | None = None) -> None:
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env: dict = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        if garbage_collect_values:
            last_use: dict = {}
            self.user_to_last_uses: dict = {}
            for node in reversed(self.graph.nodes):
                for n in node.all_input_nodes:
                    if n not in last_use:
                        last_use[n] = node
                        self.user_to_last_uses.setdefault(node, []).append(n)

    def run(self, *args, initial_env: dict | None = None, enable_io_processing: bool = True) -> Any:
        """The graph's output for inputs args (placeholders take them in order)."""
        self.env = initial_env if initial_env is not None else {}
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback and not getattr(e, "_fx_noted", False):
                    msg = f"While executing {node.format_node()}"
                    if hasattr(e, "add_note"):
                        e.add_note(msg)
                    e._fx_noted = True
                raise
            if self.garbage_collect_values:
                for to_delete in self.user_to_last_uses.get(node, []):
                    del self.env[to_delete]
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list: list) -> Any:
        args = list(args_list)
        args_list.clear()
        return self.run(*args)

    def run_node(self, n: Node) -> Any:
        """Evaluate one node: its arguments from the environment, then the method named after its op."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    def placeholder(self, target: str, args: tuple, kwargs: dict) -> Any:
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one was not passed "
                               "in!") from None

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Any:
        return self.fetch_attr(target)

    def call_function(self, target, args: tuple, kwargs: dict) -> Any:
        return target(*args, **kwargs)

    def call_method(self, target: str, args: tuple, kwargs: dict) -> Any:
        self_obj, *args_tail = args
        return getattr(self_obj, target)(*args_tail, **kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict) -> Any:
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args: tuple, kwargs: dict) -> Any:
        return args[0]

    def fetch_attr(self, target: str) -> Any:
        """The attribute of the module at the dotted path target."""
        atoms = target.split(".")
        attr = self.module
        for i, atom in enumerate(atoms):
            if not hasattr(attr, atom):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(atoms[:i + 1])}")
            attr = getattr(attr, atom)
        return attr

    def fetch_args_kwargs_from_env(self, n: Node) -> tuple:
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args, n: Node):
        def load(n_arg: Node):
            if n_arg not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {n_arg}! Run Graph.lint() to diagnose "
                                   "such issues")
            return self.env[n_arg]
        return map_arg(args, load)


class _TransformerTracer(Tracer):
    """Appends to the Transformer's new graph; every module is a leaf (it is already a node)."""

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph
        self.tensor_attrs = {}

    def is_leaf_module(self, m, module_qualified_name: str) -> bool:
        return True


class Transformer(Interpreter):
    """Transformer(module).transform() runs module's graph on Proxies over a new graph and returns the
    GraphModule of that graph: override call_function / call_method / call_module (returning the Proxy of a
    different call) to rewrite nodes; torch functions called on the Proxies are recorded."""

    def __init__(self, module) -> None:
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        default = args[0] if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict) -> Any:
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target, args: tuple, kwargs: dict) -> Any:
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def transform(self) -> GraphModule:
        """The rewritten GraphModule."""
        with _transforming(self.tracer):
            result = super().run(enable_io_processing=False)
        if result is not None:
            self.new_graph.output(map_aggregate(result, lambda a: a.node if isinstance(a, Proxy) else a))
        return GraphModule(self.module, self.new_graph)
