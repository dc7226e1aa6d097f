"""scipy.stats summaries: zscore and sem."""
from __future__ import annotations

from ... import numpy as jnp


def zscore(a, axis: int = 0, ddof: int = 0, nan_policy: str = "propagate"):
    """(a - mean) / std along `axis` (std with `ddof`)."""
    if nan_policy != "propagate":
        raise NotImplementedError("zscore: only nan_policy='propagate' is supported")
    a = jnp.asarray(a)
    mean = jnp.mean(a, axis=axis, keepdims=True)
    std = jnp.std(a, axis=axis, ddof=ddof, keepdims=True)
    return (a - mean) / std


def sem(a, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *, keepdims: bool = False):
    """The standard error of the mean: std(a, ddof) / sqrt(n) along `axis` (None: all of a)."""
    if nan_policy != "propagate":
        raise NotImplementedError("sem: only nan_policy='propagate' is supported")
    a = jnp.asarray(a)
    if axis is None:
        a, axis = jnp.ravel(a), 0
    n = a.shape[axis]
    return jnp.std(a, axis=axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(n)
