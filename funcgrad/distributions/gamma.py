"""torch.distributions.gamma: Gamma, at torch's module path (which pickles name classes by). Every formula is an
Array-level function run through `utils.call`."""
from __future__ import annotations

from .._torch import _jnp as jnp
from .. import random as jr
from ..scipy import special as sps
from . import constraints
from .distribution import TORCH_STREAM
from .exp_family import ExponentialFamily
from .utils import call
from .continuous import _Checked, _gamma_rsample, _shape, _tiny, xlogy


class Gamma(_Checked, ExponentialFamily):
    """Gamma(concentration, rate): shape and inverse scale."""
    _draws_as_torch = True
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self._init_broadcast(validate_args, concentration=concentration, rate=rate)

    @property
    def mean(self):
        return call("GammaMean", lambda c, r: c / r, self.concentration, self.rate)

    @property
    def mode(self):
        return call("GammaMode", lambda c, r: jnp.maximum((c - 1) / r, 0), self.concentration, self.rate)

    @property
    def variance(self):
        return call("GammaVar", lambda c, r: c / r ** 2, self.concentration, self.rate)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:
            return _gamma_rsample(self.concentration, self.rate, shape)

        def f(c, r):
            g = jr.gamma(key, jnp.broadcast_to(c, shape), shape, c.dtype) / r
            return jnp.maximum(g, _tiny(c.dtype))
        return call("GammaRsample", f, self.concentration, self.rate)

    def log_prob(self, value):
        self._check(value)
        return call("GammaLogProb", lambda x, c, r: xlogy(c, r) + xlogy(c - 1, x) - r * x - sps.gammaln(c),
                    value, self.concentration, self.rate)

    def entropy(self):
        return call("GammaEntropy", lambda c, r: c - jnp.log(r) + sps.gammaln(c) + (1.0 - c) * sps.digamma(c),
                    self.concentration, self.rate)

    def cdf(self, value):
        self._check(value)
        return call("GammaCdf", lambda x, c, r: sps.gammainc(c, r * x), value, self.concentration, self.rate)

    @property
    def _natural_params(self):
        return (call("Sub1", lambda c: c - 1, self.concentration), call("Neg", lambda r: -r, self.rate))

    def _log_normalizer(self, x, y):
        return sps.gammaln(x + 1) + (x + 1) * jnp.log(-1.0 / y)


__all__ = ["Gamma"]
