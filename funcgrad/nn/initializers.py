"""jax.nn.initializers: init(key, shape, dtype) -> Array functions, defined in funcgrad._jax.initializers (the
JAX face, which imports nothing of torch.nn); this public path re-exports that module's namespace."""
from .._jax import initializers as _impl

globals().update({k: v for k, v in vars(_impl).items() if not k.startswith("__")})
__all__ = _impl.__all__
