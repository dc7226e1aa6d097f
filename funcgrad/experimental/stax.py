"""jax.experimental.stax, the name stax had before it moved to example_libraries: the same module."""
import sys

from ..example_libraries import stax as _stax

sys.modules[__name__] = _stax
