"""funcgrad.distributions: torch.distributions for both faces of funcgrad.

PyTorch face (Tensor parameters): `Normal(mu, sigma).rsample((5,))` draws from funcgrad.default_generator
and autograd records through every formula. Functional face (funcgrad Array parameters): distributions are
pytrees, so they pass through `grad`, `vmap` and `jit`, and sampling takes a PRNG key:

    d = Normal(jnp.zeros(3), jnp.ones(3))
    x = d.rsample(key, (5,))                       # sample(key, sample_shape=()) likewise
    funcgrad.grad(lambda m: Normal(m, 1.0).log_prob(x).sum())(jnp.zeros(3))

Every formula is written once, on Arrays, over funcgrad.numpy / scipy.special / random (see `utils.call`).
"""
from . import constraints, transforms  # noqa: F401  (submodules, as torch.distributions has them)
from .constraint_registry import biject_to, transform_to
from .continuous import (Beta, Cauchy, Chi2, ContinuousBernoulli, Dirichlet, Exponential, FisherSnedecor, Gamma,
                         GeneralizedPareto, HalfCauchy, HalfNormal, Laplace, Normal, StudentT, Uniform, VonMises)
from .discrete import (Bernoulli, Binomial, Categorical, Geometric, Multinomial, NegativeBinomial, OneHotCategorical,
                       OneHotCategoricalStraightThrough, Poisson)
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .kl import kl_divergence, register_kl
from .multivariate import LKJCholesky, LowRankMultivariateNormal, MultivariateNormal, Wishart
from .transforms import (AbsTransform, AffineTransform, CatTransform, ComposeTransform, CorrCholeskyTransform,
                         CumulativeDistributionTransform, ExpTransform, IndependentTransform, LowerCholeskyTransform,
                         PositiveDefiniteTransform, PowerTransform, ReshapeTransform, SigmoidTransform,
                         SoftmaxTransform, SoftplusTransform, StackTransform, StickBreakingTransform, TanhTransform,
                         Transform, identity_transform)
from .wrappers import (Gumbel, Independent, InverseGamma, Kumaraswamy, LogisticNormal, LogNormal, MixtureSameFamily,
                       Pareto, RelaxedBernoulli, RelaxedOneHotCategorical, TransformedDistribution, Weibull)

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
    "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric",
    "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace",
    "LogNormal", "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial",
    "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
    "Pareto", "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT", "Poisson", "Uniform", "VonMises",
    "Weibull", "Wishart", "TransformedDistribution", "biject_to", "kl_divergence", "register_kl", "transform_to",
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
    "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
    "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftplusTransform",
    "TanhTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform", "Transform",
    "identity_transform",
]

# torch's module paths (torch.distributions.gamma.Gamma, ...) are attributes of the package, as in torch
from . import (bernoulli, beta, binomial, categorical, cauchy, chi2, continuous_bernoulli, dirichlet,
               exponential, fishersnedecor, gamma, generalized_pareto, geometric, gumbel, half_cauchy,
               half_normal, independent, inverse_gamma, kumaraswamy, laplace, lkj_cholesky, log_normal,
               logistic_normal, lowrank_multivariate_normal, mixture_same_family, multinomial,
               multivariate_normal, negative_binomial, normal, one_hot_categorical, pareto, poisson,
               relaxed_bernoulli, relaxed_categorical, studentT, transformed_distribution, uniform, von_mises,
               weibull, wishart)  # noqa: E402,F401
