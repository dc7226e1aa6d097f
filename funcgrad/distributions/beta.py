"""torch.distributions.beta: Beta, at torch's module path (which pickles name classes by). Every formula is an
Array-level function run through `utils.call`."""
from __future__ import annotations

from .._torch import _creation, _jnp as jnp
from .. import random as jr
from ..scipy import special as sps
from . import constraints
from .distribution import TORCH_STREAM
from .exp_family import ExponentialFamily
from .utils import call
from .continuous import _Checked, _shape, xlogy


class Beta(_Checked, ExponentialFamily):
    """Beta(concentration1, concentration0) on [0, 1]."""
    _draws_as_torch = True
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self._init_broadcast(validate_args, concentration1=concentration1, concentration0=concentration0)

    @property
    def mean(self):
        return call("BetaMean", lambda a, b: a / (a + b), self.concentration1, self.concentration0)

    @property
    def mode(self):
        def f(a, b):
            am, bm = jnp.maximum(a - 1, 0), jnp.maximum(b - 1, 0)
            m = am / (am + bm)
            both_small = (a < 1) & (b < 1)  # the larger of the two is the mode's end point
            return jnp.where(both_small, jnp.where(a > b, 1.0, 0.0).astype(a.dtype), m)
        return call("BetaMode", f, self.concentration1, self.concentration0)

    @property
    def variance(self):
        return call("BetaVar", lambda a, b: a * b / ((a + b) ** 2 * (a + b + 1)),
                    self.concentration1, self.concentration0)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:  # (torch: the first coordinate of Dirichlet([c1, c0]))
            c = call("Stack", lambda a, b: jnp.stack([a, b], -1), self.concentration1, self.concentration0)
            return _creation.dirichlet_rsample(c.expand(shape + (2,)))[..., 0]
        return call("BetaRsample", lambda a, b: jr.beta(key, a, b, shape, a.dtype),
                    self.concentration1, self.concentration0)

    def log_prob(self, value):
        self._check(value)

        def f(x, a, b):
            return (xlogy(a - 1, x) + xlogy(b - 1, 1 - x) + sps.gammaln(a + b) - sps.gammaln(a) - sps.gammaln(b))
        return call("BetaLogProb", f, value, self.concentration1, self.concentration0)

    def entropy(self):
        def f(a, b):
            a0 = a + b
            return (sps.gammaln(a) + sps.gammaln(b) - sps.gammaln(a0) - (2 - a0) * sps.digamma(a0)
                    - (a - 1) * sps.digamma(a) - (b - 1) * sps.digamma(b))
        return call("BetaEntropy", f, self.concentration1, self.concentration0)

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return sps.gammaln(x) + sps.gammaln(y) - sps.gammaln(x + y)


__all__ = ["Beta"]
