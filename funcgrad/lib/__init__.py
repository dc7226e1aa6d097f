"""jax.lib: the names older JAX programs reach through it (xla_bridge.device_count, ...)."""
from . import xla_bridge  # noqa: F401
