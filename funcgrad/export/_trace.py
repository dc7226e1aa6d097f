"""The tracer behind torch.export: funcgrad.fx's symbolic tracing with Proxies that also carry the example value.

Every recorded node is run on the example inputs as it is made (its value goes to `node.meta["val"]`), so a
program may read shapes, dtypes and devices and branch on them as eager code does: static sizes are plain ints,
and only a size declared dynamic (a Dim) is a Proxy of a `sym_size_int` node, which carries the symbol's range
so that a comparison the whole range agrees on is decided at trace time. Branching on anything else traced
(a tensor's value, or a dynamic size the range does not settle) raises as torch.export does; `torch.cond` with a
traced predicate records both branches as sub-GraphModules. Parameters, buffers and tensor constants are lifted
to placeholders in front of the user inputs (p_*, b_*, c_*), and every module is traced through, so the graph
holds only call_function nodes of funcgrad's torch functions, operators and Tensor methods."""
from __future__ import annotations

import builtins
import operator
from typing import Any, Callable

from .._torch._cond import cond as _eager_cond
from .._torch._tensor import Tensor
from ..fx import tracer as _fx_tracer
from ..fx.graph import Graph
from ..fx.graph_module import GraphModule
from ..fx.node import Node, map_aggregate
from ..fx.proxy import Proxy
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from ._expr import Poly
from .dynamic_shapes import GuardOnDataDependentSymNode, UserError, int_oo

__all__ = ["sym_size_int", "cond", "tensor_method", "flatten", "unflatten_spec", "Symbol", "Derived"]


# --- the functions the graph calls beyond torch's ----------------------------------------------------------

def sym_size_int(t: Tensor, dim: int) -> int:
    """The size of dimension `dim` of t, read when the graph runs (torch.ops.aten.sym_size.int)."""
    return t.shape[dim]


def cond(pred, true_fn: Callable, false_fn: Callable, operands: tuple) -> tuple:
    """The node torch.cond becomes (torch.ops.higher_order.cond): the branch pred picks, called on operands;
    the branches are GraphModules returning tuples."""
    if isinstance(pred, Tensor):
        pred = bool(pred.item())
    return true_fn(*operands) if pred else false_fn(*operands)


_METHODS: dict = {}


def tensor_method(name: str) -> Callable:
    """The function standing for `x.<name>(...)` in a graph (torch.Tensor.<name>): it calls the method of its
    first argument, so a graph runs whatever Tensor class it is given."""
    f = _METHODS.get(name)
    if f is None:
        def f(self, *args, **kwargs):
            return getattr(self, name)(*args, **kwargs)
        f.__name__, f.__qualname__, f.__module__ = name, f"Tensor.{name}", __name__
        f.__fx_method__ = name
        _METHODS[name] = f
    return f


# --- pytrees of inputs and outputs (tuples, lists, dicts, leaves) ------------------------------------------

def flatten(tree) -> tuple:
    """(leaves, spec) of nested tuples/lists/dicts; spec is a nested tuple describing the structure."""
    leaves: list = []

    def walk(a):
        if isinstance(a, (tuple, list)) and not hasattr(a, "_fields"):
            return (type(a).__name__, tuple(walk(x) for x in a))
        if isinstance(a, dict):
            return ("dict", tuple((k, walk(v)) for k, v in a.items()))
        leaves.append(a)
        return "*"
    return leaves, walk(tree)


def unflatten_spec(leaves, spec):
    """The structure spec describes, filled with leaves in order."""
    it = iter(leaves)

    def build(s):
        if s == "*":
            return next(it)
        kind, items = s
        if kind == "dict":
            return {k: build(v) for k, v in items}
        seq = [build(x) for x in items]
        return tuple(seq) if kind == "tuple" else seq
    return build(spec)


def spec_str(spec) -> str:
    if spec == "*":
        return "*"
    kind, items = spec
    if kind == "dict":
        return "{" + ", ".join(f"{k!r}: {spec_str(v)}" for k, v in items) + "}"
    inner = ", ".join(spec_str(x) for x in items)
    return f"({inner},)" if kind == "tuple" and len(items) == 1 else (f"({inner})" if kind == "tuple" else f"[{inner}]")


