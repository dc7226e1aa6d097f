"""Distributions built from others: Independent, TransformedDistribution (and the families defined as
transforms of a base: LogNormal, Gumbel, Pareto, Weibull, Kumaraswamy, InverseGamma, LogisticNormal,
RelaxedBernoulli, RelaxedOneHotCategorical), MixtureSameFamily."""
from __future__ import annotations

import math

from .._torch import _creation, _jnp as jnp
from .. import random as jr
from ..scipy import special as sps
from .._src.core.array import ArrayBase
from .._torch._dtype import Size
from .._torch._tensor import Tensor
from . import constraints
from .continuous import Exponential, Gamma, Normal, Uniform, _shape
from .discrete import Categorical, _OverCategorical
from .distribution import TORCH_STREAM, Distribution
from .transforms import (AffineTransform, ComposeTransform, ExpTransform, PowerTransform, SigmoidTransform,
                         StickBreakingTransform, Transform)
from .utils import (BinaryProbsOrLogits, broadcast_all, call, call_nograd, euler_constant, expand_to, forwarded,
                    sum_rightmost)

__all__ = ["Independent", "TransformedDistribution", "LogNormal", "Gumbel", "Pareto", "Weibull", "Kumaraswamy",
           "InverseGamma", "LogisticNormal", "RelaxedBernoulli", "RelaxedOneHotCategorical", "MixtureSameFamily"]


class Independent(Distribution):
    """Reinterprets the rightmost `reinterpreted_batch_ndims` batch dims of a distribution as event dims."""
    arg_constraints: dict = {}

    def __init__(self, base_distribution: Distribution, reinterpreted_batch_ndims: int, validate_args=None):
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                             f"actual {reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}")
        shape = base_distribution.batch_shape + base_distribution.event_shape
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        batch_shape = shape[:len(shape) - event_dim]
        event_shape = shape[len(shape) - event_dim:]
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    has_rsample = forwarded("base_dist", "has_rsample")

    @property
    def has_enumerate_support(self):
        if self.reinterpreted_batch_ndims > 0:
            return False
        return self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    mean = forwarded("base_dist", "mean")
    mode = forwarded("base_dist", "mode")
    variance = forwarded("base_dist", "variance")
    _draws_as_torch = forwarded("base_dist", "_draws_as_torch")

    def _sample(self, key, sample_shape):
        return self.base_dist._sample(key, sample_shape)

    def _rsample(self, key, sample_shape):
        return self.base_dist._rsample(key, sample_shape)

    def log_prob(self, value):
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self):
        return self.__class__.__name__ + f"({self.base_dist}, {self.reinterpreted_batch_ndims})"


