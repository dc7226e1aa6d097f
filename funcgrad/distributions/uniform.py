"""torch.distributions.uniform: Uniform, at torch's module path (which pickles name classes by). Every formula is an
Array-level function run through `utils.call`."""
from __future__ import annotations

from .._torch import _creation, _jnp as jnp
from .. import random as jr
from . import constraints
from .distribution import TORCH_STREAM, Distribution
from .utils import call, is_concrete
from .continuous import _Checked, _shape


class Uniform(_Checked, Distribution):
    """Uniform(low, high) on [low, high)."""
    _draws_as_torch = True
    arg_constraints = {"low": constraints.dependent(is_discrete=False, event_dim=0),
                       "high": constraints.dependent(is_discrete=False, event_dim=0)}
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self._init_broadcast(validate_args, low=low, high=high)
        if self._validate_args and is_concrete(self.low) and is_concrete(self.high):
            if not bool(call("Lt", lambda a, b: jnp.all(a < b), self.low, self.high)):
                raise ValueError("Uniform is not defined when low>= high")

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return call("UniformMean", lambda a, b: (b + a) / 2, self.low, self.high)

    @property
    def mode(self):
        return call("UniformMode", lambda a, b: jnp.nan * b, self.low, self.high)

    @property
    def stddev(self):
        return call("UniformStd", lambda a, b: (b - a) / 12 ** 0.5, self.low, self.high)

    @property
    def variance(self):
        return call("UniformVar", lambda a, b: (b - a) ** 2 / 12, self.low, self.high)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:
            return self.low + _creation.rand(shape, dtype=self.low.dtype) * (self.high - self.low)
        return call("UniformRsample", lambda a, b: a + jr.uniform(key, shape, a.dtype) * (b - a), self.low, self.high)

    def log_prob(self, value):
        self._check(value)

        def f(x, a, b):
            inside = (a <= x) & (b > x)
            return jnp.log(inside.astype(a.dtype)) - jnp.log(b - a)
        return call("UniformLogProb", f, value, self.low, self.high)

    def cdf(self, value):
        self._check(value)
        return call("UniformCdf", lambda x, a, b: jnp.clip((x - a) / (b - a), 0, 1), value, self.low, self.high)

    def icdf(self, value):
        return call("UniformIcdf", lambda p, a, b: p * (b - a) + a, value, self.low, self.high)

    def entropy(self):
        return call("UniformEntropy", lambda a, b: jnp.log(b - a), self.low, self.high)


__all__ = ["Uniform"]
