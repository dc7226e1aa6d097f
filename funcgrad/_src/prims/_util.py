"""Small helpers shared by the primitive cards: shape-rule checks and errors (the batching helpers that bind
cards, move_axis, to_front and elementwise_batch, are in shape.py, so that this module imports no card)."""
from __future__ import annotations

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.errors import user_location

# Elements per block of the NumPy kernels that stream long elementwise chains (threefry's 20 rounds,
# erf_inv's polynomials, funcgrad.random's bits -> uniform -> normal): each block's chain runs in cache
# instead of making one pass over memory per operation. Elementwise, so the values never depend on it;
# read at call time (tests set it small to check that).
BLOCK_SIZE = 32768


def type_error(op: str, msg: str):
    raise TypeError(f"{op}: {msg} (at {user_location(3)})")


def value_error(op: str, msg: str):
    raise ValueError(f"{op}: {msg} (at {user_location(3)})")


def check_same(op: str, *avals: ShapedArray, dtype: bool = True) -> None:
    """Elementwise n-ary primitives take operands of one shape and (optionally) one dtype."""
    a0 = avals[0]
    for a in avals[1:]:
        if a.shape != a0.shape:
            type_error(op, "operands must have equal shapes, got "
                       + ", ".join(a.str_short() for a in avals)
                       + "; use funcgrad.numpy functions for NumPy broadcasting")
        if dtype and a.dtype != a0.dtype:
            type_error(op, "operands must have equal dtypes, got "
                       + ", ".join(a.str_short() for a in avals)
                       + "; convert one with astype or use funcgrad.numpy functions for promotion")


def check_dtype(op: str, aval: ShapedArray, kinds: str) -> None:
    """kinds: a subset of 'b' (bool), 'i' (integer), 'f' (float), 'c' (complex)."""
    dt = aval.dtype
    kind = "b" if dt == dtypes.bool_ else "i" if dtypes.is_integer(dt) else "f" if dtypes.is_float(dt) else "c"
    if kind not in kinds:
        names = {"b": "bool", "i": "integer", "f": "floating", "c": "complex"}
        type_error(op, f"does not accept dtype {dt}; expected {' or '.join(names[k] for k in kinds)}")


def batch_size(args, dims) -> int:
    for a, d in zip(args, dims):
        if d is not None:
            return a.shape[d]
    raise ValueError("no batched argument")
