"""torch.distributions.generalized_pareto: GeneralizedPareto, at torch's module path (which pickles name classes by). Every formula is an
Array-level function run through `utils.call`."""
from __future__ import annotations

from .._torch import _creation, _jnp as jnp
from .. import random as jr
from . import constraints
from .distribution import TORCH_STREAM, Distribution
from .utils import call
from .continuous import _Checked, _shape


class GeneralizedPareto(_Checked, Distribution):
    """GeneralizedPareto(loc, scale, concentration)."""
    _draws_as_torch = True
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self._init_broadcast(validate_args, loc=loc, scale=scale, concentration=concentration)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = call("GPUpper", lambda m, s, c: jnp.where(c < 0, m - s / c, jnp.inf), self.loc, self.scale,
                     self.concentration)
        return constraints.interval(lower, upper)

    @staticmethod
    def _z(x, m, s):
        return (x - m) / s

    def _icdf_f(self, p, m, s, c):
        logu = jnp.log1p(-p)
        safe_c = jnp.where(jnp.abs(c) < 1e-30, 1.0, c)
        return m - s * jnp.where(jnp.abs(c) < 1e-30, logu, jnp.expm1(-safe_c * logu) / -safe_c)

    def _log_prob_f(self, x, m, s, c):
        z = (x - m) / s
        safe_c = jnp.where(jnp.abs(c) < 1e-30, 1.0, c)
        y = 1 / safe_c + 1
        lp = jnp.where(jnp.abs(c) < 1e-30, -z, -y * jnp.log1p(safe_c * z))
        inside = (z >= 0) & ((c >= 0) | (z <= -1 / safe_c))
        return jnp.where(inside, lp - jnp.log(s), -jnp.inf)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:
            return call("GPRsample", lambda m, s, c, u: self._icdf_f(u, m, s, c), self.loc, self.scale,
                        self.concentration, _creation.rand(shape, dtype=self.loc.dtype))
        return call("GPRsample", lambda m, s, c: self._icdf_f(jr.uniform(key, shape, m.dtype), m, s, c),
                    self.loc, self.scale, self.concentration)

    def log_prob(self, value):
        self._check(value)
        return call("GPLogProb", self._log_prob_f, value, self.loc, self.scale, self.concentration)

    def log_survival_function(self, value):
        return call("GPLogSF", _gp_lsf, value, self.loc, self.scale, self.concentration)

    def cdf(self, value):
        self._check(value)
        return call("GPCdf", lambda *a: -jnp.expm1(_gp_lsf(*a)), value, self.loc, self.scale, self.concentration)

    def icdf(self, value):
        return call("GPIcdf", self._icdf_f, value, self.loc, self.scale, self.concentration)

    @property
    def mean(self):
        return call("GPMean", lambda m, s, c: jnp.where(c < 1, m + s / (1 - c), jnp.nan),
                    self.loc, self.scale, self.concentration)

    @property
    def variance(self):
        return call("GPVar", lambda m, s, c: jnp.where(c < 0.5, s ** 2 / ((1 - c) ** 2 * (1 - 2 * c)), jnp.nan),
                    self.loc, self.scale, self.concentration)

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        return call("GPEntropy", lambda s, c: jnp.log(s) + c + 1, self.scale, self.concentration)


def _gp_lsf(x, m, s, c):
    z = (x - m) / s
    safe_c = jnp.where(jnp.abs(c) < 1e-30, 1.0, c)
    lsf = jnp.where(jnp.abs(c) < 1e-30, -z, -jnp.log1p(safe_c * jnp.maximum(z, 0)) / safe_c)
    return jnp.where(z < 0, 0.0, lsf)


__all__ = ["GeneralizedPareto"]
