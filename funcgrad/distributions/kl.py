"""KL divergences: `kl_divergence(p, q)` dispatches on the types of p and q to the most specific function
registered with `register_kl`; the closed forms below are written on Arrays (through `utils.call`)."""
from __future__ import annotations

import math
import warnings
from functools import total_ordering
from typing import Callable

from .._src.interpreters.ad import vjp
from .._torch import _jnp as jnp
from ..lax import stop_gradient
from .._src.prims.elementwise import abs as _abs
from ..scipy import special as sps
from .continuous import (Beta, Cauchy, ContinuousBernoulli, Dirichlet, Exponential, Gamma, HalfNormal, Laplace,
                         Normal, Uniform, softplus)
from .discrete import Bernoulli, Binomial, Categorical, Geometric, OneHotCategorical, Poisson
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .multivariate import LowRankMultivariateNormal, MultivariateNormal, _diag, _tri_solve
from .utils import call, euler_constant, sum_rightmost
from .wrappers import Gumbel, Independent, Pareto, TransformedDistribution

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY: dict = {}
_KL_MEMOIZE: dict = {}


def register_kl(type_p: type, type_q: type) -> Callable:
    """Decorator registering a pairwise KL(p || q) function for subclasses of type_p and type_q."""
    if not isinstance(type_p, type) and issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) and issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun
    return decorator


@total_ordering
class _Match:
    __slots__ = ["types"]

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    matches = [(sp, sq) for sp, sq in _KL_REGISTRY if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please register_kl("
                      f"{left_p.__name__}, {right_q.__name__})", RuntimeWarning)
    return left_fun


def kl_divergence(p: Distribution, q: Distribution):
    """KL(p || q) = E_p[log p(x) - log q(x)], batched over the (broadcast) batch shapes."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type "
                                  f"{q.__class__.__name__}")
    return fun(p, q)


def _inf_like(x):
    return call("InfLike", lambda a: jnp.full_like(a, jnp.inf), x)


def _x_log_x(t):
    return t * jnp.log(t)


def _closed_form(type_p: type, type_q: type, p_params: str, q_params: str | None = None) -> Callable:
    """Decorator: the formula f(*p's p_params, *q's q_params) on Arrays (the parameters are space-separated
    attribute names; q's are p's by default) becomes KL(type_p || type_q), registered and called through
    utils.call as the op KL<P><Q> (KL<P> within one family). It returns the registered kl(p, q)."""
    name = "KL" + type_p.__name__ + ("" if type_p is type_q else type_q.__name__)
    p_params = p_params.split()
    q_params = p_params if q_params is None else q_params.split()

    def decorator(formula):
        def kl(p, q):
            return call(name, formula, *[getattr(p, a) for a in p_params], *[getattr(q, a) for a in q_params])
        kl.__name__ = kl.__qualname__ = formula.__name__
        return register_kl(type_p, type_q)(kl)
    return decorator


# --- same family ------------------------------------------------------------------------------------------

@_closed_form(Bernoulli, Bernoulli, "probs logits")
def _kl_bernoulli_bernoulli(pp, pl, qp, ql):
    t1 = pp * (softplus(-ql) - softplus(-pl))
    t1 = jnp.where(qp == 0, jnp.inf, t1)
    t1 = jnp.where(pp == 0, 0.0, t1)
    t2 = (1 - pp) * (softplus(ql) - softplus(pl))
    t2 = jnp.where(qp == 1, jnp.inf, t2)
    t2 = jnp.where(pp == 1, 0.0, t2)
    return t1 + t2


@_closed_form(Beta, Beta, "concentration1 concentration0")
def _kl_beta_beta(a1, b1, a2, b2):
    s1, s2 = a1 + b1, a2 + b2
    t1 = sps.gammaln(a2) + sps.gammaln(b2) + sps.gammaln(s1)
    t2 = sps.gammaln(a1) + sps.gammaln(b1) + sps.gammaln(s2)
    t3 = (a1 - a2) * sps.digamma(a1)
    t4 = (b1 - b2) * sps.digamma(b1)
    t5 = (s2 - s1) * sps.digamma(s1)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool(call("Any", lambda a, b: jnp.any(a < b), p.total_count, q.total_count)):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")

    def f(n, pp, pl, nq, qp, ql):
        kl = n * (pp * (pl - ql) + jnp.log1p(-pp) - jnp.log1p(-qp))
        return jnp.where(n > nq, jnp.inf, kl)
    return call("KLBinomial", f, p.total_count, p.probs, p.logits, q.total_count, q.probs, q.logits)


@_closed_form(Categorical, Categorical, "probs logits")
def _kl_categorical_categorical(pp, pl, qp, ql):
    t = pp * (pl - ql)
    t = jnp.where(jnp.broadcast_to(qp == 0, t.shape), jnp.inf, t)
    t = jnp.where(jnp.broadcast_to(pp == 0, t.shape), 0.0, t)
    return jnp.sum(t, -1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    return call("KLCauchy", lambda m1, s1, m2, s2: jnp.log(((s1 + s2) ** 2 + (m1 - m2) ** 2) / (4 * s1 * s2)),
                p.loc, p.scale, q.loc, q.scale)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    def f(pp, pl, qp, ql):
        t1 = p._mean_fn(pp) * (pl - ql)
        t2 = p._cont_bern_log_norm(pp) + jnp.log1p(-pp)
        t3 = -q._cont_bern_log_norm(qp) - jnp.log1p(-qp)
        return t1 + t2 + t3
    return call("KLContinuousBernoulli", f, p.probs, p.logits, q.probs, q.logits)


@_closed_form(Dirichlet, Dirichlet, "concentration")
def _kl_dirichlet_dirichlet(a, b):
    sa, sb = jnp.sum(a, -1), jnp.sum(b, -1)
    t1 = sps.gammaln(sa) - sps.gammaln(sb)
    t2 = jnp.sum(sps.gammaln(a) - sps.gammaln(b), -1)
    t3 = a - b
    t4 = sps.digamma(a) - sps.digamma(sa)[..., None]
    return t1 - t2 + jnp.sum(t3 * t4, -1)


@_closed_form(Exponential, Exponential, "rate")
def _kl_exponential_exponential(rp, rq):
    ratio = rq / rp
    return -jnp.log(ratio) + ratio - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the log normaliser (same family only)."""
    if not type(p) is type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families cannot be "
                                  "computed using Bregman divergences")
    p_nat = p._natural_params
    q_nat = q._natural_params
    n = len(p_nat)
    ev = len(q.event_shape)

    def f(*ps):
        pn, qn = [stop_gradient(x) for x in ps[:n]], ps[n:]
        lg, pull = vjp(lambda *a: p._log_normalizer(*a), *pn)
        grads = pull(jnp.ones_like(lg))
        result = q._log_normalizer(*qn) - lg
        for pnp, qnp, g in zip(pn, qn, grads):
            term = (qnp - pnp) * g
            result = result - (jnp.sum(term, axis=tuple(range(-ev, 0))) if ev else term)
        return result
    return call("KLExpFamily", f, *p_nat, *q_nat)


