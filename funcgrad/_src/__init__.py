"""A few helpers JAX programs import from JAX's private `jax._src` package (for example the jaxpr
interpreter guide's `from jax._src.util import safe_map`)."""
