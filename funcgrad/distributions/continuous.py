"""What the univariate continuous families share: argument checking (`_Checked`), the location-scale base
(`_LocScale`), sample shapes, gamma reparameterised sampling and a few safe formulas (xlogy, softplus). Each
family lives at torch's module path (normal.py: Normal, gamma.py: Gamma, ...), which pickles name classes by."""
from __future__ import annotations

import math

from .._torch import _creation, _jnp as jnp
from . import constraints
from .distribution import Distribution


_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def xlogy(x, y):
    """x * log(y), 0 where x == 0 (with a finite gradient there)."""
    zero = x == 0
    return jnp.where(zero, 0.0, x * jnp.log(jnp.where(zero, 1.0, y)))


def softplus(x):
    return jnp.logaddexp(x, 0.0)


def _tiny(dt):
    return jnp.finfo(dt).tiny


def _shape(d, sample_shape) -> tuple:
    return tuple(d._extended_shape(sample_shape))


def _fresh(shape, like):
    """An uninitialised tensor of like's dtype (torch's `like.new(shape)`), for an in-place draw."""
    return _creation.empty(shape, dtype=like.dtype)


def _standard_gamma(c, shape):
    """torch's Gamma(c, 1) samples of c expanded to shape (torch._standard_gamma: its numbers, differentiable)."""
    return _creation._standard_gamma(c.expand(shape))


def _gamma_rsample(c, r, shape):
    """Gamma.rsample as torch's: _standard_gamma(c) / r, clamped below at tiny (the value only, as torch's
    in-place clamp of the detached result)."""
    v = _standard_gamma(c, shape) / r.expand(shape)
    d = v.detach()
    return v + (d.clamp(min=jnp.finfo(v.dtype).tiny) - d)


class _Checked:
    """Mixin: value validation shared by log_prob/cdf."""

    def _check(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return value


# --- location-scale families -------------------------------------------------------------------------------

class _CentredAtLoc:
    """Mixin of the families symmetric and unimodal about `loc`: their mean and mode are loc (a family
    without a mean overrides it)."""

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc


class _LocScale(_CentredAtLoc, _Checked, Distribution):
    """A location-scale family on the real line: loc real, scale positive, broadcast together."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self._init_broadcast(validate_args, loc=loc, scale=scale)


# --- gamma-based families ----------------------------------------------------------------------------------


# --- others ------------------------------------------------------------------------------------------------


