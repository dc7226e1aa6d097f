"""torch.fx.Node: one operation of a Graph (placeholder, get_attr, call_function, call_method, call_module or
output), with its target, its arguments (which hold other Nodes), its users and a free `meta` dict. Nodes
sit in their graph's doubly linked list; changing `args`/`kwargs` keeps the users of every input current."""
from __future__ import annotations

import builtins
import operator
import types
from typing import Any, Callable

import sys

from .._torch.ops_namespace import OpOverload, OpOverloadPacket

__all__ = ["Node", "map_arg", "map_aggregate", "Argument", "Target"]

Argument = Any
Target = Any

OPS = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output", "root")

# functions whose call has an effect beyond its value: dead-code elimination keeps them
_IMPURE = {getattr(builtins, "print")}
_IMPURE_OPS = {"profiler::_record_function_enter", "profiler::_record_function_enter_new",
               "profiler::_record_function_exit"}


# the torch namespaces whose functions print as torch.<name> (the facade is `torch`)
_NAMESPACES = ("", "nn.functional", "linalg", "fft", "special")
_paths: dict = {}


def unwrap(f):
    """The function behind a tracing wrapper (see tracer.py), or f."""
    return getattr(f, "__fx_orig__", f)


def torch_namespace():
    """The `torch` namespace fx names and patches: funcgrad's facade module. Looked up when a trace runs, not
    imported, since the facade imports fx (an import would close a cycle through the facade)."""
    return sys.modules[__name__.split(".")[0]]


def _op_path(target):
    """'torch.ops.aten.relu.default' / 'torch.ops.profiler._record_function_exit' for an operator of torch.ops
    (an OpOverload or OpOverloadPacket), else None."""
    if isinstance(target, (OpOverload, OpOverloadPacket)):
        return "torch.ops." + str(target)
    return None


def torch_path(target):
    """'torch.add' / 'torch.nn.functional.relu' for a function of funcgrad's torch namespaces (torch.ops.<ns>.<op>
    for an operator), else None."""
    op = _op_path(target)
    if op is not None:
        return op
    if not _paths:
        for ns in reversed(_NAMESPACES):
            mod = torch_namespace()
            for part in ns.split(".") if ns else ():
                mod = getattr(mod, part)
            prefix = "torch." + ns + "." if ns else "torch."
            for k, v in vars(mod).items():
                v = unwrap(v)
                if k.startswith("_") or isinstance(v, (type, types.ModuleType)) or not callable(v):
                    continue
                key = id(v)
                if key not in _paths or getattr(v, "__name__", None) == k:
                    _paths[key] = (v, prefix + k)
    hit = _paths.get(id(unwrap(target)))
    return hit[1] if hit is not None and hit[0] is unwrap(target) else None


def map_aggregate(a: Argument, fn: Callable[[Argument], Argument]) -> Argument:
    """Apply fn to every leaf of a (nested tuples, lists, dicts and slices), rebuilding the containers."""
    t = type(a)
    if isinstance(a, tuple):
        mapped = tuple(map_aggregate(e, fn) for e in a)
        return mapped if t is tuple or not hasattr(a, "_fields") else t(*mapped)
    if isinstance(a, list):
        return [map_aggregate(e, fn) for e in a]
    if isinstance(a, dict):
        return t((k, map_aggregate(v, fn)) for k, v in a.items()) if t is not dict else \
            {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a: Argument, fn: Callable[["Node"], Argument]) -> Argument:
    """Apply fn to every Node in a (nested) argument."""
    if not callable(fn):
        raise AssertionError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _qualified_name(target) -> str:
    """The dotted name fx shows for a function target: torch.add, torch.nn.functional.relu, operator.add,
    builtins.getattr, or module.qualname."""
    path = torch_path(target)
    if path is not None:
        return path
    if isinstance(target, types.BuiltinFunctionType) and getattr(builtins, target.__name__, None) is target:
        return "builtins." + target.__name__
    if getattr(operator, getattr(target, "__name__", ""), None) is target:
        return "operator." + target.__name__
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or repr(target)
    mod = getattr(target, "__module__", None)
    return f"{mod}.{name}" if mod else name


def _format_arg(arg, max_list_len: float = float("inf")) -> str:
    if isinstance(arg, Node):
        return "%" + arg.name
    if isinstance(arg, tuple) and not hasattr(arg, "_fields"):
        items = ", ".join(_format_arg(a) for a in arg)
        return f"({items},)" if len(arg) == 1 else f"({items})"
    if isinstance(arg, list):
        return "[" + ", ".join(_format_arg(a) for a in arg) + "]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    return str(arg)


