"""torch.fx.Graph: a list of Nodes in execution order, and the Python source it stands for.

Building: `placeholder`, `get_attr`, `call_function`, `call_method`, `call_module`, `output` (all through
`create_node`), inserted at the current insertion point (`inserting_before` / `inserting_after`; the end of
the graph otherwise). Editing: `erase_node`, `node.replace_all_uses_with`, `eliminate_dead_code`, `node_copy`,
`graph_copy`. Checking: `lint`. Reading: `print(graph)`, `print_tabular`, `python_code` (the source of
`forward`, as fx generates it: one line per node, values dropped after their last use)."""
from __future__ import annotations

import builtins
import inspect
import keyword
import math
import operator
import re
from typing import Any, Callable, NamedTuple


from .node import Node, _format_arg, map_arg, torch_namespace, torch_path, unwrap

__all__ = ["Graph", "PythonCode"]

# operator functions fx writes infix (and unary)
_BINARY = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
           operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.matmul: "@",
           operator.lshift: "<<", operator.rshift: ">>", operator.and_: "&", operator.or_: "|",
           operator.xor: "^", operator.eq: "==", operator.ne: "!=", operator.lt: "<", operator.le: "<=",
           operator.gt: ">", operator.ge: ">="}
_UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~", operator.not_: "not "}
_NAME = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")
_ILLEGAL = set(dir(builtins)) | set(keyword.kwlist) | {"self", "torch", "operator", "inf", "nan"}


