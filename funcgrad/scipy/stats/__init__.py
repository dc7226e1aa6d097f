"""funcgrad.scipy.stats: log-densities, densities, CDFs and quantiles of common distributions with
jax.scipy.stats' names and signatures (`from funcgrad.scipy.stats import norm; norm.logpdf(x, 0, 1)`).

Differentiable, batchable and jittable; arguments broadcast and promote like NumPy ufuncs.
"""
from . import (bernoulli, beta, binom, cauchy, chi2, dirichlet, expon, gamma, laplace, logistic,  # noqa: F401
               multivariate_normal, norm, poisson, t, uniform)

__all__ = ["bernoulli", "beta", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma", "laplace", "logistic",
           "multivariate_normal", "norm", "poisson", "t", "uniform"]
