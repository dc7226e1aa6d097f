"""Multivariate families over matrices: MultivariateNormal, LowRankMultivariateNormal, Wishart, LKJCholesky."""
from __future__ import annotations

import math
import warnings
from numbers import Number

from .._torch import _jnp as jnp
from .. import random as jr
from ..numpy import linalg as jla
from .._src.prims.linalg_decomp import triangular_solve
from ..scipy import special as sps
from .._torch._dtype import Size
from . import constraints
from .continuous import Beta, _CentredAtLoc, _Checked, _gamma_rsample, _shape
from .distribution import TORCH_STREAM, Distribution
from .._torch import _creation
from .utils import as_param, broadcast_all, call, call_nograd, expand_to, is_concrete, lazy_property

__all__ = ["LKJCholesky", "LowRankMultivariateNormal", "MultivariateNormal", "Wishart"]

_LOG_2PI = math.log(2 * math.pi)


def _mT(x):
    return jnp.swapaxes(x, -1, -2)


def _diag(x):
    return jnp.diagonal(x, axis1=-2, axis2=-1)


def _tri_solve(L, b):
    """L^-1 b for lower triangular L (..., n, n) and b (..., n, k), broadcasting the batch dims."""
    batch = jnp.broadcast_shapes(L.shape[:-2], b.shape[:-2])
    L = jnp.broadcast_to(L, batch + L.shape[-2:])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    return triangular_solve(L, b, left_side=True, lower=True)


def batch_mahalanobis(L, x):
    """x^T (L L^T)^-1 x over broadcast batch dims."""
    return jnp.sum(_tri_solve(L, x[..., None])[..., 0] ** 2, -1)


def _mvlgamma(a, p: int):
    return p * (p - 1) / 4 * math.log(math.pi) + jnp.sum(
        sps.gammaln(a[..., None] - jnp.arange(p, dtype=a.dtype) / 2), -1)


def _mvdigamma(a, p: int):
    return jnp.sum(sps.digamma(a[..., None] - jnp.arange(p, dtype=a.dtype) / 2), -1)


def _cholesky(a):
    """torch.linalg.cholesky: LinAlgError where a is not positive definite (the JAX face's gives NaN)."""
    return jla._cholesky(a, convention="torch")


def _precision_to_scale_tril(P):
    return _cholesky(jla.inv(P))


def _the_matrix(covariance_matrix, precision_matrix, scale_tril) -> tuple:
    """(name, value) of the one matrix parameter given."""
    given = [(name, m) for name, m in (("covariance_matrix", covariance_matrix),
                                        ("precision_matrix", precision_matrix), ("scale_tril", scale_tril))
             if m is not None]
    if len(given) != 1:
        raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
    return given[0]


class _CholeskyParametrised:
    """Mixin of the families given by exactly one of covariance_matrix, precision_matrix and scale_tril: the
    one given is stored broadcast to the batch shape, its Cholesky factor is `_unbroadcasted_scale_tril`, and
    the other two derive from that factor lazily."""

    def _store_matrix(self, name: str, matrix, batch_shape) -> None:
        setattr(self, name, expand_to(matrix, tuple(batch_shape) + tuple(matrix.shape[-2:])))

    def _cholesky_of(self, name: str):
        """The Cholesky factor of the stored matrix `name` (computed after validation, so that an invalid
        matrix is reported by the constraint check rather than by the factorisation)."""
        matrix = self.__dict__[name]
        if name == "scale_tril":
            return matrix
        if name == "covariance_matrix":
            return call("Cholesky", _cholesky, matrix)
        return call("PrecisionToScaleTril", _precision_to_scale_tril, matrix)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril

    @lazy_property
    def covariance_matrix(self):
        return call("LLt", lambda L: L @ _mT(L), self._unbroadcasted_scale_tril)

    @lazy_property
    def precision_matrix(self):
        return call("PrecisionFromTril", lambda L: jla.inv(L @ _mT(L)), self._unbroadcasted_scale_tril)


