"""jax.interpreters' registration tables for primitives users define with jax.extend.core.Primitive:
`ad` (jvp and transpose rules), `batching` (vmap rules) and `mlir` (lowering rules, which funcgrad does
not need: its jit runs each primitive's impl)."""
from . import ad, batching, mlir  # noqa: F401
