"""torch.distributions.normal: Normal, at torch's module path (which pickles name classes by). Every formula is an
Array-level function run through `utils.call`."""
from __future__ import annotations

import math

from .._torch import _creation, _jnp as jnp
from .. import random as jr
from ..scipy import special as sps
from .distribution import TORCH_STREAM
from .exp_family import ExponentialFamily
from .utils import call
from .continuous import _LOG_SQRT_2PI, _LocScale, _shape


class Normal(_LocScale, ExponentialFamily):
    """Normal(loc, scale)."""
    _draws_as_torch = True
    _mean_carrier_measure = 0

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return call("NormalVariance", jnp.square, self.scale)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:
            return self.loc + _creation.randn(shape, dtype=self.loc.dtype) * self.scale
        return call("NormalRsample", lambda m, s: m + s * jr.normal(key, shape, m.dtype), self.loc, self.scale)

    def log_prob(self, value):
        self._check(value)
        return call("NormalLogProb", lambda x, m, s: -((x - m) ** 2) / (2 * s ** 2) - jnp.log(s) - _LOG_SQRT_2PI,
                    value, self.loc, self.scale)

    def cdf(self, value):
        self._check(value)
        return call("NormalCdf", lambda x, m, s: 0.5 * (1 + sps.erf((x - m) / (s * math.sqrt(2)))),
                    value, self.loc, self.scale)

    def icdf(self, value):
        return call("NormalIcdf", lambda p, m, s: m + s * sps.erfinv(2 * p - 1) * math.sqrt(2),
                    value, self.loc, self.scale)

    def entropy(self):
        return call("NormalEntropy", lambda s: 0.5 + _LOG_SQRT_2PI + jnp.log(s), self.scale)

    @property
    def _natural_params(self):
        return (call("NatLoc", lambda m, s: m / s ** 2, self.loc, self.scale),
                call("NatScale", lambda s: -0.5 / s ** 2, self.scale))

    def _log_normalizer(self, x, y):
        return -0.25 * x ** 2 / y + 0.5 * jnp.log(-math.pi / y)


__all__ = ["Normal"]
