"""torch.distributions.cauchy: Cauchy, at torch's module path (which pickles name classes by). Every formula is an
Array-level function run through `utils.call`."""
from __future__ import annotations

import math

from .._torch import _jnp as jnp
from .. import random as jr
from .distribution import TORCH_STREAM
from .utils import call
from .continuous import _LocScale, _fresh, _shape


class Cauchy(_LocScale):
    """Cauchy(loc, scale)."""
    _draws_as_torch = True

    @property
    def mean(self):
        return call("CauchyMean", lambda m: jnp.full_like(m, jnp.nan), self.loc)

    @property
    def variance(self):
        return call("CauchyVar", lambda m: jnp.full_like(m, jnp.inf), self.loc)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:
            return self.loc + _fresh(shape, self.loc).cauchy_() * self.scale
        return call("CauchyRsample", lambda m, s: m + s * jr.cauchy(key, shape, m.dtype), self.loc, self.scale)

    def log_prob(self, value):
        self._check(value)
        return call("CauchyLogProb", lambda x, m, s: -math.log(math.pi) - jnp.log(s) - jnp.log1p(((x - m) / s) ** 2),
                    value, self.loc, self.scale)

    def cdf(self, value):
        self._check(value)
        return call("CauchyCdf", lambda x, m, s: jnp.arctan((x - m) / s) / math.pi + 0.5, value, self.loc, self.scale)

    def icdf(self, value):
        return call("CauchyIcdf", lambda p, m, s: jnp.tan(math.pi * (p - 0.5)) * s + m, value, self.loc, self.scale)

    def entropy(self):
        return call("CauchyEntropy", lambda s: math.log(4 * math.pi) + jnp.log(s), self.scale)


__all__ = ["Cauchy"]
