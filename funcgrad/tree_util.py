"""funcgrad.tree_util: pytree utilities (see funcgrad.core.tree_util)."""
from .core.tree_util import *  # noqa: F401,F403
from .core.tree_util import __all__  # noqa: F401
