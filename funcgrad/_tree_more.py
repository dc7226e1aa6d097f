"""More of jax.tree_util: flatten_one_level, tree_broadcast, treedef_tuple and the KeyPath / KeyEntry
annotation types."""
from __future__ import annotations

from collections.abc import Hashable
from typing import TypeVar

from .core.tree_util import PyTreeDef, _node_for, broadcast_prefix, tree_structure, tree_unflatten

__all__ = ["flatten_one_level", "tree_broadcast", "treedef_tuple", "KeyEntry", "KeyPath"]

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
