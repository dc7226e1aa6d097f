"""torch.distributions.studentT: StudentT, at torch's module path (which pickles name classes by). Every formula is an
Array-level function run through `utils.call`."""
from __future__ import annotations

import math

from .._torch import _creation, _jnp as jnp
from .. import random as jr
from ..scipy import special as sps
from . import constraints
from .distribution import TORCH_STREAM, Distribution
from .utils import call
from .continuous import _Checked, _fresh, _gamma_rsample, _shape


class StudentT(_Checked, Distribution):
    """StudentT(df, loc=0, scale=1)."""
    _draws_as_torch = True
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self._init_broadcast(validate_args, df=df, loc=loc, scale=scale)

    @property
    def mean(self):
        return call("StudentTMean", lambda d, m: jnp.where(d <= 1, jnp.nan, m), self.df, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        def f(d, s):
            v = s ** 2 * d / (d - 2)
            v = jnp.where((d <= 2) & (d > 1), jnp.inf, v)
            return jnp.where(d <= 1, jnp.nan, v)
        return call("StudentTVar", f, self.df, self.scale)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:  # (torch: a standard normal, then a Chi2(df) sample)
            x = _fresh(shape, self.df).normal_()
            z = _gamma_rsample(0.5 * self.df, _creation.full_like(self.df, 0.5), shape)
            return self.loc + self.scale * (x * (z / self.df).rsqrt())

        def f(d, m, s):
            k1, k2 = jr.split(key)
            x = jr.normal(k1, shape, m.dtype)
            z = jr.chisquare(k2, jnp.broadcast_to(d, shape), shape, m.dtype)
            return m + s * x * jnp.sqrt(d / z)
        return call("StudentTRsample", f, self.df, self.loc, self.scale)

    def log_prob(self, value):
        self._check(value)

        def f(x, d, m, s):
            y = (x - m) / s
            z = jnp.log(s) + 0.5 * jnp.log(d) + 0.5 * math.log(math.pi) + sps.gammaln(0.5 * d) - sps.gammaln(0.5 * (d + 1.0))
            return -0.5 * (d + 1.0) * jnp.log1p(y ** 2 / d) - z
        return call("StudentTLogProb", f, value, self.df, self.loc, self.scale)

    def entropy(self):
        def f(d, s):
            lbeta = sps.gammaln(0.5 * d) + math.lgamma(0.5) - sps.gammaln(0.5 * (d + 1))
            return (jnp.log(s) + 0.5 * (d + 1) * (sps.digamma(0.5 * (d + 1)) - sps.digamma(0.5 * d))
                    + 0.5 * jnp.log(d) + lbeta)
        return call("StudentTEntropy", f, self.df, self.scale)


__all__ = ["StudentT"]