def _snake_case(s: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", s).lower()


class _Namespace:
    """Unique Python identifiers for the nodes of one graph, by fx's rules: illegal characters become '_', a
    leading digit gets '_' before it; a taken name, or a builtin / keyword, gets a `_<n>` suffix counted per
    base name. Names stay taken after their node is erased (as fx's, so a rewrite never reuses one)."""

    def __init__(self) -> None:
        self._used: set = set()
        self._counts: dict = {}

    def create_name(self, candidate: str) -> str:
        m = _NAME.match(candidate)
        if m is None:
            candidate = re.sub(r"[^0-9a-zA-Z_]+", "_", candidate) or "_unnamed"
            if candidate[0].isdigit():
                candidate = "_" + candidate
            m = _NAME.match(candidate)
        base, num = m.group(1), m.group(2)
        if num is None or candidate in self._used:
            num = self._counts.get(base, 0)
            if candidate in _ILLEGAL:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._used:
            num += 1
            candidate = f"{base}_{num}"
        self._used.add(candidate)
        self._counts[base] = num
        return candidate


class PythonCode(NamedTuple):
    """The generated source of forward and the globals it needs."""
    src: str
    globals: dict


def _format_target(base: str, target: str) -> str:
    out = base
    for atom in target.split("."):
        out = f"{out}.{atom}" if atom.isidentifier() else f'getattr({out}, "{atom}")'
    return out


class _CodeGen:
    """Source for one graph: names of non-torch callables are added to the globals as they are met."""

    def __init__(self, taken=()) -> None:
        self.taken = set(taken)  # the node names (a global must not be shadowed by a local)
        self.globals: dict = {"torch": torch_namespace(), "operator": operator, "builtins": builtins,
                              "inf": math.inf, "nan": math.nan, "NoneType": type(None)}

    def add_global(self, obj) -> str:
        path = torch_path(obj)
        if path is not None:
            return path
        if getattr(operator, getattr(obj, "__name__", ""), None) is obj:
            return "operator." + obj.__name__
        name = getattr(obj, "__name__", None) or "fn"
        if getattr(builtins, name, None) is obj:
            return name
        mod = getattr(obj, "__module__", None)  # fx names a global by its qualified name: mymodule_helper
        name = re.sub(r"[^0-9a-zA-Z_]+", "_", f"{mod}.{name}" if mod else name)
        if name[0].isdigit():
            name = "_" + name
        cand, i = name, 0
        while cand in self.globals and self.globals[cand] is not obj or cand in _ILLEGAL or cand in self.taken:
            i += 1
            cand = f"{name}_{i}"
        self.globals[cand] = obj
        return cand

    def arg(self, a) -> str:
        if isinstance(a, Node):
            return a.name
        if isinstance(a, tuple) and not hasattr(a, "_fields"):
            items = ", ".join(self.arg(e) for e in a)
            return f"({items},)" if len(a) == 1 else f"({items})"
        if isinstance(a, list):
            return "[" + ", ".join(self.arg(e) for e in a) + "]"
        if isinstance(a, dict):
            return "{" + ", ".join(f"{k!r}: {self.arg(v)}" for k, v in a.items()) + "}"
        if isinstance(a, slice):
            return f"slice({self.arg(a.start)}, {self.arg(a.stop)}, {self.arg(a.step)})"
        if isinstance(a, float) and not math.isfinite(a):
            return repr(a) if not math.isnan(a) else "nan"
        if callable(a) and not isinstance(a, type) or isinstance(a, type) and a.__module__ != "builtins":
            return self.add_global(a)
        return repr(a)

    def call_args(self, args, kwargs) -> str:
        parts = [self.arg(a) for a in args] + [f"{k} = {self.arg(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    def node_line(self, n: Node) -> str | None:
        op, t = n.op, n.target
        if op == "placeholder":
            return None if n.name == t.lstrip("*") else f"{n.name} = {t.lstrip('*')}"
        if op == "get_attr":
            return f"{n.name} = {_format_target('self', t)}"
        if op == "call_module":
            return f"{n.name} = {_format_target('self', t)}({self.call_args(n.args, n.kwargs)})"
        if op == "call_method":
            return f"{n.name} = {self.arg(n.args[0])}.{t}({self.call_args(n.args[1:], n.kwargs)})"
        if op == "call_function":
            f = unwrap(t)
            if not n.kwargs:
                if f in _BINARY and len(n.args) == 2:
                    return f"{n.name} = {self.arg(n.args[0])} {_BINARY[f]} {self.arg(n.args[1])}"
                if f in _UNARY and len(n.args) == 1:
                    return f"{n.name} = {_UNARY[f]}{self.arg(n.args[0])}"
                if f is operator.getitem and len(n.args) == 2:
                    return f"{n.name} = {self.arg(n.args[0])}[{self.arg(n.args[1])}]"
                if f is builtins.getattr and len(n.args) == 2 and isinstance(n.args[1], str) \
                        and n.args[1].isidentifier():
                    return f"{n.name} = {self.arg(n.args[0])}.{n.args[1]}"
            return f"{n.name} = {self.add_global(f)}({self.call_args(n.args, n.kwargs)})"
        raise NotImplementedError(f"python_code: node {n.name} has unknown op {op!r}")


class _InsertPoint:
    def __init__(self, graph: "Graph", insert: Callable) -> None:
        self.graph = graph
        self.orig, graph._insert = graph._insert, insert

    def __enter__(self):
        return None

    def __exit__(self, *exc) -> None:
        self.graph._insert = self.orig


class _NodeList:
    """graph.nodes: iterates the graph's nodes in order (erasing the current node while iterating is allowed);
    `reversed(graph.nodes)` iterates backwards."""

    def __init__(self, graph: "Graph", direction: str = "_next") -> None:
        self.graph = graph
        self.direction = direction

    def __len__(self) -> int:
        return self.graph._len

    def __iter__(self):
        root, d = self.graph._root, self.direction
        cur = getattr(root, d)
        while cur is not root:
            nxt = getattr(cur, d)
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self):
        return iter(_NodeList(self.graph, "_prev" if self.direction == "_next" else "_next"))


class Graph:
    """A graph of Nodes (torch.fx.Graph)."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None) -> None:
        self._root = Node(self, "", "root", "", (), {})
        self._len = 0
        self._insert = self._root.prepend
        self._namespace = _Namespace()
        self._owners = 0
        self.owning_module = owning_module
        self._tracer_cls = tracer_cls

    @property
    def nodes(self) -> _NodeList:
        return _NodeList(self)

    def find_nodes(self, *, op: str, target=None, sort: bool = True) -> list:
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # --- building ---------------------------------------------------------------------------------
    def create_node(self, op: str, target: Any, args: tuple | None = None, kwargs: dict | None = None,
                    name: str | None = None, type_expr: Any = None) -> Node:
        """A new node at the insertion point; its name is `name` or made from the target, made unique."""
        if op == "call_function":
            target = unwrap(target)
        candidate = name if name is not None else self._target_to_str(op, target)
        n = Node(self, self._namespace.create_name(candidate), op, target, () if args is None else tuple(args),
                 {} if kwargs is None else dict(kwargs), type_expr)
        self._insert(n)
        self._len += 1
        return n

    @staticmethod
    def _target_to_str(op: str, target) -> str:
        if op == "output":
            return "output"
        t = getattr(target, "__name__", None) if callable(target) else str(target)
        t = t or "fn"
        if t.startswith("__") and t.endswith("__") and len(t) > 4:
            t = t[2:-2]
        return _snake_case(t.lstrip("*"))

    def placeholder(self, name: str, type_expr: Any = None, default_value: Any = inspect.Signature.empty) -> Node:
        """An input of forward named `name` (with a default value when default_value is given)."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any = None) -> Node:
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args=None, kwargs=None, type_expr: Any = None) -> Node:
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args=None, kwargs=None, type_expr: Any = None) -> Node:
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function: Callable, args=None, kwargs=None, type_expr: Any = None) -> Node:
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result: Any, type_expr: Any = None) -> Node:
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def inserting_before(self, n: Node | None = None) -> _InsertPoint:
        """Within this context, new nodes go just before n (at the start of the graph when n is None)."""
        if n is None:
            return self.inserting_after(self._root)
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n: Node | None = None) -> _InsertPoint:
        """Within this context, new nodes go just after n (each new one right after n, as fx's; at the end
        of the graph when n is None)."""
        if n is None:
            return self.inserting_before(self._root)
        return _InsertPoint(self, n.append)

    def node_copy(self, node: Node, arg_transform: Callable[[Node], Any] = lambda x: x) -> Node:
        """A copy of node (from any graph) in this graph, its Node arguments mapped by arg_transform."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        n = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        n.meta = dict(node.meta)
        return n

    def graph_copy(self, g: "Graph", val_map: dict, return_output_node: bool = False):
        """Copy g's nodes (but its output) into this graph; val_map maps g's nodes to the copies. Returns the
        value g outputs, mapped."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return (rv, node) if return_output_node else rv
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None) -> "Graph":
        g = Graph(tracer_cls=self._tracer_cls)
        out = g.graph_copy(self, {}, return_output_node=True)
        if out is not None:
            rv, old = out
            g.output(rv, type_expr=old.type).meta = dict(old.meta)
        return g

    # --- editing ----------------------------------------------------------------------------------
    def erase_node(self, to_erase: Node) -> None:
        """Remove a node that no other node uses."""
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} users in "
                               f"the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})

    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None) -> bool:
        """Erase the nodes nothing uses and that have no effect (placeholders, the output and in-place
        methods stay). Returns whether anything was erased."""
        self.lint()
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not node.users and not impure:
                self.erase_node(node)
                changed = True
        return changed

    def lint(self) -> None:
        """Check the graph is well formed: each node belongs to it, arguments are defined before use, names
        are unique, targets have the right type and (with an owning module) exist."""
        seen: set = set()
        names: set = set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            if node.op not in ("placeholder", "get_attr", "call_function", "call_method", "call_module",
                               "output"):
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            for arg in node.all_input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' does not belong to this Graph, but was "
                                       "used as an argument! If you are copying nodes from another graph, make sure "
                                       "to use ``arg_transform`` on node_copy() to remap values\n" + str(self))
                if arg not in seen:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it has been defined! "
                                       "Please check that Nodes in the graph are topologically ordered\n" + str(self))
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            names.add(node.name)
            seen.add(node)
        mod = self.owning_module
        if mod is None:
            return
        for node in self.nodes:
            if node.op in ("get_attr", "call_module"):
                obj = mod
                for i, atom in enumerate(node.target.split(".")):
                    if not hasattr(obj, atom):
                        path = ".".join(node.target.split(".")[:i])
                        raise RuntimeError(f"Node {node} target {node.target} references nonexistent attribute "
                                           f"{atom} of {path or 'root'}")
                    obj = getattr(obj, atom)
                if node.op == "call_module" and not callable(obj):
                    raise RuntimeError(f"Node {node} target {node.target} {atom} of {path or 'root'} does not "
                                       "reference an nn.Module")

    # --- reading ----------------------------------------------------------------------------------
    def python_code(self, root_module: str = "self", *, verbose=None, include_stride=False,
                    include_device=False, colored=False) -> PythonCode:
        """The source of `def forward(self, ...)` computing this graph, and its globals."""
        gen = _CodeGen(n.name for n in self.nodes)
        last_use: dict = {}
        frees: dict = {}
        nodes = list(self.nodes)
        for node in reversed(nodes):
            for inp in node.all_input_nodes:
                if inp not in last_use:
                    last_use[inp] = node
                    frees.setdefault(node, []).append(inp)
        params, body, wrapped = [], [], []
        for node in nodes:
            if node.op == "placeholder":
                p = node.target
                if node.args:
                    p += f" = {gen.arg(node.args[0])}"
                params.append(p)
            if node.op == "output":
                body.append(f"return {gen.arg(node.args[0])}")
                continue
            line = gen.node_line(node)
            if node.op == "call_function" and node.meta.get("is_wrapped"):
                g = gen.add_global(unwrap(node.target))
                if g not in wrapped:
                    wrapped.append(g)
            if node.op == "placeholder":
                if line is not None:
                    body.append(line)
                continue
            dead = list(frees.get(node, []))
            if not node.users:
                dead.append(node)
            if dead:
                line += ";  " + " = ".join(d.name for d in dead) + " = None"
            body.append(line)
        if not any(n.op == "output" for n in nodes):
            body.append("pass")
        # (a wrapped function is wrapped again when the generated code runs, so tracing it keeps the call)
        src = "\n" + "\n".join(f'torch.fx._symbolic_trace.wrap("{g}")' for g in wrapped) + "\n\ndef forward(" + ", ".join([root_module] + params) + "):\n" + \
            "".join("    " + line + "\n" for line in body) + "    "
        return PythonCode(src, gen.globals)

    def __str__(self) -> str:
        return "graph():\n" + "\n".join("    " + n.format_node() for n in self.nodes)

    def print_tabular(self) -> None:
        """Print a table of the nodes (opcode, name, target, args, kwargs): through `tabulate` where it is
        installed, else as a plain table in tabulate's default layout."""
        rows = [[n.op, n.name, str(n.target), str(n.args), str(n.kwargs)] for n in self.nodes]
        headers = ["opcode", "name", "target", "args", "kwargs"]
        try:
            from tabulate import tabulate  # noqa: PLC0415 (an optional package)
        except ImportError:
            widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
            fmt = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
            print("\n".join([fmt(headers), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]))
            return
        print(tabulate(rows, headers=headers))

    def _format_args_debug(self, a) -> str:
        return _format_arg(a)
