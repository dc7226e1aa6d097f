"""torch.distributions.dirichlet: Dirichlet, at torch's module path (which pickles name classes by). Every formula is an
Array-level function run through `utils.call`."""
from __future__ import annotations

from .._torch import _creation, _jnp as jnp
from .. import random as jr
from ..scipy import special as sps
from . import constraints
from .distribution import TORCH_STREAM
from .exp_family import ExponentialFamily
from .utils import call
from .continuous import _Checked, _shape, _tiny, xlogy


class Dirichlet(_Checked, ExponentialFamily):
    """Dirichlet(concentration) on the simplex (concentration's last dim is the event)."""
    _draws_as_torch = True
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = tuple(concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    @property
    def mean(self):
        return call("DirichletMean", lambda c: c / jnp.sum(c, -1, keepdims=True), self.concentration)

    @property
    def mode(self):
        def f(c):
            cm1 = jnp.maximum(c - 1, 0)
            mode = cm1 / jnp.sum(cm1, -1, keepdims=True)
            all_small = jnp.all(c < 1, axis=-1, keepdims=True)
            onehot = (jnp.arange(c.shape[-1]) == jnp.argmax(c, axis=-1)[..., None]).astype(c.dtype)
            return jnp.where(all_small, onehot, mode)
        return call("DirichletMode", f, self.concentration)

    @property
    def variance(self):
        def f(c):
            c0 = jnp.sum(c, -1, keepdims=True)
            return c * (c0 - c) / (c0 ** 2 * (c0 + 1))
        return call("DirichletVar", f, self.concentration)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:
            return _creation.dirichlet_rsample(self.concentration.expand(shape))

        def f(c):
            x = jr.dirichlet(key, jnp.broadcast_to(c, shape), shape[:-1], c.dtype)
            return jnp.clip(x, _tiny(c.dtype), 1 - jnp.finfo(c.dtype).eps)
        return call("DirichletRsample", f, self.concentration)

    def log_prob(self, value):
        self._check(value)

        def f(x, c):
            return (jnp.sum(xlogy(c - 1, x), -1) + sps.gammaln(jnp.sum(c, -1)) - jnp.sum(sps.gammaln(c), -1))
        return call("DirichletLogProb", f, value, self.concentration)

    def entropy(self):
        def f(c):
            k = c.shape[-1]
            a0 = jnp.sum(c, -1)
            return (jnp.sum(sps.gammaln(c), -1) - sps.gammaln(a0) - (k - a0) * sps.digamma(a0)
                    - jnp.sum((c - 1.0) * sps.digamma(c), -1))
        return call("DirichletEntropy", f, self.concentration)

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return jnp.sum(sps.gammaln(x), -1) - sps.gammaln(jnp.sum(x, -1))


__all__ = ["Dirichlet"]
