"""Gamma sampling and the distributions built on it (loggamma, beta, dirichlet, chisquare, t, f,
generalized_normal, ball), with implicit reparameterisation gradients.

Sampling is JAX's: every element gets its own key from split(key, size) and runs Marsaglia and
Tsang's rejection method ("A simple method for generating gamma variables", 2000) in a while loop
(vmapped over the elements, which gives the same values as JAX's per-element loop); shapes a < 1 are
boosted to a + 1 and multiplied by u**(1/a) (in log space for loggamma, where it is a sum).

Gradient: the sample is a deterministic function of `a` for a fixed key, but not the inverse CDF, so
its pathwise derivative is not the useful one. As in JAX, the derivative with respect to `a` is the
implicit reparameterisation gradient dx/da = -(dF/da) / (dF/dx) (F the Gamma(a) CDF): the derivative
of x = F^-1(u; a) at the sample's own quantile u = F(x; a). Its expectation is the derivative of the
expectation (d/da E[f(x)] = E[f'(x) dx/da]), which is what a reparameterised gradient estimator
needs; see `funcgrad._src.prims.prng.random_gamma_grad` for its accuracy (about 1e-13 relative).
Beta and Dirichlet samples are ratios of gamma samples and differentiate through them.
Second derivatives with respect to `a` are not implemented and raise NotImplementedError.
"""
from __future__ import annotations

import math


from .._src.prims import elementwise as ew, shape as sh
from .._src.control.while_loop import while_loop
from .._src.prims.prng import random_gamma_grad
from .._src.prims.reduction import reduce_max, reduce_sum
from .._src.interpreters import custom_jvp, vmap
from ._continuous import _float_param_sampler, _normal_real, _uniform, exponential, normal
from ._keys import canonical_shape, check_key, const, split, split2
from ._util import as_dtype, broadcast_shapes, broadcast_to, check_shape, float_dtype
from ._discrete import rademacher


def _c(value, like):
    return const(value, like.dtype, like.shape)


def _row(keys, i: int):
    return sh.reshape(sh.slice(keys, (i, 0), (i + 1, 2)), (2,))


def _gamma_one(key, alpha, log_space: bool):
    """One Gamma(alpha) sample (a scalar alpha, one key), JAX's `_gamma_one`."""
    dtype = alpha.dtype
    zero, one = _c(0.0, alpha), _c(1.0, alpha)
    boost_mask = ew.ge(alpha, one)
    alpha_orig = alpha
    alpha = ew.select(boost_mask, alpha, ew.add(alpha, one))
    d = ew.sub(alpha, _c(1.0 / 3.0, alpha))
    c = ew.div(_c(1.0 / 3.0, alpha), ew.sqrt(d))

    def accept_cond(kxvu):  # keep looping while the candidate is rejected
        _, x_sq, v, u = kxvu
        squeeze = ew.ge(u, ew.sub(one, ew.mul(_c(0.0331, x_sq), ew.mul(x_sq, x_sq))))
        full = ew.ge(ew.log(u), ew.add(ew.mul(x_sq, _c(0.5, x_sq)),
                                       ew.mul(d, ew.add(ew.sub(one, v), ew.log(v)))))
        return ew.select(squeeze, full, squeeze)

    def next_xv(kxv):
        k, _, _ = kxv
        k, subkey = split2(k)
        x = _normal_real(subkey, (), dtype)
        return k, x, ew.add(one, ew.mul(x, c))

    def body(kxvu):
        keys = split(kxvu[0], 3)
        k, x_key, u_key = _row(keys, 0), _row(keys, 1), _row(keys, 2)
        _, x, v = while_loop(lambda kxv: ew.le(kxv[2], zero), next_xv, (x_key, zero, _c(-1.0, alpha)))
        x_sq = ew.mul(x, x)
        v3 = ew.mul(ew.mul(v, v), v)
        u = _uniform(u_key, (), dtype, zero, one)
        return k, x_sq, v3, u

    k, subkey = split2(key)
    _, _, v, _ = while_loop(accept_cond, body, (k, zero, one, _c(2.0, alpha)))
    if log_space:
        log_samples = ew.neg(exponential(subkey, (), dtype))
        use_zero = ew.select(boost_mask, boost_mask, ew.eq(log_samples, zero))
        log_boost = ew.select(use_zero, zero, ew.mul(log_samples, ew.div(one, alpha_orig)))
        return ew.add(ew.add(ew.log(d), ew.log(v)), log_boost)
    samples = ew.sub(one, _uniform(subkey, (), dtype, zero, one))
    boost = ew.select(boost_mask, one, ew.pow(samples, ew.div(one, alpha_orig)))
    return ew.mul(ew.mul(d, v), boost)


