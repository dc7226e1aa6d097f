"""torch.distributions.continuous_bernoulli: ContinuousBernoulli, at torch's module path (which pickles name classes by). Every formula is an
Array-level function run through `utils.call`."""
from __future__ import annotations

import math

from .._torch import _creation, _jnp as jnp
from .. import random as jr
from ..scipy import special as sps
from . import constraints
from .distribution import TORCH_STREAM
from .exp_family import ExponentialFamily
from .utils import BinaryProbsOrLogits, call, clamp_probs, is_concrete, lazy_property, logits_to_probs
from .continuous import _Checked, _shape


class ContinuousBernoulli(BinaryProbsOrLogits, _Checked, ExponentialFamily):
    """ContinuousBernoulli(probs or logits) on [0, 1], with the normaliser evaluated stably near 1/2."""
    _draws_as_torch = True
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        param = self._set_probs_or_logits(probs, logits)
        if probs is not None:
            if validate_args is not None and is_concrete(param):  # (as PyTorch: before clamping)
                if not bool(constraints.unit_interval.check(param).all()):
                    raise ValueError("The parameter probs has invalid values")
            self.probs = param = clamp_probs(param)
        self._param = param
        self._lims = lims
        super().__init__(param.shape, validate_args=validate_args)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def _outside(self, p):
        lo, hi = self._lims
        return (p <= lo) | (p > hi)

    def _cut_probs(self, p):
        lo = self._lims[0]
        return jnp.where(self._outside(p), p, lo * jnp.ones_like(p))

    def _cont_bern_log_norm(self, p):
        cut = self._cut_probs(p)
        cut_below = jnp.where(cut <= 0.5, cut, jnp.zeros_like(cut))
        cut_above = jnp.where(cut >= 0.5, cut, jnp.ones_like(cut))
        log_norm = jnp.log(jnp.abs(jnp.log1p(-cut) - jnp.log(cut))) - jnp.where(
            cut <= 0.5, jnp.log1p(-2.0 * cut_below), jnp.log(2.0 * cut_above - 1.0))
        x = (p - 0.5) ** 2
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return jnp.where(self._outside(p), log_norm, taylor)

    def _mean_fn(self, p):
        cut = self._cut_probs(p)
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (jnp.log1p(-cut) - jnp.log(cut))
        x = p - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x ** 2) * x
        return jnp.where(self._outside(p), mus, taylor)

    def _var_fn(self, p):
        cut = self._cut_probs(p)
        vars_ = cut * (cut - 1.0) / (1.0 - 2.0 * cut) ** 2 + 1.0 / (jnp.log1p(-cut) - jnp.log(cut)) ** 2
        x = (p - 0.5) ** 2
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return jnp.where(self._outside(p), vars_, taylor)

    @property
    def mean(self):
        return call("CBMean", self._mean_fn, self.probs)

    @property
    def stddev(self):
        return call("CBStd", lambda p: jnp.sqrt(self._var_fn(p)), self.probs)

    @property
    def variance(self):
        return call("CBVar", self._var_fn, self.probs)

    def _icdf_fn(self, u, p):
        cut = self._cut_probs(p)
        val = (jnp.log1p(-cut + u * (2.0 * cut - 1.0)) - jnp.log1p(-cut)) / (jnp.log(cut) - jnp.log1p(-cut))
        return jnp.where(self._outside(p), val, u)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:
            return call("CBRsample", lambda p, u: self._icdf_fn(u, p), self.probs,
                        _creation.rand(shape, dtype=self.probs.dtype))
        return call("CBRsample", lambda p: self._icdf_fn(jr.uniform(key, shape, p.dtype), p), self.probs)

    def log_prob(self, value):
        self._check(value)

        def f(x, lg):
            p = jnp.clip(sps.expit(lg), jnp.finfo(lg.dtype).eps, 1 - jnp.finfo(lg.dtype).eps)
            bce = jnp.logaddexp(lg, 0.0) - lg * x  # (softplus(lg) - lg x: smooth at lg = 0)
            return -bce + self._cont_bern_log_norm(p)
        return call("CBLogProb", f, value, self.logits)

    def cdf(self, value):
        self._check(value)

        def f(x, p):
            cut = self._cut_probs(p)
            cdfs = (jnp.power(cut, x) * jnp.power(1.0 - cut, 1.0 - x) + cut - 1.0) / (2.0 * cut - 1.0)
            unbounded = jnp.where(self._outside(p), cdfs, x)
            return jnp.where(x <= 0.0, jnp.zeros_like(x), jnp.where(x >= 1.0, jnp.ones_like(x), unbounded))
        return call("CBCdf", f, value, self.probs)

    def icdf(self, value):
        return call("CBIcdf", self._icdf_fn, value, self.probs)

    def entropy(self):
        def f(p, lg):
            log_probs0 = jnp.log1p(-p)
            log_probs1 = jnp.log(p)
            return (self._mean_fn(p) * (log_probs0 - log_probs1) - self._cont_bern_log_norm(p) - log_probs0)
        return call("CBEntropy", f, self.probs, self.logits)

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        lo, hi = self._lims
        outside = (x <= lo - 0.5) | (x > hi - 0.5)
        cut = jnp.where(outside, x, (lo - 0.5) * jnp.ones_like(x))
        log_norm = jnp.log(jnp.abs(jnp.expm1(cut))) - jnp.log(jnp.abs(cut))
        taylor = 0.5 * x + x * x / 24.0 - x ** 4 / 2880.0
        return jnp.where(outside, log_norm, taylor)


__all__ = ["ContinuousBernoulli"]
