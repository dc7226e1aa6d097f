"""More of jax.tree_util: flatten_one_level, tree_broadcast, treedef_tuple and the KeyPath / KeyEntry
annotation types."""
from __future__ import annotations

from collections.abc import Hashable
from typing import TypeVar

from .core.tree_util import PyTreeDef, _node_for, broadcast_prefix, tree_structure, tree_unflatten

__all__ = ["flatten_one_level", "tree_broadcast", "treedef_tuple", "KeyEntry", "KeyPath",
           "tree_reduce_associative", "is_tree_node"]

_NO_IDENTITY = object()


def tree_reduce_associative(operation, tree, *, identity=_NO_IDENTITY, is_leaf=None):
    """Combine the leaves with an associative `operation`, pairwise as a balanced tree (so it may be
    evaluated in parallel); `identity` is the result for a tree without leaves."""
    from .core.tree_util import tree_leaves
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


def is_tree_node(typ: type) -> bool:
    """Whether instances of `typ` are pytree nodes (containers) rather than leaves."""
    from .core.tree_util import _registry
    return typ in _registry or typ is type(None) or (issubclass(typ, tuple) and hasattr(typ, "_fields"))

KeyEntry = TypeVar("KeyEntry", bound=Hashable)
KeyPath = tuple[KeyEntry, ...]


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


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    """`prefix_tree` (a prefix of full_tree's structure) with each of its leaves repeated over the subtree
    of full_tree it stands for: the result has full_tree's structure."""
    leaves = broadcast_prefix(prefix_tree, full_tree, "prefix_tree", is_leaf)
    return tree_unflatten(tree_structure(full_tree, is_leaf), leaves)


def treedef_tuple(treedefs) -> PyTreeDef:
    """The structure of a tuple whose elements have the structures `treedefs`."""
    treedefs = tuple(treedefs)
    for t in treedefs:
        if not isinstance(t, PyTreeDef):
            raise TypeError(f"treedef_tuple: expected PyTreeDefs, got {type(t).__name__}")
    return PyTreeDef(tuple, None, treedefs)