def _gamma_samples(key, a, log_space: bool):
    """Gamma(a) samples for an array `a`: one key per element from split(key, a.size)."""
    n = math.prod(a.shape)
    if n == 0:
        return a
    keys = split(key, n)
    flat = sh.reshape(a, (n,))
    samples = vmap(lambda k, al: _gamma_one(k, al, log_space))(keys, flat)
    return sh.reshape(samples, tuple(a.shape))


def _no_second_derivative(primals, tangents):
    raise NotImplementedError("second derivatives of gamma-family samples with respect to their shape "
                              "parameter are not implemented (the reparameterisation gradient is a "
                              "first derivative only)")


def _grad_fn(log_space: bool):
    f = custom_jvp(lambda a, x: random_gamma_grad(a, x, log_space))
    f.defjvp(_no_second_derivative)
    return f


_GRAD = {False: _grad_fn(False), True: _grad_fn(True)}


def _sampler(log_space: bool):
    def sample(key, a):
        return _gamma_samples(key, a, log_space)

    f = custom_jvp(sample)

    def jvp(primals, tangents):
        key, a = primals
        ans = sample(key, a)
        return ans, ew.mul(tangents[1], _GRAD[log_space](a, ans))

    f.defjvp(jvp)
    return f


_SAMPLE = {False: _sampler(False), True: _sampler(True)}


def _given_jvp(primals, tangents):
    a, x = primals
    return x, ew.mul(tangents[0], _GRAD[False](a, x))


_GIVEN = custom_jvp(lambda a, x: x)
_GIVEN.defjvp(_given_jvp)


def gamma_reparam(a, x):
    """x, Gamma(a, 1) samples drawn elsewhere (torch's generator: torch._standard_gamma), with the implicit
    reparameterisation derivative dx/da of `gamma` (x is a constant: its own tangent is ignored)."""
    return _GIVEN(a, x)


def _gamma(name, key, a, shape, dtype, log_space):
    key, a, shape, dtype = _float_param_sampler(name, key, a, shape, dtype)
    return _SAMPLE[log_space](key, broadcast_to(a, shape))


def gamma(key, a, shape=None, dtype=None):
    """Gamma(a, 1) samples, as jax.random.gamma; differentiable in `a` (implicit reparameterisation,
    see the module docstring)."""
    return _gamma("gamma", key, a, shape, dtype, False)


def loggamma(key, a, shape=None, dtype=None):
    """log of Gamma(a, 1) samples, computed in log space (accurate where the samples underflow, as for
    a << 1), as jax.random.loggamma; differentiable in `a`."""
    return _gamma("loggamma", key, a, shape, dtype, True)


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) samples G_a / (G_a + G_b) from log-space gamma samples, as jax.random.beta;
    differentiable in a and b."""
    key = check_key(key, "beta")
    dtype = float_dtype(dtype, "beta")
    a, b = as_dtype(a, dtype), as_dtype(b, dtype)
    shape = broadcast_shapes(a.shape, b.shape) if shape is None else canonical_shape(shape, "beta")
    check_shape("beta", shape, a.shape, b.shape)
    key_a, key_b = split2(key)
    log_ga = _SAMPLE[True](key_a, broadcast_to(a, shape))
    log_gb = _SAMPLE[True](key_b, broadcast_to(b, shape))
    log_max = ew.max(log_ga, log_gb)
    ga = ew.exp(ew.sub(log_ga, log_max))
    gb = ew.exp(ew.sub(log_gb, log_max))
    return ew.div(ga, ew.add(ga, gb))


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) samples over the last axis of alpha (a softmax of log-space gamma samples), as
    jax.random.dirichlet; differentiable in alpha."""
    key = check_key(key, "dirichlet")
    dtype = float_dtype(dtype, "dirichlet")
    alpha = as_dtype(alpha, dtype)
    if alpha.ndim < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {alpha.ndim}")
    shape = tuple(alpha.shape[:-1]) if shape is None else canonical_shape(shape, "dirichlet")
    check_shape("dirichlet", shape, alpha.shape[:-1])
    full = tuple(shape) + (alpha.shape[-1],)
    log_g = _SAMPLE[True](key, broadcast_to(alpha, full))
    last = len(full) - 1
    top = ew.stop_gradient(sh.broadcast_in_dim(reduce_max(log_g, (last,)), full, tuple(range(last))))
    unnormalized = ew.exp(ew.sub(log_g, top))
    total = sh.broadcast_in_dim(reduce_sum(unnormalized, (last,)), full, tuple(range(last)))
    return ew.div(unnormalized, total)


