"""Pytrees: nested containers (tuple, list, dict, namedtuple, None, registered classes) of leaves.

The one implementation of JAX's tree utilities: registration, flatten / unflatten and the functions over
leaves, key paths (`DictKey`, `SequenceKey`, `GetAttrKey`, `FlattenedIndexKey`, `keystr`, the `*_with_path`
functions) and `Partial`. funcgrad.tree_util and funcgrad.tree (jax.tree's short names) re-export it.
"""
from __future__ import annotations

import builtins
import dataclasses
import functools
from collections import OrderedDict, defaultdict
from collections.abc import Hashable
from typing import Any, Callable, NamedTuple, TypeVar

from .array import Array


class _Node(NamedTuple):
    to_iter: Callable      # obj -> (children, aux)
    from_iter: Callable    # (aux, children) -> obj


_registry: dict[type, _Node] = {}
_data_fields: dict[type, tuple] = {}  # registered dataclasses: their children's field names (key paths)


def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable) -> None:
    """Teach the pytree functions (and so grad, vmap, jit, ...) a container type.

    Args:
        nodetype: the class to register (ValueError if it is registered already).
        flatten_func: `flatten(obj) -> (children, aux_data)`: the child subtrees, and the static rest
            (hashable; it is part of the tree structure and of jit's cache key).
        unflatten_func: `unflatten(aux_data, children) -> obj`.

    Examples:
        >>> from funcgrad import tree_util
        >>> class Point:
        ...     def __init__(self, x, y):
        ...         self.x, self.y = x, y
        >>> tree_util.register_pytree_node(Point, lambda p: ((p.x, p.y), None),
        ...                                lambda aux, children: Point(*children))
        >>> tree_util.tree_leaves(Point(1.0, 2.0))
        [1.0, 2.0]
    """
    if nodetype in _registry:
        raise ValueError(f"{nodetype.__name__} is already registered as a pytree node")
    _registry[nodetype] = _Node(flatten_func, unflatten_func)


def register_pytree_node_class(cls: type) -> type:
    """Class decorator registering `cls` as a pytree node through its own methods.

    The class provides `tree_flatten(self) -> (children, aux_data)` and the classmethod
    `tree_unflatten(aux_data, children)`. Returns the class.

    Examples:
        >>> from funcgrad import tree_util
        >>> @tree_util.register_pytree_node_class
        ... class Pair:
        ...     def __init__(self, a, b):
        ...         self.a, self.b = a, b
        ...     def tree_flatten(self):
        ...         return (self.a, self.b), None
        ...     @classmethod
        ...     def tree_unflatten(cls, aux, children):
        ...         return cls(*children)
        >>> tree_util.tree_map(lambda v: v * 10, Pair(1, 2)).b
        20
    """
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
    """A dict's children in the order of its sorted keys, as JAX's: keys that do not compare (1 and 'a')
    raise JAX's ValueError (a defaultdict, flattened by JAX in Python, its TypeError)."""
    try:
        keys = sorted(d.keys())
    except TypeError as e:
        if isinstance(d, defaultdict):
            raise
        raise ValueError("Comparator raised exception while sorting pytree dictionary keys.") from e
    return [d[k] for k in keys], (type(d), tuple(keys), getattr(d, "default_factory", None))


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

    def flatten_up_to(self, xs) -> list:
        """The subtrees of xs at this structure's leaves (PyTreeDef.flatten_up_to in JAX): ValueError where
        xs does not have this structure down to them."""
        return flatten_up_to(self, xs, "flatten_up_to")

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
        if self.kind is dict:
            return "{" + ", ".join(f"{k!r}: {c._str()}" for k, c in zip(self.aux[1], self.child_defs)) + "}"
        # JAX's: the other nodes as CustomNode(name[aux data, as str prints it], [children])
        if self.kind is OrderedDict:
            aux = tuple(self.aux[1])
        elif self.kind is defaultdict:
            aux = (self.aux[2], tuple(self.aux[1]))
        elif self.kind == "namedtuple":
            return f"CustomNode(namedtuple[{self.aux[0].__name__}], [{kids}])"
        else:
            aux = self.aux
        return f"CustomNode({getattr(self.kind, '__name__', self.kind)}[{aux}], [{kids}])"


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
    """Split a pytree into its leaves and its structure.

    Containers are tuples, lists, dicts (in sorted key order), None (a node without children),
    namedtuples, OrderedDicts, defaultdicts and registered classes; everything else is a leaf.

    Args:
        tree: the pytree.
        is_leaf: a predicate that stops the recursion: subtrees for which it returns True are leaves.

    Returns:
        `(leaves, treedef)`: the leaves in order, and the `PyTreeDef` that `tree_unflatten` rebuilds from.

    Examples:
        >>> from funcgrad import tree_util
        >>> tree_util.tree_flatten({"a": 1, "b": (2, 3)})
        ([1, 2, 3], PyTreeDef({'a': *, 'b': (*, *)}))
    """
    leaves = []
    return leaves, _flatten(tree, leaves, is_leaf)


