"""gaussian_kde: a Gaussian kernel density estimate, as jax.scipy.stats.gaussian_kde (a pytree)."""
from __future__ import annotations

import math

from ... import numpy as jnp
from ..._src.core.tree_util import register_pytree_node
from ...numpy._statistics import logsumexp
from .._special.error import ndtr


class gaussian_kde:  # noqa: N801  (SciPy's name)
    """Kernel density estimate from `dataset` (d, n) (or (n,) for d = 1), with Scott's (default) or
    Silverman's rule, a scalar factor or a callable for `bw_method`, and optional `weights`."""

    def __init__(self, dataset, bw_method=None, weights=None):
        data = jnp.atleast_2d(jnp.asarray(dataset))
        if jnp.iscomplexobj(data):
            raise NotImplementedError("gaussian_kde: complex data are not supported")
        d, n = data.shape
        if n < 2:
            raise ValueError("gaussian_kde: dataset should have multiple elements")
        if weights is None:
            w = jnp.full((n,), 1.0 / n, dtype=data.dtype)
        else:
            w = jnp.asarray(weights, dtype=data.dtype)
            if w.ndim != 1 or w.shape[0] != n:
                raise ValueError("gaussian_kde: weights must be 1-d with one weight per data point")
            w = w / jnp.sum(w)
        self.dataset, self.weights = data, w
        self.d, self.n = d, n
        self.neff = 1.0 / jnp.sum(w ** 2)
        self._set_factor(bw_method)

    def _set_factor(self, bw_method):
        d = self.d
        if bw_method is None or bw_method == "scott":
            factor = self.neff ** (-1.0 / (d + 4))
        elif bw_method == "silverman":
            factor = (self.neff * (d + 2) / 4.0) ** (-1.0 / (d + 4))
        elif callable(bw_method):
            factor = jnp.asarray(bw_method(self))
        elif jnp.ndim(bw_method) == 0 and not isinstance(bw_method, str):
            factor = jnp.asarray(bw_method, dtype=self.dataset.dtype)
        else:
            raise ValueError("gaussian_kde: bw_method should be 'scott', 'silverman', a scalar or a callable")
        mean = jnp.sum(self.dataset * self.weights, axis=1, keepdims=True)
        centered = self.dataset - mean
        data_cov = (centered * self.weights) @ centered.T / (1 - jnp.sum(self.weights ** 2))
        self.factor = factor
        self.covariance = data_cov * factor ** 2
        self.inv_cov = jnp.linalg.inv(self.covariance)

    def set_bandwidth(self, bw_method=None):
        self._set_factor(bw_method)

    def _points(self, points):
        pts = jnp.atleast_2d(jnp.asarray(points, dtype=self.dataset.dtype))
        if pts.shape[0] != self.d:
            if pts.shape == (1, self.d):
                pts = pts.T
            else:
                raise ValueError(f"gaussian_kde: points have dimension {pts.shape[0]}, dataset has dimension "
                                 f"{self.d}")
        return pts

    def logpdf(self, points):
        """The log of the estimated density at points (d, m)."""
        pts = self._points(points)
        L = jnp.linalg.cholesky(self.covariance)
        diff = pts[:, :, None] - self.dataset[:, None, :]            # (d, m, n)
        z = jnp.linalg.solve(L, jnp.reshape(diff, (self.d, -1)))
        z = jnp.reshape(z, diff.shape)
        energy = 0.5 * jnp.sum(z * z, axis=0)                           # (m, n)
        log_norm = jnp.sum(jnp.log(jnp.diagonal(L))) + 0.5 * self.d * math.log(2 * math.pi)
        return logsumexp(-energy, axis=1, b=self.weights[None, :]) - log_norm

    def evaluate(self, points):
        """The estimated density at points (d, m) (or (m,) for d = 1)."""
        return jnp.exp(self.logpdf(points))

    __call__ = evaluate
    pdf = evaluate

    def integrate_box_1d(self, low, high):
        """The probability mass between low and high (one-dimensional data only)."""
        if self.d != 1:
            raise ValueError("gaussian_kde: integrate_box_1d() only handles 1-d data")
        std = jnp.sqrt(self.covariance[0, 0])
        lo = (low - self.dataset[0]) / std
        hi = (high - self.dataset[0]) / std
        return jnp.sum(self.weights * (ndtr(hi) - ndtr(lo)))

    def resample(self, key, shape=()):
        """Samples (d, *shape) from the estimate: a data point drawn by weight plus Gaussian noise."""
        from ... import random  # (listed arrow: random sits above scipy)
        k1, k2 = random.split(key)
        shape = tuple(shape) if not isinstance(shape, int) else (shape,)
        idx = random.choice(k1, self.n, shape=shape, p=self.weights)
        noise = random.multivariate_normal(k2, jnp.zeros(self.d, self.dataset.dtype), self.covariance, shape)
        return (self.dataset[:, idx] + jnp.moveaxis(noise, -1, 0))


def _flatten(k):
    return (k.dataset, k.weights, k.neff, k.factor, k.covariance, k.inv_cov), (k.d, k.n)


def _unflatten(aux, children):
    k = object.__new__(gaussian_kde)
    k.dataset, k.weights, k.neff, k.factor, k.covariance, k.inv_cov = children
    k.d, k.n = aux
    return k


register_pytree_node(gaussian_kde, _flatten, _unflatten)
