"""funcgrad.tree_util: pytree utilities (see funcgrad.core.tree_util) and key paths (JAX's names)."""
from .core.tree_util import *  # noqa: F401,F403
from .core.tree_util import __all__ as _core_all
from ._tree_paths import (DictKey, Partial, register_pytree_with_keys, register_pytree_with_keys_class,  # noqa: F401
                          register_static, FlattenedIndexKey, GetAttrKey, SequenceKey, all_leaves, keystr,  # noqa: F401
                          tree_flatten_with_path, tree_leaves_with_path, tree_map_with_path, treedef_children)

__all__ = list(_core_all) + ["DictKey", "SequenceKey", "GetAttrKey", "FlattenedIndexKey", "keystr",
                             "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path",
                             "treedef_children", "all_leaves", "Partial", "register_pytree_with_keys",
                             "register_pytree_with_keys_class", "register_static"]
