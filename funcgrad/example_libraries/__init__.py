"""jax.example_libraries for funcgrad: `stax` (layers as (init_fun, apply_fun) pairs) and `optimizers`
((init, update, get_params) triples), so classic JAX example programs run with `import funcgrad as jax`."""
from . import optimizers, stax  # noqa: F401

__all__ = ["optimizers", "stax"]
