"""Univariate continuous families with closed forms: Normal, Uniform, Exponential, Laplace, Cauchy, Gamma,
Chi2, Beta, Dirichlet, StudentT, FisherSnedecor, HalfNormal, HalfCauchy, VonMises, ContinuousBernoulli,
GeneralizedPareto. Every formula is an Array-level function run through `utils.call`."""
from __future__ import annotations

import math

from .._torch import _creation, _jnp as jnp
from .. import random as jr
from .._src.prims.elementwise import abs as _abs
from ..scipy import special as sps
from . import constraints
from .distribution import TORCH_STREAM, Distribution
from .exp_family import ExponentialFamily
from .utils import (BinaryProbsOrLogits, broadcast_all, call, clamp_probs, is_concrete, lazy_property,
                    logits_to_probs)

__all__ = ["Beta", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet", "Exponential", "FisherSnedecor",
           "Gamma", "GeneralizedPareto", "HalfCauchy", "HalfNormal", "Laplace", "Normal", "StudentT", "Uniform",
           "VonMises"]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def xlogy(x, y):
    """x * log(y), 0 where x == 0 (with a finite gradient there)."""
    zero = x == 0
    return jnp.where(zero, 0.0, x * jnp.log(jnp.where(zero, 1.0, y)))


def softplus(x):
    return jnp.logaddexp(x, 0.0)


def _tiny(dt):
    return jnp.finfo(dt).tiny


def _shape(d, sample_shape) -> tuple:
    return tuple(d._extended_shape(sample_shape))


def _fresh(shape, like):
    """An uninitialised tensor of like's dtype (torch's `like.new(shape)`), for an in-place draw."""
    return _creation.empty(shape, dtype=like.dtype)


def _standard_gamma(c, shape):
    """torch's Gamma(c, 1) samples of c expanded to shape (torch._standard_gamma: its numbers, differentiable)."""
    return _creation._standard_gamma(c.expand(shape))


def _gamma_rsample(c, r, shape):
    """Gamma.rsample as torch's: _standard_gamma(c) / r, clamped below at tiny (the value only, as torch's
    in-place clamp of the detached result)."""
    v = _standard_gamma(c, shape) / r.expand(shape)
    d = v.detach()
    return v + (d.clamp(min=jnp.finfo(v.dtype).tiny) - d)


