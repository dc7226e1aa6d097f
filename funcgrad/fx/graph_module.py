"""torch.fx.GraphModule: a Module whose forward is generated from a Graph. It holds the submodules, parameters,
buffers and attributes the graph's call_module / get_attr nodes name (copied from the root it is made from);
`recompile()` regenerates forward after the graph is edited, and `code` is the generated source."""
from __future__ import annotations

import copy
import linecache
from typing import Any

from .._torch._tensor import Tensor
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from .graph import Graph, PythonCode

__all__ = ["GraphModule"]

_counter = [0]


def _copy_attr(from_module: Module, to_module: Module, target: str) -> None:
    """to_module.<target> = from_module.<target>, making the intermediate submodules as needed."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    if isinstance(orig, Tensor) and not isinstance(orig, Parameter):
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj: Any, to_module: Module, target: str) -> None:
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    if isinstance(from_obj, Tensor) and not isinstance(from_obj, Parameter):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


class GraphModule(Module):
    """GraphModule(root, graph, class_name="GraphModule"): root is a Module (or a dict name -> object) holding
    what graph's get_attr and call_module nodes name. Each instance has a class of its own (named class_name),
    on which recompile() sets the generated forward."""

    def __new__(cls, *args, **kwargs):
        for t in cls.__mro__:
            if t.__qualname__.split(".")[-1] != "GraphModuleImpl":
                cls = t
                break

        class GraphModuleImpl(cls):  # noqa: N801 (fx's name)
            pass
        return super().__new__(GraphModuleImpl)

    def __init__(self, root, graph: Graph, class_name: str = "GraphModule") -> None:
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but that target was not "
                                           "provided in ``root``!")
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.meta: dict = {}
        self.graph = graph

    @property
    def graph(self) -> Graph:
        """The graph forward is generated from; setting it recompiles."""
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The Python source of forward."""
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self) -> PythonCode:
        """Generate forward from the graph again (after editing it) and install it on this instance's class."""
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        _counter[0] += 1
        filename = f"<eval_with_key>.{_counter[0]}"
        linecache.cache[filename] = (len(self._code), None, self._code.splitlines(True), filename)
        namespace = dict(python_code.globals)
        exec(compile(self._code, filename, "exec"), namespace)  # noqa: S102 (the generated forward)
        cls = type(self)
        cls.forward = namespace["forward"]
        return python_code

    def add_submodule(self, target: str, m: Module) -> bool:
        """Install m at the dotted path target, making empty parent modules where none exist."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            sub = getattr(mod, item, None)
            if sub is None:
                sub = Module()
                mod.add_module(item, sub)
            if not isinstance(sub, Module):
                return False
            mod = sub
        mod.add_module(field, m)
        return True

    def get_submodule(self, target: str) -> Module:
        return super().get_submodule(target)

    def delete_submodule(self, target: str) -> bool:
        *path, name = target.split(".")
        mod = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
        if not hasattr(mod, name) or not isinstance(getattr(mod, name), Module):
            return False
        delattr(mod, name)
        return True

    def delete_all_unused_submodules(self) -> None:
        used = set()
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                parts = node.target.split(".")
                used.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        for name, _ in list(self.named_modules()):
            if name and name not in used:
                self.delete_submodule(name)

    def print_readable(self, print_output: bool = True, **kwargs) -> str:
        src = f"class {type(self).__name__}(torch.nn.Module):\n" + \
            "\n".join("    " + line for line in self._code.strip("\n ").splitlines()) + "\n"
        if print_output:
            print(src)
        return src

    def __deepcopy__(self, memo) -> "GraphModule":
        res = type(self).__new__(type(self))
        Module.__init__(res)
        memo[id(self)] = res
        fake = Module()
        fake.__dict__ = copy.deepcopy(self.__dict__, memo)
        res.__dict__.update(fake.__dict__)
        res.__class__.__name__ = type(self).__name__
        res.graph = fake.__dict__["_graph"]
        return res

    def __copy__(self) -> "GraphModule":
        res = GraphModule(self, self.graph, type(self).__name__)
        res.meta = dict(getattr(self, "meta", {}))
        return res

    def __str__(self) -> str:
        return super().__str__() + "\n" + self._code