@_closed_form(Gamma, Gamma, "concentration rate")
def _kl_gamma_gamma(cp, rp, cq, rq):
    t1 = cq * jnp.log(rp / rq)
    t2 = sps.gammaln(cq) - sps.gammaln(cp)
    t3 = (cp - cq) * sps.digamma(cp)
    t4 = (rq - rp) * (cp / rp)
    return t1 + t2 + t3 + t4


@_closed_form(Gumbel, Gumbel, "loc scale")
def _kl_gumbel_gumbel(mp, sp, mq, sq):
    ct1 = sp / sq
    ct2 = mq / sq
    ct3 = mp / sq
    t1 = -jnp.log(ct1) - ct2 + ct3
    t2 = ct1 * euler_constant
    t3 = jnp.exp(ct2 + sps.gammaln(1 + ct1) - ct3)
    return t1 + t2 + t3 - (1 + euler_constant)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return call("KLGeometric", lambda h, pp, qp, ql: -h - jnp.log1p(-qp) / pp - ql,
                p.entropy(), p.probs, q.probs, q.logits)


def _kl_normal_formula(mp, sp, mq, sq):
    var_ratio = (sp / sq) ** 2
    t1 = ((mp - mq) / sq) ** 2
    return 0.5 * (var_ratio + t1 - 1 - jnp.log(var_ratio))


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return call("KLHalfNormal", lambda sp, sq: _kl_normal_formula(0.0, sp, 0.0, sq), p.scale, q.scale)


@_closed_form(Laplace, Laplace, "loc scale")
def _kl_laplace_laplace(mp, sp, mq, sq):
    scale_ratio = sp / sq
    loc_abs_diff = _abs(mp - mq, "torch")
    return -jnp.log(scale_ratio) + loc_abs_diff / sq + scale_ratio * jnp.exp(-loc_abs_diff / sp) - 1


