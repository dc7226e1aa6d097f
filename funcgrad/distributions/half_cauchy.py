"""torch.distributions.half_cauchy: HalfCauchy, at torch's module path (which pickles name classes by). Every formula is an
Array-level function run through `utils.call`."""
from __future__ import annotations

import math

from .._torch import _jnp as jnp
from .. import random as jr
from . import constraints
from .distribution import TORCH_STREAM, Distribution
from .utils import call
from .continuous import _Checked, _fresh, _shape


class HalfCauchy(_Checked, Distribution):
    """|X| for X ~ Cauchy(0, scale)."""
    _draws_as_torch = True
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        self._init_broadcast(validate_args, scale=scale)

    @property
    def mean(self):
        return call("HalfCauchyMean", lambda s: jnp.full_like(s, jnp.inf), self.scale)

    @property
    def mode(self):
        return call("ZerosLike", jnp.zeros_like, self.scale)

    @property
    def variance(self):
        return call("HalfCauchyVar", lambda s: jnp.full_like(s, jnp.inf), self.scale)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:  # (torch: |0 + eps * scale|, eps from cauchy_)
            return (0.0 + _fresh(shape, self.scale).cauchy_() * self.scale).abs()
        return call("HalfCauchyRsample", lambda s: jnp.abs(s * jr.cauchy(key, shape, s.dtype)), self.scale)

    def log_prob(self, value):
        self._check(value)

        def f(x, s):
            lp = math.log(2 / math.pi) - jnp.log(s) - jnp.log1p((x / s) ** 2)
            return jnp.where(x >= 0, lp, -jnp.inf)
        return call("HalfCauchyLogProb", f, value, self.scale)

    def cdf(self, value):
        self._check(value)
        return call("HalfCauchyCdf", lambda x, s: 2 * jnp.arctan(x / s) / math.pi, value, self.scale)

    def icdf(self, prob):
        return call("HalfCauchyIcdf", lambda p, s: jnp.tan(math.pi * p / 2) * s, prob, self.scale)

    def entropy(self):
        return call("HalfCauchyEntropy", lambda s: math.log(2 * math.pi) + jnp.log(s), self.scale)


__all__ = ["HalfCauchy"]