def chisquare(key, df, shape=None, dtype=None):
    """Chi-square(df) samples 2 * Gamma(df / 2), as jax.random.chisquare; differentiable in df."""
    key = check_key(key, "chisquare")
    dtype = float_dtype(dtype, "chisquare")
    df = as_dtype(df, dtype)
    log_g = loggamma(key, ew.div(df, _c(2.0, df)), shape, dtype)
    return ew.mul(ew.exp(log_g), _c(2.0, log_g))


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F(dfnum, dfden) samples (chi2(dfnum)/dfnum) / (chi2(dfden)/dfden), as jax.random.f."""
    key = check_key(key, "f")
    dtype = float_dtype(dtype, "f")
    dfnum, dfden = as_dtype(dfnum, dtype), as_dtype(dfden, dtype)
    if shape is None:
        shape = broadcast_shapes(dfnum.shape, dfden.shape)
    key_dfd, key_dfn = split2(key)
    num = chisquare(key_dfn, dfnum, shape, dtype)
    den = chisquare(key_dfd, dfden, shape, dtype)
    return ew.div(ew.div(num, broadcast_to(dfnum, num.shape)), ew.div(den, broadcast_to(dfden, den.shape)))


def t(key, df, shape=None, dtype=None):
    """Student's t(df) samples z * sqrt(df / (2 G)), G ~ Gamma(df/2), as jax.random.t."""
    key, df, shape, dtype = _float_param_sampler("t", key, df, shape, dtype)
    key_n, key_g = split2(key)
    n = normal(key_n, shape, dtype)
    half_df = broadcast_to(ew.div(df, _c(2.0, df)), shape)
    g = gamma(key_g, half_df, shape, dtype)
    return ew.mul(n, ew.sqrt(ew.div(half_df, g)))


def generalized_normal(key, p, shape=(), dtype=None):
    """Samples with density proportional to exp(-|x|**p): a random sign times Gamma(1/p)**(1/p), as
    jax.random.generalized_normal."""
    key = check_key(key, "generalized_normal")
    shape = canonical_shape(shape, "generalized_normal")
    dtype = float_dtype(dtype, "generalized_normal")
    p = as_dtype(p, dtype)
    keys = split(key, 2)
    inv_p = ew.div(_c(1.0, p), p)
    g = gamma(_row(keys, 0), inv_p, shape, dtype)
    r = rademacher(_row(keys, 1), shape, dtype)
    return ew.mul(r, ew.pow(g, broadcast_to(inv_p, shape)))


def ball(key, d: int, p: float = 2, shape=(), dtype=None):
    """Uniform samples from the unit Lp ball of dimension d, shape `shape + (d,)` (Barthe et al. 2005),
    as jax.random.ball."""
    key = check_key(key, "ball")
    shape = canonical_shape(shape, "ball")
    dtype = float_dtype(dtype, "ball")
    d = int(d)
    k1, k2 = split2(key)
    g = generalized_normal(k1, p, shape + (d,), dtype)
    e = exponential(k2, shape, dtype)
    p_arr = as_dtype(p, dtype)
    norm_p = ew.add(reduce_sum(ew.pow(ew.abs(g), broadcast_to(p_arr, g.shape)), (len(shape),)), e)
    scale = ew.pow(norm_p, broadcast_to(ew.div(_c(1.0, p_arr), p_arr), norm_p.shape))
    return ew.div(g, sh.broadcast_in_dim(scale, g.shape, tuple(range(len(shape)))))


