"""jax.extend's names on funcgrad: the IR classes and a user-definable Primitive (`extend.core`), and
every primitive of the library as `<name>_p` (`extend.core.primitives`)."""
from . import core

__all__ = ["core"]
