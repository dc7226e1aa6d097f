"""The rest of JAX's top level, private: jax.nn's functions (nn.py) and initializers (initializers.py), and
the code of jax.sharding, jax.image, jax.ops, jax.dtypes, jax.custom_batching, jax.profiler and the smaller
top-level names (api.py). Nothing here imports the torch face; the public paths (funcgrad.nn,
funcgrad.sharding, ...) re-export or alias these modules (see funcgrad/__init__.py)."""
