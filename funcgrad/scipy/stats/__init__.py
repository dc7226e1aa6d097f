"""funcgrad.scipy.stats: log-densities, densities, CDFs and quantiles of common distributions with
jax.scipy.stats' names and signatures (`from funcgrad.scipy.stats import norm; norm.logpdf(x, 0, 1)`).

Differentiable, batchable and jittable; arguments broadcast and promote like NumPy ufuncs.
"""
from . import (bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon, gamma, gennorm,  # noqa: F401
               geom, gumbel_l, gumbel_r, laplace, logistic, multinomial, multivariate_normal, nbinom, norm,
               pareto, poisson, t, truncnorm, uniform, vonmises, wrapcauchy)
from ._entropy import entropy  # noqa: F401
from ._summary import sem, zscore  # noqa: F401
from ._rank import mode, rankdata  # noqa: F401
from ._kde import gaussian_kde  # noqa: F401

__all__ = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma", "gennorm",
           "geom", "gumbel_l", "gumbel_r", "laplace", "logistic", "multinomial", "multivariate_normal", "nbinom",
           "norm", "pareto", "poisson", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy", "entropy", "sem",
           "zscore", "gaussian_kde", "mode", "rankdata"]