class _Checked:
    """Mixin: value validation shared by log_prob/cdf."""

    def _check(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return value


# --- location-scale families -------------------------------------------------------------------------------

class _CentredAtLoc:
    """Mixin of the families symmetric and unimodal about `loc`: their mean and mode are loc (a family
    without a mean overrides it)."""

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc


class _LocScale(_CentredAtLoc, _Checked, Distribution):
    """A location-scale family on the real line: loc real, scale positive, broadcast together."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self._init_broadcast(validate_args, loc=loc, scale=scale)


class Normal(_LocScale, ExponentialFamily):
    """Normal(loc, scale)."""
    _draws_as_torch = True
    _mean_carrier_measure = 0

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return call("NormalVariance", jnp.square, self.scale)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:
            return self.loc + _creation.randn(shape, dtype=self.loc.dtype) * self.scale
        return call("NormalRsample", lambda m, s: m + s * jr.normal(key, shape, m.dtype), self.loc, self.scale)

    def log_prob(self, value):
        self._check(value)
        return call("NormalLogProb", lambda x, m, s: -((x - m) ** 2) / (2 * s ** 2) - jnp.log(s) - _LOG_SQRT_2PI,
                    value, self.loc, self.scale)

    def cdf(self, value):
        self._check(value)
        return call("NormalCdf", lambda x, m, s: 0.5 * (1 + sps.erf((x - m) / (s * math.sqrt(2)))),
                    value, self.loc, self.scale)

    def icdf(self, value):
        return call("NormalIcdf", lambda p, m, s: m + s * sps.erfinv(2 * p - 1) * math.sqrt(2),
                    value, self.loc, self.scale)

    def entropy(self):
        return call("NormalEntropy", lambda s: 0.5 + _LOG_SQRT_2PI + jnp.log(s), self.scale)

    @property
    def _natural_params(self):
        return (call("NatLoc", lambda m, s: m / s ** 2, self.loc, self.scale),
                call("NatScale", lambda s: -0.5 / s ** 2, self.scale))

    def _log_normalizer(self, x, y):
        return -0.25 * x ** 2 / y + 0.5 * jnp.log(-math.pi / y)


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


class Cauchy(_LocScale):
    """Cauchy(loc, scale)."""
    _draws_as_torch = True

    @property
    def mean(self):
        return call("CauchyMean", lambda m: jnp.full_like(m, jnp.nan), self.loc)

    @property
    def variance(self):
        return call("CauchyVar", lambda m: jnp.full_like(m, jnp.inf), self.loc)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:
            return self.loc + _fresh(shape, self.loc).cauchy_() * self.scale
        return call("CauchyRsample", lambda m, s: m + s * jr.cauchy(key, shape, m.dtype), self.loc, self.scale)

    def log_prob(self, value):
        self._check(value)
        return call("CauchyLogProb", lambda x, m, s: -math.log(math.pi) - jnp.log(s) - jnp.log1p(((x - m) / s) ** 2),
                    value, self.loc, self.scale)

    def cdf(self, value):
        self._check(value)
        return call("CauchyCdf", lambda x, m, s: jnp.arctan((x - m) / s) / math.pi + 0.5, value, self.loc, self.scale)

    def icdf(self, value):
        return call("CauchyIcdf", lambda p, m, s: jnp.tan(math.pi * (p - 0.5)) * s + m, value, self.loc, self.scale)

    def entropy(self):
        return call("CauchyEntropy", lambda s: math.log(4 * math.pi) + jnp.log(s), self.scale)


# --- gamma-based families ----------------------------------------------------------------------------------

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
        def f(x, c, r):
            x = jnp.asarray(x, dtype=r.dtype)  # (torch's as_tensor(value, dtype=rate.dtype))
            return xlogy(c, r) + xlogy(c - 1, x) - r * x - sps.gammaln(c)
        return call("GammaLogProb", f, value, self.concentration, self.rate)

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


class StudentT(_Checked, Distribution):
    """StudentT(df, loc=0, scale=1)."""
    _draws_as_torch = True
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self._init_broadcast(validate_args, df=df, loc=loc, scale=scale)

    @property
    def mean(self):
        return call("StudentTMean", lambda d, m: jnp.where(d <= 1, jnp.nan, m), self.df, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        def f(d, s):
            v = s ** 2 * d / (d - 2)
            v = jnp.where((d <= 2) & (d > 1), jnp.inf, v)
            return jnp.where(d <= 1, jnp.nan, v)
        return call("StudentTVar", f, self.df, self.scale)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:  # (torch: a standard normal, then a Chi2(df) sample)
            x = _fresh(shape, self.df).normal_()
            z = _gamma_rsample(0.5 * self.df, _creation.full_like(self.df, 0.5), shape)
            return self.loc + self.scale * (x * (z / self.df).rsqrt())

        def f(d, m, s):
            k1, k2 = jr.split(key)
            x = jr.normal(k1, shape, m.dtype)
            z = jr.chisquare(k2, jnp.broadcast_to(d, shape), shape, m.dtype)
            return m + s * x * jnp.sqrt(d / z)
        return call("StudentTRsample", f, self.df, self.loc, self.scale)

    def log_prob(self, value):
        self._check(value)

        def f(x, d, m, s):
            y = (x - m) / s
            z = jnp.log(s) + 0.5 * jnp.log(d) + 0.5 * math.log(math.pi) + sps.gammaln(0.5 * d) - sps.gammaln(0.5 * (d + 1.0))
            return -0.5 * (d + 1.0) * jnp.log1p(y ** 2 / d) - z
        return call("StudentTLogProb", f, value, self.df, self.loc, self.scale)

    def entropy(self):
        def f(d, s):
            lbeta = sps.gammaln(0.5 * d) + math.lgamma(0.5) - sps.gammaln(0.5 * (d + 1))
            return (jnp.log(s) + 0.5 * (d + 1) * (sps.digamma(0.5 * (d + 1)) - sps.digamma(0.5 * d))
                    + 0.5 * jnp.log(d) + lbeta)
        return call("StudentTEntropy", f, self.df, self.scale)


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


class HalfNormal(_Checked, Distribution):
    """|X| for X ~ Normal(0, scale)."""
    _draws_as_torch = True
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        self._init_broadcast(validate_args, scale=scale)

    @property
    def mean(self):
        return call("HalfNormalMean", lambda s: s * math.sqrt(2 / math.pi), self.scale)

    @property
    def mode(self):
        return call("ZerosLike", jnp.zeros_like, self.scale)

    @property
    def variance(self):
        return call("HalfNormalVar", lambda s: s ** 2 * (1 - 2 / math.pi), self.scale)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:  # (torch: |0 + eps * scale|)
            return (0.0 + _fresh(shape, self.scale).normal_() * self.scale).abs()
        return call("HalfNormalRsample", lambda s: jnp.abs(s * jr.normal(key, shape, s.dtype)), self.scale)

    def log_prob(self, value):
        self._check(value)

        def f(x, s):
            lp = math.log(2) - x ** 2 / (2 * s ** 2) - jnp.log(s) - _LOG_SQRT_2PI
            return jnp.where(x >= 0, lp, -jnp.inf)
        return call("HalfNormalLogProb", f, value, self.scale)

    def cdf(self, value):
        self._check(value)
        return call("HalfNormalCdf", lambda x, s: sps.erf(x / (s * math.sqrt(2))), value, self.scale)

    def icdf(self, prob):
        return call("HalfNormalIcdf", lambda p, s: s * sps.erfinv(p) * math.sqrt(2), prob, self.scale)

    def entropy(self):
        return call("HalfNormalEntropy", lambda s: 0.5 * math.log(math.pi / 2) + 0.5 + jnp.log(s), self.scale)


class HalfCauchy(_Checked, Distribution):
    """|X| for X ~ Cauchy(0, scale)."""
    _draws_as_torch = True
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        self._init_broadcast(validate_args, scale=scale)

    @property
    def mean(self):
        return call("HalfCauchyMean", lambda s: jnp.full_like(s, jnp.inf), self.scale)

    @property
    def mode(self):
        return call("ZerosLike", jnp.zeros_like, self.scale)

    @property
    def variance(self):
        return call("HalfCauchyVar", lambda s: jnp.full_like(s, jnp.inf), self.scale)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:  # (torch: |0 + eps * scale|, eps from cauchy_)
            return (0.0 + _fresh(shape, self.scale).cauchy_() * self.scale).abs()
        return call("HalfCauchyRsample", lambda s: jnp.abs(s * jr.cauchy(key, shape, s.dtype)), self.scale)

    def log_prob(self, value):
        self._check(value)

        def f(x, s):
            x = jnp.asarray(x, dtype=s.dtype)  # (torch's as_tensor(value, dtype=scale.dtype))
            lp = math.log(2 / math.pi) - jnp.log(s) - jnp.log1p((x / s) ** 2)
            return jnp.where(x >= 0, lp, -jnp.inf)
        return call("HalfCauchyLogProb", f, value, self.scale)

    def cdf(self, value):
        self._check(value)
        return call("HalfCauchyCdf", lambda x, s: 2 * jnp.arctan(x / s) / math.pi, value, self.scale)

    def icdf(self, prob):
        return call("HalfCauchyIcdf", lambda p, s: jnp.tan(math.pi * p / 2) * s, prob, self.scale)

    def entropy(self):
        return call("HalfCauchyEntropy", lambda s: math.log(2 * math.pi) + jnp.log(s), self.scale)


# --- others ------------------------------------------------------------------------------------------------

def _log_i0_i1(x, order):
    """log of the modified Bessel function I_order(x) (order 0 or 1), x >= 0, by the Abramowitz & Stegun
    polynomial approximations (as used for the von Mises normaliser)."""
    small = [[1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813],
             [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411]][order]
    large = [[0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706, 0.02635537,
              -0.01647633, 0.00392377],
             [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967, -0.02895312,
              0.01787654, -0.00420059]][order]

    def horner(coeffs, t):
        r = coeffs[-1]
        for c in reversed(coeffs[:-1]):
            r = r * t + c
        return r
    xs = jnp.minimum(x, 3.75)
    y = (xs / 3.75) ** 2
    s = horner(small, y)
    if order == 1:
        s = xs * s
    xl = jnp.maximum(x, 3.75)
    lg = xl - 0.5 * jnp.log(xl) + jnp.log(horner(large, 3.75 / xl))
    return jnp.where(x < 3.75, jnp.log(s), lg)


class VonMises(_CentredAtLoc, _Checked, Distribution):
    """VonMises(loc, concentration): a circular distribution on [-pi, pi)."""
    _draws_as_torch = True
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self._init_broadcast(validate_args, loc=loc, concentration=concentration)

    def log_prob(self, value):
        self._check(value)

        def f(x, m, k):
            return k * jnp.cos(x - m) - math.log(2 * math.pi) - _log_i0_i1(k, 0)
        return call("VonMisesLogProb", f, value, self.loc, self.concentration)

    def _sample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:
            return _von_mises_torch(self.loc, self.concentration, shape)

        def f(m, k):
            # Best & Fisher (1979) rejection sampler, run a fixed number of rounds, vectorised.
            dt = m.dtype
            kk = jnp.broadcast_to(k, shape).astype(jnp.float64)
            tau = 1 + jnp.sqrt(1 + 4 * kk ** 2)
            rho = (tau - jnp.sqrt(2 * tau)) / (2 * kk)
            r = (1 + rho ** 2) / (2 * rho)
            rs = jnp.where(kk < 1e-5, 1 / kk, r)  # small concentrations: close to uniform
            rounds = 24  # each round accepts with probability > 0.65: all rounds failing is ~1e-11
            k1, k2, k3 = jr.split(key, 3)
            u1 = jr.uniform(k1, (rounds,) + shape, jnp.float64)
            u2 = jr.uniform(k2, (rounds,) + shape, jnp.float64)
            u3 = jr.uniform(k3, (rounds,) + shape, jnp.float64)
            z = jnp.cos(math.pi * u1)
            fz = (1 + rs * z) / (rs + z)
            c = kk * (rs - fz)
            accept = (c * (2 - c) - u2 > 0) | (jnp.log(c / u2) + 1 - c >= 0)
            cand = jnp.sign(u3 - 0.5) * jnp.arccos(jnp.clip(fz, -1, 1))
            first = jnp.argmax(accept, axis=0)
            x = jnp.take_along_axis(cand, first[None], axis=0)[0]
            out = jnp.remainder(x + jnp.broadcast_to(m, shape) + math.pi, 2 * math.pi) - math.pi
            return out.astype(dt)
        return call("VonMisesSample", f, self.loc, self.concentration)

    @lazy_property
    def variance(self):
        def f(k):
            return 1 - jnp.exp(_log_i0_i1(k, 1) - _log_i0_i1(k, 0))
        return call("VonMisesVar", f, self.concentration)


def _von_mises_torch(loc, concentration, shape):
    """torch's VonMises sampler (its `_rejection_sample`): Best & Fisher's rejection in float64, each round
    drawing `rand((3,) + shape)` from the default generator until every element has accepted once."""
    m, k = loc.double(), concentration.double()

    def proposal(k):
        tau = 1 + jnp.sqrt(1 + 4 * k ** 2)
        rho = (tau - jnp.sqrt(2 * tau)) / (2 * k)
        return jnp.where(k < 1e-5, 1 / k + k, (1 + rho ** 2) / (2 * rho))
    r = call("VonMisesProposal", proposal, k)

    def round_(u, r, k):
        z = jnp.cos(math.pi * u[0])
        f = (1 + r * z) / (r + z)
        c = k * (r - f)
        accept = ((c * (2 - c) - u[1]) > 0) | (jnp.log(c / u[1]) + 1 - c >= 0)
        return accept, jnp.sign(u[2] - 0.5) * jnp.arccos(f)
    x = _creation.zeros(shape, dtype=m.dtype)
    done = _creation.zeros(shape, dtype=bool)
    while not bool(done.all()):
        accept, cand = call("VonMisesRound", round_, _creation.rand((3,) + tuple(shape), dtype=m.dtype), r, k)
        x = call("Where", jnp.where, accept, cand, x)
        done = done | accept
    out = call("VonMisesWrap", lambda x, m: (x + math.pi + m) % (2 * math.pi) - math.pi, x, m)
    return out.to(loc.dtype)


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


class GeneralizedPareto(_Checked, Distribution):
    """GeneralizedPareto(loc, scale, concentration)."""
    _draws_as_torch = True
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self._init_broadcast(validate_args, loc=loc, scale=scale, concentration=concentration)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = call("GPUpper", lambda m, s, c: jnp.where(c < 0, m - s / c, jnp.inf), self.loc, self.scale,
                     self.concentration)
        return constraints.interval(lower, upper)

    @staticmethod
    def _z(x, m, s):
        return (x - m) / s

    def _icdf_f(self, p, m, s, c):
        logu = jnp.log1p(-p)
        safe_c = jnp.where(jnp.abs(c) < 1e-30, 1.0, c)
        return m - s * jnp.where(jnp.abs(c) < 1e-30, logu, jnp.expm1(-safe_c * logu) / -safe_c)

    def _log_prob_f(self, x, m, s, c):
        z = (x - m) / s
        safe_c = jnp.where(jnp.abs(c) < 1e-30, 1.0, c)
        y = 1 / safe_c + 1
        lp = jnp.where(jnp.abs(c) < 1e-30, -z, -y * jnp.log1p(safe_c * z))
        inside = (z >= 0) & ((c >= 0) | (z <= -1 / safe_c))
        return jnp.where(inside, lp - jnp.log(s), -jnp.inf)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:
            return call("GPRsample", lambda m, s, c, u: self._icdf_f(u, m, s, c), self.loc, self.scale,
                        self.concentration, _creation.rand(shape, dtype=self.loc.dtype))
        return call("GPRsample", lambda m, s, c: self._icdf_f(jr.uniform(key, shape, m.dtype), m, s, c),
                    self.loc, self.scale, self.concentration)

    def log_prob(self, value):
        self._check(value)
        return call("GPLogProb", self._log_prob_f, value, self.loc, self.scale, self.concentration)

    def log_survival_function(self, value):
        return call("GPLogSF", _gp_lsf, value, self.loc, self.scale, self.concentration)

    def cdf(self, value):
        self._check(value)
        return call("GPCdf", lambda *a: -jnp.expm1(_gp_lsf(*a)), value, self.loc, self.scale, self.concentration)

    def icdf(self, value):
        return call("GPIcdf", self._icdf_f, value, self.loc, self.scale, self.concentration)

    @property
    def mean(self):
        return call("GPMean", lambda m, s, c: jnp.where(c < 1, m + s / (1 - c), jnp.nan),
                    self.loc, self.scale, self.concentration)

    @property
    def variance(self):
        return call("GPVar", lambda m, s, c: jnp.where(c < 0.5, s ** 2 / ((1 - c) ** 2 * (1 - 2 * c)), jnp.nan),
                    self.loc, self.scale, self.concentration)

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        return call("GPEntropy", lambda s, c: jnp.log(s) + c + 1, self.scale, self.concentration)


def _gp_lsf(x, m, s, c):
    z = (x - m) / s
    safe_c = jnp.where(jnp.abs(c) < 1e-30, 1.0, c)
    lsf = jnp.where(jnp.abs(c) < 1e-30, -z, -jnp.log1p(safe_c * jnp.maximum(z, 0)) / safe_c)
    return jnp.where(z < 0, 0.0, lsf)