class Node:
    """A node of a Graph. `op` is the kind of operation, `target` what it calls or reads (a function for
    call_function, a method name for call_method, a submodule / attribute path for call_module / get_attr, the
    argument name for placeholder), `args`/`kwargs` its inputs; `users` maps each node reading this one to
    None."""

    def __init__(self, graph, name: str, op: str, target: Target, args: tuple, kwargs: dict,
                 return_type: Any = None) -> None:
        if op not in OPS:
            raise ValueError(f"Node: op must be one of {OPS[:-1]}, got {op!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target).__name__} but a Callable is expected")
        if op in ("call_method", "call_module", "get_attr", "placeholder") and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target).__name__} but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes: dict = {}
        self.users: dict = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self.meta: dict = {}
        self._args: tuple = ()
        self._kwargs: dict = {}
        self._update_args_kwargs(args, kwargs)

    # --- the linked list ----------------------------------------------------------------------------
    @property
    def next(self) -> "Node":
        return self._next

    @property
    def prev(self) -> "Node":
        return self._prev

    def prepend(self, x: "Node") -> None:
        """Move x (a node of the same graph) to just before this node."""
        if x is self:
            return
        if x.graph is not self.graph:
            raise AssertionError("Attempting to move a Node into a different Graph")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: "Node") -> None:
        """Move x to just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    # --- arguments -----------------------------------------------------------------------------------
    @property
    def args(self) -> tuple:
        return self._args

    @args.setter
    def args(self, a) -> None:
        self._update_args_kwargs(tuple(a), self._kwargs)

    @property
    def kwargs(self) -> dict:
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k) -> None:
        self._update_args_kwargs(self._args, dict(k))

    def _update_args_kwargs(self, args, kwargs) -> None:
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}
        self._args = map_aggregate(tuple(args), self._check_arg)
        self._kwargs = map_aggregate(dict(kwargs), self._check_arg)
        map_arg((self._args, self._kwargs), self._input_nodes.setdefault)
        for n in self._input_nodes:
            n.users.setdefault(self)

    def _check_arg(self, a):
        if isinstance(a, Node) and a._erased:
            raise RuntimeError(f"Node '{self.name}': argument '{a.name}' was erased from its graph")
        return a

    @property
    def all_input_nodes(self) -> list:
        """The distinct Nodes in args and kwargs, in order of appearance."""
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg: Argument) -> None:
        args = list(self._args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg: Argument) -> None:
        self.kwargs = {**self._kwargs, key: arg}

    def replace_input_with(self, old_input: "Node", new_input: "Node") -> None:
        """Every use of old_input in this node's arguments becomes new_input."""
        f = lambda n: new_input if n is old_input else n  # noqa: E731
        self._update_args_kwargs(map_arg(self._args, f), map_arg(self._kwargs, f))

    def replace_all_uses_with(self, replace_with: "Node", delete_user_cb: Callable = lambda user: True, *,
                              propagate_meta: bool = False) -> list:
        """Make every user of this node read replace_with instead (those delete_user_cb accepts); returns the
        users changed. With propagate_meta, replace_with (whose meta must be empty) takes this node's meta."""
        if propagate_meta:
            if replace_with.meta:
                raise AssertionError("Called node.replace_all_uses_with(replace_with, propagate_meta=True), but "
                                     "replace_with already has .meta keys")
            replace_with.meta.update(self.meta)
        changed = []
        for user in list(self.users):
            if user is replace_with or not delete_user_cb(user):
                continue
            user.replace_input_with(self, replace_with)
            changed.append(user)
        return changed

    # --- facts --------------------------------------------------------------------------------------
    def is_impure(self, impure_random: bool = True) -> bool:
        """Whether dead-code elimination must keep this node although nothing reads it."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            op = getattr(self.target, "overloadpacket", self.target)
            return self.target in _IMPURE or getattr(op, "_qualified_op_name", None) in _IMPURE_OPS
        if self.op == "call_method":
            return isinstance(self.target, str) and self.target.endswith("_") and not self.target.endswith("__")
        return False

    @property
    def stack_trace(self):
        return self.meta.get("stack_trace")

    @stack_trace.setter
    def stack_trace(self, trace) -> None:
        self.meta["stack_trace"] = trace

    def _pretty_target(self) -> str:
        if self.op == "call_function":
            return _qualified_name(self.target)
        return str(self.target)

    def format_node(self, placeholder_names=None, maybe_return_typename=None, **kwargs) -> str:
        """One line of `print(graph)`, as fx's."""
        if self.op == "placeholder":
            if placeholder_names is not None:
                placeholder_names.append(self.target)
                return None
            default = f"(default={self.args[0]})" if self.args else ""
            return f"%{self.name} : [num_users={len(self.users)}] = placeholder[target={self.target}]{default}"
        if self.op == "output":
            return f"return {self.args[0]}"
        if self.op == "get_attr":
            return f"%{self.name} : [num_users={len(self.users)}] = get_attr[target={self.target}]"
        return (f"%{self.name} : [num_users={len(self.users)}] = {self.op}[target={self._pretty_target()}]"
                f"(args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__
