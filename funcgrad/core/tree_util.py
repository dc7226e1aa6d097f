"""Pytrees: nested containers (tuple, list, dict, namedtuple, None, registered classes) of leaves."""
from __future__ import annotations

import dataclasses
from collections import OrderedDict, defaultdict
from typing import Any, Callable, NamedTuple

from .array import Array


class _Node(NamedTuple):
    to_iter: Callable      # obj -> (children, aux)
    from_iter: Callable    # (aux, children) -> obj


_registry: dict[type, _Node] = {}
_data_fields: dict[type, tuple] = {}  # registered dataclasses: their children's field names (key paths)


def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable) -> None:
    """Teach the pytree functions a container type: flatten(obj) -> (children, aux_data);
    unflatten(aux_data, children) -> obj."""
    if nodetype in _registry:
        raise ValueError(f"{nodetype.__name__} is already registered as a pytree node")
    _registry[nodetype] = _Node(flatten_func, unflatten_func)


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: the class provides `tree_flatten(self)` and classmethod `tree_unflatten(aux, children)`."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_dataclass(cls: type, data_fields=None, meta_fields=None) -> type:
    """Register a dataclass: `data_fields` are children, `meta_fields` static (default: all fields data)."""
    if data_fields is None:
        fields = [f for f in dataclasses.fields(cls)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    meta_fields = list(meta_fields or [])
    data_fields = list(data_fields)

    def flatten(x):
        return [getattr(x, n) for n in data_fields], tuple(getattr(x, n) for n in meta_fields)

    def unflatten(aux, children):
        kw = dict(zip(data_fields, children))
        kw.update(zip(meta_fields, aux))
        return cls(**kw)

    register_pytree_node(cls, flatten, unflatten)
    _data_fields[cls] = tuple(data_fields)
    return cls


def _dict_flatten(d):
    keys = sorted(d.keys(), key=_sort_key)
    return [d[k] for k in keys], (type(d), tuple(keys), getattr(d, "default_factory", None))


def _sort_key(k):
    return (type(k).__name__, k) if not isinstance(k, (int, float)) else ("", k)


def _dict_unflatten(aux, children):
    typ, keys, factory = aux
    if typ is defaultdict:
        return defaultdict(factory, zip(keys, children))
    return typ(zip(keys, children))


register_pytree_node(tuple, lambda t: (list(t), None), lambda _, c: tuple(c))
register_pytree_node(list, lambda t: (list(t), None), lambda _, c: list(c))
register_pytree_node(dict, _dict_flatten, _dict_unflatten)
register_pytree_node(defaultdict, _dict_flatten, _dict_unflatten)
register_pytree_node(OrderedDict, lambda d: (list(d.values()), (OrderedDict, tuple(d.keys()), None)),
                     _dict_unflatten)


def _node_for(x):
    node = _registry.get(type(x))
    if node is not None:
        return node
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):  # namedtuple
        return _Node(lambda t: (list(t), None), lambda _, c, _t=type(x): _t(*c))
    return None


class PyTreeDef:
    """The structure of a pytree: node type, auxiliary data and children structures."""
    __slots__ = ("kind", "aux", "child_defs", "num_leaves", "_hash")

    def __init__(self, kind, aux, children):
        self.kind, self.aux, self.child_defs = kind, aux, tuple(children)
        if kind == "leaf":
            self.num_leaves = 1
        else:
            self.num_leaves = sum(c.num_leaves for c in self.child_defs)
        self._hash = None

    @property
    def num_nodes(self) -> int:
        return 1 + sum(c.num_nodes for c in self.child_defs)

    def unflatten(self, leaves):
        return tree_unflatten(self, leaves)

    def children(self) -> list:
        """The structures of this node's children (PyTreeDef.children() in JAX)."""
        return list(self.child_defs)

    def _key(self):
        kind = self.kind if isinstance(self.kind, str) else self.kind
        return (kind, _hashable(self.aux), self.child_defs)

    def __eq__(self, other) -> bool:
        return isinstance(other, PyTreeDef) and self._key() == other._key()

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self._key())
        return self._hash

    def __repr__(self) -> str:
        return f"PyTreeDef({self._str()})"

    def _str(self) -> str:
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        kids = ", ".join(c._str() for c in self.child_defs)
        if self.kind is tuple:
            return f"({kids}{',' if len(self.child_defs) == 1 else ''})"
        if self.kind is list:
            return f"[{kids}]"
        if self.kind in (dict, OrderedDict, defaultdict):
            return "{" + ", ".join(f"{k!r}: {c._str()}" for k, c in zip(self.aux[1], self.child_defs)) + "}"
        return f"CustomNode({getattr(self.kind, '__name__', self.kind)}[{self.aux!r}], [{kids}])"


def _hashable(aux):
    try:
        hash(aux)
        return aux
    except TypeError:
        return repr(aux)


_LEAF = PyTreeDef("leaf", None, ())
_NONE = PyTreeDef("none", None, ())