@register_kl(MultivariateNormal, MultivariateNormal)
@register_kl(MultivariateNormal, LowRankMultivariateNormal)
@register_kl(LowRankMultivariateNormal, MultivariateNormal)
@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be "
                         "computed")
    n = p.event_shape[0]

    def f(mp, Lp, mq, Lq):
        half_term1 = jnp.sum(jnp.log(_diag(Lq)), -1) - jnp.sum(jnp.log(_diag(Lp)), -1)
        term2 = jnp.sum(_tri_solve(Lq, Lp) ** 2, axis=(-2, -1))
        term3 = jnp.sum(_tri_solve(Lq, (mq - mp)[..., None])[..., 0] ** 2, -1)
        return half_term1 + 0.5 * (term2 + term3 - n)
    return call("KLMultivariateNormal", f, p.loc, p._unbroadcasted_scale_tril, q.loc, q._unbroadcasted_scale_tril)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    return call("KLNormal", _kl_normal_formula, p.loc, p.scale, q.loc, q.scale)


@_closed_form(Pareto, Pareto, "scale alpha")
def _kl_pareto_pareto(sp, ap, sq, aq):
    scale_ratio = sp / sq
    alpha_ratio = aq / ap
    result = aq * jnp.log(scale_ratio) - jnp.log(alpha_ratio) + alpha_ratio - 1
    return jnp.where(sp < sq, jnp.inf, result)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return call("KLPoisson", lambda a, b: a * (jnp.log(a) - jnp.log(b)) - (a - b), p.rate, q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    extra_event_dim = len(p.event_shape) - len(p.base_dist.event_shape)
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), extra_event_dim)


@_closed_form(Uniform, Uniform, "low high")
def _kl_uniform_uniform(lp, hp, lq, hq):
    result = jnp.log((hq - lq) / (hp - lp))
    return jnp.where((lq > lp) | (hq < hp), jnp.inf, result)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return sum_rightmost(result, p.reinterpreted_batch_ndims)


# --- across families --------------------------------------------------------------------------------------

@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return call("KLBernoulliPoisson", lambda h, pp, r: -h - (pp * jnp.log(r) - r), p.entropy(), p.probs, q.rate)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return call("KLBetaExponential", lambda h, a, b, r: -h - jnp.log(r) + r * (a / (a + b)),
                p.entropy(), p.concentration1, p.concentration0, q.rate)


@_closed_form(Exponential, Gamma, "rate", "concentration rate")
def _kl_exponential_gamma(rp, c, rq):
    ratio = rq / rp
    return (-c * jnp.log(ratio) + ratio + sps.gammaln(c) + c * euler_constant - (1 + euler_constant))


@_closed_form(Exponential, Normal, "rate", "loc scale")
def _kl_exponential_normal(r, m, s):
    var_normal = s ** 2
    rate_sqr = r ** 2
    t1 = 0.5 * jnp.log(rate_sqr * var_normal * 2 * math.pi)
    return t1 - 1 + (1 / rate_sqr - m / r + m ** 2 * 0.5) / var_normal


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return call("KLGammaExponential", lambda h, c, rp, rq: -h - jnp.log(rq) + rq * (c / rp),
                p.entropy(), p.concentration, p.rate, q.rate)


@_closed_form(Gamma, Normal, "concentration rate", "loc scale")
def _kl_gamma_normal(c, r, m, s):
    var_normal = s ** 2
    beta_sqr = r ** 2
    t1 = 0.5 * jnp.log(beta_sqr * var_normal * 2 * math.pi) - c - sps.gammaln(c)
    t2 = 0.5 * (c ** 2 + c) / beta_sqr
    t3 = m * c / r
    t4 = 0.5 * m ** 2
    return t1 + (c - 1) * sps.digamma(c) + (t2 - t3 + t4) / var_normal


@_closed_form(Laplace, Normal, "loc scale", "loc scale")
def _kl_laplace_normal(mp, sp, mq, sq):
    var_normal = sq ** 2
    scale_sqr_var_ratio = sp ** 2 / var_normal
    t1 = 0.5 * jnp.log(2 * scale_sqr_var_ratio / math.pi)
    t2 = 0.5 * mp ** 2
    t3 = mp * mq
    t4 = 0.5 * mq ** 2
    return -t1 + scale_sqr_var_ratio + (t2 - t3 + t4) / var_normal - 1


