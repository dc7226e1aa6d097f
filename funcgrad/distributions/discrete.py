"""Discrete families: Bernoulli, Binomial, Categorical, OneHotCategorical(StraightThrough), Geometric,
Poisson, NegativeBinomial, Multinomial. probs/logits alternatives as in PyTorch (the other is computed
lazily); formulas on Arrays through `utils.call`."""
from __future__ import annotations

import numpy as np

from .._torch import _creation, _jnp as jnp
from .. import random as jr
from ..scipy import special as sps
from .._torch._dtype import Size
from .._torch._tensor import Tensor
from .._src.prims import elementwise as _ew, shape as _sh
from .._src.prims.indexing import gather_p as _gather_p
from .._torch._dispatch import _apply_prim
from . import constraints
from .continuous import _Checked, _gamma_rsample, _shape, xlogy
from .distribution import TORCH_STREAM, Distribution
from .exp_family import ExponentialFamily
from .utils import (BinaryProbsOrLogits, arr, call, call_nograd, expand_to, forwarded, is_concrete,
                    lazy_property, logits_to_probs, one_of, probs_to_logits, stop_gradient)

__all__ = ["Bernoulli", "Binomial", "Categorical", "Geometric", "Multinomial", "NegativeBinomial",
           "OneHotCategorical", "OneHotCategoricalStraightThrough", "Poisson"]


def _bce_with_logits(lg, x):
    """softplus(lg) - lg x through the logaddexp card: smooth at lg = 0 (where max(lg, 0) + log1p(exp(-|lg|))
    depends on |lg|'s and max's conventions at 0)."""
    return jnp.logaddexp(lg, 0.0) - lg * x