class TransformedDistribution(Distribution):
    """The distribution of transforms(x) for x ~ base_distribution (log_prob by the change of variables)."""
    arg_constraints: dict = {}

    def __init__(self, base_distribution: Distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least "
                             f"{transform.domain.event_dim}, but got {base_shape}.")
        forward_shape = transform.forward_shape(base_shape)
        expanded_base_shape = transform.inverse_shape(forward_shape)
        if base_shape != expanded_base_shape:
            base_batch_shape = expanded_base_shape[:len(expanded_base_shape) - base_event_dim]
            base_distribution = base_distribution.expand(base_batch_shape)
        reinterpreted_batch_ndims = transform.domain.event_dim - base_event_dim
        if reinterpreted_batch_ndims > 0:
            base_distribution = Independent(base_distribution, reinterpreted_batch_ndims)
        self.base_dist = base_distribution
        transform_change_in_event_dim = transform.codomain.event_dim - transform.domain.event_dim
        event_dim = max(transform.codomain.event_dim, base_event_dim + transform_change_in_event_dim)
        assert len(forward_shape) >= event_dim
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self)) if _instance is None else _instance
        batch_shape = Size(batch_shape)
        shape = batch_shape + self.event_shape
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        base_batch_shape = shape[:len(shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch_shape)
        new.transforms = self.transforms
        cached = self.__dict__.get("_lazy_cached", ())
        nb = len(self._batch_shape)
        for k, v in self.__dict__.items():  # subclasses' own fields (Gumbel's loc, ...): batch-shaped ones expanded
            if k in new.__dict__ or k in cached or k == "_lazy_cached":
                continue
            if isinstance(v, (Tensor, ArrayBase)) and v.ndim >= nb:
                v = expand_to(v, tuple(batch_shape) + tuple(v.shape[nb:]))
            new.__dict__[k] = v
        new._batch_shape = batch_shape
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    has_rsample = forwarded("base_dist", "has_rsample")
    _draws_as_torch = forwarded("base_dist", "_draws_as_torch")

    def _sample(self, key, sample_shape):
        x = self.base_dist._sample(key, sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def _rsample(self, key, sample_shape):
        x = self.base_dist._rsample(key, sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            log_prob = log_prob - sum_rightmost(transform.log_abs_det_jacobian(x, y),
                                                event_dim - transform.domain.event_dim)
            y = x
        return log_prob + sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        sign = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return call("Monotonize", lambda v, s: s * (v - 0.5) + 0.5, value, sign)

    def cdf(self, value):
        for transform in self.transforms[::-1]:
            value = transform.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        value = self.base_dist.cdf(value)
        return self._monotonize_cdf(value)

    def icdf(self, value):
        value = self._monotonize_cdf(value)
        value = self.base_dist.icdf(value)
        for transform in self.transforms:
            value = transform(value)
        return value


# --- families defined by a transform -----------------------------------------------------------------------

class LogNormal(TransformedDistribution):
    """exp(X) for X ~ Normal(loc, scale)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    loc = forwarded("base_dist", "loc")
    scale = forwarded("base_dist", "scale")

    @property
    def mean(self):
        return call("LogNormalMean", lambda m, s: jnp.exp(m + s ** 2 / 2), self.loc, self.scale)

    @property
    def mode(self):
        return call("LogNormalMode", lambda m, s: jnp.exp(m - s ** 2), self.loc, self.scale)

    @property
    def variance(self):
        return call("LogNormalVar", lambda m, s: jnp.expm1(s ** 2) * jnp.exp(2 * m + s ** 2), self.loc, self.scale)

    def entropy(self):
        return call("LogNormalEntropy", lambda e, m: e + m, self.base_dist.entropy(), self.loc)


class Gumbel(TransformedDistribution):
    """Gumbel(loc, scale): loc - scale * log(-log(U))."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo_args = (self.loc,)
        tiny = call_nograd(lambda m: jnp.full_like(m, jnp.finfo(m.dtype).tiny), *finfo_args)
        one_m_eps = call_nograd(lambda m: jnp.full_like(m, 1 - jnp.finfo(m.dtype).eps), *finfo_args)
        base_dist = Uniform(tiny, one_m_eps, validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-1), ExpTransform().inv,
                      AffineTransform(loc=self.loc, scale=call("Neg", lambda s: -s, self.scale))]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)

        def f(x, m, s):
            y = (m - x) / s
            return (y - jnp.exp(y)) - jnp.log(s)
        return call("GumbelLogProb", f, value, self.loc, self.scale)

    @property
    def mean(self):
        return call("GumbelMean", lambda m, s: m + s * euler_constant, self.loc, self.scale)

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return call("GumbelStd", lambda s: (math.pi / math.sqrt(6)) * s, self.scale)

    @property
    def variance(self):
        return call("GumbelVar", lambda s: ((math.pi / math.sqrt(6)) * s) ** 2, self.scale)

    def entropy(self):
        return call("GumbelEntropy", lambda s: jnp.log(s) + 1 + euler_constant, self.scale)


class Pareto(TransformedDistribution):
    """Pareto(scale, alpha): scale * exp(Exponential(alpha))."""
    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base_dist = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    @property
    def mean(self):
        return call("ParetoMean", lambda s, a: jnp.where(a > 1, s * a / jnp.where(a > 1, a - 1, 1.0), jnp.inf),
                    self.scale, self.alpha)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        def f(s, a):
            a2 = jnp.maximum(a, 2)
            v = s ** 2 * a2 / ((a2 - 1) ** 2 * (a2 - 2))
            return jnp.where(a > 2, v, jnp.inf)
        return call("ParetoVar", f, self.scale, self.alpha)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        return call("ParetoEntropy", lambda s, a: jnp.log(s / a) + (1 + 1 / a), self.scale, self.alpha)


class Weibull(TransformedDistribution):
    """Weibull(scale, concentration)."""
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = call("Reciprocal", lambda c: 1 / c, self.concentration)
        base_dist = Exponential(call("OnesLike", jnp.ones_like, self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    @property
    def mean(self):
        return call("WeibullMean", lambda s, c: s * jnp.exp(sps.gammaln(1 + 1 / c)), self.scale, self.concentration)

    @property
    def mode(self):
        return call("WeibullMode", lambda s, c: s * ((c - 1) / c) ** (1 / c), self.scale, self.concentration)

    @property
    def variance(self):
        def f(s, c):
            return s ** 2 * (jnp.exp(sps.gammaln(1 + 2 / c)) - jnp.exp(2 * sps.gammaln(1 + 1 / c)))
        return call("WeibullVar", f, self.scale, self.concentration)

    def entropy(self):
        def f(s, c):
            return euler_constant * (1 - 1 / c) + jnp.log(s / c) + 1
        return call("WeibullEntropy", f, self.scale, self.concentration)


def _moments(a, b, n):
    """E[X^n] for X ~ Kumaraswamy(a, b)."""
    arg1 = 1 + n / a
    log_value = sps.gammaln(arg1) + sps.gammaln(b) - sps.gammaln(arg1 + b)
    return b * jnp.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy(concentration1, concentration0) on (0, 1)."""
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(call_nograd(jnp.zeros_like, self.concentration0),
                            call_nograd(jnp.ones_like, self.concentration0), validate_args=validate_args)
        transforms = [PowerTransform(exponent=call("Reciprocal", lambda c: 1 / c, self.concentration0)),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=call("Reciprocal", lambda c: 1 / c, self.concentration1))]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    @property
    def mean(self):
        return call("KumaraswamyMean", lambda a, b: _moments(a, b, 1), self.concentration1, self.concentration0)

    @property
    def mode(self):
        def f(a, b):
            log_mode = jnp.log((a - 1) / (a * b - 1)) / a
            return jnp.where((a < 1) | (b < 1), jnp.nan, jnp.exp(log_mode))
        return call("KumaraswamyMode", f, self.concentration1, self.concentration0)

    @property
    def variance(self):
        return call("KumaraswamyVar", lambda a, b: _moments(a, b, 2) - _moments(a, b, 1) ** 2,
                    self.concentration1, self.concentration0)

    def entropy(self):
        def f(a, b):
            t1 = 1 - 1 / a
            t0 = 1 - 1 / b
            H0 = sps.digamma(b + 1) + euler_constant
            return t0 + t1 * H0 - jnp.log(a) - jnp.log(b)
        return call("KumaraswamyEntropy", f, self.concentration1, self.concentration0)


class InverseGamma(TransformedDistribution):
    """1 / X for X ~ Gamma(concentration, rate)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = call_nograd(lambda r: -jnp.ones_like(r), base_dist.rate)
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    concentration = forwarded("base_dist", "concentration")
    rate = forwarded("base_dist", "rate")

    @property
    def mean(self):
        return call("InvGammaMean", lambda c, r: jnp.where(c > 1, r / jnp.where(c > 1, c - 1, 1.0), jnp.inf),
                    self.concentration, self.rate)

    @property
    def mode(self):
        return call("InvGammaMode", lambda c, r: r / (c + 1), self.concentration, self.rate)

    @property
    def variance(self):
        def f(c, r):
            c2 = jnp.where(c > 2, c, 3.0)
            return jnp.where(c > 2, r ** 2 / ((c2 - 1) ** 2 * (c2 - 2)), jnp.inf)
        return call("InvGammaVar", f, self.concentration, self.rate)

    def entropy(self):
        return call("InvGammaEntropy",
                    lambda c, r: c + jnp.log(r) + sps.gammaln(c) - (1 + c) * sps.digamma(c),
                    self.concentration, self.rate)


class LogisticNormal(TransformedDistribution):
    """StickBreakingTransform of Normal(loc, scale): a distribution on the simplex."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale


class _LogitRelaxedBernoulli(BinaryProbsOrLogits, Distribution):
    """The logit of a RelaxedBernoulli sample (temperature, probs or logits)."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    _static_fields = ("temperature",)
    _draws_as_torch = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        self._param = self._set_probs_or_logits(probs, logits)
        super().__init__(self._param.shape, validate_args=validate_args)

    has_rsample = True

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)

        def f(p, t, u):
            eps = jnp.finfo(p.dtype).eps
            p = jnp.clip(p, eps, 1 - eps)
            u = jnp.clip(jr.uniform(key, shape, p.dtype) if u is None else u, eps, 1 - eps)
            return (jnp.log(u) - jnp.log1p(-u) + jnp.log(p) - jnp.log1p(-p)) / t
        u = _creation.rand(shape, dtype=self.probs.dtype) if key is TORCH_STREAM else None  # (torch's draw)
        return call("LogitRelaxedBernoulliRsample", f, self.probs, self.temperature, u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)

        def f(x, lg, t):
            diff = lg - x * t
            return jnp.log(t) + diff - 2 * jnp.logaddexp(diff, 0.0)
        return call("LogitRelaxedBernoulliLogProb", f, value, self.logits, self.temperature)


class _Relaxation(TransformedDistribution):
    """A continuous relaxation at a temperature: its parameters are those of its base distribution."""
    has_rsample = True

    temperature = forwarded("base_dist", "temperature")
    logits = forwarded("base_dist", "logits")
    probs = forwarded("base_dist", "probs")


class RelaxedBernoulli(_Relaxation):
    """The Concrete / Gumbel-sigmoid relaxation of Bernoulli at a given temperature, on (0, 1)."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = _LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)


class _ExpRelaxedCategorical(_OverCategorical, Distribution):
    """The log of a RelaxedOneHotCategorical sample."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True
    _static_fields = ("temperature",)
    _draws_as_torch = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)

        def f(lg, t, u):
            if u is None:
                u = jnp.clip(jr.uniform(key, shape, lg.dtype), jnp.finfo(lg.dtype).tiny, 1.0)
            else:  # (torch's draw, clamped as torch's clamp_probs)
                u = jnp.clip(u, jnp.finfo(lg.dtype).eps, 1 - jnp.finfo(lg.dtype).eps)
            gumbels = -jnp.log(-jnp.log(u))
            scores = (lg + gumbels) / t
            return scores - sps.logsumexp(scores, axis=-1, keepdims=True)
        u = _creation.rand(shape, dtype=self.logits.dtype) if key is TORCH_STREAM else None
        return call("ExpRelaxedCategoricalRsample", f, self.logits, self.temperature, u)

    def log_prob(self, value):
        K = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)

        def f(x, lg, t):
            log_scale = sps.gammaln(jnp.asarray(float(K), dtype=lg.dtype)) - jnp.log(t) * -(K - 1)
            score = lg - x * t
            score = jnp.sum(score - sps.logsumexp(score, axis=-1, keepdims=True), -1)
            return score + log_scale
        return call("ExpRelaxedCategoricalLogProb", f, value, self.logits, self.temperature)


