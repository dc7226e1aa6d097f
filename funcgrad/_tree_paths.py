"""Key paths for pytrees: where each leaf sits, as JAX's tree_util spells it (`DictKey`, `SequenceKey`,
`GetAttrKey`, `FlattenedIndexKey`, `keystr`, and the `*_with_path` functions).

A path is a tuple of keys from the root to a leaf; the leaves come in `tree_flatten`'s order.
"""
from __future__ import annotations

import functools
from collections import OrderedDict, defaultdict
from typing import Any, Callable, NamedTuple

from .core.tree_util import (_LEAF, PyTreeDef, _data_fields, _node_for, _registry, register_pytree_node,
                             tree_flatten, tree_unflatten)


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
    """A path as a string, e.g. "['a'][0].x" (simple=True: "a/0/x" style with `separator`)."""
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
    from .core.tree_util import flatten_up_to
    pairs, td = tree_flatten_with_path(tree, is_leaf)
    others = [flatten_up_to(td, r, "tree_map_with_path") for r in rest]
    return tree_unflatten(td, [f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)])


def treedef_children(td: PyTreeDef) -> list:
    """The structures of a node's children."""
    return list(td.child_defs)


def all_leaves(iterable, is_leaf: Callable | None = None) -> bool:
    """Whether every element of `iterable` is a leaf (a structure with exactly itself as its one leaf)."""
    for x in iterable:
        if tree_flatten(x, is_leaf)[1] != _LEAF:
            return False
    return True


__all__ = ["DictKey", "SequenceKey", "GetAttrKey", "FlattenedIndexKey", "keystr", "tree_flatten_with_path",
           "tree_leaves_with_path", "tree_map_with_path", "treedef_children", "all_leaves", "Partial",
           "register_pytree_with_keys", "register_pytree_with_keys_class", "register_static"]


class Partial(functools.partial):
    """functools.partial as a pytree: the function is static (part of the structure), the bound
    arguments are children, so a Partial can pass through jit, vmap and grad (jax.tree_util.Partial)."""


def _partial_flatten(p):
    return (p.args, p.keywords), p.func


def _partial_unflatten(func, children):
    args, kw = children
    return Partial(func, *args, **kw)


register_pytree_node(Partial, _partial_flatten, _partial_unflatten)