def tree_unflatten(treedef: PyTreeDef, leaves):
    """Rebuild a pytree of structure `treedef` from an iterable of leaves (ValueError on a count mismatch).

    Examples:
        >>> from funcgrad import tree_util
        >>> tree_util.tree_unflatten(tree_util.tree_structure((0, {"a": 0})), [5, 6])
        (5, {'a': 6})
    """
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
    """The leaves of a pytree in flattening order (None is an empty node, not a leaf).

    Examples:
        >>> from funcgrad import tree_util
        >>> tree_util.tree_leaves([1, (2, None), {"c": 3}])
        [1, 2, 3]
    """
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None) -> PyTreeDef:
    """The structure (`PyTreeDef`) of a pytree, without its leaves.

    Examples:
        >>> from funcgrad import tree_util
        >>> tree_util.tree_structure((1, {"a": 2}))
        PyTreeDef((*, {'a': *}))
    """
    return tree_flatten(tree, is_leaf)[1]


def treedef_is_leaf(td: PyTreeDef) -> bool:
    """Whether the treedef is that of a single leaf (tree_structure(x) for an x that is not a container).
    JAX also says True for None's treedef (one node, no leaves); here that is False."""
    return td.kind == "leaf"


def tree_map(f: Callable, tree, *rest, is_leaf=None):
    """Apply `f` leafwise across one or more pytrees of the same structure.

    Args:
        f: called as `f(leaf, *corresponding_leaves_of_rest)`.
        tree: the pytree whose structure the result has.
        *rest: more pytrees with `tree`'s structure (or with `tree`'s leaves replaced by subtrees).
        is_leaf: a predicate marking subtrees to treat as leaves.

    Returns:
        A pytree of `tree`'s structure holding `f`'s results. This is how parameters are updated:
        `tree_map(lambda p, g: p - lr * g, params, grads)`.

    Examples:
        >>> from funcgrad import tree_util
        >>> tree_util.tree_map(lambda x: x * 2, {"a": 1, "b": (2, 3)})
        {'a': 2, 'b': (4, 6)}
        >>> tree_util.tree_map(lambda p, g: p - 0.5 * g, [1.0, 2.0], [2.0, 2.0])
        [0.0, 1.0]
    """
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


# --- functions over the leaves ----------------------------------------------------------------------------
class _Unspecified:
    def __repr__(self) -> str:
        return "<unspecified>"


_NO_INIT = _Unspecified()  # tree_reduce without an initializer (None is a real one)
_NO_IDENTITY = _Unspecified()  # tree_reduce_associative without an identity


def tree_all(tree, *, is_leaf: Callable | None = None) -> bool:
    """Whether every leaf is truthy (True for a tree without leaves)."""
    return builtins.all(tree_leaves(tree, is_leaf))


def tree_reduce(function: Callable, tree, initializer: Any = _NO_INIT, is_leaf: Callable | None = None):
    """`functools.reduce` over the leaves, starting from `initializer` when one is given (None included).

    Examples:
        >>> from funcgrad import tree_util
        >>> tree_util.tree_reduce(lambda a, b: a + b, [1, (2, 3)])
        6
    """
    ls = tree_leaves(tree, is_leaf)
    if initializer is _NO_INIT:
        if not ls:
            raise TypeError("tree_reduce: reduce of a tree with no leaves and no initializer")
        return functools.reduce(function, ls)
    return functools.reduce(function, ls, initializer)