class RelaxedOneHotCategorical(_Relaxation):
    """The Concrete / Gumbel-softmax relaxation of OneHotCategorical at a given temperature."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = _ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)


class MixtureSameFamily(Distribution):
    """A mixture of components from one family: mixture_distribution (a Categorical over the rightmost
    batch dim of component_distribution) picks the component."""
    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(self._mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of torch.distributions.Categorical")
        if not isinstance(self._component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of torch.distributions.Distribution")
        mdbs = self._mixture_distribution.batch_shape
        cdbs = self._component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                                 f"`component_distribution.batch_shape`({cdbs})")
        km = self._mixture_distribution.logits.shape[-1]
        kc = self._component_distribution.batch_shape[-1]
        if km is not None and kc is not None and km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        event_shape = self._component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(cdbs, event_shape, validate_args=validate_args)

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _pad(self, x):
        return call("Unsqueeze", lambda a: jnp.expand_dims(a, -1 - self._event_ndims), x)

    @property
    def mean(self):
        ev = self._event_ndims
        return call("MixMean", lambda p, m: jnp.sum(jnp.reshape(p, p.shape + (1,) * ev) * m, -1 - ev),
                    self.mixture_distribution.probs, self.component_distribution.mean)

    @property
    def variance(self):
        ev = self._event_ndims

        def f(p, m, v):
            pp = jnp.reshape(p, p.shape + (1,) * ev)
            mean = jnp.sum(pp * m, -1 - ev)
            cond_var = jnp.sum(pp * v, -1 - ev)
            var_cond = jnp.sum(pp * (m - jnp.expand_dims(mean, -1 - ev)) ** 2, -1 - ev)
            return cond_var + var_cond
        return call("MixVar", f, self.mixture_distribution.probs, self.component_distribution.mean,
                    self.component_distribution.variance)

    def cdf(self, x):
        x = self._pad(x)
        cdf_x = self.component_distribution.cdf(x)
        return call("MixCdf", lambda c, p: jnp.sum(c * p, -1), cdf_x, self.mixture_distribution.probs)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        x = self._pad(x)
        log_prob_x = self.component_distribution.log_prob(x)
        return call("MixLogProb", lambda lp, lw: sps.logsumexp(lp + lw, axis=-1),
                    log_prob_x, call("LogSoftmax", lambda lg: lg - sps.logsumexp(lg, axis=-1, keepdims=True),
                                     self.mixture_distribution.logits))

    def _sample(self, key, sample_shape):
        k1, k2 = jr.split(key)
        sample_len = len(Size(sample_shape))
        batch_len = len(self.batch_shape)
        gather_dim = sample_len + batch_len
        es = self.event_shape
        mix_sample = self.mixture_distribution._sample(k1, sample_shape)
        comp_samples = self.component_distribution._sample(k2, sample_shape)

        def f(idx, cs):
            idx = jnp.reshape(idx, idx.shape + (1,) + (1,) * len(es))
            idx = jnp.broadcast_to(idx, cs.shape[:gather_dim] + (1,) + cs.shape[gather_dim + 1:])
            return jnp.squeeze(jnp.take_along_axis(cs, idx, axis=gather_dim), axis=gather_dim)
        return call_nograd(f, mix_sample, comp_samples)

    def __repr__(self):
        return (f"MixtureSameFamily(\n  {self.mixture_distribution},\n  {self.component_distribution})")

