"""Shared helpers for funcgrad.scipy.stats: argument promotion and the loc/scale standardisation."""
from __future__ import annotations

from ... import numpy as jnp
from .._special.common import promote_float


def standardize(name, x, loc, scale):
    """(y, log(scale), x, loc, scale) with y = (x - loc) / scale, all broadcast to one float dtype."""
    x, loc, scale = promote_float(name, x, loc, scale)
    return (x - loc) / scale, jnp.log(scale), x, loc, scale


def nan_outside(q, value, lo=0.0, hi=1.0):
    """`value` where lo <= q <= hi, NaN elsewhere (quantile functions)."""
    return jnp.where((q >= lo) & (q <= hi), value, jnp.nan)


__all__ = ["standardize", "nan_outside", "promote_float"]
