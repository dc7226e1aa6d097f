"""torch.distributions.half_normal: HalfNormal, at torch's module path (which pickles name classes by). Every formula is an
Array-level function run through `utils.call`."""
from __future__ import annotations

import math

from .._torch import _jnp as jnp
from .. import random as jr
from ..scipy import special as sps
from . import constraints
from .distribution import TORCH_STREAM, Distribution
from .utils import call
from .continuous import _Checked, _LOG_SQRT_2PI, _fresh, _shape


class HalfNormal(_Checked, Distribution):
    """|X| for X ~ Normal(0, scale)."""
    _draws_as_torch = True
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        self._init_broadcast(validate_args, scale=scale)

    @property
    def mean(self):
        return call("HalfNormalMean", lambda s: s * math.sqrt(2 / math.pi), self.scale)

    @property
    def mode(self):
        return call("ZerosLike", jnp.zeros_like, self.scale)

    @property
    def variance(self):
        return call("HalfNormalVar", lambda s: s ** 2 * (1 - 2 / math.pi), self.scale)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:  # (torch: |0 + eps * scale|)
            return (0.0 + _fresh(shape, self.scale).normal_() * self.scale).abs()
        return call("HalfNormalRsample", lambda s: jnp.abs(s * jr.normal(key, shape, s.dtype)), self.scale)

    def log_prob(self, value):
        self._check(value)

        def f(x, s):
            lp = math.log(2) - x ** 2 / (2 * s ** 2) - jnp.log(s) - _LOG_SQRT_2PI
            return jnp.where(x >= 0, lp, -jnp.inf)
        return call("HalfNormalLogProb", f, value, self.scale)

    def cdf(self, value):
        self._check(value)
        return call("HalfNormalCdf", lambda x, s: sps.erf(x / (s * math.sqrt(2))), value, self.scale)

    def icdf(self, prob):
        return call("HalfNormalIcdf", lambda p, s: s * sps.erfinv(p) * math.sqrt(2), prob, self.scale)

    def entropy(self):
        return call("HalfNormalEntropy", lambda s: 0.5 * math.log(math.pi / 2) + 0.5 + jnp.log(s), self.scale)


__all__ = ["HalfNormal"]
