"""ExponentialFamily: distributions p(x) = h(x) exp(<t(x), theta> - F(theta)), with the entropy from the
log normalizer F (its gradient is E[t(x)]), computed with funcgrad's own grad on Arrays."""
from __future__ import annotations

from .._src.interpreters.ad import vjp
from .._torch import _jnp as jnp
from .distribution import Distribution
from .utils import call

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Subclasses give `_natural_params` (a tuple of parameters), `_log_normalizer(*natural)` on Arrays
    and `_mean_carrier_measure` (E[log h(x)])."""

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """-E[log p] = F(theta) - <theta, grad F(theta)> - E[log h(x)]."""
        carrier = self._mean_carrier_measure
        nat = self._natural_params

        def f(*ps):
            lg, pull = vjp(lambda *q: jnp.sum(self._log_normalizer(*q)), *ps)
            grads = pull(jnp.ones_like(lg))
            out = -carrier + self._log_normalizer(*ps)
            for p, g in zip(ps, grads):
                out = out - jnp.reshape(p * g, tuple(self.batch_shape) + (-1,)).sum(-1)
            return out
        return call("ExpFamilyEntropy", f, *nat)