# --- symbolic sizes ---------------------------------------------------------------------------------------

class Symbol:
    """A dynamic size: its name (s0, s1, ...), the Dim it came from, its range and the example value."""

    def __init__(self, name: str, dim_name: str, lo: int, hi, hint: int, source: str) -> None:
        self.name, self.dim_name, self.lo, self.hi, self.hint, self.source = name, dim_name, lo, hi, hint, source


class Derived:
    """A size given by a derived Dim (`2 * batch + 1`): a*root + b of a dynamic size root (a Symbol), with the
    derived Dim's range [lo, hi] and the input dimension it was first seen at (source)."""

    def __init__(self, root: Symbol, a: int, b: int, dim_name: str, lo: int, hi, source: str) -> None:
        self.root, self.a, self.b, self.dim_name, self.lo, self.hi, self.source = root, a, b, dim_name, lo, hi, source

    def poly(self) -> Poly:
        return Poly({(self.root.name,): self.a, (): self.b})

    name = property(lambda self: str(self.poly()))
    hint = property(lambda self: self.a * self.root.hint + self.b)


_CMP = {operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">=", operator.eq: "==",
        operator.ne: "!="}


def _holds_on(op, a: int, b: int, c, lo: int, hi):
    """The sub-range of [lo, hi] where `a*s + b op c` holds: (lo', hi') or None when empty."""
    if op in (operator.eq, operator.ne):
        if (c - b) % a:
            return (lo, hi) if op is operator.ne else None
        s = (c - b) // a
        if op is operator.eq:
            return (s, s) if lo <= s <= hi else None
        return None if lo == hi == s else (lo, hi)
    # a*s + b op c  <=>  s op' (c - b) / a  (op flipped when a < 0)
    flip = a < 0
    t = (c - b) / a
    strict_lt = {operator.lt: True, operator.le: False, operator.gt: None, operator.ge: None}[op]
    upper = (strict_lt is not None) != flip  # the set is s <(=) t
    strict = op in (operator.lt, operator.gt)
    if upper:
        bound = int(t) - 1 if strict and t == int(t) else int(t // 1)
        lo2, hi2 = lo, bound if hi is int_oo else min(hi, bound)
    else:
        bound = int(t) + 1 if strict and t == int(t) else -int((-t) // 1)
        lo2, hi2 = max(lo, bound), hi
    return None if hi2 is not int_oo and lo2 > hi2 else (lo2, hi2)


# --- proxies that carry values ----------------------------------------------------------------------------

_META_ATTRS = frozenset({"dtype", "device", "ndim", "is_cuda", "is_sparse", "is_quantized", "is_meta", "layout",
                         "requires_grad", "is_leaf", "is_nested", "names", "itemsize"})
_META_METHODS = frozenset({"dim", "ndimension", "is_floating_point", "is_complex", "element_size", "get_device",
                           "is_contiguous", "stride", "type", "is_signed", "storage_offset", "has_names"})


class ExportProxy(Proxy):
    """A traced value with its example value (`val`) and, for an int made from dynamic sizes, its symbolic
    form a*s + b (`sym`: (Symbol, a, b))."""

    def __init__(self, node: Node, tracer, val: Any, sym=None) -> None:
        super().__init__(node, tracer)
        self.val = val
        self.sym = sym

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str):
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        val = self.__dict__.get("val")
        if k == "shape":
            return self.tracer.shape_of(self)
        if k == "size":
            return lambda dim=None: self.tracer.shape_of(self) if dim is None else self.tracer.shape_of(self)[dim]
        if k == "numel" or k == "nelement":
            return lambda: self.tracer.numel_of(self)
        if isinstance(val, Tensor) and k in _META_ATTRS:
            return getattr(val, k)
        if isinstance(val, Tensor) and k in _META_METHODS:
            return getattr(val, k)
        return _Attribute(self, k)

    def __len__(self) -> int:
        if isinstance(self.val, Tensor):
            n = self.tracer.shape_of(self)[0]
            if isinstance(n, Proxy):
                return self.tracer.concretize(n, "len()")
            return n
        return len(self.val)

    def __iter__(self):
        return iter([self[i] for i in range(len(self))])

    def __bool__(self) -> bool:
        return bool(self.tracer.concretize(self, "bool()"))

    def __int__(self) -> int:
        return int(self.tracer.concretize(self, "int()"))

    def __float__(self) -> float:
        return float(self.tracer.concretize(self, "float()"))

    def __index__(self) -> int:
        return operator.index(self.tracer.concretize(self, "an index"))


class _Attribute(ExportProxy):
    """`proxy.name`: a call of method `name` when called, else the attribute's value (a getattr node)."""

    def __init__(self, root: ExportProxy, attr: str) -> None:  # noqa: super-init (made lazily)
        self.root, self.attr, self.tracer = root, attr, root.tracer
        self._proxy = None

    def _resolved(self) -> ExportProxy:
        if self._proxy is None:
            self._proxy = self.tracer.create_proxy("call_function", builtins.getattr, (self.root, self.attr), {})
        return self._proxy

    node = property(lambda self: self._resolved().node)
    val = property(lambda self: self._resolved().val)
    sym = property(lambda self: self._resolved().sym)

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


def _value(a):
    """a with every Proxy replaced by its example value."""
    return map_aggregate(a, lambda x: x.val if isinstance(x, ExportProxy) else x)


def _first_proxy(a):
    found = []
    map_aggregate(a, lambda x: found.append(x) if isinstance(x, ExportProxy) and not found else None)
    return found[0] if found else None


# --- the tracer -------------------------------------------------------------------------------------------

class ExportTracer(_fx_tracer.Tracer):
    """Records a Module's forward with every module traced through and its state lifted to placeholders.
    A tracer with a `parent` records one branch of torch.cond: what it reads from the parent's graph becomes
    an extra placeholder of its own (an operand the cond node passes)."""

    def __init__(self, root: Module, parent: "ExportTracer | None" = None) -> None:
        super().__init__(autowrap_modules=(), autowrap_functions=())
        self.root = root
        self.parent = parent
        self.graph = Graph(tracer_cls=type(self))
        self.submodules: dict = {}   # get_attr target -> GraphModule (cond branches)
        self.state: dict = {}        # id(tensor) -> (kind, target, proxy)
        self.constants: dict = {}    # constant target -> tensor
        self.lifted: list = []       # (outer proxy, local proxy) for a branch tracer
        self.symbols: list = [] if parent is None else parent.symbols
        self._sym_nodes: dict = {}
        self._first_user = None

    # names of the root's tensors, for lifting
    def lift_state(self) -> None:
        """Placeholders for every parameter and buffer of the root (torch's order: parameters, buffers)."""
        persistent = set(self.root.state_dict(keep_vars=True))
        for kind, prefix, items in (("PARAMETER", "p_", self.root.named_parameters(remove_duplicate=False)),
                                    ("BUFFER", "b_", self.root.named_buffers(remove_duplicate=False))):
            for name, t in items:
                if id(t) in self.state:
                    continue
                node = self.graph.placeholder(prefix + name.replace(".", "_"))
                val = t.detach().clone()
                node.meta["val"] = val
                self.state[id(t)] = (kind, name, ExportProxy(node, self, val), name in persistent)
        self._tensor_attrs = {}
        for mname, m in self.root.named_modules():
            for k, v in vars(m).items():
                if isinstance(v, Tensor) and not isinstance(v, Parameter):
                    self._tensor_attrs.setdefault(id(v), f"{mname}.{k}" if mname else k)

    def _lift_constant(self, t: Tensor) -> ExportProxy:
        target = self._tensor_attrs.get(id(t))
        if target is None:
            i = 0
            while f"lifted_tensor_{i}" in self.constants:
                i += 1
            target = f"lifted_tensor_{i}"
        with self.graph.inserting_before(self._first_user):
            node = self.graph.placeholder("c_" + target.replace(".", "_"))
        val = t.detach().clone()
        node.meta["val"] = val
        proxy = ExportProxy(node, self, val)
        self.constants[target] = t.detach()
        self.state[id(t)] = ("CONSTANT_TENSOR", target, proxy, None)
        return proxy

    def _innermost(self) -> "ExportTracer":
        cur = _fx_tracer._current()
        t = cur
        while isinstance(t, ExportTracer):
            if t is self:
                return cur
            t = t.parent
        return self

    # --- Tracer's hooks --------------------------------------------------------------------------------
    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        return False

    def call_module(self, m: Module, forward: Callable, args: tuple, kwargs: dict) -> Any:
        return forward(*args, **kwargs)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict) -> Any:
        if isinstance(attr_val, Tensor):
            return self.tensor_proxy(attr_val)
        return attr_val

    def tensor_proxy(self, t: Tensor) -> ExportProxy:
        """The placeholder standing for a tensor of the root's state (lifted as a constant when not state)."""
        if self.parent is not None:
            return self.local(self.parent.tensor_proxy(t))
        hit = self.state.get(id(t))
        return hit[2] if hit is not None else self._lift_constant(t)

    def local(self, p: ExportProxy) -> ExportProxy:
        """p as a value of this (branch) tracer: a proxy of an enclosing tracer becomes a new placeholder."""
        if p.tracer is self:
            return p
        if self.parent is not None and p.tracer is not self.parent:
            p = self.parent.local(p)
        for outer, mine in self.lifted:
            if outer is p:
                return mine
        node = self.graph.placeholder(p.node.name)
        node.meta["val"] = p.val
        mine = ExportProxy(node, self, p.val, p.sym)
        self.lifted.append((p, mine))
        return mine

    def create_arg(self, a: Any) -> Any:
        if isinstance(a, ExportProxy):
            return self.local(a).node if not isinstance(a, _Attribute) else self.local(a._resolved()).node
        if isinstance(a, Tensor):
            return self.tensor_proxy(a).node
        if isinstance(a, (GraphModule,)):
            raise NotImplementedError("a GraphModule as an argument")
        return super().create_arg(a)

    def create_proxy(self, kind: str, target, args: tuple, kwargs: dict, name: str | None = None,
                     type_expr: Any = None, proxy_factory_fn: Callable | None = None) -> ExportProxy:
        inner = self._innermost()
        if inner is not self:
            return inner.create_proxy(kind, target, args, kwargs, name, type_expr, proxy_factory_fn)
        if kind == "call_method":
            kind, target = "call_function", tensor_method(target)
        kwargs = dict(kwargs or {})
        args_v, kwargs_v = _value(tuple(args)), _value(kwargs)
        val = target(*args_v, **kwargs_v)
        sym = self._sym_of(target, args, kwargs)
        node = self.create_node(kind, target, self.create_arg(tuple(args)), self.create_arg(kwargs), name)
        node.meta["val"] = val
        if self.symbols and isinstance(val, Tensor):
            node.meta["dyn"] = [self._match(n) for n in val.shape]
        return ExportProxy(node, self, val, sym)

    def _sym_of(self, target, args, kwargs):
        """a*s + b for an int arithmetic result of one dynamic size and int constants, else None."""
        if kwargs or target not in (operator.add, operator.sub, operator.mul, operator.neg):
            return None
        forms = []
        for a in args:
            if isinstance(a, ExportProxy):
                if a.sym is None:
                    return None
                forms.append(a.sym)
            elif isinstance(a, int) and not isinstance(a, bool):
                forms.append((None, 0, a))
            else:
                return None
        syms = {f[0] for f in forms if f[0] is not None}
        if len(syms) != 1:
            return None
        s = syms.pop()
        if target is operator.neg:
            return (s, -forms[0][1], -forms[0][2])
        (_, a1, b1), (_, a2, b2) = forms
        if target is operator.add:
            return (s, a1 + a2, b1 + b2)
        if target is operator.sub:
            return (s, a1 - a2, b1 - b2)
        if a1 and a2:
            return None
        return (s, a1 * b2 + a2 * b1, b1 * b2)

    # --- sizes ---------------------------------------------------------------------------------------
    def shape_of(self, p: ExportProxy) -> tuple:
        """p's shape: ints, and a sym_size_int Proxy for each dimension whose example size is a dynamic one."""
        val = p.val
        if not isinstance(val, Tensor):
            return _Attribute(p, "shape")
        dims = p.node.meta.get("dyn")
        out = []
        for i, n in enumerate(val.shape):
            s = dims[i] if dims is not None else self._match(n)
            if s is None:
                out.append(n)
                continue
            key = (p.node, i)
            if key not in self._sym_nodes:
                node = self.create_node("call_function", sym_size_int, (self.create_arg(p), i), {})
                node.meta["val"] = n
                sym = (s.root, s.a, s.b) if isinstance(s, Derived) else (s, 1, 0)
                self._sym_nodes[key] = ExportProxy(node, self, n, sym)
            out.append(self._sym_nodes[key])
        return tuple(out)

    def _match(self, n: int):
        """The dynamic size (Symbol or Derived) whose example value is n, else None."""
        for s in self.symbols:
            if s.hint == n:
                return s
        return None

    def numel_of(self, p: ExportProxy):
        shape = self.shape_of(p)
        out = 1
        for n in shape:
            out = out * n
        return out

    def concretize(self, p: ExportProxy, how: str):
        """The example value of p where the program needs a Python value: decided over a dynamic size's whole
        range when it can be, else torch.export's error."""
        if p.sym is not None:
            return p.val  # an int made from sizes: the value is the same for every allowed size only if static
        node = p.node
        if node.target in _CMP and len(node.args) == 2:
            a, c = node.args
            pa = self._proxy_of(a)
            if pa is not None and pa.sym is not None and isinstance(c, int):
                s, k, b = pa.sym
                holds = _holds_on(node.target, k, b, c, s.lo, s.hi)
                fails = _holds_on(_NEGATE[node.target], k, b, c, s.lo, s.hi)
                if holds is None or fails is None:
                    return holds is not None
                keep = holds if p.val else fails
                guard = f"{max(keep[0], 2)} <= {s.source} and {s.source} <= {keep[1]!r}"
                fix = [f"min={keep[0]}"] if keep[0] != s.lo else []
                if keep[1] != s.hi:
                    fix.append(f"max={keep[1]}")
                msg = (f"Constraints violated ({s.dim_name})! For more information, run with "
                       f'TORCH_LOGS="+dynamic".\n  - Not all values of {s.dim_name} = {s.source} in the specified '
                       f"range satisfy the generated guard {guard}\nSuggested fixes:\n  {s.dim_name} = "
                       + (f"Dim('{s.dim_name}', {', '.join(fix)})" if keep[0] != keep[1] else str(keep[0])))
                raise UserError(msg + _EXPORT_HINT)
        raise GuardOnDataDependentSymNode(
            f"Could not guard on data-dependent expression {node.name} (the {how} of a traced value, made by "
            f"{node.format_node() if hasattr(node, 'format_node') else node.name}). Python control flow on a "
            "tensor's value cannot be exported: write it with torch.cond(pred, true_fn, false_fn, operands), "
            "or compute the condition outside the exported module." + _EXPORT_HINT)

    def _proxy_of(self, node):
        if not isinstance(node, Node):
            return None
        for p in self._sym_nodes.values():
            if p.node is node:
                return p
        return self._sym_proxies.get(node) if hasattr(self, "_sym_proxies") else None

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None) -> Node:
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)


