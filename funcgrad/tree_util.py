"""funcgrad.tree_util: pytree utilities (see funcgrad.core.tree_util) and key paths (JAX's names)."""
from .core.tree_util import *  # noqa: F401,F403
from .core.tree_util import __all__ as _core_all
from ._tree_more import (KeyEntry, KeyPath, flatten_one_level, is_tree_node, tree_broadcast,  # noqa: F401
                         tree_reduce_associative, treedef_tuple)
from ._tree_paths import (DictKey, Partial, register_pytree_with_keys, register_pytree_with_keys_class,  # noqa: F401
                          register_static, FlattenedIndexKey, GetAttrKey, SequenceKey, all_leaves, keystr,  # noqa: F401
                          tree_flatten_with_path, tree_leaves_with_path, tree_map_with_path, treedef_children)

__all__ = list(_core_all) + ["DictKey", "SequenceKey", "GetAttrKey", "FlattenedIndexKey", "keystr",
                             "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path",
                             "treedef_children", "all_leaves", "Partial", "register_pytree_with_keys",
                             "register_pytree_with_keys_class", "register_static", "flatten_one_level",
                             "tree_broadcast", "treedef_tuple", "KeyEntry", "KeyPath",
                             "tree_reduce_associative", "is_tree_node"]


_NO_INIT = object()


def tree_reduce(function, tree, initializer=_NO_INIT, is_leaf=None):
    """functools.reduce over the leaves, starting from `initializer` when one is given (None included)."""
    from .tree import reduce
    return reduce(function, tree, initializer, is_leaf)


def tree_all(tree, *, is_leaf=None) -> bool:
    """Whether every leaf is truthy."""
    from .tree import all as _all
    return _all(tree, is_leaf=is_leaf)
