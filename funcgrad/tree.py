"""funcgrad.tree: JAX's `jax.tree` module, the short names for the pytree utilities.

    import funcgrad as jax
    jax.tree.map(lambda x: x * 2, {"a": 1, "b": (2, 3)})       # {'a': 2, 'b': (4, 6)}
    jax.tree.leaves_with_path({"a": [1, 2]})                    # [((DictKey('a'), SequenceKey(0)), 1), ...]
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from . import _tree_paths
from .core import tree_util as _tu

from .tree_util import _NO_INIT  # noqa: E402  (one "no initializer" marker for tree.reduce and tree_reduce)


def map(f: Callable, tree, *rest, is_leaf: Callable | None = None):  # noqa: A001
    """Apply `f` leafwise across `tree` and `rest` (trees with tree's structure, or it as a prefix)."""
    return _tu.tree_map(f, tree, *rest, is_leaf=is_leaf)


def leaves(tree, is_leaf: Callable | None = None) -> list:
    """The leaves of `tree`, in order (None is an empty node, not a leaf)."""
    return _tu.tree_leaves(tree, is_leaf)


def structure(tree, is_leaf: Callable | None = None) -> _tu.PyTreeDef:
    """The treedef of `tree`."""
    return _tu.tree_structure(tree, is_leaf)


def flatten(tree, is_leaf: Callable | None = None):
    """(leaves, treedef)."""
    return _tu.tree_flatten(tree, is_leaf)


def unflatten(treedef: _tu.PyTreeDef, leaves):
    """Rebuild a tree of structure `treedef` from its leaves."""
    return _tu.tree_unflatten(treedef, leaves)


def reduce(function: Callable, tree, initializer: Any = _NO_INIT, is_leaf: Callable | None = None):
    """functools.reduce over the leaves (with `initializer` first when given, even None)."""
    ls = _tu.tree_leaves(tree, is_leaf)
    if initializer is _NO_INIT:
        if not ls:
            raise TypeError("tree.reduce: reduce of a tree with no leaves and no initializer")
        return functools.reduce(function, ls)
    return functools.reduce(function, ls, initializer)


def reduce_associative(operation: Callable, tree, *, identity: Any = None, is_leaf: Callable | None = None):
    """Combine the leaves pairwise with an associative `operation` (identity: the empty tree's result)."""
    from ._tree_more import _NO_IDENTITY, tree_reduce_associative
    if identity is None:
        identity = _NO_IDENTITY
    return tree_reduce_associative(operation, tree, identity=identity, is_leaf=is_leaf)


def all(tree, *, is_leaf: Callable | None = None) -> bool:  # noqa: A001
    """Whether every leaf is truthy (True for a tree without leaves)."""
    import builtins
    return builtins.all(_tu.tree_leaves(tree, is_leaf))


def transpose(outer_treedef: _tu.PyTreeDef, inner_treedef: _tu.PyTreeDef | None, pytree_to_transpose):
    """Turn an outer-of-inner tree into an inner-of-outer one (inner_treedef None: inferred from the
    first outer entry)."""
    if inner_treedef is None:
        first = _tu.flatten_up_to(outer_treedef, pytree_to_transpose, "tree.transpose")
        if not first:
            raise ValueError("tree.transpose: cannot infer the inner structure of an empty outer tree")
        inner_treedef = _tu.tree_structure(first[0])
    return _tu.tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)


def broadcast(prefix_tree, full_tree, is_leaf: Callable | None = None):
    """`prefix_tree` with each of its leaves repeated over the matching subtree of `full_tree`."""
    p_leaves, p_td = _tu.tree_flatten(prefix_tree, is_leaf=is_leaf)
    subs = _tu.flatten_up_to(p_td, full_tree, "tree.broadcast")
    return _tu.tree_unflatten(p_td, [_tu.tree_map(lambda _, v=p: v, s) for p, s in zip(p_leaves, subs)])


flatten_with_path = _tree_paths.tree_flatten_with_path
leaves_with_path = _tree_paths.tree_leaves_with_path
map_with_path = _tree_paths.tree_map_with_path

__all__ = ["map", "leaves", "structure", "flatten", "unflatten", "reduce", "all", "transpose", "broadcast",
           "flatten_with_path", "leaves_with_path", "map_with_path", "reduce_associative"]
