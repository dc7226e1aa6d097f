"""torch.distributions.exponential: Exponential, at torch's module path (which pickles name classes by). Every formula is an
Array-level function run through `utils.call`."""
from __future__ import annotations

from .._torch import _jnp as jnp
from .. import random as jr
from . import constraints
from .distribution import TORCH_STREAM
from .exp_family import ExponentialFamily
from .utils import call
from .continuous import _Checked, _fresh, _shape


class Exponential(_Checked, ExponentialFamily):
    """Exponential(rate)."""
    _draws_as_torch = True
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        self._init_broadcast(validate_args, rate=rate)

    @property
    def mean(self):
        return call("Reciprocal", lambda r: 1 / r, self.rate)

    @property
    def mode(self):
        return call("ZerosLike", jnp.zeros_like, self.rate)

    @property
    def stddev(self):
        return call("Reciprocal", lambda r: 1 / r, self.rate)

    @property
    def variance(self):
        return call("ExponentialVar", lambda r: r ** -2, self.rate)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:
            return _fresh(shape, self.rate).exponential_() / self.rate
        return call("ExponentialRsample", lambda r: jr.exponential(key, shape, r.dtype) / r, self.rate)

    def log_prob(self, value):
        self._check(value)
        return call("ExponentialLogProb", lambda x, r: jnp.log(r) - r * x, value, self.rate)

    def cdf(self, value):
        self._check(value)
        return call("ExponentialCdf", lambda x, r: 1 - jnp.exp(-r * x), value, self.rate)

    def icdf(self, value):
        return call("ExponentialIcdf", lambda p, r: -jnp.log1p(-p) / r, value, self.rate)

    def entropy(self):
        return call("ExponentialEntropy", lambda r: 1.0 - jnp.log(r), self.rate)

    @property
    def _natural_params(self):
        return (call("Neg", lambda r: -r, self.rate),)

    def _log_normalizer(self, x):
        return -jnp.log(-x)


__all__ = ["Exponential"]
