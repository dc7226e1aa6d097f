"""torch.distributions.laplace: Laplace, at torch's module path (which pickles name classes by). Every formula is an
Array-level function run through `utils.call`."""
from __future__ import annotations

from .._torch import _jnp as jnp
from .. import random as jr
from .._src.prims.elementwise import abs as _abs
from .distribution import TORCH_STREAM
from .utils import call
from .continuous import _LocScale, _fresh, _shape


class Laplace(_LocScale):
    """Laplace(loc, scale)."""
    _draws_as_torch = True

    @property
    def variance(self):
        return call("LaplaceVar", lambda s: 2 * s ** 2, self.scale)

    @property
    def stddev(self):
        return call("LaplaceStd", lambda s: 2 ** 0.5 * s, self.scale)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:
            u = _fresh(shape, self.loc).uniform_(jnp.finfo(self.loc.dtype).eps - 1, 1)
            return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

        def f(m, s):
            u = jr.uniform(key, shape, m.dtype, minval=jnp.finfo(m.dtype).eps - 1, maxval=1)
            return m - s * jnp.sign(u) * jnp.log1p(-jnp.abs(u))
        return call("LaplaceRsample", f, self.loc, self.scale)

    def log_prob(self, value):
        self._check(value)
        return call("LaplaceLogProb", lambda x, m, s: -jnp.log(2 * s) - _abs(x - m, "torch") / s,
                    value, self.loc, self.scale)

    def cdf(self, value):
        self._check(value)
        return call("LaplaceCdf", lambda x, m, s: 0.5 - 0.5 * jnp.sign(x - m) * jnp.expm1(-jnp.abs(x - m) / s),
                    value, self.loc, self.scale)

    def icdf(self, value):
        def f(p, m, s):
            t = p - 0.5
            return m - s * jnp.sign(t) * jnp.log1p(-2 * jnp.abs(t))
        return call("LaplaceIcdf", f, value, self.loc, self.scale)

    def entropy(self):
        return call("LaplaceEntropy", lambda s: 1 + jnp.log(2 * s), self.scale)


__all__ = ["Laplace"]