class MultivariateNormal(_CentredAtLoc, _CholeskyParametrised, _Checked, Distribution):
    """MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril)."""
    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True
    _draws_as_torch = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        name, matrix = _the_matrix(covariance_matrix, precision_matrix, scale_tril)
        if matrix.ndim < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{what} must be at least two-dimensional, with optional leading batch dimensions")
        batch_shape = jnp.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        self._store_matrix(name, matrix, batch_shape)
        self.loc = expand_to(loc, batch_shape + tuple(loc.shape[-1:]))
        super().__init__(batch_shape, tuple(self.loc.shape[-1:]), validate_args=validate_args)
        self._unbroadcasted_scale_tril = self._cholesky_of(name)

    @property
    def variance(self):
        return call("MVNVar", lambda L: jnp.sum(L ** 2, -1), self._unbroadcasted_scale_tril)

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:  # (torch: loc + L @ eps, eps standard normals)
            eps = _creation.randn(shape, dtype=self.loc.dtype)
            return call("MVNRsample", lambda m, L, e: m + jnp.matmul(L, e[..., None])[..., 0], self.loc,
                        self._unbroadcasted_scale_tril, eps)

        def f(m, L):
            eps = jr.normal(key, shape, m.dtype)
            return m + jnp.matmul(L, eps[..., None])[..., 0]
        return call("MVNRsample", f, self.loc, self._unbroadcasted_scale_tril)

    def log_prob(self, value):
        self._check(value)
        n = self._event_shape[0]

        def f(x, m, L):
            M = batch_mahalanobis(L, x - m)
            half_log_det = jnp.sum(jnp.log(_diag(L)), -1)
            return -0.5 * (n * _LOG_2PI + M) - half_log_det
        return call("MVNLogProb", f, value, self.loc, self._unbroadcasted_scale_tril)

    def entropy(self):
        n = self._event_shape[0]
        return call("MVNEntropy", lambda L: 0.5 * n * (1.0 + _LOG_2PI) + jnp.sum(jnp.log(_diag(L)), -1),
                    self._unbroadcasted_scale_tril)


class LowRankMultivariateNormal(_CentredAtLoc, _Checked, Distribution):
    """A multivariate normal with covariance cov_factor @ cov_factor.T + diag(cov_diag)."""
    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True
    _draws_as_torch = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.ndim < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {Size(event_shape)}")
        try:
            batch_shape = jnp.broadcast_shapes(tuple(loc.shape[:-1]), tuple(cov_factor.shape[:-2]),
                                               tuple(cov_diag.shape[:-1]))
        except ValueError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                             f"cov_diag {cov_diag.shape}") from e
        self.loc = expand_to(loc, batch_shape + event_shape)
        self.cov_factor = expand_to(cov_factor, batch_shape + tuple(cov_factor.shape[-2:]))
        self.cov_diag = expand_to(cov_diag, batch_shape + event_shape)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    @lazy_property
    def variance(self):
        return call("LRVar", lambda W, D: jnp.sum(W ** 2, -1) + D, self.cov_factor, self.cov_diag)

    @lazy_property
    def covariance_matrix(self):
        return call("LRCov", lambda W, D: W @ _mT(W) + D[..., None] * jnp.eye(D.shape[-1], dtype=D.dtype),
                    self.cov_factor, self.cov_diag)

    @lazy_property
    def scale_tril(self):
        return call("Cholesky", _cholesky, self.covariance_matrix)

    @lazy_property
    def precision_matrix(self):
        return call("Inv", jla.inv, self.covariance_matrix)

    @property
    def _unbroadcasted_scale_tril(self):
        return self.scale_tril

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:  # (torch: standard normals for W's columns, then for the diagonal)
            eps_w = _creation.randn(shape[:-1] + tuple(self.cov_factor.shape[-1:]), dtype=self.loc.dtype)
            eps_d = _creation.randn(shape, dtype=self.loc.dtype)
            return call("LRRsample", lambda m, W, D, ew_, ed: m + jnp.matmul(W, ew_[..., None])[..., 0]
                        + jnp.sqrt(D) * ed, self.loc, self.cov_factor, self.cov_diag, eps_w, eps_d)

        def f(m, W, D):
            k1, k2 = jr.split(key)
            eps_W = jr.normal(k1, shape[:-1] + W.shape[-1:], m.dtype)
            eps_D = jr.normal(k2, shape, m.dtype)
            return m + jnp.matmul(W, eps_W[..., None])[..., 0] + jnp.sqrt(D) * eps_D
        return call("LRRsample", f, self.loc, self.cov_factor, self.cov_diag)

    def log_prob(self, value):
        self._check(value)
        n = self._event_shape[0]

        def f(x, m, L):
            M = batch_mahalanobis(L, x - m)
            return -0.5 * (n * _LOG_2PI + M) - jnp.sum(jnp.log(_diag(L)), -1)
        return call("LRLogProb", f, value, self.loc, self.scale_tril)

    def entropy(self):
        n = self._event_shape[0]
        return call("LREntropy", lambda L: 0.5 * n * (1.0 + _LOG_2PI) + jnp.sum(jnp.log(_diag(L)), -1),
                    self.scale_tril)


