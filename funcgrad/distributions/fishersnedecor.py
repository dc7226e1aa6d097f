"""torch.distributions.fishersnedecor: FisherSnedecor, at torch's module path (which pickles name classes by). Every formula is an
Array-level function run through `utils.call`."""
from __future__ import annotations

from .._torch import _jnp as jnp
from .. import random as jr
from ..scipy import special as sps
from . import constraints
from .distribution import TORCH_STREAM, Distribution
from .utils import call
from .continuous import _Checked, _gamma_rsample, _shape, _tiny


class FisherSnedecor(_Checked, Distribution):
    """FisherSnedecor(df1, df2): the F distribution."""
    _draws_as_torch = True
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self._init_broadcast(validate_args, df1=df1, df2=df2)

    @property
    def mean(self):
        return call("FMean", lambda d2: jnp.where(d2 <= 2, jnp.nan, d2 / (d2 - 2)), self.df2)

    @property
    def mode(self):
        return call("FMode", lambda d1, d2: jnp.where(d1 <= 2, jnp.nan, (d1 - 2) / d1 * d2 / (d2 + 2)),
                    self.df1, self.df2)

    @property
    def variance(self):
        def f(d1, d2):
            v = 2 * d2 ** 2 * (d1 + d2 - 2) / (d1 * (d2 - 2) ** 2 * (d2 - 4))
            return jnp.where(d2 <= 4, jnp.nan, v)
        return call("FVar", f, self.df1, self.df2)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:  # (torch: X1 ~ Gamma(df1 / 2, df1), X2 ~ Gamma(df2 / 2, df2), X1 / X2)
            x1 = _gamma_rsample(self.df1 * 0.5, self.df1, shape)
            x2 = _gamma_rsample(self.df2 * 0.5, self.df2, shape)
            tiny = jnp.finfo(x2.dtype).tiny
            d = x2.detach()
            y = x1 / (x2 + (d.clamp(min=tiny) - d))
            d = y.detach()
            return y + (d.clamp(min=tiny) - d)

        def f(d1, d2):
            k1, k2 = jr.split(key)
            tiny = _tiny(d1.dtype)
            x1 = jnp.maximum(jr.gamma(k1, jnp.broadcast_to(0.5 * d1, shape), shape, d1.dtype) / (0.5 * d1), tiny)
            x2 = jnp.maximum(jr.gamma(k2, jnp.broadcast_to(0.5 * d2, shape), shape, d2.dtype) / (0.5 * d2), tiny)
            return x1 / x2
        return call("FRsample", f, self.df1, self.df2)

    def log_prob(self, value):
        self._check(value)

        def f(x, d1, d2):
            ct1, ct2, ct3 = d1 * 0.5, d2 * 0.5, (d1 + d2) * 0.5
            t1 = sps.gammaln(ct1 + ct2) - sps.gammaln(ct1) - sps.gammaln(ct2)
            t2 = ct1 * jnp.log(d1) + ct2 * jnp.log(d2)
            t3 = ct1 * jnp.log(x) - ct3 * jnp.log(d2 + d1 * x)
            return t1 + t2 + t3 - jnp.log(x)
        return call("FLogProb", f, value, self.df1, self.df2)


__all__ = ["FisherSnedecor"]
