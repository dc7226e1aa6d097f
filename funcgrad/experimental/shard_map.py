"""funcgrad.experimental.shard_map: the older home of shard_map (`from jax.experimental.shard_map import
shard_map`; call it as shard_map(f, mesh, in_specs, out_specs)). See funcgrad.shard_map."""
from .._jax.sharding import shard_map  # noqa: F401

__all__ = ["shard_map"]