def tree_reduce_associative(operation: Callable, tree, *, identity: Any = _NO_IDENTITY,
                            is_leaf: Callable | None = None):
    """Combine the leaves with an associative `operation`, pairwise as a balanced tree (so it may be
    evaluated in parallel); `identity` is the result for a tree without leaves."""
    items = tree_leaves(tree, is_leaf)
    if not items:
        if identity is _NO_IDENTITY:
            raise ValueError("Must specify identity for parallel reduction of empty sequence.")
        return identity

    def combine(seq):  # the first half (rounded down) on the left, as JAX splits
        if len(seq) == 1:
            return seq[0]
        half = len(seq) // 2
        return operation(combine(seq[:half]), combine(seq[half:]))
    return combine(items)


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose):
    """Turn an outer-of-inner tree into an inner-of-outer one (inner_treedef None: inferred from the
    first outer entry)."""
    flat = flatten_up_to(outer_treedef, pytree_to_transpose)
    if inner_treedef is None:
        if not flat:
            raise ValueError("tree_transpose: cannot infer the inner structure of an empty outer tree")
        inner_treedef = tree_structure(flat[0])
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


def tree_broadcast(prefix_tree, full_tree, is_leaf: Callable | None = None):
    """`prefix_tree` (a prefix of full_tree's structure) with each of its leaves repeated over the subtree
    of full_tree it stands for: the result has full_tree's structure."""
    p_leaves, p_td = tree_flatten(prefix_tree, is_leaf=is_leaf)
    subs = flatten_up_to(p_td, full_tree, "tree_broadcast")
    return tree_unflatten(p_td, [tree_map(lambda _, v=p: v, s) for p, s in zip(p_leaves, subs)])


def is_tree_node(typ: type) -> bool:
    """Whether instances of `typ` are pytree nodes (containers) rather than leaves."""
    return typ in _registry or typ is type(None) or (issubclass(typ, tuple) and hasattr(typ, "_fields"))


def flatten_one_level(tree):
    """(children, node data) of the top node of `tree`: for a dict its keys, for a namedtuple its class,
    for a tuple or list None; ValueError for a leaf."""
    if tree is None:
        return (), None
    node = _node_for(tree)
    if node is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    children, aux = node.to_iter(tree)
    if isinstance(tree, dict):
        return tuple(children), aux[1]
    if isinstance(tree, list):
        return list(children), None
    if isinstance(tree, tuple):
        if hasattr(type(tree), "_fields"):
            return list(children), type(tree)
        return tuple(children), None
    return children, aux


def treedef_tuple(treedefs) -> PyTreeDef:
    """The structure of a tuple whose elements have the structures `treedefs`."""
    treedefs = tuple(treedefs)
    for t in treedefs:
        if not isinstance(t, PyTreeDef):
            raise TypeError(f"treedef_tuple: expected PyTreeDefs, got {type(t).__name__}")
    return PyTreeDef(tuple, None, treedefs)


def treedef_children(td: PyTreeDef) -> list:
    """The structures of a node's children."""
    return list(td.child_defs)


def all_leaves(iterable, is_leaf: Callable | None = None) -> bool:
    """Whether every element of `iterable` is a leaf (a structure with exactly itself as its one leaf)."""
    for x in iterable:
        if tree_flatten(x, is_leaf)[1] != _LEAF:
            return False
    return True


# --- key paths: where each leaf sits ----------------------------------------------------------------------
# A path is a tuple of keys from the root to a leaf; the leaves come in tree_flatten's order.
KeyEntry = TypeVar("KeyEntry", bound=Hashable)
KeyPath = tuple[KeyEntry, ...]


class DictKey(NamedTuple):
    """A dict entry: `tree[key]`."""
    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"


class SequenceKey(NamedTuple):
    """A list or tuple element: `tree[idx]`."""
    idx: int

    def __str__(self) -> str:
        return f"[{self.idx}]"


class GetAttrKey(NamedTuple):
    """A named field (namedtuples, registered dataclasses): `tree.name`."""
    name: str

    def __str__(self) -> str:
        return f".{self.name}"


class FlattenedIndexKey(NamedTuple):
    """The i-th child of a custom node registered without keys."""
    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


def keystr(keys: tuple, *, simple: bool = False, separator: str = "") -> str:
    """A path as a string, e.g. `"['a'][0].x"` (simple=True: "a/0/x" style with `separator`)."""
    if not simple:
        return "".join(str(k) for k in keys)
    parts = []
    for k in keys:
        v = k[0] if isinstance(k, (DictKey, SequenceKey, GetAttrKey, FlattenedIndexKey)) else k
        parts.append(str(v))
    return separator.join(parts)


_KEYED: dict = {}  # type -> flatten_with_keys, for types registered with register_pytree_with_keys


