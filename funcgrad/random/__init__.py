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

Dtypes follow JAX's x64 policy in both of its modes, read when a function is called: with x64 off
(the default) the default int is int32 and the default float float32, with x64 on int64 and float64.
So randint, poisson, geometric, rademacher, choice and categorical (with replacement) return the
default int and draw the bits of its width (randint's modulo method draws 2 * width bits per value, so
the values, not only the dtype, depend on the mode, as in JAX); categorical without replacement
returns int32 (lax.top_k's); `bits` defaults to the unsigned int of the default int's width. A Python
int seed (which must fit int64) becomes the default int: PRNGKey(-1) is [0, 4294967295] with x64 off
and [4294967295, 4294967295] with it on; fold_in takes Python ints in [0, 2**32) and wraps NumPy ones.

Samplers follow JAX's algorithms step for step (the same bits consumed the same way), and agree with
JAX 0.10.2 bit for bit in both modes where only exact operations decide the result: keys, split,
fold_in, bits, uniform (every float dtype and any bounds: XLA fuses `u * span + minval` into one FMA,
which funcgrad reproduces exactly, by round-to-odd for <= 32-bit floats and an emulated FMA for
float64; bfloat16 rounds twice, as XLA's CPU backend does), randint, choice, permutation, shuffle,
bernoulli, rademacher, categorical, poisson, geometric, binomial, multinomial and triangular.
Samplers whose values pass through a transcendental function (normal via erf_inv, truncated_normal,
gamma, beta, dirichlet, exponential, gumbel, laplace, logistic, cauchy, ...) or a matrix factorisation
(orthogonal, multivariate_normal) cannot be bit-identical: XLA evaluates erf_inv, log, log1p, exp, pow
and tan with its own polynomial approximations, whose last bits NumPy's libm does not reproduce. They
agree to a few units in the last place (normal within ~2 ulps in float32 and ~20 in float64; the
other samplers within 1-30 ulps, orthogonal's QR within ~100); tests/test_random_jax_identity.py
holds the bound for each.

Everything is a composition of funcgrad operations: samplers work under jit (identical bits), vmap
(over keys or parameters) and grad. Reparameterised samplers are differentiable in their parameters:
uniform (minval, maxval), truncated_normal (lower, upper), multivariate_normal (mean, cov), and gamma,
loggamma, beta, dirichlet, chisquare, t (implicit reparameterisation gradients, see `_gamma`; second
derivatives with respect to the gamma shape raise NotImplementedError).

Differences from JAX: no typed key arrays (`key(seed)` is the raw uint32[2] key, `key_data` the
identity); shuffle (removed from JAX) is kept, deprecated, as permutation(..., independent=True).
"""
from .._src.prims import prng as _prng  # noqa: F401  (registers the threefry2x32 and random_gamma_grad cards)
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
    from .._torch import _rng  # (listed arrow: torch.random's names, resolved on first use)
    if name in _rng.__all__:
        return getattr(_rng, name)
    raise AttributeError(f"module 'funcgrad.random' has no attribute '{name}'")
