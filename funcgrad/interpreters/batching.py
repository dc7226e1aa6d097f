"""jax.interpreters.batching for user primitives: `primitive_batchers[p] = rule` with
rule(args, batch_dims, **params) -> (out, out_batch_dim), a batch dim being an int or `not_mapped`."""
from __future__ import annotations

primitive_batchers: dict = {}
not_mapped = None


def defvectorized(primitive) -> None:
    """A primitive that acts elementwise: batched by applying it to the batched arrays."""
    def rule(args, dims, **params):
        from .._src.prims._util import batch_size
        from .._src.prims.shape import to_front
        size = batch_size(args, dims)
        return primitive.bind(*[to_front(a, d, size) for a, d in zip(args, dims)], **params), 0
    primitive_batchers[primitive] = rule