class Wishart(_CholeskyParametrised, _Checked, Distribution):
    """Wishart(df, covariance_matrix | precision_matrix | scale_tril) over positive definite matrices."""
    support = constraints.positive_definite
    has_rsample = True
    _draws_as_torch = True

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        name, param = _the_matrix(covariance_matrix, precision_matrix, scale_tril)
        if param.ndim < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, Number):
            df = as_param(float(df), param)
        batch_shape = jnp.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape))
        self.df = expand_to(df, batch_shape)
        event_shape = tuple(param.shape[-2:])
        self._store_matrix(name, param, batch_shape)
        p = event_shape[-1]
        if Distribution._validate_args if validate_args is None else validate_args:
            if is_concrete(self.df) and not bool(call_nograd(lambda d: jnp.all(d > p - 1), self.df)):
                raise ValueError(f"Value of df={self.df} expected to be greater than ndim - 1 = {p - 1}.")
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._unbroadcasted_scale_tril = self._cholesky_of(name)

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self._event_shape[-1] - 1)}

    @property
    def mean(self):
        return call("WishartMean", lambda d, L: d[..., None, None] * (L @ _mT(L)), self.df,
                    self._unbroadcasted_scale_tril)

    @property
    def mode(self):
        p = self._event_shape[-1]

        def f(d, L):
            factor = d - p - 1
            factor = jnp.where(factor <= 0, jnp.nan, factor)
            return factor[..., None, None] * (L @ _mT(L))
        return call("WishartMode", f, self.df, self._unbroadcasted_scale_tril)

    @property
    def variance(self):
        def f(d, L):
            V = L @ _mT(L)
            dv = _diag(V)
            return d[..., None, None] * (V ** 2 + dv[..., :, None] * dv[..., None, :])
        return call("WishartVar", f, self.df, self._unbroadcasted_scale_tril)

    def _bartlett_torch(self, sample_shape):
        """torch's `_bartlett_sampling`: sqrt(Chi2(df - i)) draws (clamped below at eps) on A's diagonal, then
        randn below it in tril_indices order, and (L A)(L A)^T."""
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        batch = tuple(sample_shape) + tuple(self._batch_shape)
        dfs = self.df.unsqueeze(-1) - _creation.arange(p, dtype=L.dtype)
        chi = _gamma_rsample(0.5 * dfs, _creation.full_like(dfs, 0.5), batch + (p,)).sqrt()
        noise = chi.clamp(min=jnp.finfo(chi.dtype).eps).diag_embed(dim1=-2, dim2=-1)
        i, j = _creation.tril_indices(p, p, offset=-1)
        noise[..., i, j] = _creation.randn(batch + (p * (p - 1) // 2,), dtype=noise.dtype)
        chol = L @ noise
        return chol @ chol.transpose(-2, -1)

    def _rsample_torch(self, sample_shape):
        """torch's Wishart.rsample, its correction rounds included: torch marks as "singular" the samples its
        support check ACCEPTS (`is_singular = support.check(sample)`), so it warns and redraws those once
        (then up to 10 times those that really are singular); the same draws give the same numbers."""
        batch_dims = tuple(range(-len(self._batch_shape), 0))

        def flag(x, bad):
            ok = self.support.check(x)
            ok = ~ok if bad else ok
            return ok.amax(batch_dims) if batch_dims else ok
        sample = self._bartlett_torch(sample_shape)
        is_singular = flag(sample, False)
        if bool(is_singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=4)
            for _ in range(10):
                sample_new = self._bartlett_torch(is_singular[is_singular].shape)
                sample[is_singular] = sample_new
                is_singular[is_singular.clone()] = flag(sample_new, True)
                if not bool(is_singular.any()):
                    break
        return sample

    def _rsample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        p = self._event_shape[-1]
        if key is TORCH_STREAM:
            return self._rsample_torch(sample_shape)

        def f(d, L):
            k1, k2 = jr.split(key)
            bshape = shape[:-2]
            dfs = jnp.broadcast_to(d, bshape)[..., None] - jnp.arange(p, dtype=d.dtype)
            chi = jnp.sqrt(jr.chisquare(k1, dfs, bshape + (p,), d.dtype))
            noise = jnp.tril(jr.normal(k2, shape, d.dtype), -1)
            A = noise + chi[..., None, :] * jnp.eye(p, dtype=d.dtype)
            LA = L @ A
            return LA @ _mT(LA)
        return call("WishartRsample", f, self.df, self._unbroadcasted_scale_tril)

    def log_prob(self, value):
        self._check(value)
        p = self._event_shape[-1]

        def f(X, d, L):
            half_logdet_V = jnp.sum(jnp.log(_diag(L)), -1)
            logdet_X = jla.slogdet(X)[1]
            Li_X = _tri_solve(L, X)
            trace = jnp.sum(_diag(_tri_solve(L, _mT(Li_X))), -1)  # tr(V^-1 X)
            return (-d * (p * math.log(2) / 2 + half_logdet_V) - _mvlgamma(d / 2, p)
                    + (d - p - 1) / 2 * logdet_X - trace / 2)
        return call("WishartLogProb", f, value, self.df, self._unbroadcasted_scale_tril)

    def entropy(self):
        p = self._event_shape[-1]

        def f(d, L):
            half_logdet_V = jnp.sum(jnp.log(_diag(L)), -1)
            return ((p + 1) * (p * math.log(2) / 2 + half_logdet_V) + _mvlgamma(d / 2, p)
                    - (d - p - 1) / 2 * _mvdigamma(d / 2, p) + d * p / 2)
        return call("WishartEntropy", f, self.df, self._unbroadcasted_scale_tril)


class LKJCholesky(_Checked, Distribution):
    """LKJ distribution over Cholesky factors of dim x dim correlation matrices."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky
    _draws_as_torch = True

    def __init__(self, dim: int, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = tuple(self.concentration.shape)
        event_shape = (dim, dim)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def _beta(self):
        dim = self.dim

        def c1(c):
            offset = jnp.concatenate([jnp.zeros((1,), c.dtype), jnp.arange(dim - 1, dtype=c.dtype)])
            return jnp.broadcast_to(offset + 0.5, c.shape + (dim,))

        def c0(c):
            offset = jnp.concatenate([jnp.zeros((1,), c.dtype), jnp.arange(dim - 1, dtype=c.dtype)])
            marginal_conc = c + 0.5 * (dim - 2)
            return marginal_conc[..., None] - 0.5 * offset
        return Beta(call("LKJBeta1", c1, self.concentration), call("LKJBeta0", c0, self.concentration),
                    validate_args=False)

    def _sample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:  # (torch: its Beta's sample, then randn(shape) for the hypersphere directions)
            y = self._beta()._sample(key, sample_shape)
            eps = _creation.randn(shape, dtype=y.dtype)
        else:
            k1, k2 = jr.split(key)
            y = self._beta()._sample(k1, sample_shape)
            eps = call_nograd(lambda c: jr.normal(k2, shape, c.dtype), y)

        def f(y, e):
            y = y[..., None]
            u = jnp.tril(e, -1)
            nrm = jnp.linalg.norm(u, axis=-1, keepdims=True)
            first = jnp.arange(self.dim)[:, None] == 0
            u = jnp.where(first, 0.0, u / jnp.where(first, 1.0, nrm))
            w = jnp.sqrt(y) * u
            diag = jnp.sqrt(jnp.maximum(1 - jnp.sum(w ** 2, -1), jnp.finfo(y.dtype).tiny))
            return w + diag[..., None, :] * jnp.eye(self.dim, dtype=y.dtype)
        return call("LKJSample", f, y, eps)

    def log_prob(self, value):
        self._check(value)
        dim = self.dim

        def f(x, c):
            diag_elems = _diag(x)[..., 1:]
            order = jnp.arange(2, dim + 1, dtype=c.dtype)
            order = 2 * (c - 1)[..., None] + dim - order
            unnormalized = jnp.sum(order * jnp.log(diag_elems), -1)
            dm1 = dim - 1
            alpha = c + 0.5 * dm1
            denominator = sps.gammaln(alpha) * dm1
            numerator = _mvlgamma(alpha - 0.5, dm1)
            pi_constant = 0.5 * dm1 * math.log(math.pi)
            return unnormalized - (pi_constant + numerator - denominator)
        return call("LKJLogProb", f, value, self.concentration)
