"""funcgrad.tree: JAX's `jax.tree` module, the short names for the pytree utilities (the same functions as
funcgrad.tree_util's tree_* names; the implementation is funcgrad._src.core.tree_util).

    import funcgrad as jax
    jax.tree.map(lambda x: x * 2, {"a": 1, "b": (2, 3)})       # {'a': 2, 'b': (4, 6)}
    jax.tree.leaves_with_path({"a": [1, 2]})                    # [((DictKey('a'), SequenceKey(0)), 1), ...]
"""
from ._src.core.tree_util import tree_all as all  # noqa: F401,A004
from ._src.core.tree_util import tree_broadcast as broadcast  # noqa: F401
from ._src.core.tree_util import tree_flatten as flatten  # noqa: F401
from ._src.core.tree_util import tree_flatten_with_path as flatten_with_path  # noqa: F401
from ._src.core.tree_util import tree_leaves as leaves  # noqa: F401
from ._src.core.tree_util import tree_leaves_with_path as leaves_with_path  # noqa: F401
from ._src.core.tree_util import tree_map as map  # noqa: F401,A004
from ._src.core.tree_util import tree_map_with_path as map_with_path  # noqa: F401
from ._src.core.tree_util import tree_reduce as reduce  # noqa: F401
from ._src.core.tree_util import tree_reduce_associative as reduce_associative  # noqa: F401
from ._src.core.tree_util import tree_structure as structure  # noqa: F401
from ._src.core.tree_util import tree_transpose as transpose  # noqa: F401
from ._src.core.tree_util import tree_unflatten as unflatten  # noqa: F401

__all__ = ["map", "leaves", "structure", "flatten", "unflatten", "reduce", "all", "transpose", "broadcast",
           "flatten_with_path", "leaves_with_path", "map_with_path", "reduce_associative"]