def register_pytree_with_keys(nodetype: type, flatten_with_keys, unflatten_func, flatten_func=None) -> None:
    """Register a container whose `flatten_with_keys(x)` returns ([(key, child), ...], aux_data); the
    keys appear in key paths (tree_flatten_with_path, keystr)."""
    def flatten(x):
        pairs, aux = flatten_with_keys(x)
        return [c for _, c in pairs], aux
    register_pytree_node(nodetype, flatten_func or flatten, unflatten_func)
    _KEYED[nodetype] = flatten_with_keys


def register_pytree_with_keys_class(cls: type) -> type:
    """Class decorator: the class provides `tree_flatten_with_keys(self)` and classmethod
    `tree_unflatten(aux, children)` (and optionally `tree_flatten`)."""
    flat = getattr(cls, "tree_flatten", None)
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              (lambda x: x.tree_flatten()) if flat is not None else None)
    return cls


def register_static(cls: type) -> type:
    """Register `cls` as a pytree with no children: its instances are part of the structure (static
    under jit; they must be hashable), never leaves."""
    register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux)
    return cls


def _child_keys(x, n_children: int, aux) -> list:
    fwk = _KEYED.get(type(x))
    if fwk is not None:
        return [k for k, _ in fwk(x)[0]]
    names = _data_fields.get(type(x))
    if names is not None:  # a registered dataclass: its data fields by name
        return [GetAttrKey(n) for n in names]
    if isinstance(x, (dict, OrderedDict, defaultdict)) and type(x) in _registry:
        return [DictKey(k) for k in aux[1]]
    if isinstance(x, tuple) and hasattr(type(x), "_fields") and type(x) not in _registry:
        return [GetAttrKey(f) for f in type(x)._fields]
    if type(x) in (list, tuple):
        return [SequenceKey(i) for i in range(n_children)]
    return [FlattenedIndexKey(i) for i in range(n_children)]


def _walk(x, path, out, is_leaf):
    if is_leaf is not None and is_leaf(x):
        out.append((path, x))
        return
    if x is None:
        return
    node = _node_for(x)
    if node is None:
        out.append((path, x))
        return
    children, aux = node.to_iter(x)
    for k, c in zip(_child_keys(x, len(children), aux), children):
        _walk(c, path + (k,), out, is_leaf)


def tree_flatten_with_path(tree, is_leaf: Callable | None = None):
    """([(path, leaf), ...], treedef), leaves in tree_flatten's order."""
    out = []
    _walk(tree, (), out, is_leaf)
    return out, tree_flatten(tree, is_leaf)[1]


def tree_leaves_with_path(tree, is_leaf: Callable | None = None) -> list:
    """[(path, leaf), ...] in tree_flatten's order."""
    out = []
    _walk(tree, (), out, is_leaf)
    return out


def tree_map_with_path(f: Callable, tree, *rest, is_leaf: Callable | None = None):
    """Like tree_map, but `f(path, leaf, *other_leaves)` also receives each leaf's key path."""
    pairs, td = tree_flatten_with_path(tree, is_leaf)
    others = [flatten_up_to(td, r, "tree_map_with_path") for r in rest]
    return tree_unflatten(td, [f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)])


class Partial(functools.partial):
    """functools.partial as a pytree: the function is static (part of the structure), the bound
    arguments are children, so a Partial can pass through jit, vmap and grad (jax.tree_util.Partial)."""


def _partial_flatten(p):
    return (p.args, p.keywords), p.func


def _partial_unflatten(func, children):
    args, kw = children
    return Partial(func, *args, **kw)


register_pytree_node(Partial, _partial_flatten, _partial_unflatten)


__all__ = ['tree_flatten', 'tree_unflatten', 'tree_map', 'tree_leaves', 'tree_structure',
           'register_pytree_node', 'register_pytree_node_class', 'register_dataclass', 'PyTreeDef',
           'flatten_up_to', 'broadcast_prefix', 'tree_all', 'tree_reduce', 'tree_transpose', 'treedef_is_leaf',
           'DictKey', 'SequenceKey', 'GetAttrKey', 'FlattenedIndexKey', 'keystr', 'tree_flatten_with_path',
           'tree_leaves_with_path', 'tree_map_with_path', 'treedef_children', 'all_leaves', 'Partial',
           'register_pytree_with_keys', 'register_pytree_with_keys_class', 'register_static',
           'flatten_one_level', 'tree_broadcast', 'treedef_tuple', 'KeyEntry', 'KeyPath',
           'tree_reduce_associative', 'is_tree_node']