_NEGATE = {operator.lt: operator.ge, operator.ge: operator.lt, operator.gt: operator.le, operator.le: operator.gt,
           operator.eq: operator.ne, operator.ne: operator.eq}
_EXPORT_HINT = ("\n\nThe error above occurred when calling torch.export.export. If you would like to view some more "
                "information about this error, and get a list of all other errors that may occur in your export "
                "call, you can replace your `export()` call with `draft_export()`.")


def _export_cond(pred, true_fn: Callable, false_fn: Callable, operands=()):
    """torch.cond while exporting: a traced predicate records both branches as sub-GraphModules and a cond node;
    a Python or untraced predicate picks the branch now (as torch specialises)."""
    operands = tuple(operands)
    tracer = _fx_tracer._current()
    if not isinstance(tracer, ExportTracer) or not isinstance(pred, ExportProxy) and \
            _first_proxy(operands) is None and not isinstance(pred, ExportProxy):
        return _eager_cond(pred, true_fn, false_fn, operands)
    if not isinstance(pred, ExportProxy):
        return _eager_cond(pred, true_fn, false_fn, operands)
    if isinstance(pred.val, Tensor) and pred.val.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred.val}.")
    branches, outs = [], []
    for fn in (true_fn, false_fn):
        sub = ExportTracer(tracer.root, parent=tracer)
        ins = []
        for i, op in enumerate(operands):
            if not isinstance(op, (ExportProxy, Tensor)):
                raise UserError(f"torch.cond: operand {i} is a {type(op).__name__}; operands must be tensors")
            outer = tracer.local(op) if isinstance(op, ExportProxy) else tracer.tensor_proxy(op)
            ins.append(sub.local(outer))
        _fx_tracer._local.tracers.append(sub)
        try:
            res = fn(*ins)
        finally:
            _fx_tracer._local.tracers.pop()
        single = not isinstance(res, (tuple, list))
        res = (res,) if single else tuple(res)
        sub.graph.output(sub.create_arg(res))
        branches.append(sub)
        outs.append((single, res))
    # both branches take the same operands: the lifted values of either, in one order
    extra = []
    for sub in branches:
        for outer, _ in sub.lifted[len(operands):]:
            if all(outer is not e for e in extra):
                extra.append(outer)
    all_outer = [tracer.local(o) if isinstance(o, ExportProxy) else tracer.tensor_proxy(o) for o in operands]
    all_outer += extra
    gms = []
    for sub in branches:
        have = [o for o, _ in sub.lifted]
        for outer in extra:
            if all(outer is not h for h in have):
                sub.local(outer)
        _reorder_placeholders(sub, all_outer)
        gms.append(GraphModule(sub.submodules, sub.graph, "GraphModule"))
    i = 0
    while f"true_graph_{i}" in tracer.submodules:
        i += 1
    names = (f"true_graph_{i}", f"false_graph_{i}")
    for n, gm in zip(names, gms):
        tracer.submodules[n] = gm
    getters = [tracer.create_node("get_attr", n, (), {}) for n in names]
    all_ops = all_outer
    val = _eager_cond(pred.val, lambda *a: gms[0](*a), lambda *a: gms[1](*a), tuple(p.val for p in all_ops))
    node = tracer.create_node("call_function", cond, (tracer.create_arg(pred), getters[0], getters[1],
                                                      tuple(p.node for p in all_ops)), {})
    node.meta["val"] = val
    res = ExportProxy(node, tracer, val)
    items = tuple(tracer.create_proxy("call_function", operator.getitem, (res, k), {}) for k in range(len(val)))
    return items[0] if outs[0][0] else items


def _reorder_placeholders(sub: ExportTracer, outer_order: list) -> None:
    """Put sub's placeholders in the order of the operands the cond node passes (outer_order)."""
    pos = {}
    for outer, mine in sub.lifted:
        pos[mine.node] = next(i for i, o in enumerate(outer_order) if o is outer)
    phs = sorted((n for n in sub.graph.nodes if n.op == "placeholder"), key=lambda n: pos[n])
    first = next(n for n in sub.graph.nodes if n.op != "placeholder")
    for n in phs:
        first.prepend(n)
