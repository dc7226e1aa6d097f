"""funcgrad.tree_util: JAX's jax.tree_util (pytree utilities and key paths), re-exported from
funcgrad._src.core.tree_util, which holds the implementation."""
from ._src.core.tree_util import *  # noqa: F401,F403
from ._src.core.tree_util import __all__  # noqa: F401
