"""What every jax.scipy.special function does to its operands first: `promote_float` (broadcast, one inexact
dtype, complex rejected as JAX does) and `_strong` (a strongly typed result, as jax.scipy's)."""
from __future__ import annotations

from ... import numpy as jnp
from ..._src.core import dtypes
from ...numpy._promote import asarray_any, is_python_scalar, result_dtype, scalar_array
from ...numpy._ufuncs import _ComplexUndefinedError  # a TypeError and a ValueError (JAX's)
from ...numpy._ufuncs import _strong  # noqa: F401  (re-exported to the families)


def promote_float(name: str, *xs):
    """Broadcast `xs` and give them one inexact dtype: NumPy-style promotion (Python scalars weak, made
    straight at the result's dtype), then integers and bools to the float funcgrad.numpy gives them."""
    args = [a if is_python_scalar(a) else asarray_any(a) for a in xs]
    dt, weak = result_dtype(*args)
    if dtypes.is_complex(dt):
        raise _ComplexUndefinedError(f"{name}: complex input is not supported")
    if not dtypes.is_inexact(dt):
        dt = dtypes.to_inexact(dt, weak)
    # a Python scalar beside an array is made strongly typed at the array's dtype (weak only where every
    # operand is), as JAX's promote_args_inexact: a weak result would promote further to float64 with x64 on
    arrs = [scalar_array(a, dt, weak) if is_python_scalar(a) else a if a.dtype == dt else a.astype(dt)
            for a in args]
    if len(arrs) > 1:
        arrs = list(jnp.broadcast_arrays(*arrs))
    return arrs if len(arrs) > 1 else arrs[0]
