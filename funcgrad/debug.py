"""funcgrad.debug: print and call back into Python at run time, also inside jit, vmap and grad.

    @funcgrad.jit
    def f(x):
        funcgrad.debug.print("x = {}, sum = {s}", x, s=x.sum())   # prints when f runs, every call
        return x * 2

Under jit the print is staged into the compiled function (jit's dead-code elimination keeps it), so it
happens once per call with the actual values; under vmap it happens once per batch element, in order;
under grad it prints the primal values once. Arrays reach the format string and callbacks as NumPy
arrays.
"""
from __future__ import annotations

from typing import Callable

from ._src.core.array import ArrayBase
from ._src.core.tree_util import tree_flatten, tree_unflatten
from ._src.prims.callbacks import debug_callback_p

__all__ = ["print", "callback", "breakpoint"]

_py_print = print


def _is_dynamic(x) -> bool:
    import numpy as np
    return isinstance(x, (ArrayBase, np.ndarray, np.generic, bool, int, float, complex))


class _Callback:
    """The staged callable: rebuilds the user's arguments (static leaves kept, array leaves filled in)."""
    __slots__ = ("fn", "tree", "static", "dyn_idx")

    def __init__(self, fn, tree, static, dyn_idx):
        self.fn, self.tree, self.static, self.dyn_idx = fn, tree, static, dyn_idx

    def __call__(self, *bufs):
        leaves = list(self.static)
        for i, b in zip(self.dyn_idx, bufs):
            leaves[i] = b
        args, kwargs = tree_unflatten(self.tree, leaves)
        out = self.fn(*args, **kwargs)
        if out is not None:
            raise ValueError(f"debug.callback: the callback must return None, got {type(out).__name__}")


def callback(callback: Callable, *args, ordered: bool = False, partitioned: bool = False, **kwargs) -> None:
    """Call `callback(*args, **kwargs)` at run time with the array leaves as NumPy arrays; it must
    return None. Works under jit (staged), vmap (once per element) and grad (on the primals)."""
    if not callable(callback):
        raise TypeError(f"debug.callback: expected a callable, got {type(callback).__name__}")
    leaves, tree = tree_flatten((args, kwargs))
    dyn_idx = [i for i, x in enumerate(leaves) if _is_dynamic(x)]
    static = [None if i in set(dyn_idx) else x for i, x in enumerate(leaves)]
    cb = _Callback(callback, tree, static, dyn_idx)
    debug_callback_p.bind(*[leaves[i] for i in dyn_idx], callback=cb, ordered=bool(ordered))


def _format(fmt: str, *args, **kwargs):
    _py_print(fmt.format(*args, **kwargs))


def print(fmt: str, *args, ordered: bool = False, partitioned: bool = False,  # noqa: A001
          skip_format_check: bool = False, **kwargs) -> None:
    """Print `fmt.format(*args, **kwargs)` at run time (str.format braces; arrays as NumPy arrays).
    (`partitioned`, for sharded JAX programs, changes nothing on one process.)"""
    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: the format must be a str, got {type(fmt).__name__}")
    callback(lambda *a, **k: _format(fmt, *a, **k), *args, ordered=ordered, **kwargs)


def breakpoint(*, backend=None, filter_frames=True, num_frames=None, ordered=False, token=None, **kwargs):  # noqa: A001
    """Not supported: use debug.print / debug.callback, or run eagerly under funcgrad.disable_jit() and
    use Python's breakpoint()."""
    raise NotImplementedError("funcgrad.debug.breakpoint is not supported; use funcgrad.debug.print or "
                              "debug.callback, or run the function under funcgrad.disable_jit() with "
                              "Python's breakpoint()")