class Bernoulli(BinaryProbsOrLogits, _Checked, ExponentialFamily):
    """Bernoulli(probs or logits): 1 with probability probs."""
    _draws_as_torch = True
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._param = self._set_probs_or_logits(probs, logits)
        super().__init__(self._param.shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        return call("BernoulliMode", lambda p: jnp.where(p == 0.5, jnp.nan, (p >= 0.5).astype(p.dtype)),
                    self.probs)

    @property
    def variance(self):
        return call("BernoulliVar", lambda p: p * (1 - p), self.probs)

    def _sample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:
            return _creation.bernoulli(self.probs.expand(shape))
        return call("BernoulliSample", lambda p: (jr.uniform(key, shape, p.dtype) < p).astype(p.dtype), self.probs)

    def log_prob(self, value):
        self._check(value)
        return call("BernoulliLogProb", lambda x, lg: -_bce_with_logits(lg, x), value, self.logits)

    def entropy(self):
        return call("BernoulliEntropy", _bce_with_logits, self.logits, self.probs)

    def enumerate_support(self, expand=True):
        nb = len(self._batch_shape)
        values = call_nograd(lambda p: jnp.reshape(jnp.arange(2, dtype=p.dtype), (-1,) + (1,) * nb), self._param)
        if expand:
            values = expand_to(values, (2,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self):
        return (call("Logit", lambda p: jnp.log(p / (1 - p)), self.probs),)

    def _log_normalizer(self, x):
        return jnp.log1p(jnp.exp(x))


class Binomial(BinaryProbsOrLogits, _Checked, Distribution):
    """Binomial(total_count=1, probs or logits): the number of successes in total_count trials.

    Sampling with a key sums max(total_count) Bernoulli draws, so it needs a concrete total_count (not one
    traced by jit/vmap: NotImplementedError) and costs O(max(total_count)) per sample; the Tensor face draws
    torch.binomial's numbers."""
    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True
    _draws_as_torch = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        self._param = self._set_probs_or_logits(probs, logits, total_count)
        super().__init__(self._param.shape, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return call("BinomialMean", lambda n, p: n * p, self.total_count, self.probs)

    @property
    def mode(self):
        return call("BinomialMode", lambda n, p: jnp.minimum(jnp.floor((n + 1) * p), n), self.total_count, self.probs)

    @property
    def variance(self):
        return call("BinomialVar", lambda n, p: n * p * (1 - p), self.total_count, self.probs)

    def _max_count(self, what) -> int:
        if not is_concrete(self.total_count):
            raise NotImplementedError(f"Binomial.{what}: total_count must be concrete (not traced by jit/vmap)")
        return int(np.asarray(arr(self.total_count)).max()) if np.asarray(arr(self.total_count)).size else 0

    def _sample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:
            return _creation.binomial(self.total_count.expand(shape), self.probs.expand(shape))
        nmax = self._max_count("sample")

        def f(n, p):
            u = jr.uniform(key, shape + (nmax,), p.dtype)
            trial = jnp.arange(nmax, dtype=p.dtype) < n[..., None]
            return jnp.sum((u < p[..., None]) & trial, axis=-1).astype(p.dtype)
        return call("BinomialSample", f, self.total_count, self.probs)

    def log_prob(self, value):
        self._check(value)

        def f(k, n, lg):
            log_factorial_n = sps.gammaln(n + 1)
            log_factorial_k = sps.gammaln(k + 1)
            log_factorial_nmk = sps.gammaln(n - k + 1)
            normalize_term = n * jnp.logaddexp(lg, 0.0) - log_factorial_n  # (n softplus(lg), smooth at 0)
            return k * lg - log_factorial_k - log_factorial_nmk - normalize_term
        return call("BinomialLogProb", f, value, self.total_count, self.logits)

    def _homogeneous(self, what) -> int:
        n = np.asarray(arr(self.total_count))
        total = int(n.max()) if n.size else 0
        if n.size and not n.min() == total:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return total

    def entropy(self):
        self._homogeneous("entropy")
        lp = self.log_prob(self.enumerate_support(False))
        return call("BinomialEntropy", lambda x: -jnp.sum(jnp.exp(x) * x, axis=0), lp)

    def enumerate_support(self, expand=True):
        total = self._homogeneous("enumerate_support")
        nb = len(self._batch_shape)
        values = call_nograd(lambda p: jnp.reshape(jnp.arange(1 + total, dtype=p.dtype), (-1,) + (1,) * nb),
                             self._param)
        if expand:
            values = expand_to(values, (1 + total,) + tuple(self._batch_shape))
        return values


def _normalize_last(p):
    """p / p.sum(-1, keepdim=True) (Categorical's probs): for float32/float64 p by the primitives directly (a sum,
    its broadcast, a division: the values of the jnp spelling, with less dispatch)."""
    if p.dtype.kind != "f" or p.dtype.itemsize < 4:
        return p / jnp.sum(p, -1, keepdims=True)
    ax = p.ndim - 1
    return _ew.div(p, _sh.broadcast_in_dim(_sh.reduce_sum(p, (ax,)), p.shape, tuple(range(ax))))


def _index_rows(value, lg):
    """For a concrete integer Tensor `value` whose entries index the last dim of Tensor `lg`, the coordinate rows
    (NumPy, shape broadcast(value, lg's batch shape) + (lg.ndim,)) that gather lg[..., value]; else None (a
    traced or out-of-range value takes the general take_along_axis path)."""
    if not (isinstance(value, Tensor) and isinstance(lg, Tensor)) or value._v is None or lg._v is None:
        return None
    v = value._v
    n, batch = lg.shape[-1], tuple(lg.shape[:-1])
    if v.dtype.kind not in "iu" or (v.size and (v.min() < 0 or v.max() >= n)):
        return None
    shape = np.broadcast_shapes(v.shape, batch)
    rows = np.zeros(shape + (len(batch) + 1,), np.int64)
    k = len(shape) - len(batch)
    for d, m in enumerate(batch):
        if m > 1:
            rows[..., d] = np.arange(m).reshape((m,) + (1,) * (len(shape) - k - d - 1))
    rows[..., -1] = v
    return rows


class Categorical(_Checked, Distribution):
    """Categorical(probs or logits) over {0, ..., K-1}; the last dim of probs/logits indexes categories."""
    _draws_as_torch = True
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        one_of(probs, logits)
        if probs is not None:
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = call("CategoricalNormalize", _normalize_last, probs)
        else:
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = call("CategoricalNormalize",
                               lambda lg: lg - sps.logsumexp(lg, axis=-1, keepdims=True), logits)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = tuple(self._param.shape[:-1]) if self._param.ndim > 1 else ()
        super().__init__(batch_shape, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return Size(self._param.shape)

    @property
    def mean(self):
        shape = tuple(self._extended_shape())
        return call("CategoricalMean", lambda p: jnp.full(shape, jnp.nan, dtype=p.dtype), self.probs)

    @property
    def mode(self):
        return call_nograd(lambda p: jnp.argmax(p, axis=-1).astype(jnp.int64), self.probs)

    @property
    def variance(self):
        shape = tuple(self._extended_shape())
        return call("CategoricalVar", lambda p: jnp.full(shape, jnp.nan, dtype=p.dtype), self.probs)

    def _sample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:  # (torch: multinomial with replacement of the rows of probs, transposed)
            n = Size(sample_shape).numel()
            p = self.probs
            if p._v is not None and p._np_dtype().kind == "f" and (n == 1 or p._v.size == self._num_events):
                # (on the buffer, no tensor ops, where torch's transposed rows are contiguous: one row or draw)
                rows = _creation._multinomial_rows(p._v.reshape(-1, self._num_events), n, True)
                return _creation._finish(rows.T.reshape(shape))  # (a view: _finish copies it)
            rows = _creation.multinomial(p.detach().reshape(-1, self._num_events), n, True)
            return rows.T.reshape(shape)
        return call_nograd(lambda lg: jr.categorical(key, lg, axis=-1, shape=shape).astype(jnp.int64), self.logits)

    def log_prob(self, value):
        self._check(value)
        lg = self.logits
        rows = _index_rows(value, lg)
        if rows is not None:  # (torch's gather at the value's index in each row of logits: one bind, recorded lean)
            params = {"axes": tuple(range(lg.ndim))}
            return _apply_prim("CategoricalLogProb", _gather_p, lambda a, i: _gather_p.bind(a, i, **params),
                               (lg, _creation._finish(rows)), params)

        def f(v, lg):
            v = v.astype(jnp.int64)[..., None]
            shape = jnp.broadcast_shapes(v.shape, lg.shape)
            v = jnp.broadcast_to(v, shape[:-1] + (1,))
            lg = jnp.broadcast_to(lg, shape)
            return jnp.take_along_axis(lg, v, axis=-1)[..., 0]
        return call("CategoricalLogProb", f, value, lg)

    def entropy(self):
        def f(lg, p):
            lg = jnp.maximum(lg, jnp.finfo(lg.dtype).min)
            return -jnp.sum(lg * p, -1)
        return call("CategoricalEntropy", f, self.logits, self.probs)

    def enumerate_support(self, expand=True):
        n = self._num_events
        nb = len(self._batch_shape)
        values = call_nograd(lambda p: jnp.reshape(jnp.arange(n, dtype=jnp.int64), (-1,) + (1,) * nb), self._param)
        if expand:
            values = expand_to(values, (n,) + tuple(self._batch_shape))
        return values


class _OverCategorical:
    """Mixin of the families built on a Categorical (`self._categorical`): its probs, logits and
    param_shape are theirs."""

    probs = forwarded("_categorical", "probs")
    logits = forwarded("_categorical", "logits")
    param_shape = forwarded("_categorical", "param_shape")


class OneHotCategorical(_OverCategorical, _Checked, Distribution):
    """A Categorical whose samples are one-hot vectors of length K (event_shape (K,))."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    _param = forwarded("_categorical", "_param")
    mean = forwarded("_categorical", "probs")
    _draws_as_torch = True

    @property
    def mode(self):
        def f(p):
            return (jnp.arange(p.shape[-1]) == jnp.argmax(p, axis=-1)[..., None]).astype(p.dtype)
        return call_nograd(f, self._categorical.probs)

    @property
    def variance(self):
        return call("OneHotVar", lambda p: p * (1 - p), self._categorical.probs)

    def _sample(self, key, sample_shape):
        n = self.event_shape[0]
        idx = self._categorical._sample(key, sample_shape)
        return call_nograd(lambda i, p: (i[..., None] == jnp.arange(n)).astype(p.dtype), idx, self._categorical.probs)

    def log_prob(self, value):
        self._check(value)
        indices = call_nograd(lambda v: jnp.argmax(v, axis=-1), value)
        return self._categorical.log_prob(indices)

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        nb = len(self._batch_shape)
        values = call_nograd(lambda p: jnp.reshape(jnp.eye(n, dtype=p.dtype), (n,) + (1,) * nb + (n,)),
                             self._categorical._param)
        if expand:
            values = expand_to(values, (n,) + tuple(self._batch_shape) + (n,))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical with the straight-through gradient estimator: rsample's value is a one-hot sample,
    its gradient that of the probabilities."""
    has_rsample = True

    def _rsample(self, key, sample_shape):
        samples = self._sample(key, sample_shape)
        return call("StraightThrough", lambda s, p: s + (p - jnp.asarray(stop_gradient(p))), samples, self._categorical.probs)


class Geometric(BinaryProbsOrLogits, _Checked, Distribution):
    """Geometric(probs or logits): the number of failures before the first success."""
    _draws_as_torch = True
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        param = self._set_probs_or_logits(probs, logits)
        super().__init__(param.shape, validate_args=validate_args)
        if self._validate_args and probs is not None and is_concrete(self.probs):
            if not bool(call_nograd(lambda p: jnp.all(p > 0), self.probs)):
                raise ValueError(f"Expected parameter probs ({type(self.probs).__name__} of shape "
                                 f"{tuple(self.probs.shape)}) of distribution {repr(self)} to be positive but "
                                 f"found invalid values:\n{self.probs}")

    @property
    def mean(self):
        return call("GeometricMean", lambda p: 1.0 / p - 1.0, self.probs)

    @property
    def mode(self):
        return call("ZerosLike", jnp.zeros_like, self.probs)

    @property
    def variance(self):
        return call("GeometricVar", lambda p: (1.0 / p - 1.0) / p, self.probs)

    def _sample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:
            u = _creation.empty(shape, dtype=self.probs.dtype).uniform_(jnp.finfo(self.probs.dtype).tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

        def f(p):
            u = jnp.maximum(jr.uniform(key, shape, p.dtype), jnp.finfo(p.dtype).tiny)
            return jnp.floor(jnp.log(u) / jnp.log1p(-p))
        return call("GeometricSample", f, self.probs)

    def log_prob(self, value):
        self._check(value)

        def f(k, p):
            k, pb = jnp.broadcast_arrays(k, p)
            pb = jnp.where((pb == 1) & (k == 0), 0.0, pb)
            return k * jnp.log1p(-pb) + jnp.log(p)
        return call("GeometricLogProb", f, value, self.probs)

    def entropy(self):
        return call("GeometricEntropy", lambda lg, p: _bce_with_logits(lg, p) / p, self.logits, self.probs)


class Poisson(_Checked, ExponentialFamily):
    """Poisson(rate)."""
    _draws_as_torch = True
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        self._init_broadcast(validate_args, rate=rate)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return call("PoissonMode", jnp.floor, self.rate)

    @property
    def variance(self):
        return self.rate

    def _sample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:
            return _creation.poisson(self.rate.expand(shape))
        return call("PoissonSample", lambda r: jr.poisson(key, jnp.broadcast_to(r, shape), shape).astype(r.dtype),
                    self.rate)

    def log_prob(self, value):
        self._check(value)
        return call("PoissonLogProb", lambda k, r: xlogy(k, r) - r - sps.gammaln(k + 1), value, self.rate)

    @property
    def _natural_params(self):
        return (call("Log", jnp.log, self.rate),)

    def _log_normalizer(self, x):
        return jnp.exp(x)


class NegativeBinomial(BinaryProbsOrLogits, _Checked, Distribution):
    """NegativeBinomial(total_count, probs or logits): failures before total_count successes, each trial
    succeeding with probability 1 - probs (PyTorch's convention)."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer
    _draws_as_torch = True

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        self._param = self._set_probs_or_logits(probs, logits, total_count)
        super().__init__(self._param.shape, validate_args=validate_args)

    @property
    def mean(self):
        return call("NBMean", lambda n, lg: n * jnp.exp(lg), self.total_count, self.logits)

    @property
    def mode(self):
        return call("NBMode", lambda n, lg: jnp.maximum(jnp.floor((n - 1) * jnp.exp(lg)), 0.0),
                    self.total_count, self.logits)

    @property
    def variance(self):
        return call("NBVar", lambda n, lg, p: n * jnp.exp(lg) / (1 - p), self.total_count, self.logits, self.probs)

    def _sample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:  # (torch: Poisson of a Gamma(total_count, exp(-logits)) sample)
            rate = call_nograd(lambda lg: jnp.exp(-lg), self.logits)
            return _creation.poisson(_gamma_rsample(self.total_count, rate, shape))

        def f(n, lg):
            k1, k2 = jr.split(key)
            g = jr.gamma(k1, jnp.broadcast_to(n, shape), shape, lg.dtype) * jnp.exp(lg)
            g = jnp.maximum(g, jnp.finfo(lg.dtype).tiny)
            return jr.poisson(k2, g, shape).astype(lg.dtype)
        return call_nograd(f, self.total_count, self.logits)

    def log_prob(self, value):
        self._check(value)

        def f(k, n, lg):
            log_unnormalized_prob = n * (-softplus_(lg)) + k * (-softplus_(-lg))
            log_normalization = -sps.gammaln(n + k) + sps.gammaln(1.0 + k) + sps.gammaln(n)
            log_normalization = jnp.where(n + k == 0.0, 0.0, log_normalization)
            return log_unnormalized_prob - log_normalization
        return call("NBLogProb", f, value, self.total_count, self.logits)


def softplus_(x):
    return jnp.logaddexp(x, 0.0)


class Multinomial(_OverCategorical, _Checked, Distribution):
    """Multinomial(total_count=1, probs or logits): counts of total_count draws from a Categorical."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    _draws_as_torch = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self._categorical.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        n = self.total_count
        return call("MultinomialMean", lambda p: n * p, self.probs)

    @property
    def variance(self):
        n = self.total_count
        return call("MultinomialVar", lambda p: n * p * (1 - p), self.probs)

    def _sample(self, key, sample_shape):
        n = self.total_count
        k = self.event_shape[0]
        shape = tuple(Size(sample_shape) + self._batch_shape)
        if key is TORCH_STREAM:  # (torch: counts of total_count Categorical samples)
            idx = self._categorical._sample(key, Size((n,)) + Size(sample_shape))
            return call_nograd(lambda i, p: jnp.sum(i[..., None] == jnp.arange(k), axis=0).astype(p.dtype), idx,
                               self.probs)

        def f(lg, p):
            idx = jr.categorical(key, lg, axis=-1, shape=(n,) + shape)
            return jnp.sum(idx[..., None] == jnp.arange(k), axis=0).astype(p.dtype)
        return call_nograd(f, self.logits, self.probs)

    def log_prob(self, value):
        self._check(value)

        def f(x, lg):
            lg, x = jnp.broadcast_arrays(lg, x)
            lg = jnp.where((lg == -jnp.inf) & (x == 0), 0.0, lg)
            log_factorial_n = sps.gammaln(jnp.sum(x, -1) + 1)
            log_factorial_xs = jnp.sum(sps.gammaln(x + 1), -1)
            log_powers = jnp.sum(x * lg, -1)
            return log_factorial_n - log_factorial_xs + log_powers
        return call("MultinomialLogProb", f, value, self.logits)

    def entropy(self):
        n = self.total_count
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = call("Exp", jnp.exp, self._binomial.log_prob(support))

        def f(ce, bp, s):
            n_lgamma = sps.gammaln(jnp.asarray(n + 1.0, dtype=bp.dtype))
            weights = sps.gammaln(s + 1.0)
            return n * ce - n_lgamma + jnp.sum(bp * weights, axis=(0, -1))
        return call("MultinomialEntropy", f, self._categorical.entropy(), binomial_probs, support)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self))
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = self._binomial.expand(batch_shape + self.event_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