@_closed_form(Normal, Gumbel, "loc scale", "loc scale")
def _kl_normal_gumbel(mp, sp, mq, sq):
    mean_scale_ratio = mp / sq
    var_scale_sqr_ratio = (sp / sq) ** 2
    loc_scale_ratio = mq / sq
    t1 = 0.5 * jnp.log(var_scale_sqr_ratio)
    t2 = mean_scale_ratio - loc_scale_ratio
    t3 = jnp.exp(-mean_scale_ratio + 0.5 * var_scale_sqr_ratio + loc_scale_ratio)
    return -t1 + t2 + t3 - 0.5 * (1 + math.log(2 * math.pi))


@_closed_form(Normal, Laplace, "loc scale", "loc scale")
def _kl_normal_laplace(mp, sp, mq, sq):
    loc_diff = mp - mq
    scale_ratio = sp / sq
    loc_diff_scale_ratio = loc_diff / sp
    t1 = jnp.log(scale_ratio)
    t2 = math.sqrt(2 / math.pi) * sp * jnp.exp(-0.5 * loc_diff_scale_ratio ** 2)
    t3 = loc_diff * sps.erf(math.sqrt(0.5) * loc_diff_scale_ratio)
    return -t1 + (t2 + t3) / sq - (0.5 * (1 + math.log(0.5 * math.pi)))


@_closed_form(Uniform, Beta, "low high", "concentration1 concentration0")
def _kl_uniform_beta(lo, hi, a, b):
    common = hi - lo
    t1 = jnp.log(common)
    t2 = (a - 1) * (_x_log_x(hi) - _x_log_x(lo) - common) / common
    t3 = (b - 1) * (_x_log_x(1 - hi) - _x_log_x(1 - lo) + common) / common
    t4 = sps.gammaln(a) + sps.gammaln(b) - sps.gammaln(a + b)
    return jnp.where((hi > 1) | (lo < 0), jnp.inf, t3 + t4 - t1 - t2)


@_closed_form(Uniform, Exponential, "low high", "rate")
def _kl_uniform_exponential(lo, hi, r):
    result = r * (hi + lo) / 2 - jnp.log((hi - lo) * r)
    return jnp.where(lo < 0, jnp.inf, result)


@_closed_form(Uniform, Gamma, "low high", "concentration rate")
def _kl_uniform_gamma(lo, hi, c, r):
    common = hi - lo
    t1 = jnp.log(common)
    t2 = sps.gammaln(c) - c * jnp.log(r)
    t3 = (1 - c) * (_x_log_x(hi) - _x_log_x(lo) - common) / common
    t4 = r * (hi + lo) / 2
    return jnp.where(lo < 0, jnp.inf, -t1 + t2 + t3 + t4)


@_closed_form(Uniform, Gumbel, "low high", "loc scale")
def _kl_uniform_gumbel(lo, hi, m, s):
    common = s / (hi - lo)
    high_loc_diff = (hi - m) / s
    low_loc_diff = (lo - m) / s
    t1 = jnp.log(common) + 0.5 * (high_loc_diff + low_loc_diff)
    t2 = common * (jnp.exp(-high_loc_diff) - jnp.exp(-low_loc_diff))
    return t1 - t2


@_closed_form(Uniform, Normal, "low high", "loc scale")
def _kl_uniform_normal(lo, hi, m, s):
    common = hi - lo
    t1 = jnp.log(math.sqrt(math.pi * 2) * s / common)
    t2 = common ** 2 / 12
    t3 = ((hi + lo - 2 * m) / 2) ** 2
    return t1 + 0.5 * (t2 + t3) / s ** 2


@_closed_form(Uniform, Pareto, "low high", "scale alpha")
def _kl_uniform_pareto(lo, hi, sq, aq):
    support = hi - lo
    t1 = jnp.log(aq * sq ** aq * support)
    t2 = (_x_log_x(hi) - _x_log_x(lo) - support) / support
    return jnp.where(lo < sq, jnp.inf, t2 * (aq + 1) - t1)


# cross pairs by KL = -H(p) - E_p[log q], with E_p[log q] from p's moments
def _neg_h_minus(p, f, *qargs):
    return call("KLCross", lambda h, m, v, *q: -h - f(m, v, *q), p.entropy(), p.mean, p.variance, *qargs)


def _e_log_normal(m, v, mu, s):
    return -jnp.log(s * math.sqrt(2 * math.pi)) - (v + (m - mu) ** 2) / (2 * s ** 2)


