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


def symmetric_quantiles(dist: str, standard_ppf):
    """ppf and isf of a location-scale family symmetric about loc: loc + scale * standard_ppf(q) and
    loc - scale * standard_ppf(q), NaN for q outside [0, 1]."""
    def ppf(q, loc=0, scale=1):
        q, loc, scale = promote_float(f"{dist}.ppf", q, loc, scale)
        return nan_outside(q, loc + scale * standard_ppf(q))

    def isf(q, loc=0, scale=1):
        q, loc, scale = promote_float(f"{dist}.isf", q, loc, scale)
        return nan_outside(q, loc - scale * standard_ppf(q))
    ppf.__doc__ = (f"The quantile function (the inverse of cdf) of jax.scipy.stats.{dist} at probability q "
                   "(location loc, scale scale); NaN for q outside [0, 1].")
    isf.__doc__ = (f"The inverse survival function of jax.scipy.stats.{dist}: the x with P(X > x) = q (location "
                   "loc, scale scale); NaN for q outside [0, 1].")
    return ppf, isf


__all__ = ["standardize", "nan_outside", "promote_float", "symmetric_quantiles"]
