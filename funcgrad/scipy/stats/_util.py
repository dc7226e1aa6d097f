"""Shared helpers for funcgrad.scipy.stats: argument promotion, the loc/scale standardisation and the
distribution functions' docstrings."""
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


LOC_SCALE = " (location loc, scale scale)"
SHIFTED = " (k shifted by loc)"

# One line per function name: {the} names the distribution, {at} is the function's first argument, {on} says
# what loc (and scale) mean (LOC_SCALE, SHIFTED, or nothing for a family without them).
_DOCS = {
    "logpdf": "Log of the probability density of {the} at {at}{on}",
    "pdf": "The probability density of {the} at {at}{on}",
    "logpmf": "Log of the probability mass of {the} at {at}{on}",
    "pmf": "The probability mass of {the} at {at}{on}",
    "cdf": "The cumulative distribution function P(X <= {at}) of {the}{on}",
    "logcdf": "log P(X <= {at}) for {the}{on}",
    "sf": "The survival function P(X > {at}) = 1 - cdf of {the}{on}",
    "logsf": "log P(X > {at}) for {the}{on}",
    "ppf": "The quantile function (the inverse of cdf) of {the} at probability q{on}",
}


def describe(namespace: dict, the: str, on: str = LOC_SCALE) -> None:
    """Give each function of a distribution module (its globals(), `namespace`) that _DOCS names and that has no
    docstring of its own the template's line, ending "as jax.scipy.stats.<module>.<name>." (the functions of
    every module are documented alike, so the text is written once, as funcgrad/_torch/_docs.py does)."""
    module = namespace["__name__"].rsplit(".", 1)[1]
    for name, text in _DOCS.items():
        f = namespace.get(name)
        if f is not None and f.__doc__ is None:
            at = f.__code__.co_varnames[0]
            f.__doc__ = f"{text.format(the=the, at=at, on=on)}, as jax.scipy.stats.{module}.{name}."


__all__ = ["standardize", "nan_outside", "promote_float", "symmetric_quantiles", "describe", "LOC_SCALE",
           "SHIFTED"]
