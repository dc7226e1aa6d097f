"""funcgrad.testing: numerical derivative checks and Hypothesis strategies for users' own tests.

    from funcgrad.testing import check_grads
    check_grads(f, (x, y), order=2)            # jvp vs finite differences, vjp vs jvp, and their derivatives

The strategies (`arrays`, `shapes`, `broadcastable_shapes`, `mutually_broadcastable_shapes`,
`broadcastable_shape_pairs`, `float_dtypes`, `dtypes`, and the special points: `special_values`,
`special_points`, `ties`, `arrays_with_zeros`, `singular_matrices`) live in `funcgrad.testing.strategies` and are
re-exported here lazily: Hypothesis (a test extra) is imported only when one of them is used.
"""
from __future__ import annotations

from importlib.util import find_spec as _find_spec

from ._checks import check_grads, check_jvp, check_vjp
from ._comparison import assert_close, make_tensor  # noqa: F401  (torch.testing's)

_STRATEGIES = ("arrays", "shapes", "broadcastable_shapes", "mutually_broadcastable_shapes",
               "broadcastable_shape_pairs", "float_dtypes", "dtypes", "special_values", "special_points", "ties",
               "arrays_with_zeros", "singular_matrices")


def __getattr__(name: str):
    if name in _STRATEGIES:
        from . import strategies  # (optional dependency: the strategies need Hypothesis)
        return getattr(strategies, name)
    raise AttributeError(f"module 'funcgrad.testing' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_STRATEGIES))


# `from funcgrad.testing import *` brings the strategies only where Hypothesis is installed.
__all__ = ["check_grads", "check_jvp", "check_vjp",
           *(_STRATEGIES if _find_spec("hypothesis") is not None else ())]