@register_kl(Beta, Normal)
@register_kl(ContinuousBernoulli, Normal)
@register_kl(Gumbel, Normal)
def _kl_to_normal(p, q):
    return _neg_h_minus(p, _e_log_normal, q.loc, q.scale)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    kl = _kl_to_normal(p, q)
    return call("KLParetoNormal", lambda k, a: jnp.where(a <= 2, jnp.inf, k), kl, p.alpha)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return _neg_h_minus(p, lambda m, v, r: jnp.log(r) - r * m, q.rate)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    kl = _neg_h_minus(p, lambda m, v, r: jnp.log(r) - r * m, q.rate)
    return call("KLParetoExponential", lambda k, a: jnp.where(a <= 1, jnp.inf, k), kl, p.alpha)


def _e_log_gamma(m, elog, c, r):
    return c * jnp.log(r) - sps.gammaln(c) + (c - 1) * elog - r * m


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    def f(h, a, b, c, r):
        return -h - _e_log_gamma(a / (a + b), sps.digamma(a) - sps.digamma(a + b), c, r)
    return call("KLBetaGamma", f, p.entropy(), p.concentration1, p.concentration0, q.concentration, q.rate)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    def f(h, xm, a, c, r):
        mean = a * xm / jnp.where(a > 1, a - 1, 1.0)
        kl = -h - _e_log_gamma(mean, jnp.log(xm) + 1 / a, c, r)
        return jnp.where(a <= 1, jnp.inf, kl)
    return call("KLParetoGamma", f, p.entropy(), p.scale, p.alpha, q.concentration, q.rate)


@register_kl(Beta, Uniform)
@register_kl(ContinuousBernoulli, Uniform)
def _kl_unit_interval_uniform(p, q):
    return call("KLToUniform", lambda h, lo, hi: jnp.where((lo > 0) | (hi < 1), jnp.inf, -h + jnp.log(hi - lo)),
                p.entropy(), q.low, q.high)


def _e_log_cb(q, m, qp, ql):
    return m * ql + jnp.log1p(-qp) + q._cont_bern_log_norm(qp)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return call("KLBetaCB", lambda h, m, qp, ql: -h - _e_log_cb(q, m, qp, ql), p.entropy(), p.mean, q.probs,
                q.logits)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    def f(lo, hi, qp, ql):
        kl = -jnp.log(hi - lo) - _e_log_cb(q, (lo + hi) / 2, qp, ql)
        return jnp.where((lo < 0) | (hi > 1), jnp.inf, kl)
    return call("KLUniformCB", f, p.low, p.high, q.probs, q.logits)


def _kl_to_gumbel(h, m, mgf, mu, beta):
    """-H(p) + log beta + E[z] + E[exp(-z)], z = (x - mu) / beta, with mgf = E[exp(-x / beta)]."""
    return -h + jnp.log(beta) + (m - mu) / beta + jnp.exp(mu / beta) * mgf


@_closed_form(Exponential, Gumbel, "rate", "loc scale")
def _kl_exponential_gumbel(r, mu, beta):
    return _kl_to_gumbel(1 - jnp.log(r), 1 / r, r / (r + 1 / beta), mu, beta)


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    def f(h, c, r, mu, beta):
        return _kl_to_gumbel(h, c / r, (r / (r + 1 / beta)) ** c, mu, beta)
    return call("KLGammaGumbel", f, p.entropy(), p.concentration, p.rate, q.loc, q.scale)


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p, q):
    return _inf_like(p.rate)


def _register_infinite(pairs, param):
    def fun(p, q):
        return _inf_like(getattr(p, param))
    for tp, tq in pairs:
        register_kl(tp, tq)(fun)


_register_infinite([(Beta, Pareto), (ContinuousBernoulli, Pareto)], "mean")
_register_infinite([(Exponential, Beta), (Exponential, ContinuousBernoulli), (Exponential, Pareto),
                    (Exponential, Uniform)], "rate")
_register_infinite([(Gamma, Beta), (Gamma, ContinuousBernoulli), (Gamma, Pareto), (Gamma, Uniform)], "rate")
_register_infinite([(Gumbel, Beta), (Gumbel, ContinuousBernoulli), (Gumbel, Exponential), (Gumbel, Gamma),
                    (Gumbel, Pareto), (Gumbel, Uniform)], "loc")
_register_infinite([(Laplace, Beta), (Laplace, ContinuousBernoulli), (Laplace, Exponential), (Laplace, Gamma),
                    (Laplace, Pareto), (Laplace, Uniform)], "loc")
_register_infinite([(Normal, Beta), (Normal, ContinuousBernoulli), (Normal, Exponential), (Normal, Gamma),
                    (Normal, Pareto), (Normal, Uniform)], "loc")
_register_infinite([(Pareto, Beta), (Pareto, ContinuousBernoulli), (Pareto, Uniform)], "scale")
