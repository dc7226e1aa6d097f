"""funcgrad.lax: the primitives by their own names, with JAX's lax signatures.

Unlike funcgrad.numpy, lax functions do not promote dtypes or broadcast arrays: operands of binary
operations must share one shape and dtype. Python scalars are accepted and take the other operand's
dtype (they are weakly typed).

The functions live in this package's family modules (_elementwise, _shapes, _reductions, _indexing,
_dot, _conv, _program, _types, _implicit, _primitives); this module only gathers them.
"""
from .._src.prims.collectives import (all_gather, all_to_all, axis_index, axis_size, pmax, pmean,  # noqa: F401
                                      pmin, ppermute, pshuffle, psum, psum_scatter, pswapaxes)
from .._src.prims.cumulative import associative_scan  # noqa: F401
from .._src.control.cond import cond, switch  # noqa: F401
from .._src.control.scan import fori_loop, map, scan  # noqa: F401,A004
from .._src.control.while_loop import while_loop  # noqa: F401
from .._src.prims.fft import fft  # noqa: F401
from ._types import *  # noqa: F401,F403
from ._elementwise import *  # noqa: F401,F403
from ._shapes import *  # noqa: F401,F403
from ._reductions import *  # noqa: F401,F403
from ._indexing import *  # noqa: F401,F403
from ._dot import *  # noqa: F401,F403
from ._conv import *  # noqa: F401,F403
from ._program import *  # noqa: F401,F403
from ._implicit import custom_linear_solve, custom_root  # noqa: F401
from . import linalg  # noqa: F401
from ._primitives import *  # noqa: F401,F403  (last: every card is registered by now)

# The public names (what `from funcgrad.lax import *` gives, and what the API page lists: without __all__ the
# docs tool takes the functions imported from the family modules for someone else's and shows none of them).
__all__ = sorted(n for n in dir() if not n.startswith("_") and n != "linalg")
