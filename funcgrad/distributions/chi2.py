"""torch.distributions.chi2: Chi2, at torch's module path (which pickles name classes by). Every formula is an
Array-level function run through `utils.call`."""
from __future__ import annotations

from .._torch import _jnp as jnp
from . import constraints
from .utils import broadcast_all, call
from .gamma import Gamma


class Chi2(Gamma):
    """Chi2(df) = Gamma(df / 2, 1 / 2)."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        (df,) = broadcast_all(df)
        half = call("Half", lambda d: 0.5 * d, df)
        super().__init__(half, call("HalfLike", lambda d: jnp.full_like(d, 0.5), df), validate_args=validate_args)

    @property
    def df(self):
        return call("Double", lambda c: c * 2, self.concentration)


__all__ = ["Chi2"]
