"""funcgrad.profiler: one module as both faces name it: jax.profiler's annotations (funcgrad/_jax/profiler.py)
and torch.profiler's profile, schedule and record_function (funcgrad/_torch/profiler.py). The two sets of
names are disjoint."""
from ._jax.profiler import *  # noqa: F401,F403
from ._jax.profiler import __all__ as _jax_names
from ._torch.profiler import *  # noqa: F401,F403
from ._torch.profiler import __all__ as _torch_names

__all__ = _jax_names + _torch_names
