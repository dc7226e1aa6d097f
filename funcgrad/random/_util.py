"""Shared helpers for the samplers: dtype and shape arguments, parameters as arrays, and the few
special functions the samplers need (taken from funcgrad's own cards where they exist)."""
from __future__ import annotations


import numpy as np

from .._src.core import dtypes
from .._src.core.array import ArrayBase, to_array
from ..numpy._promote import broadcast_shapes, broadcast_to  # noqa: F401  (re-exported)
from .._src.prims import elementwise as ew
from .._src.prims import shape as sh
from ._keys import const

from .._src.prims import special as _special


# --- dtypes, shapes and parameters ----------------------------------------------------------------

def float_dtype(dtype, name: str, complex_ok: bool = False) -> np.dtype:
    """The sampler's float dtype (default: funcgrad's default float, float32 unless x64 is on)."""
    dt = dtypes.defaults.float_ if dtype is None else dtypes.canonicalize(dtype)
    if not (dtypes.is_float(dt) or (complex_ok and dtypes.is_complex(dt))):
        kinds = "a float or complex" if complex_ok else "a float"
        raise ValueError(f"{name}: dtype must be {kinds} dtype, got {dt}")
    return np.dtype(dt)


def int_dtype(dtype, name: str) -> np.dtype:
    """The sampler's integer dtype (default: the default int, read at call time: int32 with x64 off,
    int64 with it on, as JAX's)."""
    dt = dtypes.defaults.int_ if dtype is None else dtypes.canonicalize(dtype)
    if not dtypes.is_integer(dt):
        raise TypeError(f"{name}: dtype must be an integer dtype, got {dt}")
    return np.dtype(dt)


def as_dtype(x, dtype):
    """A parameter as a strongly typed array of `dtype` (Python scalars convert straight to it)."""
    if not isinstance(x, ArrayBase):
        if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
            return to_array(np.array(x, dtype=dtype))
        x = to_array(x, copy=False)
    return ew.convert_element_type(x, dtype, False)


def as_array(x):
    return x if isinstance(x, ArrayBase) else to_array(x, copy=False)


def check_shape(name: str, shape: tuple, *param_shapes) -> None:
    """JAX's rule: the parameters broadcast to `shape` (and not beyond it)."""
    if param_shapes:
        out = broadcast_shapes(shape, *param_shapes)
        if out != tuple(shape):
            raise ValueError(f"{name}: parameter shapes {', '.join(str(tuple(s)) for s in param_shapes)} "
                             f"must broadcast to the shape argument {tuple(shape)}, got {out}")


def full_like_shape(x, shape):
    """x (already of the right dtype) broadcast to `shape`."""
    return broadcast_to(x, tuple(shape))


def finfo(dtype):
    if dtypes.bfloat16 is not None and np.dtype(dtype) == dtypes.bfloat16:
        import ml_dtypes
        return ml_dtypes.finfo(dtype)
    return np.finfo(dtype)


# --- operations that other modules may or may not provide yet -------------------------------------

def floor(x):
    """floor(x) for floating x: the elementwise card when funcgrad has it, else through a round trip
    via int64 (exact: every float with |x| >= 2**52 is already an integer)."""
    f = getattr(ew, "floor", None)
    if f is not None:
        return f(x)
    big = const(2.0 ** 52, x.dtype, x.shape)
    safe = ew.select(ew.lt(ew.abs(x), big), x, ew.zeros_like(x))
    t = ew.convert_element_type(ew.convert_element_type(safe, np.dtype(np.int64)), x.dtype)
    t = ew.sub(t, ew.convert_element_type(ew.gt(t, safe), x.dtype))
    return ew.select(ew.lt(ew.abs(x), big), t, x)


def next_up(x, sign: int):
    """nextafter(x, sign * inf): the card when funcgrad has it; otherwise x moved by |x| * eps (one or
    two units in the last place, always strictly past x; infinities and NaN unchanged)."""
    f = getattr(ew, "nextafter", None)
    if f is not None:   # (a constant: the card has no derivative on the JAX face)
        return f(ew.stop_gradient(x), const(sign * np.inf, x.dtype, x.shape))
    info = finfo(x.dtype)
    step = ew.max(ew.mul(ew.abs(x), const(float(info.eps), x.dtype, x.shape)),
                  const(float(info.smallest_subnormal), x.dtype, x.shape))
    moved = ew.add(x, step) if sign > 0 else ew.sub(x, step)
    finite = ew.lt(ew.abs(x), const(np.inf, x.dtype, x.shape))
    return ew.select(finite, moved, x)


def erf(x):
    return _special.erf(x)


def erf_inv(x):
    return _special.erf_inv(x)


def lgamma(x):
    return _special.lgamma(x)


def reshape(x, shape):
    return sh.reshape(x, tuple(shape))
