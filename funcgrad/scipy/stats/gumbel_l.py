"""The left-skewed Gumbel distribution, as jax.scipy.stats.gumbel_l: sf(x) = exp(-exp((x - loc) / scale)).

It is gumbel_r mirrored: X ~ gumbel_l(loc, scale) exactly when -X ~ gumbel_r(-loc, scale), so each function is
gumbel_r's at (-x, -loc) with cdf and sf swapped ((-x) - (-loc) is -(x - loc) exactly in floating point, so
the values are those of the direct formulas). ppf has its own formula: log1p(-q) keeps small q accurate."""
from __future__ import annotations

from ... import numpy as jnp
from . import gumbel_r as _right
from ._util import describe, promote_float


def _mirror(name: str, right):
    def f(x, loc=0, scale=1):
        x, loc, scale = promote_float(f"gumbel_l.{name}", x, loc, scale)
        return right(-x, -loc, scale)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"gumbel_l.{name}(x, loc=0, scale=1): gumbel_r.{right.__name__} at (-x, -loc, scale)."
    return f


logpdf = _mirror("logpdf", _right.logpdf)
pdf = _mirror("pdf", _right.pdf)
logcdf = _mirror("logcdf", _right.logsf)
cdf = _mirror("cdf", _right.sf)
logsf = _mirror("logsf", _right.logcdf)
sf = _mirror("sf", _right.cdf)


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote_float("gumbel_l.ppf", q, loc, scale)
    return _right.open_interval(q, loc + scale * jnp.log(-jnp.log1p(-q)))


describe(globals(), "the left-skewed Gumbel distribution")

__all__ = ["logpdf", "pdf", "logcdf", "cdf", "logsf", "sf", "ppf"]
