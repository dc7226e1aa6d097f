"""funcgrad.scipy.integrate: trapezoid, as jax.scipy.integrate.trapezoid."""
from __future__ import annotations

from .. import numpy as jnp

__all__ = ["trapezoid"]


def trapezoid(y, x=None, dx: float = 1.0, axis: int = -1):
    """The trapezoidal rule along `axis`: sum of (y[i] + y[i+1]) / 2 * (x[i+1] - x[i]) (spacing dx when
    x is None; x 1-d along the axis or of y's shape)."""
    y = jnp.moveaxis(jnp.asarray(y), axis, -1)
    if x is None:
        d = dx
    else:
        x = jnp.asarray(x)
        if x.ndim == 1:
            if x.shape[0] != y.shape[-1]:
                raise ValueError(f"trapezoid: x has {x.shape[0]} points, y has {y.shape[-1]} along axis {axis}")
            d = jnp.diff(x)
        else:
            d = jnp.diff(jnp.moveaxis(x, axis, -1), axis=-1)
    return jnp.sum(d * (y[..., 1:] + y[..., :-1]) / 2, axis=-1)