def _flatten(x, leaves, is_leaf):
    if x.__class__ is Array and is_leaf is None:  # the common leaf, without the registry look-up
        leaves.append(x)
        return _LEAF
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    if x is None:
        return _NONE
    node = _node_for(x)
    if node is None:
        leaves.append(x)
        return _LEAF
    children, aux = node.to_iter(x)
    kind = type(x)
    if kind not in _registry:  # namedtuple: remember how to rebuild it
        aux = (kind, aux)
        kind = "namedtuple"
    return PyTreeDef(kind, aux, [_flatten(c, leaves, is_leaf) for c in children])


def tree_flatten(tree, is_leaf: Callable | None = None):
    """(leaves, treedef): the leaves in order, and the structure to rebuild the tree."""
    leaves = []
    return leaves, _flatten(tree, leaves, is_leaf)


def tree_unflatten(treedef: PyTreeDef, leaves):
    it = iter(leaves)
    out = _build(treedef, it)
    rest = list(it)
    if rest:
        raise ValueError(f"tree_unflatten: {treedef.num_leaves} leaves expected, got more ({len(rest)} extra)")
    return out


def _build(td: PyTreeDef, it):
    if td is _LEAF or td.kind == "leaf":
        try:
            return next(it)
        except StopIteration:
            raise ValueError("tree_unflatten: too few leaves for the tree structure") from None
    if td.kind == "none":
        return None
    children = [_build(c, it) for c in td.child_defs]
    if td.kind == "namedtuple":
        typ, _ = td.aux
        return typ(*children)
    return _registry[td.kind].from_iter(td.aux, children)


def tree_leaves(tree, is_leaf=None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def treedef_is_leaf(td: PyTreeDef) -> bool:
    return td.kind == "leaf"


def tree_map(f: Callable, tree, *rest, is_leaf=None):
    """Apply `f` leafwise across one or more trees of the same structure."""
    leaves, td = tree_flatten(tree, is_leaf)
    others = []
    for r in rest:
        r_leaves = flatten_up_to(td, r, "tree_map")
        others.append(r_leaves)
    return tree_unflatten(td, [f(*xs) for xs in zip(leaves, *others)])


def flatten_up_to(td: PyTreeDef, tree, what: str = "tree"):
    """Flatten `tree` to the structure `td` (its leaves there may be subtrees); errors if they differ."""
    out = []
    _up_to(td, tree, out, what, "")
    return out


def _up_to(td, x, out, what, path):
    if td.kind == "leaf":
        out.append(x)
        return
    if td.kind == "none":
        if x is not None:
            raise ValueError(f"{what}: structures differ at {path or 'the root'}: expected None, "
                             f"got {type(x).__name__}")
        return
    node = _node_for(x) if x is not None else None
    kind = type(x)
    expected = td.aux[0] if td.kind == "namedtuple" else td.kind
    if node is None or kind is not expected:
        raise ValueError(f"{what}: structures differ at {path or 'the root'}: expected "
                         f"{getattr(expected, '__name__', expected)}, got {type(x).__name__}")
    children, aux = node.to_iter(x)
    if len(children) != len(td.child_defs) or (td.kind in (dict, OrderedDict, defaultdict)
                                              and aux[1] != td.aux[1]):
        raise ValueError(f"{what}: structures differ at {path or 'the root'}: "
                         f"{len(td.child_defs)} children expected, got {len(children)}"
                         + (f" (keys {list(td.aux[1])} vs {list(aux[1])})" if isinstance(x, dict) else ""))
    keys = td.aux[1] if td.kind in (dict, OrderedDict, defaultdict) else range(len(children))
    for k, c, sub in zip(keys, children, td.child_defs):
        _up_to(sub, c, out, what, f"{path}[{k!r}]")


def tree_all(tree) -> bool:
    return all(tree_leaves(tree))


def tree_reduce(f: Callable, tree, initializer: Any = None):
    import functools
    leaves = tree_leaves(tree)
    return functools.reduce(f, leaves) if initializer is None else functools.reduce(f, leaves, initializer)


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef, pytree_to_transpose):
    flat = flatten_up_to(outer_treedef, pytree_to_transpose)
    inner = [flatten_up_to(inner_treedef, x) for x in flat]
    cols = list(zip(*inner)) if inner else [[] for _ in range(inner_treedef.num_leaves)]
    return tree_unflatten(inner_treedef, [tree_unflatten(outer_treedef, list(c)) for c in cols])


def broadcast_prefix(prefix, tree, what: str = "prefix", is_leaf=None) -> list:
    """Expand a tree prefix (like vmap's in_axes) to one entry per leaf of `tree`."""
    out = []
    p_leaves, p_td = tree_flatten(prefix, is_leaf=lambda x: x is None)
    subtrees = flatten_up_to(p_td, tree, what)
    for p, sub in zip(p_leaves, subtrees):
        out.extend([p] * len(tree_leaves(sub, is_leaf)))
    return out


__all__ = ["tree_flatten", "tree_unflatten", "tree_map", "tree_leaves", "tree_structure",
           "register_pytree_node", "register_pytree_node_class", "register_dataclass",
           "PyTreeDef", "flatten_up_to", "broadcast_prefix", "tree_all", "tree_reduce",
           "tree_transpose", "treedef_is_leaf"]
