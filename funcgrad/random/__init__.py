"""funcgrad.random: stateless, splittable, counter-based random numbers with JAX's API.

    import funcgrad.random as jr
    key = jr.PRNGKey(0)                  # a uint32[2] array: [0, 0]
    k1, k2 = jr.split(key)               # new, independent keys; never reuse a key
    x = jr.normal(k1, (3,))
    y = funcgrad.vmap(lambda k: jr.uniform(k, (2,)))(jr.split(k2, 8))   # a batch of keys

Keys are raw uint32[2] arrays, JAX's `PRNGKey` layout: funcgrad has no typed key arrays, so `key(seed)`
returns the same array as `PRNGKey(seed)`, and `key_data` / `wrap_key_data` are the identity. The
generator is Threefry-2x32 with 20 rounds (the `threefry2x32` primitive) laid out as JAX lays it:
by default the partitionable layout (JAX >= 0.5's default), or the original one after
`funcgrad.config.update("jax_threefry_partitionable", False)` (JAX's default before 0.5). Keys, split,
fold_in, bits and uniform match the same JAX configuration bit for bit.

Samplers follow JAX's algorithms (the same bits consumed the same way). Integer and boolean samplers
(randint, bernoulli, permutation, choice, categorical, geometric, poisson) and uniform (any minval,
maxval; float16/32/64) agree with JAX exactly. XLA on FMA hardware fuses uniform's `u * span + minval`
into one rounding; funcgrad reproduces that for 16/32-bit floats (the float64 product is exact) but
rounds twice for float64 when minval/maxval are not 0/1. Samplers that go through transcendental
functions (normal via erf_inv, gamma, beta, exponential, ...) agree to the rounding errors of those
functions, which NumPy and XLA round differently: exp/log-based samplers within 1-2 ulps (more where a
result is near 0), normal within ~50 ulps in float32 and ~400 in float64, where XLA's erf_inv is the less
accurate one (funcgrad's is within 1-2 ulps in float32 and ~5 in float64 of the exact value).

Everything is a composition of funcgrad operations: samplers work under jit (identical bits), vmap
(over keys or parameters) and grad. Reparameterised samplers are differentiable in their parameters:
uniform (minval, maxval), truncated_normal (lower, upper), multivariate_normal (mean, cov), and gamma,
loggamma, beta, dirichlet, chisquare, t (implicit reparameterisation gradients, see `_gamma`; second
derivatives with respect to the gamma shape raise NotImplementedError).

Differences from JAX, all deliberate:
- default dtypes are funcgrad's: float32 (float64 with x64 enabled) and int64 for integer samplers
  (JAX uses int32 unless x64 is on; the 64-bit randint draws 64-bit words, as JAX with x64 does, so
  pass dtype=jnp.int32 for JAX's default-config integers); `bits` defaults to uint32;
- Python-int seeds are 64-bit (funcgrad's default int), as in JAX with x64: PRNGKey(-1) is
  [2**32-1, 2**32-1]; seeds in [0, 2**31) give JAX's keys in every configuration;
- fold_in takes Python ints modulo 2**32 (JAX raises for ints outside uint32);
- no typed key arrays;
- binomial uses another exact algorithm than JAX's (same distribution, other values).
"""
from ..primitives import prng as _prng  # noqa: F401  (registers the threefry2x32 and random_gamma_grad cards)
from ._continuous import (cauchy, double_sided_maxwell, exponential, gumbel, laplace, logistic,  # noqa: F401
                          lognormal, maxwell, multivariate_normal, normal, orthogonal, pareto, rayleigh,
                          triangular, truncated_normal, uniform, wald, weibull_min)
from ._discrete import (bernoulli, categorical, choice, geometric, permutation, poisson, rademacher,  # noqa: F401
                        randint)
from ._gamma import ball, beta, chisquare, dirichlet, f, gamma, generalized_normal, loggamma, t  # noqa: F401
from ._binomial import binomial, multinomial, shuffle  # noqa: F401
from ._keys import (PRNGKey, bits, clone, fold_in, key, key_data, key_impl, random_bits, split,  # noqa: F401
                    threefry_2x32, wrap_key_data)

__all__ = [
    "PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "clone", "split", "fold_in", "bits",
    "random_bits", "threefry_2x32",
    "uniform", "normal", "truncated_normal", "multivariate_normal", "orthogonal", "gumbel", "exponential",
    "laplace", "logistic", "cauchy", "rayleigh", "pareto", "weibull_min", "lognormal", "maxwell",
    "double_sided_maxwell", "triangular", "wald",
    "bernoulli", "rademacher", "randint", "permutation", "choice", "categorical", "geometric", "poisson",
    "gamma", "loggamma", "beta", "dirichlet", "chisquare", "f", "t", "generalized_normal", "ball",
    "binomial", "multinomial", "shuffle",
]


def __getattr__(name: str):
    """torch.random's stateful names (manual_seed, fork_rng, get_rng_state, ...) beside the stateless keys,
    forwarded lazily to the torch face (importing it here would be circular)."""
    from ..tensor import _rng
    if name in _rng.__all__:
        return getattr(_rng, name)
    raise AttributeError(f"module 'funcgrad.random' has no attribute '{name}'")
