"""funcgrad.stages: JAX's names for the stages of a jitted function: Wrapped (what jit returns), Lowered
(`f.lower(*args)`) and Compiled (`f.lower(*args).compile()`)."""
from ._src.interpreters.jit import Compiled, JitFunction as Wrapped, Lowered  # noqa: F401

__all__ = ["Wrapped", "Lowered", "Compiled"]
